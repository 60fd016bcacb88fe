"""Configuration from the environment: every option of ``serve`` as ``A2A_<NAME>``, the
command line winning, wrong values refused naming their variable; and the README's table of
them kept whole."""

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

README = ROOT / "README.md"


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
        ({"A2A_AGENT": ""}, "agent : expected MODULE:OBJECT"),
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


def test_without_an_agent_anywhere_it_says_how_to_name_one() -> None:
    env = {key: value for key, value in os.environ.items() if key != "A2A_AGENT"}
    finished = subprocess.run(
        command(), cwd=ROOT, env=env, capture_output=True, text=True, timeout=20, check=False
    )
    assert finished.returncode == 2
    assert "name the agent: MODULE:OBJECT, or A2A_AGENT in the environment" in finished.stderr


def _readme_table(text: str) -> dict[str, str]:
    table = text.split("<!-- env-table:begin -->", 1)[1].split("<!-- env-table:end -->", 1)[0]
    return dict(re.findall(r"^\| `?([^`|]+)`?[^|]*\| `([A-Z0-9_]+)` \|$", table, re.M))


def test_the_readme_table_lists_every_option_and_its_variable() -> None:
    listed = _readme_table(README.read_text())
    expected = {}
    for action in serve_options():
        variable = env_variable(action)
        if variable is not None:
            longs = [o for o in action.option_strings if o.startswith("--")]
            expected[longs[0] if longs else "MODULE:OBJECT"] = variable
    assert listed == expected


def test_the_readme_table_reader_sees_a_missing_row() -> None:
    text = README.read_text().replace("| `--port` | `A2A_PORT` |\n", "")
    assert "--port" not in _readme_table(text)


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
