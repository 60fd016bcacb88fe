"""The agent the durability and crash tests serve in real processes that they kill.

Its message text says what to do: ``MODE STEPS PAUSE_MS``, where MODE is

* ``work``: ``STEPS`` progress updates, ``PAUSE_MS`` apart, then completed;
* ``stream``: ``STEPS`` chunks of one artifact, ``PAUSE_MS`` apart, then completed (many
  numbered events, for streams to be cut and resumed);
* ``ask``: on the task's first user turn, asks (input-required); on a later one, works like
  ``work``.

Runs take milliseconds to seconds, so that a SIGKILL finds some of them mid-run. Each run first
appends ``TASK_ID MESSAGE_ID`` to the file named by :data:`LOG_VARIABLE`, before it yields
anything, and fsyncs it: the tests read that file to prove that no message ever started a run
twice, across any number of kills. Without the variable every run fails, so that a test that
forgot it cannot pass by recording nothing.

When :data:`TRACE_VARIABLE` names a file too, each run also traces there what it does, for the
tests that must tell which process ran what and when (the replicas' tests), one line each,
``time.monotonic_ns()`` (the same clock in every process of the machine) last:

* ``TASK_ID start MESSAGE_ID PID NS``: the run began (after its line in the run log);
* ``TASK_ID step N NS``: step N is done, and about to be yielded;
* ``TASK_ID stopped NS``: the run was stopped (cancelled or closed) before it finished.

A separate file, so that the run log keeps its two fields (``crash.py`` parses it).
"""

import os
import time
from collections.abc import AsyncIterator

import anyio

from a2a_core import (
    AgentContext,
    ArtifactChunk,
    Role,
    Update,
    completed,
    input_required,
    text_artifact,
    working,
)

#: The environment variable naming the invocation log.
LOG_VARIABLE = "A2A_CRASH_AGENT_LOG"
#: The environment variable naming the (optional) trace of what each run does, and when.
TRACE_VARIABLE = "A2A_CRASH_AGENT_TRACE"

_log_fd: int | None = None
_trace_fd: int | None = None


def _log() -> int:
    global _log_fd  # one descriptor for the process, opened on its first run
    if _log_fd is None:
        path = os.environ.get(LOG_VARIABLE)
        if not path:
            raise RuntimeError(f"{LOG_VARIABLE} names no file")
        _log_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return _log_fd


async def _record(ctx: AgentContext) -> None:
    fd = _log()
    # One write(2) of one line with O_APPEND: a kill lands before it or after it, never inside,
    # and what it wrote is in the page cache, which a SIGKILL does not lose.
    os.write(fd, f"{ctx.task_id} {ctx.message.message_id}\n".encode())
    # fsync for a power loss too; off the loop, where the store's own commits do not wait on it.
    await anyio.to_thread.run_sync(os.fsync, fd)


def _trace(task_id: str, *fields: object) -> None:
    """One line of the trace, if there is one (a plain write: no await, so that a run being
    closed may still say so)."""
    global _trace_fd
    if _trace_fd is None:
        path = os.environ.get(TRACE_VARIABLE)
        if not path:
            return
        _trace_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    line = " ".join(str(f) for f in (task_id, *fields, time.monotonic_ns()))
    os.write(_trace_fd, f"{line}\n".encode())


def parse(text: str) -> tuple[str, int, float]:
    """The mode, the number of steps and the pause in seconds that ``text`` asks for."""
    mode, steps, pause_ms = [*text.split(), "0", "0"][:3]
    return mode, int(steps), int(pause_ms) / 1000


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    """Record the run, then work, stream or ask, as the text says."""
    await _record(ctx)
    _trace(ctx.task_id, "start", ctx.message.message_id, os.getpid())
    first_turn = ctx.history[0]
    mode, steps, pause = parse(first_turn.text)
    turns = sum(1 for message in ctx.history if message.role is Role.USER)
    if mode == "ask" and turns < 2:
        yield input_required("what next?")
        return
    finished = False
    try:
        for step in range(steps):
            await anyio.sleep(pause)
            _trace(ctx.task_id, "step", step)
            if mode == "stream":
                chunk = text_artifact(f"chunk {step};", artifact_id="out")
                yield ArtifactChunk(chunk, append=step > 0, last_chunk=step == steps - 1)
            else:
                yield working()  # a status event with no message: histories stay short
        finished = True
        yield completed(f"done after {steps} steps ({ctx.message.message_id})")
    finally:
        if not finished:  # cancelled in a step, or closed at a yield: the run was stopped
            _trace(ctx.task_id, "stopped")
