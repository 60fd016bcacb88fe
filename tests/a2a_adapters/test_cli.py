"""``python -m a2a_adapters serve``: the command line, run as a real subprocess."""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

import grpc
import pytest
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc

from a2a_adapters.asyncio import bind_socket
from a2a_adapters.cli import main, serve_options
from tests.a2a_adapters.processes import ServerProcess, spawn
from tests.a2a_adapters.support import (
    COMPLETED,
    card_of,
    jsonrpc_url,
    new_id,
    post_raw,
    result_of,
    rpc,
    send_params,
    send_task,
    state_of,
    status_text,
)

#: The project root: ``examples`` is importable from there.
ROOT = Path(__file__).resolve().parents[2]
#: Seconds the server may take to start (a fresh interpreter imports everything) or to stop.
START_TIMEOUT = 20.0
STOP_TIMEOUT = 5.0


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _with_store(*args: str) -> list[str]:
    # Each test's tasks are its own: the default store is a file in the working directory.
    store = () if any(a.startswith("--store") for a in args) else ("--store", "memory")
    return [*args, *store]


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "a2a_adapters", "serve", *_with_store(*args)]


@contextmanager
def serving(args: Sequence[str]) -> Iterator[ServerProcess]:
    """Run ``serve ARGS``; kill it afterwards if the test left it running."""
    server = spawn(*_with_store(*args))
    try:
        yield server
    finally:
        server.kill()


def _run(args: Sequence[str], *, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``serve ARGS`` expecting it to exit on its own (bounded); ``path`` is importable."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path), env.get("PYTHONPATH")]))
    return subprocess.run(
        _command(*args),
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=False,
    )


def _one_line(finished: subprocess.CompletedProcess[str], status: int) -> str:
    """The one line of a start-up failure, checked: that status, no traceback, nothing else."""
    assert "Traceback" not in finished.stderr, finished.stderr
    assert finished.returncode == status, finished.stderr
    lines = finished.stderr.splitlines()
    assert len(lines) == 1, finished.stderr
    assert lines[0].startswith("a2a-sansio: error: "), lines[0]
    return lines[0]


def test_request_limits_are_command_line_options() -> None:
    args = ["examples.echo:agent", "--port", "0", "--max-json-items", "40"]
    with serving([*args, "--max-message-parts", "2", "--max-json-depth", "8"]) as server:
        url = server.wait_for_url()
        parts = ",".join(['{"text":"x"}'] * 3)
        body = (
            '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
            '{"messageId":"m1","role":"ROLE_USER","parts":[%s]}}}'
        )
        three_parts = post_raw(url, (body % parts).encode())
        many_items = post_raw(url, (body % ",".join(['{"text":"x"}'] * 20)).encode())
        deep = post_raw(url, (body % '{"text":"x","metadata":{"a":[[[[[[1]]]]]]}}').encode())
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(STOP_TIMEOUT)
    assert "at most 2" in three_parts.json()["error"]["message"]
    assert many_items.status_code == 413
    assert "the limit is 40" in many_items.json()["error"]["message"]
    assert "nested more than 8 levels deep" in deep.json()["error"]["message"]


def test_serve_answers_and_stops_on_sigterm() -> None:
    args = ["examples.echo:agent", "--card", "examples.echo:card", "--host", "127.0.0.1"]
    with serving([*args, "--port", "0"]) as server:
        url = server.wait_for_url()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url), url
        assert not url.endswith(":0")
        card = card_of(url)
        task = send_task(url, "hi")
        server.process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        code = server.process.wait(STOP_TIMEOUT)
        stopped_in = time.monotonic() - started
    assert card["name"] == "Echo"
    assert jsonrpc_url(card) == url + "/"
    assert state_of(task) == COMPLETED
    assert status_text(task) == "Echo: hi"
    assert code == 0, "".join(server.log)
    assert stopped_in < STOP_TIMEOUT


