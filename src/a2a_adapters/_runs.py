"""One agent run, on any loop: the agent called, each value it yields told to the machine."""

import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Generator
from typing import Any, Protocol

import anyio

from a2a_core import Agent, InputError
from a2a_core.transport import Outputs, StartRun, ends_run

from ._loops import resume

__all__ = ["GATHER", "Reporter", "Slot", "close_shielded", "run_agent"]

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


#: The most values a run yields without pausing that go to the machine as one output.
GATHER = 64


class Reporter(Protocol):
    """How a run tells the machine what its agent said (the engine's side of a run)."""

    async def output(self, value: Any) -> bool:
        """Tell one output and return whether the run still counts after it."""

    def offer(self, value: Any) -> None:
        """Tell one output without waiting (the agent is paused mid-step and must be resumed
        first): :meth:`went_on` says later whether the run still counts."""

    async def went_on(self) -> bool:
        """Whether the run still counts after the output last offered (at once if none is)."""

    async def done(self, **outcome: Any) -> None:
        """Tell how the run ended (``value=`` or ``error=``)."""


async def run_agent(
    start: StartRun,
    agent: Agent,
    report: Reporter,
    close: Callable[[AsyncGenerator[Any, None]], Awaitable[None]] = close_shielded,
) -> None:
    """Run ``start``'s agent to its end (or until its output stops counting). Cancelling the
    task that runs this stops the run and reports nothing: the machine asked for the stop.
    ``close`` closes an agent's generator left before its end, uncancelled (the loop's own
    way, if given: ``a2a_adapters._loops``).

    Values the agent yields one after another without pausing go to the machine together, as
    one :class:`~a2a_core.transport.Outputs` (see :func:`_gather`): an agent that yields its
    artifact and then its completion costs one decision and one write, not two."""
    try:
        result: Any = agent(start.context)
        yields = inspect.isasyncgen(result)
        if not yields:
            value = await result
    except Exception as error:
        _log_failure(start.task_id, error)
        return await report.done(error=error)
    if not yields:
        return await report.done(value=value)
    updates: AsyncGenerator[Any, None] = result
    step: Awaitable[Any] = anext(updates)
    try:
        while True:
            try:
                value = await step
            except StopAsyncIteration:
                return await _end(report)
            except Exception as error:
                _log_failure(start.task_id, error)
                return await _end(report, error=error)
            if not await report.went_on():
                return None  # nothing more from this run counts
            values, then = _gather(updates, value)
            if then is None:  # the agent ended right after them: one decision says it all
                return await report.done(value=Outputs(tuple(values)))
            output = values[0] if len(values) == 1 else Outputs(tuple(values))
            if isinstance(then, _Paused):
                # The agent is half way through its next step, inside this task: tell the
                # machine without awaiting anything, then let the agent go on at once.
                try:
                    report.offer(output)
                except BaseException:
                    then.close()  # (an engine's bug) the agent's step ends here, cleaned up
                    raise
            elif not await report.output(output):
                return None
            if isinstance(then, Exception):
                _log_failure(start.task_id, then)
                return await _end(report, error=then)
            step = then
    finally:
        if result.ag_frame is not None and not result.ag_running:
            await close(result)  # not run to its end: let it clean up, uncancelled


async def _end(report: Reporter, **outcome: Any) -> None:
    """Tell how the run ended, unless what it offered last did not count (then nothing more
    from it does)."""
    if await report.went_on():
        await report.done(**outcome)


def _gather(
    updates: AsyncGenerator[Any, None], first: Any
) -> tuple[list[Any], Awaitable[Any] | Exception | None]:
    """``first`` and the values the agent yields right after it without pausing, and what
    comes next: the agent's next step to await, the exception it raised, or ``None`` if it
    ended.

    Each further step is begun by hand (``send(None)`` on its ``asend``): a step that yields
    a value or ends without awaiting anything finishes right there. One that pauses (it
    awaits something: I/O, a sleep, a lock) comes back as a :class:`_Paused`, which the run
    awaits next. Gathering stops at a value that may end the run (:func:`ends_run`), whose
    code after the ``yield`` must wait for the machine's word, and at :data:`GATHER`."""
    values = [first]
    while len(values) < GATHER and not ends_run(values[-1]):
        step = updates.asend(None)
        try:
            paused = step.send(None)
        except StopIteration as stop:
            values.append(stop.value)
            continue
        except StopAsyncIteration:
            return values, None
        except Exception as error:
            return values, error
        return values, _Paused(step, paused)
    return values, anext(updates)


class _Paused:
    """An agent's step begun by hand that paused: awaiting this finishes it in the awaiting
    task, exactly as awaiting it from the start would have (:func:`~a2a_adapters._loops.resume`).

    Nothing may be awaited between beginning such a step and awaiting this: what the step
    paused on (a trio trap, an asyncio future) belongs to this task, and is handed to the loop
    only here."""

    __slots__ = ("_paused", "_step")

    def __init__(self, step: Coroutine[Any, Any, Any], paused: Any) -> None:
        self._step = step
        self._paused = paused

    def close(self) -> None:
        """End the step where it paused, never to be resumed: the agent hears ``GeneratorExit``
        there, as ``aclose`` would have it (which it cannot do to a generator mid-step; the
        step's own ``close`` would leave the generator running)."""
        try:
            self._step.throw(GeneratorExit)
        except (GeneratorExit, Exception):  # ended: as asked, or by what its cleanup raised
            return
        self._step.close()  # it awaits in its cleanup: nothing more can be done for it here

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield from resume(self._step, self._paused))


def _log_failure(task_id: str, error: Exception) -> None:
    """Log an agent's exception, unless it is the documented way to ask for input."""
    if not isinstance(error, InputError):
        log.error("agent failed on task %s", task_id, exc_info=error)
