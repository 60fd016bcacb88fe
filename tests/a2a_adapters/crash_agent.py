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
"""

import os
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

_log_fd: int | None = None


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


def parse(text: str) -> tuple[str, int, float]:
    """The mode, the number of steps and the pause in seconds that ``text`` asks for."""
    mode, steps, pause_ms = [*text.split(), "0", "0"][:3]
    return mode, int(steps), int(pause_ms) / 1000


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    """Record the run, then work, stream or ask, as the text says."""
    await _record(ctx)
    first_turn = ctx.history[0]
    mode, steps, pause = parse(first_turn.text)
    turns = sum(1 for message in ctx.history if message.role is Role.USER)
    if mode == "ask" and turns < 2:
        yield input_required("what next?")
        return
    for step in range(steps):
        await anyio.sleep(pause)
        if mode == "stream":
            chunk = text_artifact(f"chunk {step};", artifact_id="out")
            yield ArtifactChunk(chunk, append=step > 0, last_chunk=step == steps - 1)
        else:
            yield working()  # a status event with no message: histories stay short
    yield completed(f"done after {steps} steps ({ctx.message.message_id})")