def test_serve_without_a_card_describes_the_agent() -> None:
    with serving(["examples.multi_turn:agent", "--port", "0"]) as server:
        url = server.wait_for_url()
        card = card_of(url)
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(STOP_TIMEOUT)
    # A name a person would give it (its function is called `agent`: its module's name says
    # more), described by the first line of its docstring.
    assert card["name"] == "Multi Turn"
    assert card["description"] == "Ask once, then answer."
    assert [skill["name"] for skill in card["skills"]] == ["Multi Turn"]
    assert jsonrpc_url(card) == url + "/"


def test_public_url_pins_the_card() -> None:
    args = ["examples.echo:agent", "--port", "0", "--public-url", "https://agents.example/echo"]
    with serving(args) as server:
        url = server.wait_for_url()
        card = card_of(url)
        task = send_task(url, "pinned")
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(STOP_TIMEOUT)
    assert jsonrpc_url(card) == "https://agents.example/echo/"
    assert state_of(task) == COMPLETED


def test_card_from_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_text(
        json.dumps(
            {
                "name": "File Agent",
                "description": "Described by a JSON file.",
                "version": "2.3.4",
                "provider": {"organization": "Example Org", "url": "https://example.org"},
                # The server must not claim what it does not do, whatever the file says.
                "capabilities": {"streaming": True, "pushNotifications": True},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain", "application/json"],
                "skills": [
                    {
                        "id": "echo",
                        "name": "Echo",
                        "description": "Repeats the message.",
                        "tags": ["demo"],
                        "examples": ["hello"],
                    }
                ],
            }
        )
    )
    args = [
        "examples.echo:agent",
        "--card",
        str(path),
        "--port",
        "0",
        "--no-streaming",
        "--no-push",
    ]
    with serving(args) as server:
        url = server.wait_for_url()
        card = card_of(url)
        task = send_task(url, "from file")
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(STOP_TIMEOUT)
    assert card["name"] == "File Agent"
    assert card["version"] == "2.3.4"
    assert card["provider"] == {"organization": "Example Org", "url": "https://example.org"}
    assert card["defaultOutputModes"] == ["text/plain", "application/json"]
    assert [skill["id"] for skill in card["skills"]] == ["echo"]
    assert card["skills"][0]["examples"] == ["hello"]
    assert card["capabilities"]["streaming"] is False
    assert card["capabilities"]["pushNotifications"] is False
    assert jsonrpc_url(card) == url + "/"
    assert status_text(task) == "Echo: from file"


def test_streaming_and_push_are_on_by_default() -> None:
    with serving(
        ["examples.echo:agent", "--port", "0", "--push-allow-host", "127.0.0.1"]
    ) as server:
        url = server.wait_for_url()
        card = card_of(url)
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(STOP_TIMEOUT) == 0
    assert card["capabilities"]["streaming"] is True
    assert card["capabilities"]["pushNotifications"] is True


def test_unknown_module_exits_non_zero() -> None:
    finished = _run(["nosuchmodule:agent", "--port", "0"])
    assert finished.returncode != 0
    assert "nosuchmodule" in finished.stderr
    assert "A2A server on" not in finished.stderr


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["nosuchmodule:agent"], "nosuchmodule"),
        (["examples.echo:no_such_agent"], "no_such_agent"),
        (["examples.echo"], "MODULE:OBJECT"),
        (["examples.echo:agent", "--card", "{card}"], "name"),
    ],
)
def test_load_errors_are_one_line(tmp_path: Path, args: list[str], names: str) -> None:
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"description": "no name", "version": "1"}))
    finished = _run([arg.format(card=card) for arg in args] + ["--port", "0"])
    assert finished.returncode != 0
    assert names in finished.stderr
    assert "Traceback" not in finished.stderr, finished.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["examples.echo:agent", "--card", "examples.echo:agent"], "expected an AgentCard"),
        (["examples.echo:card"], "must be an async function"),
        (["examples.echo:card"], "got an object of type AgentCard, which is not callable"),
        (["examples.echo"], "MODULE:OBJECT"),
    ],
)
def test_bad_arguments_exit_with_a_message(args: list[str], message: str) -> None:
    finished = _run([*args, "--port", "0"])
    assert finished.returncode != 0
    assert message in finished.stderr, finished.stderr
    assert "A2A server on" not in finished.stderr


