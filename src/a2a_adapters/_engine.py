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
    release,
)

__all__ = ["ENGINES", "Engine", "EngineFailed", "begin_shutdown", "engine_failure", "until_failed"]

#: Where an application keeps the engines it runs (``app.extensions[ENGINES]``), so that its
#: server can begin their shutdown the moment it starts shutting down.
ENGINES = "a2a_engines"


def begin_shutdown(app: Any) -> None:
    """Begin the shutdown of every engine ``app`` runs (see :meth:`Engine.begin_shutdown`)."""
    for engine in app.extensions.get(ENGINES, ()):
        engine.begin_shutdown()


class EngineFailed(RuntimeError):
    """An engine stopped on its own; the server stopped with it (its cause is chained)."""


async def until_failed(app: Any) -> None:
    """Return as soon as one of the engines ``app`` runs has failed (never, if none does).

    A server runs this beside itself and stops when it returns: a process whose engine is
    gone must exit (non-zero, see :func:`engine_failure`) so that its supervisor restarts it,
    not go on answering every request with an error.
    """
    engines: list[Engine] = list(app.extensions.get(ENGINES, ()))
    while engines:
        async with anyio.create_task_group() as group:
            for engine in engines:
                group.start_soon(_stopped_then_cancel, engine, group.cancel_scope)
        if any(engine.failure is not None for engine in engines):
            return
        await anyio.sleep_forever()  # every engine was closed normally: nothing can fail now


async def _stopped_then_cancel(engine: "Engine", scope: anyio.CancelScope) -> None:
    await engine.wait_stopped()
    if engine.failure is not None:
        scope.cancel()


