"""The engine: the core's read-decide-commit-perform loop, run for real on asyncio or trio.

Everything here is mechanics: reading and committing through the store, retrying on a version
conflict, running agents in the background, stopping them, waking blocking sends when their task
settles, feeding streams, and ticking the core's timer. Every *decision* (what a request means,
which state a task moves to, whether agent output still counts) is the core's.

It is written on anyio, whose primitives are the loop's own: on trio its task group is a nursery
and its cancel scopes are trio's; on asyncio they are the same structured-concurrency rules laid
over asyncio tasks. So one engine serves both adapters, and they differ only in their HTTP
application and server (``a2a_adapters.quart`` and ``a2a_adapters.trio``).

Lifecycle: :meth:`Engine.run` owns a task group for the engine's whole life (agent runs, the
timer, the push sender all live in it): start it in the server's nursery on trio, or as a task
on asyncio, and wait for :meth:`Engine.wait_ready`. :meth:`Engine.aclose` shuts down: running
agents are stopped and their tasks failed *with a record* of why, streams end, and the group is
closed.

The framework-free entry point is :meth:`Engine.handle`: any HTTP framework can call it with the
request's method, path, headers and body (and the caller, if it authenticated the request
itself; otherwise the engine's authenticators decide, answering 401 when they refuse).
"""

import asyncio
import inspect
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, assert_never

import anyio
import attrs
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from a2a_adapters._agents import AgentRegistry
from a2a_adapters._auth import Authenticator, authenticate
from a2a_adapters._push import PushSender
from a2a_adapters._streaming import HttpStream
from a2a_adapters.stores import TaskStore
from a2a_core import (
    KEEPALIVE,
    AgentDone,
    AgentOutput,
    AwaitTask,
    Caller,
    Context,
    Core,
    Decision,
    Dispatch,
    Effect,
    Fail,
    HttpRequest,
    HttpResponse,
    Input,
    InputError,
    InternalError,
    LoggedEvent,
    LogQuery,
    Notify,
    OpenStream,
    Publish,
    Reads,
    Respond,
    RunAbandoned,
    StartRun,
    StopRun,
    TaskRecord,
    Tick,
    advance,
    open_cursor,
)

__all__ = ["ENGINES", "Engine", "begin_shutdown"]

#: Where an application keeps the engines it runs (``app.extensions[ENGINES]``), so that its
#: server can begin their shutdown the moment it starts shutting down.
ENGINES = "a2a_engines"


def begin_shutdown(app: Any) -> None:
    """Begin the shutdown of every engine ``app`` runs (see :meth:`Engine.begin_shutdown`)."""
    for engine in app.extensions.get(ENGINES, ()):
        engine.begin_shutdown()


log = logging.getLogger("a2a_adapters")

#: How often a decision is retried when its writes lose a compare-and-set race.
MAX_ATTEMPTS = 16
#: Batches of events a stream may have waiting before it stops buffering and reads the store's
#: log instead.
MAX_BUFFERED_BATCHES = 256
#: Seconds of silence after which a stream sends a keep-alive comment.
KEEPALIVE_SECONDS = 15.0
#: Seconds a blocking send waits before it also watches for its client leaving.
WATCH_AFTER_SECONDS = 1.0
#: Seconds shutdown waits for stopped agents to finish (their records are written then).
SHUTDOWN_GRACE = 5.0


def wall_clock() -> Callable[[], datetime]:
    """A clock that reads the loop's own time, anchored to the wall clock at its first reading.

    Following the loop's clock (not ``datetime.now``) is what lets a test drive expiry with
    ``trio.testing.MockClock``: the engine's sense of time jumps with the loop's.
    """
    anchor: tuple[datetime, float, Callable[[], float]] | None = None

    def now() -> datetime:
        nonlocal anchor
        if anchor is None:
            loop_time = _loop_time()
            anchor = (datetime.now(UTC), loop_time(), loop_time)
        wall, start, loop_time = anchor
        return wall + timedelta(seconds=loop_time() - start)

    return now


