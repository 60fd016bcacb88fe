"""Replicas of one server, each a ``serve`` process of its own, sharing a real Redis.

A :class:`Group` starts several ``python -m a2a_adapters serve`` processes (the crash agent,
``tests/a2a_adapters/crash_agent.py``) on one ``redis://…?prefix=…&lease=…`` store, at once (a
fresh interpreter takes a second or two to start), each on a free port of 127.0.0.1 and its
own ``--loop``. They share the agent's run log and its trace, which say which process ran what
and when (:func:`trace_of`). Every process is killed on the way out of :func:`group`.
"""

import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from tests.a2a_adapters import processes
from tests.a2a_adapters.crash_agent import TRACE_VARIABLE
from tests.a2a_adapters.processes import ServerProcess
from tests.a2a_adapters.support import wait_until


@dataclass(frozen=True)
class Traced:
    """One line of the agent's trace: ``TASK_ID WHAT FIELDS… NS``."""

    task_id: str
    what: str  # start, step, stopped
    fields: tuple[str, ...]
    ns: int  # time.monotonic_ns() in the process that ran it


def trace_of(path: Path, task_id: str | None = None) -> list[Traced]:
    """The trace's lines (of one task), in the order they were written."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        task, what, *fields, ns = line.split()
        if task_id is None or task == task_id:
            found.append(Traced(task, what, tuple(fields), int(ns)))
    return found


def starts(path: Path, task_id: str) -> list[tuple[str, int]]:
    """The runs of a task: (message id, pid of the process that ran it), in order."""
    return [(t.fields[0], int(t.fields[1])) for t in trace_of(path, task_id) if t.what == "start"]


def wait_for_task(path: Path, message_id: str, *, timeout: float = 10.0) -> str:
    """The task whose run began on ``message_id`` (once the trace says it began)."""
    found: list[str] = []

    def began() -> bool:
        found.extend(
            t.task_id for t in trace_of(path) if t.what == "start" and t.fields[0] == message_id
        )
        return bool(found)

    wait_for(began, timeout=timeout, what=f"no run began on message {message_id}")
    return found[0]


def steps(path: Path, task_id: str) -> list[Traced]:
    return [t for t in trace_of(path, task_id) if t.what == "step"]


def runs(run_log: Path, message_id: str) -> int:
    """How many runs the message started (the run log's lines for it)."""
    if not run_log.exists():
        return 0
    return sum(1 for line in run_log.read_text().splitlines() if line.split()[1] == message_id)


@dataclass
class Group:
    """Replicas on one store; ``servers[i]`` serves at ``urls[i]``."""

    store: str
    servers: list[ServerProcess]
    run_log: Path
    trace: Path

    @property
    def urls(self) -> list[str]:
        return [server.url for server in self.servers]

    def pid(self, index: int) -> int:
        return self.servers[index].process.pid

    def tracebacks(self) -> list[str]:
        """The replicas' logs that hold a traceback (none should)."""
        return [s.stderr for s in self.servers if "Traceback" in s.stderr]


@contextmanager
def group(
    redis_url: str,
    prefix: str,
    directory: Path,
    loops: Sequence[str],
    *,
    lease: float = 1.0,
    args: Sequence[Sequence[str]] | None = None,
) -> Iterator[Group]:
    """Replicas on ``loops`` (one each), on ``redis_url`` under ``prefix``, with ``args[i]``
    added to the command line of replica ``i``; every one killed on the way out."""
    store = f"{redis_url}?prefix={prefix}&lease={lease:g}"
    run_log, trace = directory / f"{prefix}-runs.log", directory / f"{prefix}-trace.log"
    env = {TRACE_VARIABLE: str(trace)}
    with ExitStack() as stack:
        servers = []
        for index, loop in enumerate(loops):
            extra = ["--push-allow-host", "127.0.0.1", *(args[index] if args else ())]
            server = processes.start(store, loop=loop, agent_log=run_log, args=extra, env=env)
            stack.callback(server.kill)
            servers.append(server)
        for server in servers:
            server.wait_for_url()
        yield Group(store, servers, run_log, trace)


# --- a supervisor's workers ----------------------------------------------------------------------


def children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (from ``/proc/PID/task/*/children``)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.update(int(n) for n in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue  # the thread or the process ended meanwhile
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.rpartition(")")[2].split()[0] != "Z"


def serving_workers(server: ServerProcess) -> int:
    """How many workers of a supervisor have said they serve (each its "A2A server on … (card
    at …)" line; until then a request waits in the socket's backlog, and may time out)."""
    return sum(1 for line in server.log if "A2A server on " in line and "(card at " in line)


@contextmanager
def supervisor(
    store: str, directory: Path, workers: int, *, args: Sequence[str] = ()
) -> Iterator[ServerProcess]:
    """``serve --workers N`` in a process group of its own, killed with its workers (by the
    group's id, which is the supervisor's pid) on the way out."""
    run_log, trace = directory / "workers-runs.log", directory / "workers-trace.log"
    server = processes.start(
        store,
        agent_log=run_log,
        args=["--workers", str(workers), *args],
        env={TRACE_VARIABLE: str(trace)},
        new_session=True,
    )
    try:
        server.wait_for_url()
        yield server
    finally:
        group_id = server.process.pid
        with suppress(ProcessLookupError):  # the supervisor and every worker are gone already
            os.killpg(group_id, signal.SIGKILL)
        server.kill()


def wait_for(condition: Callable[[], bool], *, timeout: float, what: str) -> float:
    """Poll ``condition()`` until it holds (fails after ``timeout``); the seconds it took."""
    started = time.monotonic()
    assert wait_until(condition, timeout=timeout), f"{what} (after {timeout:g}s)"
    return time.monotonic() - started
