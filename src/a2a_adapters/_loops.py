"""The loop's own primitives, for what the engine does on every request.

anyio's are the loop's too, behind a layer that finds the loop again on every use: each
``anyio.Event`` asks which library runs, and each task a task group starts comes with a
cancel scope and an event of its own (about forty function calls a blocking send, measured with
``python -m benchmarks.adapter_calls``). The engine makes waiters and starts agent runs on every
send, so it asks :func:`current` once, when it starts, for a :class:`Loop` that does these
directly: an asyncio future or a parked trio task for a waiter, a bare task for a job.

Everything else (cancel scopes, task groups, timeouts) stays anyio's: it is rare per request,
and the agents' code (and its shielded sections) is anyio's or the loop's own.
"""

import asyncio
import types
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Generator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import anyio

__all__ = ["Job", "Loop", "Scope", "Waiter", "current", "resume"]

#: A job: a coroutine function and its arguments.
Job = Callable[..., Coroutine[Any, Any, Any]]


class Waiter(Protocol):
    """A value set once, awaited by one task at a time."""

    value: Any
    is_set: bool

    def set(self, value: Any = None) -> None: ...

    async def wait(self) -> Any: ...


class Scope(Protocol):
    """A cancel scope (anyio's, or the loop's own): entered once, cancelled from anywhere."""

    def cancel(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> bool | None: ...


class Loop(Protocol):
    """What the engine does on the loop running it."""

    def waiter(self) -> Waiter: ...

    def cancel_scope(self) -> Scope:
        """A cancel scope for a job (an agent run's): anyio's on asyncio (only an anyio scope
        cancels an asyncio task without breaking the anyio scopes within), trio's own on trio
        (anyio's wraps it)."""
        ...

    async def close(self, agen: AsyncGenerator[Any, None]) -> None:
        """Close ``agen`` (an agent's, left before its end) uncancelled: what its ``finally``
        blocks do is not cut short by a cancellation of the caller."""
        ...

    def jobs(self, stop: Callable[[], None]) -> Any:
        """An async context manager, entered in the engine's task group: the jobs started
        within it run until they end, and it ends once they have. Should it be left by
        cancellation, ``stop`` is called to have them end (they are cancelled with the group
        on trio; on asyncio, where they are tasks of their own, ``stop`` is what ends them)."""
        ...

    def spawn(self, job: Job, *args: Any, name: str) -> None:
        """Start ``job(*args)`` within :meth:`jobs`; it must catch its own exceptions."""
        ...


def current() -> Loop:
    """The primitives of the loop running the caller."""
    # (Not sniffio: the asyncio extra does not bring it. anyio runs on asyncio or trio only.)
    try:
        return _Asyncio(asyncio.get_running_loop())
    except RuntimeError:
        return _Trio()


# --- asyncio --------------------------------------------------------------------------------


class _FutureWaiter:
    __slots__ = ("_future", "_loop", "is_set", "value")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._future: asyncio.Future[None] | None = None
        self.value: Any = None
        self.is_set = False

    def set(self, value: Any = None) -> None:
        if not self.is_set:
            self.value, self.is_set = value, True
            future = self._future
            if future is not None and not future.done():
                future.set_result(None)

    async def wait(self) -> Any:
        if not self.is_set:
            future = self._future
            if future is None or future.done():  # (its waiter before was cancelled)
                future = self._future = self._loop.create_future()
            await future
        return self.value


class _Asyncio:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._tasks: set[asyncio.Task[Any]] = set()
        # anyio's scope for asyncio, made directly: ``anyio.CancelScope()`` looks the loop's
        # library up (sniffio) for each.
        self._scope: Callable[[], Scope] = type(anyio.CancelScope())

    def waiter(self) -> Waiter:
        return _FutureWaiter(self._loop)

    def cancel_scope(self) -> Scope:
        return self._scope()

    async def close(self, agen: AsyncGenerator[Any, None]) -> None:
        # Most generators close without waiting for anything (no ``await`` in their cleanup):
        # run the close's first step; only one that waits then needs anyio's shield (asyncio
        # delivers a cancellation only where a task waits, so that step needed none).
        closing = agen.aclose()
        try:
            waiting_for = closing.send(None)
        except StopIteration:
            return
        with anyio.CancelScope(shield=True):
            await resume(closing, waiting_for)

    @asynccontextmanager
    async def jobs(self, stop: Callable[[], None]) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if self._tasks:
                stop()
                with anyio.CancelScope(shield=True):
                    while self._tasks:
                        await asyncio.wait(list(self._tasks))

    def spawn(self, job: Job, *args: Any, name: str) -> None:
        task = self._loop.create_task(job(*args), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


@types.coroutine
def resume(coroutine: Coroutine[Any, Any, Any], waiting_for: Any) -> Generator[Any, Any, Any]:
    """Await the rest of ``coroutine``, whose last step gave ``waiting_for`` (what it waits on,
    for the loop) and which has taken no step since: what ``await`` would have done. On any
    loop (what the step waits on is handed to it as it is); for a step begun by hand."""
    while True:
        try:
            sent = yield waiting_for
        except BaseException as error:  # thrown in by the loop (a cancellation), or closed
            try:
                waiting_for = coroutine.throw(error)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                waiting_for = coroutine.send(sent)
            except StopIteration as stop:
                return stop.value


# --- trio -----------------------------------------------------------------------------------


class _ParkedWaiter:
    __slots__ = ("_lowlevel", "_task", "is_set", "value")

    def __init__(self, lowlevel: Any) -> None:
        self._lowlevel = lowlevel  # (trio is imported only where it runs)
        self._task: Any = None
        self.value: Any = None
        self.is_set = False

    def set(self, value: Any = None) -> None:
        if not self.is_set:
            self.value, self.is_set = value, True
            task = self._task
            if task is not None:
                self._task = None
                self._lowlevel.reschedule(task)

    async def wait(self) -> Any:
        if not self.is_set:
            lowlevel = self._lowlevel
            self._task = lowlevel.current_task()

            def abort(_: object) -> Any:
                self._task = None
                return lowlevel.Abort.SUCCEEDED

            await lowlevel.wait_task_rescheduled(abort)
        return self.value


def _trio() -> Any:
    import trio

    return trio


class _Trio:
    def __init__(self) -> None:
        self._nursery: Any = None
        trio = _trio()
        self._lowlevel = trio.lowlevel
        self._scope: Callable[..., Scope] = trio.CancelScope

    def waiter(self) -> Waiter:
        return _ParkedWaiter(self._lowlevel)

    def cancel_scope(self) -> Scope:
        return self._scope()

    async def close(self, agen: AsyncGenerator[Any, None]) -> None:
        with self._scope(shield=True):
            await agen.aclose()

    @asynccontextmanager
    async def jobs(self, stop: Callable[[], None]) -> AsyncIterator[None]:
        try:
            async with _trio().open_nursery() as nursery:
                self._nursery = nursery
                yield
        finally:
            self._nursery = None  # (only once every job has ended: they may start others)

    def spawn(self, job: Job, *args: Any, name: str) -> None:
        if self._nursery is None:
            raise RuntimeError("no jobs may start: the engine is not running")
        self._nursery.start_soon(job, *args, name=name)
