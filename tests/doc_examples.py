"""Every Python and shell block of the README and the manual, run as a reader would run it.

Collected by Sybil (the root ``conftest.py``): each Markdown file is one document, its blocks
are run in order, each a test, in a working directory of the document's own (the checkout's
modules importable, ``.venv/bin`` first on the ``PATH``). A block that serves runs in the
background, on a free port in place of the ``9999`` the docs write, and the document's later
blocks call it there; it is stopped when the document ends. What a block may need is said just
before it, in an HTML comment that a reader of the rendered page does not see:

``<!-- doc: file NAME -->``
    the next block is the content of file ``NAME`` in the working directory (the agent a
    quickstart writes), not a program to run;
``<!-- doc: serve -->``
    the next block serves until stopped: run it in the background, and wait until it listens;
``<!-- doc: redis -->``
    the document needs a Redis: a ``redis-server`` of the test's own is started on a free port
    (for the rest of the document), and ``127.0.0.1:6379`` in later blocks means it, never the
    machine's own;
``<!-- doc: expect TEXT -->``
    the next block must print ``TEXT`` (among whatever else it prints): what the page says
    it answers;
``<!-- doc: dry-run -->``
    the next block's commands are ``make`` targets or ``pip install`` commands, checked without
    doing them (``make -n``, ``pip install --dry-run``): the set-up commands, whose real runs
    are ``make test`` itself;
``<!-- skip: next "why" -->``
    Sybil's own: the next block is not run, for the reason given (kept for what cannot run
    here at all, such as a block that needs a container engine).

Any other Python block runs in the document's namespace, any other shell block under
``bash -euo pipefail``; a block fails its test when it raises or exits non-zero.
"""

import contextlib
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

__all__ = ["DOCS"]

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
BASH = shutil.which("bash") or "/bin/bash"
#: The port the docs write; each served block gets a free one instead.
DOC_PORT = "9999"
#: Seconds a served block may take to listen, and a shell block to finish.
SERVE_TIMEOUT = 30.0
RUN_TIMEOUT = 120.0
_STATE = "_doc_state"


@attrs.define
class _State:
    """One document's run: its working directory, what it serves, what the next block is."""

    workdir: Path
    ports: dict[str, str] = attrs.field(factory=dict)
    servers: list[subprocess.Popen[bytes]] = attrs.field(factory=list)
    #: What the document's blocks need beside them (a Redis), stopped at its end.
    services: list[subprocess.Popen[bytes]] = attrs.field(factory=list)
    pending: tuple[str, str] | None = None

    def take(self) -> tuple[str, str] | None:
        pending, self.pending = self.pending, None
        return pending

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("A2A_")}
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = os.pathsep.join((str(self.workdir), str(ROOT)))
        return env

    def localized(self, text: str) -> str:
        """``text`` with each port the docs write replaced by the one served here."""
        for written, real in self.ports.items():
            text = re.sub(rf"(127\.0\.0\.1|localhost):{written}\b", rf"\g<1>:{real}", text)
        return text


def _state(example: Example) -> _State:
    state: _State = example.namespace[_STATE]
    return state


def _setup(namespace: dict[str, Any]) -> None:
    namespace[_STATE] = _State(Path(tempfile.mkdtemp(prefix="a2a-doc-")))
    namespace["__name__"] = "__doc_example__"


def _teardown(namespace: dict[str, Any]) -> None:
    state: _State = namespace[_STATE]
    for server in [*state.servers, *state.services]:
        _stop(server)
    shutil.rmtree(state.workdir, ignore_errors=True)


# --- directives -----------------------------------------------------------------------------------


class _DirectiveParser:
    """``<!-- doc: WHAT [ARGUMENT] -->``, on a line of its own: sets what the next block is."""

    _LINE = re.compile(r"^<!-- doc: (?P<what>[\w-]+)(?: (?P<argument>[^\n]*?))? -->$", re.M)

    def __call__(self, document: Document) -> Iterable[Region]:
        for found in self._LINE.finditer(document.text):
            what = found.group("what")
            if what not in ("file", "serve", "dry-run", "expect", "redis"):
                raise ValueError(f"{document.path}: unknown doc directive {what!r}")
            yield Region(
                found.start(), found.end(), (what, found.group("argument") or ""), _directive
            )


def _directive(example: Example) -> None:
    state = _state(example)
    if example.parsed[0] == "redis":
        _start_redis(state)
        return
    state.pending = example.parsed


REDIS_PORT = "6379"