def test_an_invalid_card_file_exits_non_zero(tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_text(json.dumps({"description": "no name", "version": "1"}))
    finished = _run(["examples.echo:agent", "--card", str(path), "--port", "0"])
    assert finished.returncode != 0
    assert "name" in finished.stderr
    assert "A2A server on" not in finished.stderr


def test_a_bound_socket_already_accepts_connections() -> None:
    sock = bind_socket("127.0.0.1", 0)
    try:
        assert _accepts("127.0.0.1", sock.getsockname()[1])
    finally:
        sock.close()


def test_the_body_limit_is_a_command_line_option() -> None:
    with serving(["examples.echo:agent", "--port", "0", "--max-body-bytes", "2000"]) as server:
        url = server.wait_for_url()
        small = send_task(url, "fits")
        big = post_raw(
            url, b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":' + b" " * 3000 + b"{}}"
        )
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(STOP_TIMEOUT)
    assert status_text(small) == "Echo: fits"
    assert big.status_code == 413


def test_serve_on_trio() -> None:
    args = ["examples.tck_agent:agent", "--card", "examples.tck_agent:card", "--port", "0"]
    with serving([*args, "--loop", "trio"]) as server:
        url = server.wait_for_url()
        card = card_of(url)
        task = send_task(url, "hi", message_id=f"tck-complete-task-{new_id()}")
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(STOP_TIMEOUT) == 0
    assert card["capabilities"]["streaming"] is True
    assert status_text(task) == "Hello from TCK"


def test_serving_processes_collect_garbage_less_often() -> None:
    # In a process of its own: the tuning is process-wide, which is why only serve() does it.
    script = (
        "import gc\n"
        "from a2a_adapters._serve import GC_YOUNG_THRESHOLD, tune_gc\n"
        "before = gc.get_threshold()\n"
        "tune_gc()\n"
        "after = gc.get_threshold()\n"
        "assert after == (GC_YOUNG_THRESHOLD, *before[1:]), (before, after)\n"
        "assert gc.get_freeze_count() > 1000, gc.get_freeze_count()\n"
        "print('tuned')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tuned"


def test_connection_limits_are_command_line_options() -> None:
    args = ["examples.echo:agent", "--port", "0", "--max-connections", "2"]
    with serving([*args, "--keep-alive-timeout", "30", "--header-timeout", "5"]) as server:
        url = server.wait_for_url()
        host, port = urlsplit(url).hostname, urlsplit(url).port
        assert host is not None
        assert port is not None
        request = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: test\r\n\r\n"
        opened: list[socket.socket] = []
        try:
            # Admitted one by one (a connection that just closed may still be counted).
            deadline = time.monotonic() + START_TIMEOUT
            while len(opened) < 2 and time.monotonic() < deadline:
                sock = socket.create_connection((host, port), timeout=5)
                sock.sendall(request)
                if sock.recv(65536).startswith(b"HTTP/1.1 200 "):
                    opened.append(sock)
                else:
                    sock.close()
                    time.sleep(0.05)
            with socket.create_connection((host, port), timeout=5) as extra:
                extra.sendall(request)
                refused = extra.recv(65536)
        finally:
            for sock in opened:
                sock.close()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(STOP_TIMEOUT)
    assert len(opened) == 2
    assert refused.startswith(b"HTTP/1.1 503 ")


@pytest.mark.parametrize(
    "option", ["--max-connections", "--max-header-bytes", "--max-headers", "--body-timeout"]
)
def test_connection_limits_must_be_positive(option: str) -> None:
    finished = _run(["examples.echo:agent", "--port", "0", option, "0"])
    assert finished.returncode != 0
    # The value as written: a count (0) or seconds ('0').
    said = rf"argument {option}: '?0'? is not a positive number"
    assert re.search(said, finished.stderr), finished.stderr
    assert "A2A server on" not in finished.stderr


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="reads /proc/PID/limits")
def test_serve_raises_its_descriptor_limit_to_the_hard_limit() -> None:
    """So that the default connection cap follows the hard limit, not a low soft one."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY or hard <= 512:
        pytest.skip("needs a finite hard limit above 512")

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))

    process = subprocess.Popen(
        _command("examples.echo:agent", "--port", "0"),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lower,
    )
    try:
        ServerProcess(process).wait_for_url()
        limits = Path(f"/proc/{process.pid}/limits").read_text()
    finally:
        process.kill()
        process.wait(STOP_TIMEOUT)
    line = next(line for line in limits.splitlines() if line.startswith("Max open files"))
    assert line.split()[3:5] == [str(hard), str(hard)], line


def test_a_port_in_use_is_one_line_saying_what_to_do() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        finished = _run(["examples.echo:agent", "--host", "127.0.0.1", "--port", str(port)])
    line = _one_line(finished, 1)
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in line
    assert "pick another --port" in line


def test_an_address_of_another_machine_is_one_line() -> None:
    # 192.0.2.1 is reserved for documentation: no interface here has it (binding sends nothing).
    finished = _run(["examples.echo:agent", "--host", "192.0.2.1", "--port", "0"])
    line = _one_line(finished, 1)
    assert "cannot listen on 192.0.2.1:0" in line
    assert "--host must name an address of this machine" in line


#: Agents a first-time user might name, in a module the tests write.
MISTAKES = """
import functools