def _loop_time() -> Callable[[], float]:
    """The running loop's clock, looked up once (``anyio.current_time`` looks the loop's
    library up on every call, which a busy server pays several times per request)."""
    try:
        return asyncio.get_running_loop().time
    except RuntimeError:  # not on asyncio: trio
        return anyio.current_time


def new_uuid() -> str:
    return str(uuid.uuid4())


class Engine:
    """Serves A2A: a core, a store and agents (on whichever loop runs it)."""

    def __init__(
        self,
        core: Core,
        store: TaskStore,
        agents: AgentRegistry,
        *,
        auth: Sequence[Authenticator] = (),
        push: PushSender | None = None,
        clock: Callable[[], datetime] | None = None,
        new_id: Callable[[], str] = new_uuid,
        keepalive_seconds: float = KEEPALIVE_SECONDS,
    ) -> None:
        self.core = core
        self.store = store
        self.agents = agents
        self.auth = tuple(auth)
        self.push = push
        self._clock = clock or wall_clock()
        self._new_id = new_id
        self._keepalive = keepalive_seconds
        self._group: TaskGroup | None = None
        self._runs: dict[str, _Run] = {}
        self._waiters: dict[str, list[_Waiter]] = {}
        self._mailboxes: dict[str, set[_Mailbox]] = {}
        self._wake_at: datetime | None = None
        self._alarm = anyio.Event()
        self._closing = False
        self._ready = anyio.Event()
        self._stopped = anyio.Event()

    # --- lifecycle ----------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the engine's background work until :meth:`aclose`; reports started when ready.

        With trio: ``await nursery.start(engine.run)``.
        """
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                group.start_soon(self._run_timer)
                if self.push is not None:
                    group.start_soon(self.push.run)
                self._arm(self._clock())  # a first tick sweeps what expired while we were down
                self._ready.set()
                task_status.started()
                await anyio.sleep_forever()
        finally:
            self._group = None
            self._stopped.set()

    async def wait_ready(self) -> None:
        """Return once :meth:`run` has started everything (requests may be handled then)."""
        await self._ready.wait()

    def begin_shutdown(self) -> None:
        """The server is stopping: end every stream now (clients resume elsewhere with
        ``Last-Event-ID``) and start no new agent run. Runs under way may still finish until
        :meth:`aclose`. Safe to call from the loop's thread at any time, and more than once."""
        self._closing = True
        for mailboxes in self._mailboxes.values():
            for mailbox in mailboxes:
                mailbox.close()

    async def aclose(self) -> None:
        """Shut down: end streams, stop agent runs still going (failing their tasks with a
        record of why), then stop the timer and the push sender. Safe to call twice."""
        if self._group is None:
            return
        self.begin_shutdown()
        for running in list(self._runs.values()):
            running.scope.cancel()
        with anyio.move_on_after(SHUTDOWN_GRACE):
            while self._runs:
                await anyio.sleep(0.01)
        self._group.cancel_scope.cancel()
        await self._stopped.wait()

    # --- the entry point ----------------------------------------------------------------------

    async def handle(
        self,
        request: HttpRequest,
        base_url: str,
        caller: Caller | None = None,
        *,
        disconnected: Callable[[], Awaitable[object]] | None = None,
    ) -> HttpResponse | HttpStream:
        """Answer one HTTP request that reached the A2A root at ``base_url``.

        Pass ``caller`` if the request was authenticated already; otherwise the engine's
        authenticators verify it (every caller is anonymous when there are none). Pass
        ``disconnected`` (returns once the client has gone) so that a blocking send whose
        client leaves stops waiting at once instead of when its task settles.
        """
        if caller is None:
            verified = authenticate(self.core, self.auth, request)
            if isinstance(verified, HttpResponse):
                return verified
            caller = verified
        routed = self.core.handle_http(request, caller, base_url)
        if isinstance(routed, HttpResponse):
            return routed
        try:
            decision, listener = await self._execute(routed.call)
        except _Conflict as conflict:
            return self.core.render(routed, Fail(InternalError(str(conflict))))
        match decision.reply:
            case Respond() | Fail() as reply:
                return self.core.render(routed, reply)
            case AwaitTask() as wait:
                assert listener is not None
                try:
                    settled = await _until_settled(listener, disconnected)
                finally:
                    self._forget(wait.task_id, listener)  # also when the client gave up
                if settled is None:
                    return _GONE  # nobody to answer
                return self.core.render(routed, self.core.settled_reply(wait, settled))
            case OpenStream() as opened:
                body = self._stream(routed, opened)
                return HttpStream(200, self.core.stream_headers(), body)
            case None:  # pragma: no cover - the core answers every call
                raise AssertionError("the core returned no reply for a call")

    # --- read, decide, commit, perform --------------------------------------------------------

    async def _execute(self, inp: Input) -> "tuple[Decision, _Waiter | None]":
        for _ in range(MAX_ATTEMPTS):
            snapshot = await self.store.read(self.core.needs(inp))
            decision = self.core.decide(inp, snapshot, Context(self._clock(), self._new_id))
            if not decision.writes or await self.store.commit(decision.writes):
                break
        else:
            raise _Conflict(f"gave up after {MAX_ATTEMPTS} conflicting writes")
        if decision.wake_at is not None:
            self._arm(decision.wake_at)
        # A blocking send listens before the effects run, so its task cannot settle unseen.
        # (A stream needs no such care: it reads the log when it starts.)
        listener = None
        if isinstance(decision.reply, AwaitTask):
            listener = _Waiter()
            self._waiters.setdefault(decision.reply.task_id, []).append(listener)
        for effect in decision.effects:
            self._perform(effect)
        return decision, listener

    def _perform(self, effect: Effect) -> None:
        match effect:
            case StartRun():
                if self._group is None:
                    raise RuntimeError("the engine is not running: start it before serving")
                scope = anyio.CancelScope()
                self._runs[effect.task_id] = _Run(effect.run, scope)
                if self._closing:
                    scope.cancel()  # too late to start work: the task is failed with a record
                self._group.start_soon(self._run, effect, scope, name=f"a2a run {effect.task_id}")
            case StopRun(task_id=task_id, run=run):
                current = self._runs.get(task_id)
                if current is not None and current.run == run:
                    # A cancel scope, so that an agent's shielded section finishes first.
                    current.scope.cancel()
            case Publish(record=record, events=events, settled=settled):
                for mailbox in self._mailboxes.get(record.id, ()):
                    mailbox.offer(events)
                if settled:
                    for waiter in self._waiters.pop(record.id, ()):
                        waiter.resolve(record)
            case Notify():
                if self.push is not None:
                    self.push.send(effect)
                else:  # a config stored while push was on; the server no longer pushes
                    log.warning("push is off: dropped a notification for task %s", effect.task_id)
            case _:
                assert_never(effect)

    # --- event streams ------------------------------------------------------------------------

    async def _stream(self, dispatch: Dispatch, opened: OpenStream) -> AsyncGenerator[bytes, None]:
        """The SSE frames of one stream, until the core's cursor says it is done.

        The stream subscribes when it starts (a stream that never starts holds nothing) and then
        reads the log from its starting point, so nothing published before is missed.
        """
        task_id = opened.task_id
        mailbox = _Mailbox()
        if self._closing:
            mailbox.close()
        self._mailboxes.setdefault(task_id, set()).add(mailbox)
        try:
            step = open_cursor(opened)
            read_log = not step.cursor.done
            while True:
                for frame in step.frames:
                    yield self.core.render_event(dispatch, frame)
                cursor = step.cursor
                if cursor.done:
                    return
                if read_log or step.gap:
                    # Missed events (a resume, or a full mailbox): the store's log has them.
                    query = LogQuery(task_id, cursor.last_seq)
                    found = await self.store.read(Reads(task_id=task_id, log=query))
                    if found.task is None:
                        return  # the task is gone (expired): nothing more will come
                    step = advance(cursor, found.log)
                    read_log = len(found.log) == query.limit  # there may be more: read on
                    continue
                item = await mailbox.next(self._keepalive)
                match item:
                    case _Quiet():
                        yield KEEPALIVE
                        step = advance(cursor, ())
                    case _Behind():
                        read_log = True
                        step = advance(cursor, ())
                    case _Closed():
                        return
                    case events:
                        step = advance(cursor, events)
        except Exception:
            log.exception("stream on task %s failed", task_id)
            yield self.core.render_stream_error(dispatch, InternalError("The stream failed"))
        finally:
            mailbox.close()
            boxes = self._mailboxes.get(task_id)
            if boxes is not None:
                boxes.discard(mailbox)
                if not boxes:
                    del self._mailboxes[task_id]

    def _forget(self, task_id: str, waiter: "_Waiter") -> None:
        waiters = self._waiters.get(task_id)
        if waiters is not None and waiter in waiters:
            waiters.remove(waiter)
            if not waiters:
                del self._waiters[task_id]

    # --- the timer ----------------------------------------------------------------------------

    def _arm(self, at: datetime) -> None:
        """Make sure the timer fires no later than ``at``."""
        if self._wake_at is None or at < self._wake_at:
            self._wake_at = at
            self._alarm.set()

    async def _run_timer(self) -> None:
        while True:
            self._alarm = anyio.Event()
            if self._wake_at is None:
                await self._alarm.wait()
                continue
            delay = (self._wake_at - self._clock()).total_seconds()
            if delay > 0:
                # Sleep until the deadline, or until an earlier one is armed.
                with anyio.move_on_after(delay):
                    await self._alarm.wait()
                continue
            self._wake_at = None
            try:
                await self._execute(Tick(self._clock()))
            except _Conflict:
                log.exception("the expiry sweep could not be committed; retrying later")
                self._arm(self._clock() + timedelta(seconds=1))

    # --- agent runs ---------------------------------------------------------------------------

    async def _run(self, start: StartRun, scope: anyio.CancelScope) -> None:
        task_id, run = start.task_id, start.run
        try:
            done: AgentDone | None = None
            with scope:
                done = await self._drive(start)
            if scope.cancelled_caught:
                if not self._closing:
                    return  # stopped by the core: it already knows
                # Stopped by shutdown: record why, so the task is not left working.
                done = AgentDone(task_id, run, error=RunAbandoned())
            if done is None:
                return  # the core said nothing more from this run counts
            # Even a run stopped meanwhile reports how it ended: the core drops what no longer
            # counts. Shielded, so that shutdown cannot cut the record short.
            with anyio.CancelScope(shield=True):
                await self._execute(done)
        except _Conflict:
            log.exception("agent output for task %s could not be committed", task_id)
        finally:
            current = self._runs.get(task_id)
            if current is not None and current.run == run:
                del self._runs[task_id]

    async def _drive(self, start: StartRun) -> AgentDone | None:
        """Run the agent, feeding each yielded value to the core; say how it ended (``None``
        when the core already said that nothing more from this run counts)."""
        agent = self.agents.agent_for(start.context.skill_id)
        task_id, run = start.task_id, start.run
        try:
            result: Any = agent(start.context)
            if not inspect.isasyncgen(result):
                return AgentDone(task_id, run, await result)
        except Exception as error:
            _log_failure(task_id, error)
            return AgentDone(task_id, run, error=error)
        updates: AsyncIterator[Any] = result
        over = False
        try:
            while True:
                try:
                    value = await anext(updates)
                except StopAsyncIteration:
                    return None if over else AgentDone(task_id, run)
                except Exception as error:
                    _log_failure(task_id, error)
                    return AgentDone(task_id, run, error=error)
                # Shielded: a stop must not fall between the commit and its effects; it takes
                # effect at the agent's next await instead.
                with anyio.CancelScope(shield=True):
                    decision, _ = await self._execute(AgentOutput(task_id, run, value))
                over = decision.run_over
        finally:
            with anyio.CancelScope(shield=True):
                await result.aclose()


