"""The engine: the core's machine (``a2a_core.transport.Server``), performed on asyncio or trio.

Everything that is bookkeeping (which request waits on which task, which stream follows which
task and from where, retries after a lost compare-and-set race, the order of effects, the
deadlines, the runs under way) is the machine's. The engine only does what it is asked to:
store reads and commits, agent runs in its task group, one bounded channel per stream, sleeping
until the machine's next deadline, and push delivery. After every call into the machine it
performs what came out (:meth:`Engine._perform`) and then the store work (:meth:`Engine._pump`).

It is written on anyio, whose primitives are the loop's own, so one engine serves both adapters;
what it does on every request (waiting for an answer, starting a run) it does with the loop's
primitives directly (``a2a_adapters._loops``), and one patrol task, not a timer per request,
watches for the clients of the blocking sends that take long.

Lifecycle: :meth:`Engine.run` owns a task group for the engine's life (agent runs, the timer,
the push sender): start it in the server's nursery on trio, or as a task on asyncio, and wait
for :meth:`Engine.wait_ready`. :meth:`Engine.aclose` shuts down gracefully. Failures of
background jobs are contained: each is logged with its cause; a store error in a request is a
protocol error; should the task group fail anyway, :attr:`Engine.failure` says why, and servers
stop the process (``a2a_adapters._lifecycle``).

The framework-free entry point is :meth:`Engine.handle`.
"""

import logging
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, assert_never

import anyio
import attrs
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from a2a_core import Core, InputError
from a2a_core.store import (
    AsyncStore,
    EventBus,
    InlineStore,
    LoggedEvent,
    PingableStore,
    SharedStore,
    StoreMisconfigured,
    StoreUnavailable,
    SyncStore,
)
from a2a_core.transport import (
    Answer,
    Caller,
    Commit,
    Frames,
    Health,
    HttpRequest,
    HttpResponse,
    Notify,
    OutputTaken,
    Probe,
    Problem,
    Read,
    Server,
    StartRun,
    StopRun,
    StreamOpened,
    Unwatch,
    Watch,
)

from . import _loops
from ._agents import AgentRegistry
from ._auth import Authenticator, KeepsState, authenticate
from ._clock import new_uuid, wall_clock
from ._loops import Loop, Scope, Waiter
from ._outage import Outage
from ._push import PushSender
from ._runs import Slot, close_shielded, run_agent
from ._streaming import HttpStream, stream_body
from ._telemetry import UNTRACED, RunSpan, Telemetry, _Untraced
from .stores import MemoryStore

if TYPE_CHECKING:
    from opentelemetry.trace import SpanContext

__all__ = ["Engine"]

log = logging.getLogger("a2a_adapters")

#: Batches of frames a stream may have unsent before it stops taking events (it reads the
#: store's log once it has sent them).
MAX_BUFFERED_BATCHES = 256
#: Seconds of silence after which a stream sends a keep-alive comment.
KEEPALIVE_SECONDS = 15.0
#: Seconds between the patrol's looks at the blocking sends under way: one that has waited
#: for :data:`WATCH_AFTER_TICKS` of them (1 to 1.5 s) also watches for its client leaving.
#: Watching costs a task of its own (a third of a blocking send's throughput, measured), and
#: a timer per send costs too, so that one patrol looks for the few that take long: most are
#: answered within milliseconds.
PATROL_SECONDS = 0.5
WATCH_AFTER_TICKS = 3
#: Seconds shutdown gives running agents to finish, and queued push notifications to go out.
SHUTDOWN_GRACE = 5.0
#: Seconds shutdown then waits for the runs it stopped to be recorded.
STOP_GRACE = 2.0
#: Seconds a readiness probe waits for the store to answer before it says the store is down
#: (orchestrators time a probe out after about a second: an answer after that helps nobody).
STORE_PROBE_TIMEOUT = 1.0