async def agent(ctx):
    return "fine"

def plain(ctx):
    return "not async"

lam = lambda ctx: "not async"

class Agent:
    async def __call__(self, ctx):
        return "an instance would do"

def generator(ctx):
    yield "not async"

not_agents = {"upper": plain}
empty = {}
agents = {"upper": agent, "count": agent}
only_upper = {"upper": agent}
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["mistakes:plain"], "got the function plain, which is not async"),
        (["mistakes:lam"], "got a lambda (lambdas cannot be async: use async def)"),
        (["mistakes:Agent"], "got the class Agent (pass an instance whose __call__ is async)"),
        (["mistakes:generator"], "got the generator function generator (make it async def"),
        (["mistakes:not_agents"], "the agent of skill 'upper' must be an async function"),
        (["mistakes:empty"], "the mapping of skill id to agent is empty"),
        (
            ["mistakes:agents", "--card", "examples.echo:card"],
            "the card 'Echo' does not list the skills ['count', 'upper'], which have agents",
        ),
        (
            ["examples.skills:agents", "--card", "examples.echo:card"],
            "add them to its skills, or serve without a card to have them listed",
        ),
        (
            ["mistakes:only_upper", "--card", "examples.skills:card"],
            "the card 'Text tools' lists the skills ['count'], which have no agent",
        ),
        (
            ["mistakes:agent", "--sign-card-jku", "https://a.example/jwks.json"],
            "--sign-card-kid and --sign-card-jku go with --sign-card KEY_FILE",
        ),
    ],
)
def test_start_up_mistakes_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "mistakes.py").write_text(MISTAKES)
    finished = _run([*args, "--port", "0"], path=tmp_path)
    assert message in _one_line(finished, 2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], "argument --port: 70000 is not from 0 to 65535"),
        (["--port", "-1"], "argument --port: -1 is not from 0 to 65535"),
        (["--port", "http"], "argument --port: 'http' is not a port number"),
        (["--task-ttl", "nan"], "argument --task-ttl: 'nan' is not a positive, finite number"),
        (["--task-ttl", "inf"], "argument --task-ttl: 'inf' is not a positive, finite number"),
        (["--task-ttl", "-5"], "argument --task-ttl: '-5' is not a positive, finite number"),
        (["--task-ttl", "soon"], "argument --task-ttl: 'soon' is not a number of seconds"),
        (["--max-body-bytes", "0"], "argument --max-body-bytes: 0 is not a positive number"),
        (["--max-body-bytes", "8MB"], "argument --max-body-bytes: '8MB' is not a whole number"),
        (["--loop", "uvloop"], "argument --loop: invalid choice: 'uvloop'"),
        (["--auth-token", "s3cret"], "--auth-token: expected NAME=SECRET"),
        (["--api-key", "alice="], "--api-key: expected NAME=SECRET, with neither part empty"),
        (["--no-such-option"], "unrecognized arguments: --no-such-option"),
        (["--shutdown-grace", "-1"], "argument --shutdown-grace: '-1' is not a finite number"),
        (["--shutdown-grace", "inf"], "argument --shutdown-grace: 'inf' is not a finite number"),
        (["--max-json-items", "0"], "argument --max-json-items: 0 is not a positive number"),
        (["--max-json-depth", "deep"], "argument --max-json-depth: 'deep' is not a whole"),
        (["--max-message-parts", "-3"], "argument --max-message-parts: -3 is not a positive"),
        (["--max-task-messages", "0"], "argument --max-task-messages: 0 is not a positive"),
    ],
)
def test_bad_options_are_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    # In this process: every one of these is refused before anything is served.
    with pytest.raises(SystemExit) as exited:
        main(["serve", "examples.echo:agent", *args])
    assert exited.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("a2a-sansio: error: ")
    assert message in lines[0]
    assert lines[0].endswith("--help)") or "NAME=SECRET" in message
    assert "s3cret" not in lines[0]