#: The answer to a client that left (it goes nowhere).
_GONE = HttpResponse(499, (("content-length", "0"),), b"")


async def _until_settled(
    listener: "_Waiter", disconnected: Callable[[], Awaitable[object]] | None
) -> TaskRecord | None:
    """The settled task, or ``None`` if the client left first.

    Watching for the client costs a task of its own (measured: a third of a blocking send's
    throughput), so it starts only once the task has taken a while: most sends settle within
    milliseconds, and a client that leaves sooner holds its waiter only that long.
    """
    if disconnected is None:
        return await listener.wait()
    with anyio.move_on_after(WATCH_AFTER_SECONDS):
        return await listener.wait()
    settled: TaskRecord | None = None
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            await disconnected()
            group.cancel_scope.cancel()

        group.start_soon(watch)
        settled = await listener.wait()
        group.cancel_scope.cancel()
    return settled


class _Conflict(Exception):
    """Writes kept losing compare-and-set races."""


@attrs.frozen
class _Run:
    """A running agent: its number and the scope that stops it."""

    run: int
    scope: anyio.CancelScope


class _Waiter:
    """A blocking send waiting for its task to settle."""

    def __init__(self) -> None:
        self._settled = anyio.Event()
        self._record: TaskRecord | None = None

    def resolve(self, record: TaskRecord) -> None:
        if self._record is None:
            self._record = record
            self._settled.set()

    async def wait(self) -> TaskRecord:
        await self._settled.wait()
        assert self._record is not None
        return self._record


