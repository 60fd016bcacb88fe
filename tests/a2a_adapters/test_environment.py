"""Configuration from the environment: every option of ``serve`` as ``A2A_<NAME>``, the
command line winning, wrong values refused naming their variable; and the settings reference
listing every one."""

import json
import os
import re
import signal
import subprocess
import time
from contextlib import suppress

import pytest

from a2a_adapters.cli import env_variable, serve_options
from tests.a2a_adapters import processes, replicas
from tests.a2a_adapters.processes import ROOT, ServerProcess, command
from tests.a2a_adapters.redis_server import RedisServer
from tests.a2a_adapters.support import A2A_HEADERS, card_of, rpc, send_params, wait_until

SETTINGS = ROOT / "docs" / "settings.md"


def _start(env: dict[str, str], *args: str) -> ServerProcess:
    return ServerProcess(
        subprocess.Popen(
            command(*args),
            cwd=ROOT,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    )


def test_a_server_configured_from_the_environment_alone() -> None:
    env = {
        "A2A_AGENT": "examples.echo:agent",
        "A2A_PORT": "0",
        "A2A_STORE": "memory",
        "A2A_LOOP": "trio",
        "A2A_AUTH_TOKEN": "alice=s1, bob=s2",
        "A2A_NO_STREAMING": "true",
        "A2A_LOG_FORMAT": "json",
    }
    # The command line wins: text, not the environment's JSON.
    server = _start(env, "--log-format", "text")
    try:
        url = server.wait_for_url()
        card = card_of(url)
        refused = rpc(url, "SendMessage", send_params("hi"))
        bob = rpc(
            url,
            "SendMessage",
            send_params("hi"),
            headers={**A2A_HEADERS, "Authorization": "Bearer s2"},
        )
    finally:
        server.stop()
    assert card["capabilities"].get("streaming", False) is False
    assert refused.status_code == 401
    assert bob.status_code == 200
    assert server.log[0].startswith("INFO a2a_adapters: A2A server on"), server.log
    with pytest.raises(json.JSONDecodeError):
        json.loads(server.log[0])


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"A2A_PORT": "abc"}, "A2A_PORT: 'abc' is not a port number"),
        ({"A2A_LOOP": "gevent"}, "A2A_LOOP: 'gevent' is not one of asyncio, trio"),
        ({"A2A_NO_PUSH": "maybe"}, "A2A_NO_PUSH: expected true or false, got 'maybe'"),
        ({"A2A_MAX_RUNS": "0"}, "A2A_MAX_RUNS: 0 is not a positive number"),
        ({"A2A_AGENT": ""}, "A2A_AGENT : expected MODULE:OBJECT"),
        # These named serve()'s parameters (public_url, ...) or the option, not the variable.
        ({"A2A_PUBLIC_URL": "x.example"}, "A2A_PUBLIC_URL: 'x.example' is not an http:// or"),
        (
            {"A2A_CORS_ORIGIN": "https://ok.example, app.example"},
            "A2A_CORS_ORIGIN: 'app.example' is not a browser origin",
        ),
        (
            {"A2A_FORWARDED_ALLOW_IPS": "proxy"},
            "A2A_FORWARDED_ALLOW_IPS: 'proxy' is not an IP address or network",
        ),
        ({"A2A_ROOT_PATH": "agents"}, "A2A_ROOT_PATH: 'agents' is not a path such as /agents"),
        ({"A2A_TASK_TTL": "1e10"}, "A2A_TASK_TTL: '1e10' is not a positive, finite number"),
        ({"A2A_MAX_CONNECTIONS": "0"}, "A2A_MAX_CONNECTIONS: 0 is not a positive number"),
        ({"A2A_SSL_CERTFILE": "c.pem"}, "A2A_SSL_CERTFILE c.pem needs --ssl-keyfile"),
        (
            {"A2A_EXTENDED_CARD": "examples.echo:card"},
            "A2A_EXTENDED_CARD examples.echo:card: the extended card is served to authenticated",
        ),
    ],
)
def test_a_wrong_value_is_one_line_naming_its_variable(env: dict[str, str], message: str) -> None:
    args = [] if "A2A_AGENT" in env else ["examples.echo:agent"]
    finished = subprocess.run(
        command(*args, "--store", "memory", "--port", "0"),
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert finished.returncode == 2, finished.stderr
    (line,) = finished.stderr.splitlines()
    assert message in line


def test_a_store_url_from_the_environment_is_refused_naming_its_variable() -> None:
    finished = subprocess.run(
        command("examples.echo:agent", "--port", "0"),
        cwd=ROOT,
        env={**os.environ, "A2A_STORE": "nosuchstore"},
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert finished.returncode == 2, finished.stderr
    (line,) = finished.stderr.splitlines()
    assert line.startswith("a2a-sansio: error: A2A_STORE 'nosuchstore': expected memory"), line


def test_without_an_agent_anywhere_it_says_how_to_name_one() -> None:
    env = {key: value for key, value in os.environ.items() if key != "A2A_AGENT"}
    finished = subprocess.run(
        command(), cwd=ROOT, env=env, capture_output=True, text=True, timeout=20, check=False
    )
    assert finished.returncode == 2
    assert "name the agent: MODULE:OBJECT, or A2A_AGENT in the environment" in finished.stderr


def test_the_settings_reference_lists_every_option_with_its_variable() -> None:
    rows = {
        variable: line
        for line in SETTINGS.read_text().splitlines()
        if line.startswith("| `") and (found := re.search(r"\| `(A2A_[A-Z0-9_]+)` \|", line))
        for variable in [found.group(1)]
    }
    for action in serve_options():
        variable = env_variable(action)
        if variable is None:
            continue
        assert variable in rows, variable
        longs = [o for o in action.option_strings if o.startswith("--")]
        assert f"`{longs[0]}" if longs else "`MODULE:OBJECT`" in rows[variable]
    assert len(rows) == sum(env_variable(a) is not None for a in serve_options())


def test_workers_from_the_environment_serve_and_do_not_supervise_again() -> None:
    # Each worker inherits A2A_WORKERS: it must serve on the socket it is given, not start
    # workers of its own.
    with RedisServer() as redis:
        server = processes.start(redis.url, env={"A2A_WORKERS": "2"}, new_session=True)
        try:
            server.wait_for_url()
            assert wait_until(lambda: replicas.serving_workers(server) == 2, timeout=20)
            time.sleep(0.3)  # a worker that supervised would have started more by now
            assert replicas.serving_workers(server) == 2
            assert "with 2 workers" in server.stderr
        finally:
            with suppress(ProcessLookupError):
                os.killpg(server.process.pid, signal.SIGKILL)
            server.kill()