def _make_serve(*variables: str) -> list[str]:
    """The arguments ``make serve VARIABLES`` passes to ``serve`` (a dry run: nothing runs)."""
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "serve", *variables],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=True,
    )
    (command,) = [line for line in dry.stdout.splitlines() if "-m a2a_adapters serve" in line]
    return command.split(" -m a2a_adapters serve ")[1].split()


def test_make_serve_gives_the_echo_card_to_the_echo_agent_only(tmp_path: Path) -> None:
    default = _make_serve()
    assert default[:3] == ["examples.echo:agent", "--card", "examples.echo:card"]
    assert default[-2:] == ["--store", "sqlite:a2a-tasks.db"]  # durable, in the checkout
    given = _make_serve("AGENT=examples.multi_turn:agent", "CARD=examples.multi_turn:card")
    assert given[:3] == ["examples.multi_turn:agent", "--card", "examples.multi_turn:card"]
    # (A file of this test's own: the checkout's may hold tasks of other runs.)
    store = f"STORE=sqlite:{tmp_path / 'tasks.db'}"
    args = _make_serve("AGENT=examples.skills:agents", "PORT=0", store)
    assert "--card" not in args
    with serving(args) as server:
        url = server.wait_for_url()
        card = card_of(url)
        params = {**send_params("hello"), "metadata": {"skillId": "upper"}}
        task = result_of(rpc(url, "SendMessage", params))["task"]
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(STOP_TIMEOUT) == 0
    assert [skill["id"] for skill in card["skills"]] == ["upper", "count"]
    assert status_text(task) == "HELLO"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grpc-port", "70000"], "argument --grpc-port: 70000 is not from 0 to 65535"),
        (["--grpc-port", "0", "--workers", "2"], "--grpc-port serves from one process"),
    ],
)
def test_grpc_mistakes_are_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "examples.echo:agent", "--store", "memory", *args])
    assert exited.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert message in lines[0]


@pytest.mark.parametrize("loop", ["asyncio", "trio"])
def test_grpc_port_serves_grpc_listed_on_the_card_and_stops_on_sigterm(loop: str) -> None:
    args = ["examples.echo:agent", "--port", "0", "--grpc-port", "0", "--loop", loop]
    with serving(args) as server:
        url = server.wait_for_url()
        (target,) = [
            i["url"] for i in card_of(url)["supportedInterfaces"] if i["protocolBinding"] == "GRPC"
        ]
        with grpc.insecure_channel(target) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            request = pb.SendMessageRequest(
                message=pb.Message(
                    message_id=new_id(), role=pb.ROLE_USER, parts=[pb.Part(text="hi")]
                )
            )
            sent = stub.SendMessage(request, metadata=(("a2a-version", "1.0"),), timeout=10)
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(STOP_TIMEOUT) == 0
    assert sent.task.status.state == pb.TASK_STATE_COMPLETED
    assert any("A2A gRPC" in line for line in server.log)