@attrs.frozen
class _Quiet:
    """Nothing arrived within the keep-alive interval."""


@attrs.frozen
class _Behind:
    """The mailbox overflowed: read the store's log from the cursor on."""


@attrs.frozen
class _Closed:
    """The stream must end (shutdown)."""


_Batch = tuple[LoggedEvent, ...]


class _Mailbox:
    """The event batches published to one stream and not yet sent: a bounded memory channel.

    When a stream falls :data:`MAX_BUFFERED_BATCHES` behind, its channel is emptied and a
    single "behind" marker takes the place of what was dropped; the stream then reads the
    store's log instead. So a slow reader costs bounded memory, never blocks the agent or
    other readers, and still loses nothing.
    """

    def __init__(self) -> None:
        self._send: MemoryObjectSendStream[_Batch | _Behind | _Closed]
        self._receive: MemoryObjectReceiveStream[_Batch | _Behind | _Closed]
        self._send, self._receive = anyio.create_memory_object_stream(MAX_BUFFERED_BATCHES)
        self._behind = False
        self._closed = False
        #: How many times it overflowed (and its stream fell back on the log).
        self.overflows = 0

    @property
    def pending(self) -> int:
        """How many batches (or markers) wait to be read."""
        return self._receive.statistics().current_buffer_used

    def offer(self, events: tuple[LoggedEvent, ...]) -> None:
        if self._behind or self._closed:
            return
        try:
            self._send.send_nowait(events)
        except anyio.WouldBlock:
            self._behind = True
            self.overflows += 1
            self._drain()
            self._send.send_nowait(_Behind())

    def close(self) -> None:
        """End the stream: whatever waits is told to stop."""
        if not self._closed:
            self._closed = True
            self._drain()
            self._send.send_nowait(_Closed())

    def _drain(self) -> None:
        while True:
            try:
                self._receive.receive_nowait()
            except anyio.WouldBlock:
                return

    async def next(self, timeout: float) -> _Batch | _Quiet | _Behind | _Closed:
        """The next batch or marker, or :class:`_Quiet` after ``timeout`` seconds of silence."""
        with anyio.move_on_after(timeout):
            item = await self._receive.receive()
            if isinstance(item, _Behind):
                self._behind = False
            return item
        return _Quiet()


def _log_failure(task_id: str, error: Exception) -> None:
    """Log an agent's exception, unless it is the documented way to ask for input."""
    if not isinstance(error, InputError):
        log.error("agent failed on task %s", task_id, exc_info=error)