_UNAVAILABLE = "The server failed and is stopping; retry shortly"
_FAILED = "The server failed to handle this request; the failure was logged"
#: The answer to a client that left (it goes nowhere).
_GONE = HttpResponse(499, (("content-length", "0"),), b"")
#: What a send's waiter is set to when its client left.
_LEFT = object()


class Engine:
    """Serves A2A: a core, a store and agents (on whichever loop runs it)."""

    def __init__(
        self,
        core: Core,
        store: AsyncStore,
        agents: AgentRegistry,
        *,
        auth: Sequence[Authenticator] = (),
        push: PushSender | None = None,
        clock: Callable[[], datetime] | None = None,
        new_id: Callable[[], str] = new_uuid,
        keepalive_seconds: float = KEEPALIVE_SECONDS,
        shutdown_grace: float = SHUTDOWN_GRACE,
        telemetry: Telemetry | None = None,
        owns_store: bool = False,
    ) -> None:
        self.core = core
        #: Whether the store was opened for this engine (from a URL): then it closes it.
        self._owns_store = owns_store
        #: Traces and metrics (``a2a_adapters._telemetry``): the global providers' by default.
        self.telemetry = telemetry if telemetry is not None else Telemetry()
        self.store = store
        #: Whether the store is away, said once per outage in the log.
        self.store_outage = Outage(
            "the task store",
            log,
            consequence="requests that need it are answered 503 (retry later), and agents' "
            "outputs are held until it answers",
        )
        #: Whether the store refuses what the server asks of it (``StoreMisconfigured``: a
        #: permission missing), said once until it accepts again.
        self.store_refusal = Outage(
            "the task store",
            log,
            went="refuses what this server asks of it",
            back="accepts it again",
            consequence="requests that need it fail (500) until its configuration is changed",
        )
        self.agents = agents
        self.auth = tuple(auth)
        self.push = push
        if push is not None:
            push.report = self._push_reported
            push.telemetry = self.telemetry
            if isinstance(store, SharedStore):
                # With replicas, one webhook's notifications may be owed by several servers:
                # each waits for the others' earlier ones, so that the webhook gets them in order.
                owed = store.owed_elsewhere
                push.ahead = lambda notify, handled: owed(
                    notify.task_id, notify.config_id, notify.seq, mine_after=handled
                )
        # A store that answers without waiting (the memory store) is the machine's to call: its
        # reads and commits then happen inside the call that needs them, with no task switch.
        inline: SyncStore | None = None
        if isinstance(store, InlineStore) and isinstance(store.inline, SyncStore):
            # Its commits never pass through here: counted on the way to it.
            inline = self.telemetry.counted(store.inline)
        # A store shared with other replicas brings the bus that rings for their changes.
        self.bus: EventBus | None = None
        lease = 0.0
        if isinstance(store, SharedStore):
            self.bus, lease = store.bus, store.lease
        self.server = Server(
            core,
            store=inline,
            new_id=new_id,
            stream_window=MAX_BUFFERED_BATCHES,
            shared=self.bus is not None,
            # Look for what dead replicas left about once per lease (at least once a second).
            reclaim_every=timedelta(seconds=max(lease, 1.0)),
        )
        self._clock = clock or wall_clock()
        self._keepalive = keepalive_seconds
        self._grace = shutdown_grace
        self._group: TaskGroup | None = None
        self._io: deque[Read | Commit] = deque()
        #: The loop's own primitives (``a2a_adapters._loops``), once :meth:`run` has begun.
        self._loop: Loop | None = None
        self._waiter: Callable[[], Waiter] = self._unbound_waiter
        self._cancel_scope: Callable[[], Scope] = self._unbound_scope
        self._close: Callable[[AsyncGenerator[Any, None]], Awaitable[None]] = close_shielded
        self._replies: dict[int, Waiter] = {}
        self._streams: dict[int, MemoryObjectSendStream[Frames]] = {}
        #: The blocking sends waiting for their answer, whose client may leave: the patrol's
        #: tick when each began, its waiter and how to hear its client leave.
        self._waiting: dict[int, tuple[int, Waiter, Callable[[], Awaitable[object]]]] = {}
        #: The sends whose clients the patrol watches: the scope of each watch.
        self._watching: dict[int, Scope] = {}
        self._tick = 0
        #: Set while the patrol has nothing to look at: the first send to wait wakes it.
        self._patrol_idle: Waiter | None = None
        #: The agent runs under way here, from their StartRun until their task ends (a run
        #: stopped is still here until it has).
        self._runs: dict[tuple[str, int], _Run] = {}
        #: The span of each request under way (telemetry on), for the runs it starts.
        self._origins: dict[int, SpanContext] = {}
        self._alarm = Slot()
        #: When the timer is set to wake up (``None``: when an alarm wakes it).
        self._sleeping_until: datetime | None = None
        self._ready = Slot()
        self._stopped = Slot()
        #: Why the engine stopped on its own, if it did (see :meth:`run`).
        self.failure: BaseException | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the engine's background work until :meth:`aclose`; reports started when ready.

        Should the task group fail (a bug, or a part given to the engine failing as a whole),
        it does not take the caller's nursery with it: the cause is logged, :attr:`failure`
        set, and :meth:`wait_stopped` returns.
        """
        loop = self._bind()
        try:
            async with anyio.create_task_group() as group, loop.jobs(self._stop_jobs):
                self._group = group
                group.start_soon(self._run_timer)
                group.start_soon(self._patrol)
                if self.bus is not None:
                    await group.start(self.bus.run, self._rang)
                if self.push is not None:
                    group.start_soon(self.push.run)
                for authenticator in self.auth:
                    if isinstance(authenticator, KeepsState):
                        await group.start(authenticator.run)
                await self._call(self.server.tick)  # sweeps what expired while we were down
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
        """The longest :meth:`aclose` may take, in seconds."""
        return self._grace + STOP_GRACE + 1.0

    async def wait_ready(self) -> None:
        """Return once :meth:`run` has started everything (requests may be handled then)."""
        await self._ready.wait()

    async def wait_stopped(self) -> None:
        """Return once :meth:`run` has ended: closed, or failed (:attr:`failure` says why)."""
        await self._stopped.wait()

    def begin_shutdown(self) -> None:
        """The server is stopping: every stream ends now and no new agent run starts. Safe to
        call from the loop's thread at any time, and more than once."""
        self.server.begin_shutdown(self._clock())
        self._perform()
        if self._io and self._group is not None:
            # Called from outside any task (a signal's callback), where nothing can be spawned
            # (anyio finds no running loop there): the timer's task does the store work.
            self._alarm.set()

    async def aclose(self) -> None:
        """Shut down gracefully (safe to call twice): streams end, running agents get the
        graceful period, those still going are stopped with a record, queued pushes go out
        within the period, then everything stops. With nothing running it returns at once.
        What it waits for, and what it leaves, is logged."""
        if self._group is None:
            return
        self.begin_shutdown()
        runs, queued = self.server.live_runs, self.push.pending if self.push else 0
        if runs or queued:
            log.info(
                "stopping: waiting up to %g s for %s",
                self._grace,
                _and(_count(runs, "agent run"), _count(queued, "push notification")),
            )
        deadline = anyio.current_time() + self._grace
        with anyio.move_on_after(self._grace):
            await _until(lambda: self.server.live_runs == 0)
        stopped = self.server.live_runs
        if stopped:
            log.warning(
                "stopping: %s still going after %g s: stopped, %s failed with a record of why",
                _count(stopped, "agent run"),
                self._grace,
                "its task" if stopped == 1 else "their tasks",
            )
        await self._call(self.server.abandon_runs)
        with anyio.move_on_after(STOP_GRACE):
            await _until(lambda: not self._runs and self.server.busy == 0)
        if self.push is not None:
            with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0)):
                await self.push.drain()
            left = self.push.pending
            if left:
                kept = (
                    "lost with the memory store"
                    if isinstance(self.store, MemoryStore)
                    else "kept in the store's outbox: the next server on it delivers them"
                )
                log.warning(
                    "stopping: %s not delivered within %g s, %s",
                    _count(left, "push notification"),
                    self._grace,
                    kept,
                )
        if self._group is not None:
            self._group.cancel_scope.cancel()
        await self._stopped.wait()
        if self._owns_store:
            await self.store.aclose()

    # --- health -------------------------------------------------------------------------------

    async def health(self, probe: Probe, *, head: bool = False) -> HttpResponse:
        """The answer to a liveness or readiness probe (see ``a2a_core.front._health``). Readiness
        asks the store, when it offers a ``ping``, to answer within
        :data:`STORE_PROBE_TIMEOUT`. Never raises: a probe that fails says why."""
        failure = self.failure
        found = Health(
            failed=None if failure is None else str(failure) or type(failure).__name__,
            started=self._ready.is_set,
            stopping=self.server.closing,
        )
        if probe is Probe.READY and found.failed is None and found.started and not found.stopping:
            found = attrs.evolve(found, store=await self._store_problem())
        return self.core.health(probe, found, head=head)

    async def _store_problem(self) -> str | None:
        """Why the store does not answer its probe, or ``None`` if it does."""
        if not isinstance(self.store, PingableStore):
            return None  # a store with nothing to reach (in memory)
        try:
            with anyio.fail_after(STORE_PROBE_TIMEOUT):
                await self.store.ping()
        except (StoreUnavailable, StoreMisconfigured) as error:
            return str(error)
        except TimeoutError:
            return f"no answer within {STORE_PROBE_TIMEOUT:g} s"
        except Exception as error:
            log.exception("the store's health probe failed")
            return f"its probe failed ({type(error).__name__})"
        return None

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
        authenticators verify it. Pass ``disconnected`` (returns once the client has gone) so
        that a blocking send whose client leaves stops waiting at once.
        """
        if self.failure is not None:
            return self.core.internal_error(request.path, _UNAVAILABLE)
        # (One coroutine, not a guard around another: every wait passes through each.)
        try:
            if caller is None:
                verified = authenticate(self.core, self.auth, request)
                if isinstance(verified, HttpResponse):
                    return verified  # (401: nothing reaches the machine)
                caller = verified
            number = self.server.receive(request, self._clock(), caller=caller, base_url=base_url)
            slot = self._replies[number] = self._waiter()
            origin = self.telemetry.origin()
            if origin is not None:
                self._origins[number] = origin
            try:
                self._perform()
                if self._io:
                    await self._pump()
                if slot.is_set:  # answered at once (a read, a refusal): nothing to wait for
                    reply = slot.value
                else:
                    reply = await self._wait(number, slot, disconnected)
            finally:
                # A request's decision (which starts its runs) is made before it is answered.
                if origin is not None:
                    del self._origins[number]
            return self._answer(number, reply)
        except Exception:
            log.exception("%s %s failed", request.method, request.path)
            return self.core.internal_error(request.path, _FAILED)

    def _answer(self, number: int, reply: Any) -> HttpResponse | HttpStream:
        """The response to exchange ``number``, whose reply came."""
        match reply:
            case Answer(response=response):
                return response
            case (StreamOpened() as opened, MemoryObjectReceiveStream() as batches):

                def closed() -> None:
                    self._streams.pop(number, None)
                    self.server.client_left(number)

                trailers: list[tuple[str, str]] = []
                body = stream_body(
                    opened,
                    batches,
                    keepalive=self._keepalive,
                    sent=lambda: self._call(self.server.frames_sent, number),
                    closed=closed,
                    trailers=trailers,
                )
                return HttpStream(
                    opened.status,
                    opened.headers,
                    body,
                    trailers,
                    task_id=opened.task_id,
                    served=opened.served,
                )
            case None:
                return _GONE  # the client left: nobody to answer
        raise AssertionError(f"unexpected reply {reply!r}")  # pragma: no cover

    def _bind(self) -> Loop:
        """Use the running loop's primitives from now on."""
        loop = self._loop = _loops.current()
        self._waiter = loop.waiter
        self._cancel_scope = loop.cancel_scope
        self._close = loop.close
        return loop

    def _unbound_waiter(self) -> Waiter:
        # (handling before the engine runs: on the loop it is called on)
        return self._bind().waiter()

    def _unbound_scope(self) -> Scope:
        return self._bind().cancel_scope()

    async def _wait(
        self, number: int, slot: Waiter, disconnected: Callable[[], Awaitable[object]] | None
    ) -> Any:
        """The reply of exchange ``number`` once it comes, or ``None`` if the client left (the
        patrol watches for that once the reply has taken a second or so)."""
        if disconnected is not None:
            if not self._waiting and self._patrol_idle is not None:
                self._patrol_idle.set()
            self._waiting[number] = (self._tick, slot, disconnected)
        try:
            value = await slot.wait()
        finally:
            if disconnected is not None:
                del self._waiting[number]
                if self._watching:
                    watch = self._watching.pop(number, None)
                    if watch is not None:
                        watch.cancel()
            if not slot.is_set:  # given up (cancelled): forget it
                self._replies.pop(number, None)
                self.server.client_left(number)
        if value is _LEFT:
            if self._replies.pop(number, None) is not None:  # (not answered meanwhile)
                self.server.client_left(number)
            return None
        return value

    async def _patrol(self) -> None:
        """Every :data:`PATROL_SECONDS`, watch the clients of the blocking sends that have
        waited :data:`WATCH_AFTER_TICKS` looks; sleep while none waits."""
        while True:
            if not self._waiting:
                idle = self._patrol_idle = self._waiter()
                await idle.wait()
                self._patrol_idle = None
            await anyio.sleep(PATROL_SECONDS)
            self._tick += 1
            due = self._tick - WATCH_AFTER_TICKS
            for number, (began, slot, disconnected) in self._waiting.items():
                if began <= due and number not in self._watching:
                    scope = self._watching[number] = self._cancel_scope()
                    self._spawn(self._watch, scope, slot, disconnected, name="a2a watch")

    @staticmethod
    async def _watch(
        scope: Scope, slot: Waiter, disconnected: Callable[[], Awaitable[object]]
    ) -> None:
        """Tell the send waiting on ``slot`` that its client left, when it does."""
        with scope:
            try:
                await disconnected()
            except Exception:
                log.exception("watching for a client leaving failed")
                return
            slot.set(_LEFT)

    def _stop_jobs(self) -> None:
        """Stop the runs and watches under way (the engine is stopping)."""
        for run in self._runs.values():
            run.scope.cancel()
        for scope in self._watching.values():
            scope.cancel()

    # --- performing the machine's actions -----------------------------------------------------

    async def _call(self, method: Callable[..., object], *args: Any, **kwargs: Any) -> None:
        """Call the machine (with the time), perform what it asks, and do its store work."""
        method(*args, self._clock(), **kwargs)
        self._perform()
        if self._io:
            await self._pump()

    def _perform(self) -> None:
        for action in self.server.take_actions():
            match action:
                case Read() | Commit():
                    self._io.append(action)
                case StartRun(task_id=task_id, run=number, exchange=exchange):
                    run = self._runs[task_id, number] = _Run(self, action, self._cancel_scope())
                    origin = None if exchange is None else self._origins.get(exchange)
                    self._spawn(self._run, run, origin, name=f"a2a run {task_id}")
                case StopRun(task_id=task_id, run=number):
                    stopping = self._runs.get((task_id, number))
                    if stopping is not None:
                        # A scope: an agent's shielded section finishes first.
                        stopping.scope.cancel()
                case Answer(exchange=number):
                    slot = self._replies.pop(number, None)
                    if slot is not None:
                        slot.set(action)
                case StreamOpened(exchange=number):
                    slot = self._replies.pop(number, None)
                    if slot is None:
                        self.server.client_left(number)
                        continue
                    # The machine keeps a stream within its window: the channel never fills.
                    sender, receiver = anyio.create_memory_object_stream[Frames](
                        MAX_BUFFERED_BATCHES + 2
                    )
                    if not action.ended:
                        self._streams[number] = sender
                    slot.set((action, receiver))
                case Frames(exchange=number, ended=ended):
                    channel = self._streams.get(number)
                    if channel is not None:
                        channel.send_nowait(action)
                        if ended:
                            del self._streams[number]
                case Notify():
                    if self.push is not None:
                        self.push.send(action)
                case OutputTaken(task_id=task_id, run=number, counts=counts):
                    taker = self._runs.get((task_id, number))
                    if taker is not None:
                        taker.taken(counts)
                case Problem(message=message, store_away=away):
                    if away and self.store_outage.away:
                        log.debug("%s", message)  # the outage was said once already
                    else:
                        log.error("%s", message)
                case Watch(task_id=task_id):
                    if self.bus is not None:
                        self.bus.watch(task_id)
                case Unwatch(task_id=task_id):
                    if self.bus is not None:
                        self.bus.unwatch(task_id)
                case _:
                    assert_never(action)
        due = self.server.next_deadline()
        if due is not None and (self._sleeping_until is None or due < self._sleeping_until):
            self._alarm.set()  # an earlier deadline: the timer looks again

    async def _pump(self) -> None:
        """Do the store work the machine asked for, until there is none. Shielded: an
        operation the machine waits on is never abandoned half way (it would wait forever)."""
        if not self._io:
            return
        with anyio.CancelScope(shield=True):
            while self._io:
                action = self._io.popleft()
                if isinstance(action, Read):
                    try:
                        snapshot = await self.store.read(action.reads)
                    except StoreUnavailable as error:  # expected now and then: no traceback
                        self.store_outage.failed(error)
                        self.server.read_failed(action.op, self._clock(), unavailable=True)
                    except StoreMisconfigured as error:  # its message says what to change
                        self.store_refusal.failed(error)
                        self.server.read_failed(action.op, self._clock())
                    except Exception:
                        log.exception("a store read failed")
                        self.server.read_failed(action.op, self._clock())
                    else:
                        self._store_answered()
                        self.server.read_done(action.op, snapshot, self._clock())
                else:
                    try:
                        ok = await self.store.commit(action.writes)
                    except StoreUnavailable as error:
                        self.store_outage.failed(error)
                        self.server.commit_failed(action.op, self._clock(), unavailable=True)
                    except StoreMisconfigured as error:
                        self.store_refusal.failed(error)
                        self.server.commit_failed(action.op, self._clock())
                    except Exception:
                        log.exception("a store commit failed")
                        self.server.commit_failed(action.op, self._clock())
                    else:
                        self._store_answered()
                        if ok:
                            self.telemetry.committed(action.writes)
                        else:
                            self.telemetry.conflicted()
                        self.server.commit_done(action.op, ok, self._clock())
                self._perform()

    def _store_answered(self) -> None:
        self.store_outage.answered()
        self.store_refusal.answered()

    async def _rang(self, task_id: str, events: tuple[LoggedEvent, ...]) -> None:
        """Another replica changed ``task_id``, logging ``events`` (or the bus could not tell
        what changed: it rings anyway, with none)."""
        await self._call(self.server.changed, task_id, events=events)

    async def _push_reported(self, notify: Notify, attempts: int | None) -> None:
        """Keep the store's outbox by how a notification fared (so a restart resumes it)."""
        if attempts is None:
            await self._call(self.server.notified, notify.task_id, notify.config_id, notify.seq)
        else:
            await self._call(
                self.server.notify_failed, notify.task_id, notify.config_id, notify.seq, attempts
            )

    def _spawn(self, job: Callable[..., Coroutine[Any, Any, Any]], *args: Any, name: str) -> None:
        if self._group is None or self._loop is None:
            raise RuntimeError("the engine is not running: start it before serving")
        self._loop.spawn(job, *args, name=name)

    async def _run_timer(self) -> None:
        while True:
            self._alarm = Slot()
            if self._io:  # store work that a call from outside a task left (begin_shutdown)
                await self._pump()
            due = self._sleeping_until = self.server.next_deadline()
            if due is None:
                await self._alarm.wait()
                continue
            delay = (due - self._clock()).total_seconds()
            if delay > 0:
                with anyio.move_on_after(delay):
                    await self._alarm.wait()  # an earlier deadline, perhaps
                continue
            self._sleeping_until = None
            try:
                await self._call(self.server.tick)
            except Exception:
                log.exception("the timer failed; it goes on")

    # --- agent runs ---------------------------------------------------------------------------

    async def _run(self, run: "_Run", origin: "SpanContext | None") -> None:
        start = run.start
        run.traced = self.telemetry.run(start, origin)
        try:
            with run.scope, run.traced:
                agent = self.agents.agent_for(start.context.skill_id)
                await run_agent(start, agent, run, self._close)
        except Exception:
            log.exception("the run of task %s failed inside the engine", start.task_id)
        finally:
            if self._runs.get(run.key) is run:
                del self._runs[run.key]

    def _offered(self) -> None:
        """Perform what an output offered from a run's task asked for, leaving its store work
        to the timer's task: the run's task goes straight back to its agent, and the run's next
        word waits for the machine's answer (:meth:`_Run.went_on`)."""
        self._perform()
        if self._io:
            self._alarm.set()