@pytest.mark.parametrize(
    "command",
    [
        # The console script pip installs beside the interpreter, and python -m.
        [str(Path(sys.executable).with_name("a2a-sansio")), "--version"],
        [sys.executable, "-m", "a2a_adapters", "--version"],
        [sys.executable, "-m", "a2a_adapters", "serve", "--version"],
    ],
)
def test_version_is_the_installed_distributions(command: list[str]) -> None:
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=START_TIMEOUT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"a2a-sansio {metadata.version('a2a-sansio')}\n"


def _help(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "a2a_adapters", *args, "--help"],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("args", [[], ["serve"]])
def test_help_is_plain_text(args: list[str]) -> None:
    text = _help(*args)
    assert "`" not in text, text  # ``literals``, `code`, :class:`roles`
    assert not re.search(r"\*\*?\w[^*\n]*\w\*", text), text  # *emphasis*, **strong**


#: The headings of serve --help, in order, and the options under each, in order.
SERVE_HELP = {
    "options": ["-h", "--version"],
    "serving": [
        "agent",
        "--host",
        "--port",
        "--grpc-port",
        "--loop",
        "--workers",
        "--card",
        "--extended-card",
        "--public-url",
        "--root-path",
        "--forwarded-allow-ips",
        "--ssl-certfile",
        "--ssl-keyfile",
    ],
    "store": ["--store", "--task-ttl", "--on-restart", "--no-idempotency"],
    "authentication": [
        "--auth-token",
        "--api-key",
        "--jwt-issuer",
        "--jwt-audience",
        "--jwt-jwks-url",
        "--jwt-claim",
        "--jwt-leeway",
    ],
    "push notifications": ["--no-push", "--push-allow-host", "--max-push-field-bytes"],
    "streaming and protocol": [
        "--no-streaming",
        "--error-mapping",
        "--strict-v1-card",
        "--cors-origin",
    ],
    "limits": [
        "--max-body-bytes",
        "--max-connections",
        "--max-header-bytes",
        "--max-headers",
        "--header-timeout",
        "--body-timeout",
        "--keep-alive-timeout",
        "--max-json-items",
        "--max-json-depth",
        "--max-message-parts",
        "--max-task-messages",
        "--max-runs",
        "--max-runs-per-owner",
        "--max-streams",
        "--max-run-seconds",
        "--run-idle-seconds",
    ],
    "telemetry and logs": ["--log-level", "--log-format"],
    "card signing": ["--sign-card", "--sign-card-kid", "--sign-card-jku"],
    "shutdown": ["--shutdown-grace"],
}


def _help_sections(text: str) -> dict[str, list[str]]:
    """Each heading of a --help text, with the first name of each option under it."""
    sections: dict[str, list[str]] = {}
    heading: str | None = None
    for line in text.splitlines():
        if re.fullmatch(r"[a-z][a-z ]*:", line):
            heading = line[:-1]
            sections[heading] = []
        elif not line:
            heading = None  # the usage, the description and the epilog are in no section
        elif heading is not None and re.match(r"  \S", line):  # not a wrapped help line
            sections[heading].append(line.split()[0].rstrip(","))
    return sections


def test_serve_options_are_grouped_under_headings() -> None:
    assert list(_help_sections(_help("serve")).items()) == list(SERVE_HELP.items())
    shown = [
        (action.option_strings or [action.dest])[0]
        for action in serve_options()
        if action.help != argparse.SUPPRESS
    ]
    # Every option is in the layout above, once.
    assert sorted(shown) == sorted(option for options in SERVE_HELP.values() for option in options)


