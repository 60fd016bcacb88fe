"""One agent run, on any loop: the agent called, each value it yields told to the machine."""

import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from a2a_core import Agent, InputError
from a2a_core.transport import StartRun

__all__ = ["Slot", "close_shielded", "run_agent"]

log = logging.getLogger("a2a_adapters")


class Slot:
    """A value that is set once and awaited (its event is made in the loop that awaits it: an
    engine may be built in one loop and run in another)."""

    def __init__(self) -> None:
        self._event: anyio.Event | None = None
        self.value: Any = None
        self.is_set = False

    def set(self, value: Any = None) -> None:
        if not self.is_set:
            self.value, self.is_set = value, True
            if self._event is not None:
                self._event.set()

    async def wait(self) -> Any:
        if not self.is_set:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
        return self.value


async def close_shielded(agen: AsyncGenerator[Any, None]) -> None:
    """Close ``agen`` in a scope shielded from cancellation (anyio's)."""
    with anyio.CancelScope(shield=True):
        await agen.aclose()


#: Tells the machine one output of the run and returns whether the run still counts after it.
Output = Callable[[Any], Awaitable[bool]]
#: Tells the machine how the run ended (``value=`` or ``error=``).
Done = Callable[..., Awaitable[None]]


async def run_agent(
    start: StartRun,
    agent: Agent,
    output: Output,
    done: Done,
    close: Callable[[AsyncGenerator[Any, None]], Awaitable[None]] = close_shielded,
) -> None:
    """Run ``start``'s agent to its end (or until its output stops counting). Cancelling the
    task that runs this stops the run and reports nothing: the machine asked for the stop.
    ``close`` closes an agent's generator left before its end, uncancelled (the loop's own
    way, if given: ``a2a_adapters._loops``)."""
    try:
        result: Any = agent(start.context)
        yields = inspect.isasyncgen(result)
        if not yields:
            value = await result
    except Exception as error:
        _log_failure(start.task_id, error)
        return await done(error=error)
    if not yields:
        return await done(value=value)
    updates: AsyncIterator[Any] = result
    try:
        while True:
            try:
                value = await anext(updates)
            except StopAsyncIteration:
                return await done()
            except Exception as error:
                _log_failure(start.task_id, error)
                return await done(error=error)
            if not await output(value):
                return None  # nothing more from this run counts
    finally:
        if result.ag_frame is not None:  # not run to its end: let it clean up, uncancelled
            await close(result)


def _log_failure(task_id: str, error: Exception) -> None:
    """Log an agent's exception, unless it is the documented way to ask for input."""
    if not isinstance(error, InputError):
        log.error("agent failed on task %s", task_id, exc_info=error)