class _Run:
    """One agent run as the engine keeps it, from its StartRun to its task's end: how to stop
    it, and what its agent said, told to the machine (the run's :class:`Reporter`).

    Whether an output counted comes back as an ``OutputTaken``. Most are told within the very
    call that gave the output; one given while its commit is under way (offered from a paused
    step, or on a store that takes time) is told later, and the run waits for it only when it
    asks (:meth:`went_on`)."""

    __slots__ = ("_pending", "_told", "_waiter", "engine", "key", "scope", "start", "traced")

    def __init__(self, engine: Engine, start: StartRun, scope: Scope) -> None:
        self.engine = engine
        self.start = start
        self.key = start.task_id, start.run
        self.scope = scope
        self.traced: RunSpan | _Untraced = UNTRACED
        #: An output was told and the machine has not said yet whether it counted.
        self._pending = False
        #: What the machine said before the run asked, if it did.
        self._told: bool | None = None
        #: The run's task, waiting for the machine's word.
        self._waiter: Waiter | None = None

    def taken(self, counts: bool) -> None:
        """The machine's word on the output told last (an ``OutputTaken``)."""
        if not self._pending:
            return
        self._pending = False
        waiter, self._waiter = self._waiter, None
        if waiter is None:
            self._told = counts
        else:
            waiter.set(counts)

    async def output(self, value: Any) -> bool:
        engine = self.engine
        self._pending = True
        await engine._call(engine.server.agent_output, self.start.task_id, self.start.run, value)
        return await self.went_on()

    def offer(self, value: Any) -> None:
        engine = self.engine
        self._pending = True
        engine.server.agent_output(self.start.task_id, self.start.run, value, engine._clock())
        engine._offered()

    async def went_on(self) -> bool:
        told, self._told = self._told, None
        if told is not None:
            return told
        if not self._pending:
            return True  # nothing offered is still being decided
        waiter = self._waiter = self.engine._waiter()
        counts: bool = await waiter.wait()
        return counts

    async def done(self, **outcome: Any) -> None:
        error = outcome.get("error")
        if error is not None:
            self.traced.failed(error, asked_for_input=isinstance(error, InputError))
        engine = self.engine
        await engine._call(engine.server.agent_done, self.start.task_id, self.start.run, **outcome)


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():  # noqa: ASYNC110  shutdown only, on conditions that change everywhere
        await anyio.sleep(0.01)


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}" + ("" if number == 1 else "s")


def _and(*parts: str) -> str:
    return " and ".join(part for part in parts if not part.startswith("0 "))