@pytest.mark.parametrize(
    ("args", "said", "before"),
    [
        (
            ["--public-url", "agents.example"],
            "argument --public-url: 'agents.example' is not an http:// or https:// URL",
            "public_url",
        ),
        (
            ["--cors-origin", "app.example"],
            "argument --cors-origin: 'app.example' is not a browser origin",
            "cors_origins",
        ),
        (
            ["--forwarded-allow-ips", "10.0.0.0/8,proxy"],
            "argument --forwarded-allow-ips: 'proxy' is not an IP address or network (or *)",
            "forwarded_allow_ips",
        ),
        (
            ["--root-path", "agents"],
            "argument --root-path: 'agents' is not a path such as /agents",
            "root_path",
        ),
        (["--host", ""], "argument --host: '' is not a host name or address", "host must"),
        (
            ["--task-ttl", "1e10"],
            "argument --task-ttl: '1e10' is not a positive, finite number of seconds (from a "
            "microsecond to a century)",
            "task_ttl",
        ),
        (
            ["--max-run-seconds", "1e10"],
            "argument --max-run-seconds: '1e10' is not a positive, finite number of seconds",
            "max_run_time",
        ),
        (
            ["--run-idle-seconds", "1e-7"],
            "argument --run-idle-seconds: '1e-7' is not a positive, finite number of seconds",
            "run_idle_time",
        ),
        (
            ["--extended-card", "examples.echo:card"],
            "--extended-card examples.echo:card: the extended card is served to authenticated "
            "callers only: add --auth-token, --api-key or --jwt-issuer",
            "set auth",
        ),
        (
            ["--ssl-certfile", "cert.pem"],
            "--ssl-certfile cert.pem needs --ssl-keyfile",
            "(certfile)",
        ),
        (["--keyfile", "key.pem"], "--keyfile key.pem needs --ssl-certfile", "(keyfile)"),
        (
            ["--certfile", "no.pem", "--keyfile", "no.key"],
            "--certfile no.pem: No such file or directory",
            "cannot use",
        ),
        (
            ["--ssl-certfile", "{junk}", "--ssl-keyfile", "{junk}"],
            "--ssl-certfile {junk} with --ssl-keyfile {junk}: cannot serve TLS with them",
            "cannot use",
        ),
        (
            ["--port", "9999", "--grpc-port", "9999"],
            "--grpc-port 9999 is the HTTP port (--port): on asyncio gRPC needs a port of its own",
            "grpc_port",
        ),
    ],
)
def test_errors_name_the_option_and_its_value(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], said: str, before: str
) -> None:
    """Each of these errors used to name a parameter of serve() (``before``)."""
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate, nor a key\n")
    args = [arg.format(junk=junk) for arg in args]
    with pytest.raises(SystemExit) as exited:
        main(["serve", "examples.echo:agent", "--store", "memory", *args])
    assert exited.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("a2a-sansio: error: ")
    assert said.format(junk=junk) in line
    assert before not in line


@pytest.mark.parametrize("loop", ["asyncio", "trio"])
def test_a_grpc_port_in_use_is_one_line_naming_grpc_port(loop: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["examples.echo:agent", "--host", "127.0.0.1", "--port", "0", "--loop", loop]
        finished = _run([*args, "--grpc-port", str(port)])
    line = _one_line(finished, 1)
    assert f"--grpc-port {port}: cannot listen on 127.0.0.1:{port}: Address already in use" in line
    assert "pick another --grpc-port (0: any free port)" in line
    assert "--port" not in line


def test_a_redis_that_does_not_answer_is_one_line_and_no_server() -> None:
    """Not a server that starts and logs its store's absence several times a second: a bounded
    attempt (the few seconds a Redis starting beside it may take), then one line, status 1."""
    with socket.socket() as taken:  # bound, never listening: every connection is refused
        taken.bind(("127.0.0.1", 0))
        url = f"redis://127.0.0.1:{taken.getsockname()[1]}/0"
        started = time.monotonic()
        finished = _run(["examples.echo:agent", "--store", url])
        took = time.monotonic() - started
    line = _one_line(finished, 1)
    assert url in line
    assert "tried for 5 s before starting" in line
    assert took < 15, took