def _start_redis(state: _State) -> None:
    port = state.ports.setdefault(REDIS_PORT, _free_port())
    server = subprocess.Popen(
        [
            shutil.which("redis-server") or "/usr/bin/redis-server",
            "--port",
            port,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(state.workdir),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    state.services.append(server)
    _wait_listening(port, server, "redis-server", "")


# --- blocks ---------------------------------------------------------------------------------------


def _write_file(state: _State, name: str, source: str) -> None:
    path = state.workdir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


def _file_or_server(
    state: _State, pending: tuple[str, str] | None, command: list[str], example: Example
) -> bool:
    """Whether the block is a file to write or a server to start (and that is done), not a
    program to run; ``command`` runs the block."""
    if pending is not None and pending[0] == "file":
        _write_file(state, pending[1], str(example.parsed))
        return True
    if pending is not None and pending[0] == "serve":
        _serve(state, command, example)
        return True
    return False


def _python(example: Example) -> None:
    state = _state(example)
    pending = state.take()
    source = str(example.parsed)
    if _file_or_server(state, pending, [sys.executable, "-c", state.localized(source)], example):
        return
    if pending is not None and pending[0] != "expect":
        raise ValueError(f"doc: {pending[0]} does not go with a Python block")
    code = compile(state.localized(source), f"{example.path}:{example.line}", "exec")
    before = Path.cwd()
    os.chdir(state.workdir)
    sys.path.insert(0, str(state.workdir))
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(code, example.namespace)  # noqa: S102  the docs' own code, as a reader runs it
    finally:
        sys.path.remove(str(state.workdir))
        os.chdir(before)
    _expected(example, pending, printed.getvalue())


def _expected(example: Example, pending: tuple[str, str] | None, printed: str) -> None:
    if pending is not None and pending[0] == "expect":
        assert pending[1] in printed, (
            f"{example.path}:{example.line} should print {pending[1]!r}; it printed:\n"
            f"{printed[-3000:]}"
        )


def _shell(example: Example) -> None:
    state = _state(example)
    pending = state.take()
    source = str(example.parsed)
    if _file_or_server(state, pending, [BASH, "-euo", "pipefail", "-c", source], example):
        return
    cwd = state.workdir
    if pending is not None and pending[0] == "dry-run":
        source, cwd = _dry(source), ROOT
    done = subprocess.run(
        [BASH, "-euo", "pipefail", "-c", state.localized(source)],
        cwd=cwd,
        env=state.environment(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, (
        f"{example.path}:{example.line} exited {done.returncode}\n"
        f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    )
    _expected(example, pending, done.stdout)


def _dry(source: str) -> str:
    """The set-up commands of a block, checked rather than done."""
    lines = []
    for line in source.splitlines():
        command = line.split("#", 1)[0].strip()
        if not command:
            continue
        if command.startswith("make "):
            lines.append(command.replace("make ", "make -n ", 1))
        elif " pip install " in f" {command}":
            lines.append(command.replace("pip install ", "pip install --dry-run --quiet ", 1))
        else:
            raise ValueError(f"doc: dry-run takes make and pip install only: {command!r}")
    return "\n".join(lines)


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


def _serve(state: _State, command: list[str], example: Example) -> None:
    """Start a block that serves, in place of the one the document served before (if any),
    on the document's port: every ``9999`` of the block is it."""
    for running in state.servers:
        _stop(running)
    port = state.ports.setdefault(DOC_PORT, _free_port())
    command = [*command[:-1], re.sub(rf"\b{DOC_PORT}\b", port, command[-1])]
    log = (state.workdir / f"server-{len(state.servers)}.log").open("wb")
    server = subprocess.Popen(
        command,
        cwd=state.workdir,
        env=state.environment(),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    state.servers.append(server)
    _wait_listening(port, server, f"{example.path}:{example.line}", log.name)


def _wait_listening(port: str, server: subprocess.Popen[bytes], what: str, log: str) -> None:
    deadline = time.monotonic() + SERVE_TIMEOUT
    while True:
        try:
            with socket.create_connection(("127.0.0.1", int(port)), timeout=0.5):
                return
        except OSError:
            pass
        exited = server.poll()
        said = Path(log).read_text(errors="replace")[-3000:] if log else ""
        assert exited is None, f"{what} exited {exited} before serving:\n{said}"
        assert time.monotonic() < deadline, f"{what} never listened:\n{said}"
        time.sleep(0.05)


#: The README and every page of the manual.
DOCS = Sybil(
    parsers=[
        SkipParser(),
        _DirectiveParser(),
        CodeBlockParser(language="python", evaluator=_python),
        CodeBlockParser(language="sh", evaluator=_shell),
        CodeBlockParser(language="bash", evaluator=_shell),
    ],
    path=str(ROOT),  # (absolute: Sybil joins it to this file's folder)
    patterns=["README.md", "docs/*.md"],
    setup=_setup,
    teardown=_teardown,
    name="docs",
)