def engine_failure(app: Any) -> EngineFailed | None:
    """What to raise once ``app``'s server has stopped, if one of its engines had failed."""
    for engine in app.extensions.get(ENGINES, ()):
        if engine.failure is not None:
            failed = EngineFailed("the A2A engine stopped after a failure (see the log)")
            failed.__cause__ = engine.failure
            return failed
    return None


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
#: Seconds shutdown gives running agents to finish, and queued push notifications to go out.
SHUTDOWN_GRACE = 5.0
#: Seconds shutdown then waits for the agents it stopped to record why.
STOP_GRACE = 2.0
#: Seconds before the timer tries again after a tick failed.
TICK_RETRY_SECONDS = 1.0


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
        shutdown_grace: float = SHUTDOWN_GRACE,
    ) -> None:
        self.core = core
        self.store = store
        self.agents = agents
        self.auth = tuple(auth)
        self.push = push
        self._clock = clock or wall_clock()
        self._new_id = new_id
        self._keepalive = keepalive_seconds
        self._grace = shutdown_grace
        self._group: TaskGroup | None = None
        self._runs: dict[str, _Run] = {}
        self._waiters: dict[str, list[_Waiter]] = {}
        self._mailboxes: dict[str, set[_Mailbox]] = {}
        self._wake_at: datetime | None = None
        self._alarm = anyio.Event()
        self._closing = False
        self._ready = _Flag()
        self._stopped = _Flag()
        #: Why the engine stopped on its own, if it did (see :meth:`run`).
        self.failure: BaseException | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the engine's background work until :meth:`aclose`; reports started when ready.

        With trio: ``await nursery.start(engine.run)``.

        Every background job (an agent run, a push delivery, a tick, a stream) contains its own
        failures: it logs them with their cause and the engine goes on. Should the engine's
        task group fail all the same (a bug, or a part given to it, such as a push sender,
        failing as a whole), it does not take down the nursery it runs in: it logs the cause,
        sets :attr:`failure` and returns, and :meth:`wait_stopped` returns. Servers watch for
        that and stop the process with a non-zero status (a supervisor restarts it), rather
        than go on serving with half an engine.
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
        except Exception as error:
            self.failure = error
            log.critical("the A2A engine stopped after a failure", exc_info=error)
        finally:
            self._group = None
            self._ready.set()  # nobody waits for a start that will not come
            self._stopped.set()

    @property
    def shutdown_budget(self) -> float:
        """The longest :meth:`aclose` may take, in seconds (a server running the engine must
        not cut it shorter)."""
        return self._grace + STOP_GRACE + 1.0

    async def wait_ready(self) -> None:
        """Return once :meth:`run` has started everything (requests may be handled then)."""
        await self._ready.wait()

    async def wait_stopped(self) -> None:
        """Return once :meth:`run` has ended: closed, or failed (then :attr:`failure` says why)."""
        await self._stopped.wait()

    def begin_shutdown(self) -> None:
        """The server is stopping: end every stream now (clients resume elsewhere with
        ``Last-Event-ID``) and start no new agent run. Runs under way may still finish until
        :meth:`aclose`. Safe to call from the loop's thread at any time, and more than once."""
        self._closing = True
        for mailboxes in self._mailboxes.values():
            for mailbox in mailboxes:
                mailbox.close()

    async def aclose(self) -> None:
        """Shut down gracefully. Safe to call twice.

        Streams end at once and no new agent run starts. Agents already running get the
        graceful period (``shutdown_grace``) to finish; any still going after it are stopped,
        and their tasks failed *with a record* of why, never left working. Push notifications
        already queued (the last states included) go out within what is left of the period.
        Then the timer and the sender stop. With nothing running and nothing queued, it
        returns at once.
        """
        if self._group is None:
            return
        self.begin_shutdown()
        deadline = anyio.current_time() + self._grace
        with anyio.move_on_after(self._grace):
            await self._until(lambda: not self._runs)
        for running in list(self._runs.values()):
            running.scope.cancel()
        with anyio.move_on_after(STOP_GRACE):
            await self._until(lambda: not self._runs)
        if self.push is not None:
            with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0)):
                await self.push.drain()
        if self._group is not None:
            self._group.cancel_scope.cancel()
        await self._stopped.wait()

    @staticmethod
    async def _until(condition: Callable[[], bool]) -> None:
        while not condition():
            await anyio.sleep(0.01)

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
        if self.failure is not None:
            return self.core.internal_error(request.path, _UNAVAILABLE)
        try:
            return await self._handle(request, base_url, caller, disconnected)
        except Exception:
            # A bug, or a store that failed: the client gets a protocol error, the log the cause.
            log.exception("%s %s failed", request.method, request.path)
            return self.core.internal_error(request.path, _FAILED)

    async def _handle(
        self,
        request: HttpRequest,
        base_url: str,
        caller: Caller | None,
        disconnected: Callable[[], Awaitable[object]] | None,
    ) -> HttpResponse | HttpStream:
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
            log.error("%s on task data kept conflicting: %s", routed.call.operation.value, conflict)
            return self.core.render(routed, Fail(InternalError(str(conflict))))
        except Exception:
            log.exception("%s failed", routed.call.operation.value)
            return self.core.render(routed, Fail(InternalError(f"Internal error: {_FAILED}")))
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
                due = cursor.release_at
                wait = self._keepalive
                if due is not None:
                    wait = min(wait, max((due - self._clock()).total_seconds(), 0.0))
                item = await mailbox.next(wait)
                match item:
                    case _Quiet() if due is not None:
                        # The agent has not spoken within the window: the task goes out.
                        step = release(cursor, self._clock())
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
            except Exception:
                log.exception("the expiry sweep failed; retrying in %s s", TICK_RETRY_SECONDS)
                self._arm(self._clock() + timedelta(seconds=TICK_RETRY_SECONDS))

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
        except Exception:
            log.exception("the run of task %s failed inside the engine", task_id)
            await self._record_failure(task_id, run)
        finally:
            current = self._runs.get(task_id)
            if current is not None and current.run == run:
                del self._runs[task_id]

    async def _record_failure(self, task_id: str, run: int) -> None:
        """After the engine itself failed a run (its store, or a bug), try once to fail the
        task with a record, so that it is not left working with nothing behind it."""
        try:
            with anyio.CancelScope(shield=True):
                await self._execute(AgentDone(task_id, run, error=InternalError()))
        except Exception:
            log.exception("task %s could not be failed after its run failed", task_id)

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


_UNAVAILABLE = "The server failed and is stopping; retry shortly"
_FAILED = "The server failed to handle this request; the failure was logged"

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


class _Flag:
    """An event made on first use, in the loop that uses it.

    An engine may be built in one event loop (a test's asyncio loop, say) and run in another
    (trio): an ``anyio.Event`` made at construction would belong to the first.
    """

    def __init__(self) -> None:
        self._set = False
        self._event: anyio.Event | None = None

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        if self._set:
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


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
