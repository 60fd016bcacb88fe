"""Servers in processes of their own, on a store file, for tests that kill them.

``python -m a2a_adapters serve tests.a2a_adapters.crash_agent:agent --store sqlite:PATH
--port 0`` as a subprocess: the port it bound is read from its "A2A server on …" line (the socket
listens before that line is logged, so a request made then waits in the backlog, never
refused), and it is stopped with SIGKILL, as a crash stops it, or SIGTERM. Every wait is
bounded, and every process is killed on the way out of the context that started it.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from tests.a2a_adapters.crash_agent import LOG_VARIABLE

#: The project root: ``tests`` and ``examples`` import from there.
ROOT = Path(__file__).resolve().parents[2]
#: What the servers here serve.
CRASH_AGENT = "tests.a2a_adapters.crash_agent:agent"
#: Seconds a fresh interpreter may take to import everything and listen, or to exit.
START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0

_LISTENING = re.compile(r"A2A server on (https?://\S+?)/? ")


class ServerProcess:
    """A ``serve`` subprocess; its stderr is drained by a thread (a full pipe never blocks it)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.log: list[str] = []
        self._url: str | None = None
        self._said = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)
            match = _LISTENING.search(line)
            if match and self._url is None:
                self._url = match.group(1)
                self._said.set()
        self._said.set()  # it exited: stop waiting for a line that will not come

    def wait_for_url(self) -> str:
        """The base URL the server listens on, once it has said it and its port accepts."""
        deadline = time.monotonic() + START_TIMEOUT
        self._said.wait(START_TIMEOUT)
        assert self._url is not None, f"the server never said where it listens: {self.stderr}"
        parts = urlsplit(self._url)
        while True:
            try:
                with socket.create_connection((parts.hostname, parts.port), timeout=0.5):
                    return self._url
            except OSError:
                assert time.monotonic() < deadline, f"{self._url} never listened: {self.stderr}"
                time.sleep(0.02)

    @property
    def url(self) -> str:
        assert self._url is not None
        return self._url

    @property
    def stderr(self) -> str:
        return "".join(self.log)

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed or closed, as in a crash."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(STOP_TIMEOUT)
        self._reader.join(STOP_TIMEOUT)  # the log is whole once the pipe's last line is read

    def stop(self) -> int:
        """SIGTERM, then the exit status (the server stops gracefully)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(STOP_TIMEOUT)
        self._reader.join(STOP_TIMEOUT)
        return status


def spawn(*args: str) -> ServerProcess:
    """Start ``serve ARGS`` (any agent, any options) from the project root."""
    return ServerProcess(
        subprocess.Popen(
            command(*args),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    )


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "a2a_adapters", "serve", *args]


def environment(agent_log: Path | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    found = dict(os.environ)
    if agent_log is not None:
        found[LOG_VARIABLE] = str(agent_log)
    found.update(env or {})
    return found


def start(
    store: str,
    *,
    loop: str = "asyncio",
    agent_log: Path | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    new_session: bool = False,
) -> ServerProcess:
    """Start the crash agent's server on ``store`` (a ``--store`` URL) and a free port.

    ``env`` adds to the environment; ``new_session`` starts it in a process group of its own
    (a ``--workers`` supervisor, so that its workers can be killed with it by its id)."""
    process = subprocess.Popen(
        command(CRASH_AGENT, "--store", store, "--loop", loop, "--port", "0", *args),
        cwd=ROOT,
        env=environment(agent_log, env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
    )
    return ServerProcess(process)


@contextmanager
def serving(
    store: str, *, loop: str = "asyncio", agent_log: Path | None = None, args: Sequence[str] = ()
) -> Iterator[ServerProcess]:
    """A started server whose URL is known; killed on the way out if still running."""
    server = start(store, loop=loop, agent_log=agent_log, args=args)
    try:
        server.wait_for_url()
        yield server
    finally:
        server.kill()


def run_to_exit(
    args: Sequence[str], *, agent_log: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``serve ARGS`` expecting it to exit by itself (a start-up refusal), bounded."""
    return subprocess.run(
        command(*args),
        cwd=ROOT,
        env=environment(agent_log),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=False,
    )
