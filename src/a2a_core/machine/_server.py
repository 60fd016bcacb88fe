"""The server machine: everything between decisions, with no I/O, over any store.

The core decides one input at a time (:meth:`Core.decide`). A server around it must also
remember things between inputs, and get their order right:

* which store operations are under way, what each is for, and what to do when one returns
  (decide, commit, retry a decision whose writes lost a compare-and-set race, give up);
* which requests wait for which task to settle, and that a waiter listens *before* the effects
  that could settle its task run;
* which streams follow which task, where each one's cursor is, when one must catch up from the
  store's log (a resumed stream, a gap, a reader that fell behind);
* which agent runs are under way, and that no run starts once shutdown has begun;
* when the timer must next fire (expiry sweeps, held stream snapshots).

:class:`Server` keeps all of that, and nothing else. Like h11's ``Connection`` or aioquic's
``QuicConnection`` it never calls out: each method is told what happened (with the time) and
returns at once; what the outside world must do next comes back from :meth:`Server.take_actions`
as plain values. A transport (the asyncio and trio engine of ``a2a_adapters``, the examples,
``a2a_core.testing.Driver``) only performs them:

========================  ==================================================================
action                    the transport…
========================  ==================================================================
:class:`Read`             reads the store, then calls :meth:`~Server.read_done` (or
                          :meth:`~Server.read_failed`)
:class:`Commit`           commits the writes, then calls :meth:`~Server.commit_done` (or
                          :meth:`~Server.commit_failed`); a commit once started is finished
:class:`StartRun`         runs the agent, feeding what it yields to :meth:`~Server.agent_output`
                          (waiting for :class:`OutputTaken` before the next) and how it ended
                          to :meth:`~Server.agent_done`
:class:`StopRun`          cancels that run (and reports nothing more from it)
:class:`Answer`           sends the response of exchange ``exchange``
:class:`StreamOpened`     sends the head and first frames of a stream
:class:`Frames`           sends more of a stream (then :meth:`~Server.frames_sent`, if the
                          server was made with a ``stream_window``)
:class:`Notify`           delivers a push notification, then reports it with
                          :meth:`~Server.notified` (each failed attempt it retries with
                          :meth:`~Server.notify_failed`), which keeps the store's outbox
:class:`OutputTaken`      lets the run that produced that output go on (or not)
:class:`Problem`          logs it
:class:`Watch`            (shared store) listens for changes other servers make to a task,
                          then calls :meth:`~Server.changed` for it, and again whenever one is
                          heard of (or the listening was interrupted)
:class:`Unwatch`          stops listening
========================  ==================================================================

Given a synchronous store (``Server(core, store=MemoryTasks())``), the server performs
:class:`Read` and :class:`Commit` itself, inside the call that needs them, and never returns
them: every answer is then among the actions of the call that caused it.

Rules for transports: call the server from one thread at a time (it is not thread-safe), take
the actions after every call, and after every call look at :meth:`Server.next_deadline` again:
when it comes, call :meth:`Server.tick`. Tick once at start, too: the first tick settles what
the process before this one left in the store (tasks that expired meanwhile, tasks whose runs
died with it, push notifications it still owed; the notifications of events decided while
those are read wait for them, so that each webhook's go out in the order of their events).
Store operations may be performed concurrently and answered in any order, even in another
order than the store performed them (a read answered late is stale): the machine goes by
versions and run numbers, never by the order of answers.

Several servers (replicas) may share one store (``Server(..., shared=True)``). Each decides
over the same records, and the versioned commits keep them from losing each other's writes;
what a server must also learn is when *another* one changed a task it waits on, streams or
runs. It says which tasks those are (:class:`Watch`, :class:`Unwatch`) and is told of changes
(:meth:`Server.changed`), upon which it looks at the store again: a lost or late ring costs
latency, never an event. Every ``reclaim_every`` it also reads what replicas that died left
(their runs, their undelivered notifications), which the store tells apart by its leases.
"""

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeGuard, assert_never

import attrs

from a2a_core._agent_api import RunAbandoned, RunTimedOut
from a2a_core._errors import (
    A2AError,
    BusyError,
    DeadlineExceededError,
    InternalError,
    UnavailableError,
)
from a2a_core.decide._effects import (
    AwaitTask,
    Decision,
    Fail,
    Notify,
    Publish,
    Push,
    Respond,
    StartRun,
    StopRun,
)
from a2a_core.decide._inputs import (
    ANONYMOUS,
    AgentDone,
    AgentOutput,
    Call,
    Caller,
    Input,
    Rerun,
    Tick,
    World,
)
from a2a_core.decide._sends import last_user_message
from a2a_core.decide._streams import (
    Advance,
    FollowTask,
    StreamCursor,
    advance,
    log_page,
    open_cursor,
    release,
)
from a2a_core.decide._validation import not_found
from a2a_core.front._exchange import Binding, Served
from a2a_core.front._http import Dispatch, HttpRequest, HttpResponse, served_by, task_concerned
from a2a_core.model._records import TaskRecord
from a2a_core.store._contract import (
    Delete,
    LoggedEvent,
    OutboxQuery,
    Pending,
    Put,
    Reads,
    RunningQuery,
    Sent,
    Snapshot,
    SyncStore,
    Write,
)
from a2a_core.wire._sse import KEEPALIVE

from ._core import Core

__all__ = [
    "Action",
    "Answer",
    "Commit",
    "Frames",
    "OutputTaken",
    "Problem",
    "Read",
    "Server",
    "StreamOpened",
    "Unwatch",
    "Watch",
]

#: How often a decision is made again when its writes lose a compare-and-set race.
MAX_ATTEMPTS = 16
#: After an expiry sweep failed, how long before the next try.
TICK_RETRY = timedelta(seconds=1)
#: How many times an agent's output is tried again after the store failed in a way of its own
#: (a fault that may well recur). A store out of reach is waited for instead, for as long as
#: it takes: the run is held meanwhile, so its outputs still commit in order.
MAX_HOLDS = 3
#: What a gRPC stream's client is told when the server stops (an SSE client just reconnects).
_STOPPING = "The server is stopping; subscribe to the task again"
#: What a client is told while the store cannot be reached.
STORE_AWAY = "The task store is unavailable"
#: How many tasks a restart's recovery reads at a time.
RECOVER_BATCH = 100
#: With a shared store, how often a server looks for runs and notifications that a replica
#: which died left behind (the store decides which replicas died: their leases lapsed).
RECLAIM_EVERY = timedelta(seconds=5)


# --- actions -------------------------------------------------------------------------------------


@attrs.frozen
class Read:
    """Read ``reads`` from the store; answer with :meth:`Server.read_done`."""

    op: int
    reads: Reads


@attrs.frozen
class Commit:
    """Commit ``writes`` (all or none, compare-and-set); answer with :meth:`Server.commit_done`."""

    op: int
    writes: tuple[Write, ...]


@attrs.frozen
class Answer:
    """The response to exchange ``exchange`` (then the exchange is over)."""

    exchange: int
    response: HttpResponse


@attrs.frozen
class StreamOpened:
    """Exchange ``exchange`` is answered with a stream: send this head and ``frames`` now;
    later frames come as :class:`Frames`. ``ended``: the stream is complete already (then send
    ``trailers`` after the frames). ``keepalive`` is what to send after a long silence (an SSE
    comment; nothing on gRPC, whose keep-alive is HTTP/2's own PING)."""

    exchange: int
    status: int
    headers: tuple[tuple[str, str], ...]
    frames: tuple[bytes, ...]
    ended: bool
    trailers: tuple[tuple[str, str], ...] = ()
    keepalive: bytes = KEEPALIVE
    #: The id of the task streamed, as its client knows it (for an access log; "" if unknown).
    task_id: str = ""
    #: What the request was (for a transport's traces and metrics; never sent).
    served: Served | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Frames:
    """More of the streamed response to exchange ``exchange`` (in order); ``ended``: send nothing
    more but ``trailers`` (gRPC's status), and close it."""

    exchange: int
    frames: tuple[bytes, ...]
    ended: bool
    trailers: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class OutputTaken:
    """The output the run last yielded is decided; ``counts``: the run may go on. When it may
    not (it finished its task, or was stopped or replaced), it need report nothing more."""

    task_id: str
    run: int
    counts: bool


@attrs.frozen
class Problem:
    """Something went wrong that no client can be told: the transport logs it. ``store_away``:
    it went wrong because the store could not be reached, which the transport has seen (and
    may have said) already: it may log it more quietly."""

    message: str
    store_away: bool = False


@attrs.frozen
class Watch:
    """(Shared store only.) Hear of changes other servers make to task ``task_id``: someone
    here now waits on it, follows it or runs it. Once listening, call :meth:`Server.changed`
    for it, since a change may have come just before the watch began."""

    task_id: str


@attrs.frozen
class Unwatch:
    """(Shared store only.) Nobody here cares about task ``task_id`` any more."""

    task_id: str


#: What the outside world must do (see the module's docstring).
Action = (
    Read
    | Commit
    | StartRun
    | StopRun
    | Answer
    | StreamOpened
    | Frames
    | Notify
    | OutputTaken
    | Problem
    | Watch
    | Unwatch
)


# --- bookkeeping ----------------------------------------------------------------------------------


@attrs.define
class _Job:
    """One input on its way through read, decide, commit."""

    input: Input
    #: The exchange a call answers (``None`` for agent output, ends of runs and ticks).
    exchange: int | None = None
    dispatch: Dispatch | None = None
    attempts: int = 0
    decision: Decision | None = None
    #: The tasks the decision's commit puts (found once: the commit's answer needs them too).
    keys: frozenset[str] = frozenset()
    #: How many times its store work failed and it was held to be tried again.
    holds: int = 0
    #: The last decision whose commit failed: a store may fail to say whether it was written
    #: (the connection broke as it answered), so the next read looks for its record first.
    tried: Decision | None = None


@attrs.frozen
class _Reserved:
    """What a decision whose commit is under way will start: ``runs`` for ``owner``, and a
    stream if ``stream``."""

    owner: str
    runs: int
    stream: bool


@attrs.define
class _RunClock:
    """When run ``run`` started, and when it last gave an output."""

    run: int
    started: datetime
    spoke: datetime

    def due(self, longest: timedelta | None, idle: timedelta | None) -> datetime:
        """When the run would pass a limit if it says nothing more."""
        times = [self.started + longest] if longest is not None else []
        if idle is not None:
            times.append(self.spoke + idle)
        return min(times)

    def passed(
        self, longest: timedelta | None, idle: timedelta | None, now: datetime
    ) -> RunTimedOut | None:
        """The limit the run has passed by ``now``, if any (the whole run's first)."""
        if longest is not None and now >= self.started + longest:
            return RunTimedOut(longest, idle=False)
        if idle is not None and now >= self.spoke + idle:
            return RunTimedOut(idle, idle=True)
        return None


@attrs.define
class _Waiter:
    """A blocking send waiting for its task to settle past ``version``."""

    exchange: int
    dispatch: Dispatch
    wait: AwaitTask
    version: int
    #: The task's id as its client knows it (``wait.task_id`` is its store key).
    shown_id: str


@attrs.define
class _Follower:
    """A stream following a task."""

    exchange: int
    dispatch: Dispatch
    cursor: StreamCursor
    #: A log read for it is under way.
    reading: bool = False
    #: The highest event number published for its task while it could not take events.
    seen: int = 0
    #: Batches sent and not yet acknowledged (with a ``stream_window``).
    unsent: int = 0
    #: It stopped taking events at its window; it reads the log once it has caught up.
    behind: bool = False
    #: Its task changed elsewhere while its log was being read: the read may have missed it.
    rung: bool = False


@attrs.frozen
class _LogRead:
    exchange: int


@attrs.frozen
class _Owed:
    """Read a batch of the push notifications the store still owes."""


@attrs.frozen
class _Note:
    """Record a notification's fate in the outbox (nobody waits on it)."""

    sent: Sent
    #: How many times its commit failed before.
    holds: int = 0


@attrs.frozen
class _Recover:
    """Read a batch of the tasks whose runs a restart left counting."""


@attrs.frozen
class _Verify:
    """Read a task whose waiter registered from a snapshot, in case it settled meanwhile."""

    exchange: int


@attrs.frozen
class _Known:
    """A read answered from what this server last committed (``Server._known``)."""

    op: int
    snapshot: Snapshot


@attrs.frozen
class _Check:
    """Read a task that changed elsewhere, for whoever waits on it or runs it here."""

    task_id: str


class Server:
    """An A2A server as a state machine: inputs in, :data:`Action` values out."""

    def __init__(
        self,
        core: Core,
        *,
        store: SyncStore | None = None,
        new_id: Callable[[], str],
        sse: bool = True,
        stream_window: int | None = None,
        shared: bool = False,
        reclaim_every: timedelta = RECLAIM_EVERY,
    ) -> None:
        self.core = core
        #: The synchronous store the server performs its reads and commits on, if it has one.
        self.store = store
        #: Stream frames are SSE frames (``data: …`` with ids), or, for a transport that frames
        #: messages its own way, each event's JSON alone.
        self.sse = sse
        self._window = stream_window
        #: Other servers (replicas) decide over the same store: see :meth:`changed`.
        self.shared = shared
        self._reclaim_every = reclaim_every
        self._reclaim_at: datetime | None = None
        self._watched: set[str] = set()
        self._touched: set[str] = set()  # tasks whose watchers here may have changed
        self._checking: dict[str, bool] = {}  # task -> it changed again while being read
        self._recheck: set[str] = set()  # checks that failed, tried again at the next tick
        # Agent outputs and ends of runs the store failed to record, tried again at the next
        # tick: an agent's work is never dropped because its store was away for a moment.
        self._retrying: list[_Job] = []
        # Likewise the fates of notifications (else a restart would deliver them again).
        self._unnoted: list[_Note] = []
        #: The last record this server committed of each task it runs: a run's output is
        #: decided on it with no read first (a stale one only loses its compare-and-set, and
        #: is read afresh). Dropped when the run ends, or when the task changes elsewhere.
        self._known: dict[str, TaskRecord] = {}
        #: Makes the id of each new task, context and message. The core draws no random number,
        #: so the transport gives it one that does (``lambda: str(uuid.uuid4())``): ids must be
        #: unguessable (a task's id is all a caller needs to ask for it) and never repeat, across
        #: restarts over a durable store too. Tests give a counter, for ids they can predict.
        self._new_id = new_id
        self._numbers = itertools.count(1)
        self._ops = itertools.count(1)
        self._jobs: dict[int, _Job | _LogRead | _Verify | _Check | _Recover | _Owed | _Note] = {}
        self._pending: dict[int, Read | Commit] = {}
        self._waiters: dict[str, list[_Waiter]] = {}
        self._exchanges: dict[int, _Waiter] = {}
        #: Exchanges whose request is still being decided and whose client is still there.
        self._deciding: set[int] = set()
        self._followers: dict[str, list[_Follower]] = {}
        self._streams: dict[int, _Follower] = {}
        #: The streams holding a snapshot back until a time (see ``release``).
        self._held: dict[int, _Follower] = {}
        #: The deadline a client gave its exchange (gRPC's ``grpc-timeout``), until answered.
        self._due: dict[int, datetime] = {}
        self._runs: dict[str, int] = {}
        # Per task, this server's commits that write it and are not answered yet; and those
        # tasks that moved meanwhile, to be looked at again once the last is (``_answered``).
        self._writing: dict[str, set[int]] = {}
        self._meanwhile: set[str] = set()
        self._tick_at: datetime | None = None
        self._ticking = False
        # The first tick sweeps whatever expired while no server ran, and settles the tasks
        # whose runs the server before this one left counting.
        self._swept = False
        self._recovered = self._recovering = False
        # And it delivers what the outbox still owes; the owed notifications handed out since
        # are kept here until their end is reported, so that none is handed out twice.
        self._outboxed = self._reading_outbox = not core.config.push_notifications
        self._outbox_read = False  # read to its end once (later reads are a shared store's)
        self._owed: set[tuple[str, str, int]] = set()
        # Notifications decided while the outbox is being read wait until it is read: one
        # webhook's older notifications may still be in it (in a later batch), and go first.
        self._holding = False
        self._held_pushes: list[Push] = []
        self._read_owed: set[tuple[str, str, int]] = set()  # handed out from it meanwhile
        self._closing = False
        # The runs' clocks, under a time limit (``max_run_time``, ``run_idle_time``): per task,
        # its run's start and last output; and a heap of when to look at each, one entry per
        # run at a time (an output does not push another: the entry, once due, looks at the
        # clock and comes back later if the run has spoken since).
        self._clocks: dict[str, _RunClock] = {}
        self._timers: list[tuple[datetime, int, str, int]] = []
        self._timer_numbers = itertools.count()
        # Capacity (``max_runs``, ``max_runs_per_owner``, ``max_streams``): each run's caller
        # and each caller's count of runs here; and what decisions whose commits are under way
        # will start, by op: a decision is checked before its commit, so those count too, or
        # sends decided side by side would overshoot the limits together.
        self._run_owners: dict[str, str] = {}
        self._owner_runs: dict[str, int] = {}
        self._reserved: dict[int, _Reserved] = {}
        config = self.core.config
        self._limited = not (
            config.max_runs is None
            and config.max_runs_per_owner is None
            and config.max_streams is None
        )
        #: How many times a stream fell a whole window behind (and read on from the log).
        self.stalls = 0
        self._actions: list[Action] = []
        self._inline: deque[Read | Commit | _Known] = deque()

    # --- inputs -------------------------------------------------------------------------------

    def receive(
        self,
        request: HttpRequest,
        now: datetime,
        *,
        caller: Caller | None = ANONYMOUS,
        challenges: tuple[str, ...] = (),
        base_url: str = "http://localhost",
    ) -> int:
        """Take one request; its answer comes as :class:`Answer` or :class:`StreamOpened`
        with the exchange number returned.

        ``caller`` is whom the transport authenticated; ``None`` says the credentials were
        missing or wrong: the request is then answered 401 with ``challenges`` as its
        ``WWW-Authenticate`` values (unless it needs none: the public card). ``base_url`` is
        where the client reached the A2A root.
        """
        number = next(self._numbers)
        if caller is None:
            if not self.core.is_public(request):
                self._act(Answer(number, self.core.unauthenticated(request, challenges)))
                return number
            caller = ANONYMOUS
        routed = self.core.handle_http(request, caller, base_url)
        if isinstance(routed, HttpResponse):
            self._act(Answer(number, routed))
        else:
            if routed.timeout is not None:
                self._due[number] = now + routed.timeout
            self._deciding.add(number)
            self._start(_Job(routed.call, number, routed), now)
        self._settle(now)
        return number

    def agent_output(self, task_id: str, run: int, value: Any, now: datetime) -> None:
        """Run ``run`` of ``task_id``'s agent yielded ``value``; :class:`OutputTaken` says
        when it is decided, and whether the run goes on."""
        clock = self._clocks.get(task_id)
        if clock is not None and clock.run == run:
            clock.spoke = now
        self._start(_Job(AgentOutput(task_id, run, value)), now)
        self._settle(now)

    def agent_done(
        self,
        task_id: str,
        run: int,
        now: datetime,
        *,
        value: Any = None,
        error: BaseException | None = None,
    ) -> None:
        """Run ``run`` of ``task_id``'s agent returned ``value`` or raised ``error``."""
        self._start(_Job(AgentDone(task_id, run, value, error)), now)
        self._settle(now)

    def tick(self, now: datetime) -> None:
        """The time :meth:`next_deadline` named has come (calling it early or late is
        harmless): expired tasks go, streamed sends whose agent has not spoken yet get their
        task, and what the store failed to record (an agent's output, the end of a run, a
        notification's fate) is tried again. A transport ticks once when it starts, too, so
        that what expired while no server ran is swept."""
        if self._reclaim_at is not None and self._reclaim_at <= now:
            # Look again for what replicas that died left: their runs, their notifications.
            self._reclaim_at = None
            self._recovered = False
            self._outboxed = not self.core.config.push_notifications
        for task_id in list(self._recheck):
            self._recheck.discard(task_id)
            self._check(task_id, now)
        self._try_held(now)
        if not self._outboxed and not self._reading_outbox:
            self._reading_outbox = True
            self._read_outbox(None, now)
        if not self._recovered and not self._recovering:
            self._recovering = True
            self._read_running("", now)
        sweep = self._tick_at is not None and self._tick_at <= now
        if (sweep or not self._swept) and not self._ticking:
            self._swept = True
            self._tick_at = None
            self._ticking = True
            self._start(_Job(Tick(now)), now)
        for follower in list(self._held.values()):
            due = follower.cursor.release_at
            if due is not None and due <= now:
                self._deliver(follower, release(follower.cursor, now), now)
        self._expire_deadlines(now)
        self._time_runs(now)
        self._settle(now)

    def _expire_deadlines(self, now: datetime) -> None:
        """Answer DEADLINE_EXCEEDED to the waits and streams whose client's deadline passed.
        A call still being decided then is answered when it is (its client has stopped
        waiting, and nothing is held for it): its deadline is simply dropped, never kept past
        due, where it would have the timer wake at once, again and again."""
        for exchange, due in list(self._due.items()):
            if due > now:
                continue
            del self._due[exchange]
            error = DeadlineExceededError(
                "Deadline exceeded: the client's grpc-timeout passed before the call was done"
            )
            waiter = self._exchanges.pop(exchange, None)
            follower = self._streams.get(exchange)
            if waiter is not None:
                _discard(self._waiters, waiter.wait.task_id, waiter)
                self._touch(waiter.wait.task_id)
                self._act(Answer(exchange, self.core.render(waiter.dispatch, Fail(error))))
            elif follower is not None:
                self._end(follower, (), error)

    def notified(self, task_id: str, config_id: str, seq: int, now: datetime) -> None:
        """The :class:`Notify` of event ``seq`` was delivered, or given up on for good: it
        leaves the outbox."""
        self._owed.discard((task_id, config_id, seq))
        self._note(Sent(task_id, config_id, seq), now)
        self._settle(now)

    def notify_failed(
        self, task_id: str, config_id: str, seq: int, attempts: int, now: datetime
    ) -> None:
        """An attempt at that :class:`Notify` failed, ``attempts`` in all, and it will be
        tried again: the count is kept, so that a restart goes on from it."""
        self._note(Sent(task_id, config_id, seq, attempts), now)
        self._settle(now)

    def changed(self, task_id: str, now: datetime, *, events: Sequence[LoggedEvent] = ()) -> None:
        """(Shared store.) Task ``task_id`` may have changed elsewhere: its doorbell rang, or
        a :class:`Watch` of it began or was restored after a lost connection. The streams that
        follow it take ``events`` (what the change logged, if the doorbell said) when they
        follow on from their cursors, and read its log otherwise; the requests that wait on it
        and its run here look at it again (a run whose task was canceled or taken over is
        stopped). A ring that never came costs latency, never an event: whoever watches looks
        again."""
        self._known.pop(task_id, None)
        if task_id in self._writing:
            self._meanwhile.add(task_id)  # a commit of it under way here may start a run too late
        logged = tuple(events)
        last = logged[-1].seq if logged else 0
        for follower in list(self._followers.get(task_id, ())):
            if follower.reading or follower.behind:
                # The log read under way (or once caught up) may have missed it.
                follower.rung = follower.rung or not logged
                follower.seen = max(follower.seen, last)
            elif logged:
                self._deliver(follower, advance(follower.cursor, logged), now)
            else:
                self._read_log(follower, now)
        if task_id in self._waiters or task_id in self._runs:
            self._check(task_id, now)
        self._settle(now)

    def client_left(self, exchange: int) -> None:
        """The client of ``exchange`` (a waiting request, or a stream) went away: nothing more
        is kept or sent for it. What it asked for goes on (a created task still runs)."""
        self._deciding.discard(exchange)
        self._due.pop(exchange, None)
        waiter = self._exchanges.pop(exchange, None)
        if waiter is not None:
            _discard(self._waiters, waiter.wait.task_id, waiter)
        follower = self._streams.pop(exchange, None)
        if follower is not None:
            self._held.pop(exchange, None)
            _discard(self._followers, follower.cursor.task_id, follower)
        if waiter is not None:
            self._touch(waiter.wait.task_id)
        if follower is not None:
            self._touch(follower.cursor.task_id)
        self._watch()

    def read_done(self, op: int, snapshot: Snapshot, now: datetime) -> None:
        """The store answered :class:`Read` ``op``."""
        self._read(op, snapshot, now)
        self._settle(now)

    def read_failed(self, op: int, now: datetime, *, unavailable: bool = False) -> None:
        """The store could not answer :class:`Read` ``op`` (the transport logged why).
        ``unavailable``: it could not be reached, so a client is told to retry (503) rather
        than that the server failed (500)."""
        if self._pending.pop(op, None) is not None:
            self._failed(op, "the store failed", now, unavailable=unavailable)
        self._settle(now)

    def commit_done(self, op: int, ok: bool, now: datetime) -> None:
        """The store applied :class:`Commit` ``op`` (``ok``), or refused it: an expected
        version no longer held, so the decision is made again on fresh data."""
        self._committed(op, ok, now)
        self._settle(now)

    def commit_failed(self, op: int, now: datetime, *, unavailable: bool = False) -> None:
        """The store could not apply :class:`Commit` ``op``, and nothing of it was written
        (``unavailable``: as for :meth:`read_failed`)."""
        if self._pending.pop(op, None) is not None:
            self._failed(op, "the store failed", now, unavailable=unavailable)
        self._settle(now)

    def frames_sent(self, exchange: int, now: datetime) -> None:
        """A :class:`Frames` batch of exchange ``exchange`` went out (only with a
        ``stream_window``): a stream that fell behind reads on from the log once it has sent all
        it was given."""
        follower = self._streams.get(exchange)
        if follower is None:
            return
        follower.unsent = max(follower.unsent - 1, 0)
        if follower.behind and follower.unsent == 0:
            follower.behind = False
            self._read_log(follower, now)
        self._settle(now)

    def begin_shutdown(self, now: datetime) -> None:
        """The server is stopping: every stream ends now (its client resumes elsewhere with
        ``Last-Event-ID``), and a run that would start is not started: its task is failed with
        a record of why. Runs under way may still finish (see :meth:`abandon_runs`)."""
        self._closing = True
        for follower in list(self._streams.values()):
            # An SSE client resumes with Last-Event-ID; a gRPC stream has no such thing, and
            # ending it OK would say the task is done: it hears to call again (UNAVAILABLE).
            grpc = follower.dispatch.binding is Binding.GRPC
            self._end(follower, (), UnavailableError(_STOPPING) if grpc else None)
        self._settle(now)

    def abandon_runs(self, now: datetime) -> None:
        """Stop every run still going (the graceful period is over), failing each task with a
        record of why, so that none is left working with no agent behind it."""
        # What the store missed is tried once more now, not at a tick that may never come.
        self._try_held(now)
        for task_id, run in list(self._runs.items()):
            self._act(StopRun(task_id, run))
            self._start(_Job(AgentDone(task_id, run, error=RunAbandoned())), now)
            self._touch(task_id)
        self._runs.clear()
        self._run_owners.clear()
        self._owner_runs.clear()
        self._settle(now)

    # --- outputs ------------------------------------------------------------------------------

    def take_actions(self) -> list[Action]:
        """What the outside world must now do, in order (each action is returned once)."""
        actions, self._actions = self._actions, []
        return actions

    def next_deadline(self) -> datetime | None:
        """When :meth:`tick` should next be called (``None``: nothing is waiting for a time)."""
        due = self._tick_at if not self._ticking else None
        if self._reclaim_at is not None and (due is None or self._reclaim_at < due):
            due = self._reclaim_at
        for follower in self._held.values():
            release_at = follower.cursor.release_at
            if release_at is not None and (due is None or release_at < due):
                due = release_at
        for deadline in self._due.values():
            if due is None or deadline < due:
                due = deadline
        if self._timers and (due is None or self._timers[0][0] < due):
            due = self._timers[0][0]
        return due

    @property
    def open_streams(self) -> int:
        """How many streams are still following a task."""
        return len(self._streams)

    def following(self, task_id: str) -> int:
        """How many streams follow task ``task_id`` (its store key)."""
        return len(self._followers.get(task_id, ()))

    @property
    def waiting(self) -> int:
        """How many requests wait for their task to settle."""
        return len(self._exchanges)

    @property
    def closing(self) -> bool:
        """Whether :meth:`begin_shutdown` was called (the server takes no new work)."""
        return self._closing

    @property
    def live_runs(self) -> int:
        """How many agent runs are under way."""
        return len(self._runs)

    @property
    def busy(self) -> int:
        """How many store operations are under way."""
        return len(self._jobs)

    # --- read, decide, commit -----------------------------------------------------------------

    def _act(self, action: Action) -> None:
        self._actions.append(action)
        if self._due and _answers(action):
            self._due.pop(action.exchange, None)  # answered: its deadline is no more

    def _store(self, op: int, action: Read | Commit) -> None:
        self._pending[op] = action
        if self.store is not None:
            self._inline.append(action)
        else:
            self._act(action)

    def _settle(self, now: datetime) -> None:
        """With a store of its own, perform the reads and commits the last input caused. A store
        that raises fails that operation only, as a transport's ``read_failed`` would."""
        store = self.store
        while self._inline:
            action = self._inline.popleft()
            if isinstance(action, _Known):
                self._read(action.op, action.snapshot, now)
                continue
            assert store is not None  # a Read or Commit is queued here only for its own store
            try:
                if isinstance(action, Read):
                    snapshot = store.read(action.reads)
                else:
                    ok = store.commit(action.writes)
            except Exception as error:
                self._act(Problem(f"a store {type(action).__name__.lower()} failed: {error!r}"))
                if self._pending.pop(action.op, None) is not None:
                    self._failed(action.op, "the store failed", now)
                continue
            if isinstance(action, Read):
                self._read(action.op, snapshot, now)
            else:
                self._committed(action.op, ok, now)
        self._watch()

    def _touch(self, task_id: str) -> None:
        if self.shared:
            self._touched.add(task_id)

    def _watch(self) -> None:
        """Watch the tasks someone here has come to care about, and stop watching the ones
        nobody does any more (once per call, so that a task cared for only in passing costs
        nothing)."""
        if not self._touched:
            return  # alone on its store, a server watches nothing: most calls end here
        touched, self._touched = self._touched, set()
        for task_id in sorted(touched):
            cared = task_id in self._waiters or task_id in self._followers or task_id in self._runs
            if cared and task_id not in self._watched:
                self._watched.add(task_id)
                self._act(Watch(task_id))
            elif not cared and task_id in self._watched:
                self._watched.discard(task_id)
                self._act(Unwatch(task_id))

    def _start(self, job: _Job, now: datetime) -> None:
        op = next(self._ops)
        self._jobs[op] = job
        inp = job.input
        if isinstance(inp, AgentOutput | AgentDone):
            # An agent's output needs its task's record alone (``Reducer.needs``): the one this
            # server last wrote serves, if it is of this run (else the store says what won).
            known = self._known.get(inp.task_id)
            if known is not None and known.run == inp.run:
                # Decided on what this server last wrote, in turn with the store's answers.
                self._pending[op] = Read(op, Reads(task_id=inp.task_id))
                self._inline.append(_Known(op, Snapshot(task=known)))
                return
        self._store(op, Read(op, self.core.needs(inp)))

    def _read(self, op: int, snapshot: Snapshot, now: datetime) -> None:
        if self._pending.pop(op, None) is None:
            return  # answered already (a transport's mistake; harmless)
        job = self._jobs[op]
        match job:
            case _Job(tried=Decision() as tried) if _written(tried, snapshot):
                # The commit that failed had gone through after all: it is done, not redone
                # (an artifact decided twice would be added twice).
                del self._jobs[op]
                self._finish(job, tried, None, now)
                self._remember(tried.writes)
            case _Job():  # first: nearly every read is a decision's
                decision = self.core.decide(job.input, snapshot, World(now, self._new_id))
                self._reserved.pop(op, None)  # decided again: what it held is void
                reserving = self._reserve(job, decision)
                if isinstance(reserving, BusyError):
                    del self._jobs[op]
                    # Only a caller's decision is refused: it has an exchange to answer.
                    assert job.dispatch is not None
                    assert job.exchange is not None
                    self._deciding.discard(job.exchange)
                    answer = self.core.render(job.dispatch, Fail(reserving))
                    self._act(Answer(job.exchange, answer))
                    return
                if decision.writes:
                    if reserving is not None:
                        self._reserved[op] = reserving
                    job.decision = decision
                    job.keys = _put_keys(decision)
                    for key in job.keys:
                        self._writing.setdefault(key, set()).add(op)
                    self._store(op, Commit(op, decision.writes))
                else:
                    del self._jobs[op]
                    self._finish(job, decision, snapshot, now)
            case _LogRead():
                self._log_read(op, job, snapshot, now)
            case _Recover():
                del self._jobs[op]
                self._settle_orphans(snapshot.running, now)
            case _Owed():
                del self._jobs[op]
                self._deliver_owed(snapshot.outbox, now)
            case _Verify():
                del self._jobs[op]
                self._verified(job, snapshot.task)
            case _Check():
                del self._jobs[op]
                self._checked(job.task_id, snapshot.task, now)

    def _committed(self, op: int, ok: bool, now: datetime) -> None:
        if self._pending.pop(op, None) is None:
            return
        job = self._jobs[op]
        if isinstance(job, _Note):
            del self._jobs[op]  # an outbox write checks no version: it cannot conflict
            return
        assert isinstance(job, _Job)
        assert job.decision is not None
        # Committed: the runs and the stream start now (or it is decided again, and checked).
        self._reserved.pop(op, None)
        again = self._answered(op, job.keys, ok)
        if ok:
            del self._jobs[op]
            self._finish(job, job.decision, None, now)
            self._remember(job.decision.writes)
            self._look_again(again, now)
            return
        if isinstance(job.input, AgentOutput | AgentDone):
            self._known.pop(job.input.task_id, None)  # it was stale: read what won
        self._look_again(again, now)
        job.attempts += 1
        if job.attempts >= MAX_ATTEMPTS:
            self._failed(op, f"its writes lost {MAX_ATTEMPTS} compare-and-set races in a row", now)
            return
        self._store(op, Read(op, self.core.needs(job.input)))  # decide again, on fresh data

    def _answered(self, op: int, keys: frozenset[str], ok: bool) -> set[str]:
        """Commit ``op``, which puts the tasks ``keys``, was answered (``ok``: it went
        through, or failed). A store may answer out of order: a commit that starts a run may
        be answered after one that canceled or superseded that run (whose StopRun found
        nothing here to stop), or after another server did so (whose doorbell found no run
        here to look at). So the tasks it wrote that moved while it was under way (another
        commit of theirs was answered first, or a doorbell rang), once no commit of theirs is
        under way here any more, are returned: the runs here of those are looked at again."""
        again: set[str] = set()
        for key in keys:
            writing = self._writing.get(key, set())
            writing.discard(op)
            if writing:
                if ok:
                    self._meanwhile.add(key)  # for the commits of it still under way
                continue
            self._writing.pop(key, None)
            if key in self._meanwhile:
                self._meanwhile.discard(key)
                again.add(key)
        return again

    def _look_again(self, tasks: set[str], now: datetime) -> None:
        if not tasks:
            return
        for task_id in sorted(tasks):
            if task_id in self._runs:
                self._check(task_id, now)

    def _failed(self, op: int, why: str, now: datetime, *, unavailable: bool = False) -> None:
        """A store operation failed for good: say so to whoever waits on it."""

        def say(message: str) -> None:
            self._act(Problem(message, store_away=unavailable))

        job = self._jobs.pop(op)
        self._reserved.pop(op, None)
        if isinstance(job, _Job) and job.decision is not None:
            # (A no-op unless it was its commit that failed.)
            self._look_again(self._answered(op, job.keys, ok=False), now)
        match job:
            case _LogRead(exchange=stream):
                follower = self._streams.get(stream)
                if follower is not None:
                    error = (
                        UnavailableError(STORE_AWAY + "; resume the stream shortly")
                        if unavailable
                        else InternalError("The stream failed: the server could not read the task")
                    )
                    self._end(follower, (), error)
            case _Verify(exchange=exchange):
                self._answer_error(exchange, why, unavailable)
            case _Check(task_id=task_id):
                say(f"task {task_id} changed elsewhere; reading it failed ({why})")
                self._checking.pop(task_id, None)
                self._recheck.add(task_id)
                self._wake_by(now + TICK_RETRY)
            case _Job(input=Call()):
                if job.exchange in self._deciding and job.dispatch is not None:
                    self._deciding.discard(job.exchange)
                    error = _store_error(why, unavailable)
                    self._act(Answer(job.exchange, self.core.render(job.dispatch, Fail(error))))
            case _Job(input=AgentOutput(task_id=task_id, run=run)) if (
                unavailable or job.holds < MAX_HOLDS
            ):
                # Held, and tried again soon; the run waits for it (no OutputTaken yet), so
                # what it yields next is decided after it, in order.
                say(
                    f"the output of run {run} of task {task_id} was not recorded "
                    f"({why}); it is held and tried again shortly"
                )
                self._hold(job, now)
            case _Job(input=AgentOutput(task_id=task_id, run=run)):
                say(f"the output of run {run} of task {task_id} was lost: {why}")
                self._act(OutputTaken(task_id, run, counts=False))
                self._act(StopRun(task_id, run))
                self._start(_Job(AgentDone(task_id, run, error=InternalError())), now)
            case _Job(input=AgentDone(task_id=task_id, run=run)):
                # Recorded again soon, for as long as it takes: a task must not stay working
                # with no run behind it because its store was away when the run ended.
                say(
                    f"the end of run {run} of task {task_id} was not recorded "
                    f"({why}); it is tried again shortly"
                )
                self._end_run(task_id, run)
                self._hold(job, now)
                if unavailable:
                    # Who waits for the task to settle is told to retry (a re-send of its
                    # message finds the task), rather than held for as long as the store is away.
                    for waiter in list(self._waiters.get(task_id, ())):
                        self._answer_error(waiter.exchange, why, unavailable=True)
            case _Owed():
                say(f"the push outbox could not be read ({why}); retrying")
                self._reading_outbox = False
                self._wake_by(now + TICK_RETRY)
            case _Note(sent=sent, holds=holds):
                which = f"{sent.task_id}/{sent.config_id}/{sent.seq}"
                if unavailable or holds < MAX_HOLDS:
                    say(
                        f"the fate of push notification {which} was not recorded ({why}); "
                        "it is tried again shortly"
                    )
                    self._unnoted.append(_Note(sent, holds + 1))
                    self._wake_by(now + TICK_RETRY)
                else:
                    self._act(
                        Problem(f"the fate of push notification {which} was not recorded ({why})")
                    )
            case _Recover():
                say(f"the runs a restart left could not be read ({why}); retrying")
                self._recovering = False
                self._wake_by(now + TICK_RETRY)
            case _Job(input=Tick()):
                say(f"the expiry sweep failed ({why}); it is tried again soon")
                self._ticking = False
                self._wake_by(now + TICK_RETRY)

    def _hold(self, job: _Job, now: datetime) -> None:
        """Keep ``job`` (an agent's output or the end of its run, whose store work failed) to
        be decided again at the next tick, on what the store then holds."""
        if job.decision is not None:
            job.tried = job.decision  # (a failed read leaves the last failed commit's)
        job.holds += 1
        job.attempts, job.decision, job.keys = 0, None, frozenset()
        assert isinstance(job.input, AgentOutput | AgentDone)
        # What this server last wrote of the task may be behind the store, or ahead of it.
        self._known.pop(job.input.task_id, None)
        self._retrying.append(job)
        self._wake_by(now + TICK_RETRY)

    def _try_held(self, now: datetime) -> None:
        retrying, self._retrying = self._retrying, []
        for job in retrying:
            self._retry(job, now)
        unnoted, self._unnoted = self._unnoted, []
        for note in unnoted:
            self._commit_note(note)

    def _retry(self, job: _Job, now: datetime) -> None:
        """Try a held job again. While an output is held it is the store, not the agent, that
        keeps the run waiting: the run's idle clock starts again from now."""
        inp = job.input
        if isinstance(inp, AgentOutput):
            clock = self._clocks.get(inp.task_id)
            if clock is not None and clock.run == inp.run:
                clock.spoke = now
        self._start(job, now)

    def _finish(
        self, job: _Job, decision: Decision, snapshot: Snapshot | None, now: datetime
    ) -> None:
        """Perform a committed decision: reply, bookkeeping, effects, in that order."""
        inp = job.input
        if decision.wake_at is not None:
            self._wake_by(decision.wake_at)
        if isinstance(inp, Tick):
            self._ticking = False
        elif isinstance(inp, AgentOutput):
            self._act(OutputTaken(inp.task_id, inp.run, counts=not decision.run_over))
            if decision.run_over:
                self._end_run(inp.task_id, inp.run)
        elif isinstance(inp, AgentDone):
            self._end_run(inp.task_id, inp.run)
        if job.exchange in self._deciding and job.dispatch is not None:
            # The reply first: a waiter listens before the effects that could settle its task.
            self._deciding.discard(job.exchange)
            self._reply(job.exchange, job.dispatch, decision, snapshot, now)
        for effect in decision.effects:
            match effect:
                case StartRun():
                    owner = inp.caller.principal if isinstance(inp, Call) else ""
                    tied = StartRun(effect.task_id, effect.run, effect.context, job.exchange)
                    self._begin(tied, now, owner)
                case StopRun(task_id=task_id, run=run):
                    self._end_run(task_id, run)
                    self._act(effect)
                case Push():
                    if self._holding:
                        self._held_pushes.append(effect)
                    else:
                        self._hand_out(effect)
                case Publish(record=record, events=events, settled=settled):
                    self._publish(record, events, settled, now)
                case _:
                    assert_never(effect)

    def _begin(self, start: StartRun, now: datetime, owner: str = "") -> None:
        """Start a run (for caller ``owner``, if a caller's send started it: "" for none); this
        server keeps one run of a task, the latest it knows of."""
        task_id, run = start.task_id, start.run
        if self._closing:
            # Too late to start work: the task is failed with a record of why.
            self._start(_Job(AgentDone(task_id, run, error=RunAbandoned())), now)
            return
        current = self._runs.get(task_id)
        if current is not None and current > run:
            # A later run of the task began here already: the commit that started this one
            # was answered after the one that superseded it (a store may answer out of
            # order). It would never count: it is not started.
            return
        if current is not None and current < run:
            # A run of this server's that another one superseded before this one heard of it
            # (the decision's StopRun named the other server's run): stop it, or it would go
            # on, forgotten here.
            self._act(StopRun(task_id, current))
        self._runs[task_id] = run
        self._forget_owner(task_id)  # of the run it replaces
        if owner:
            self._run_owners[task_id] = owner
            self._owner_runs[owner] = self._owner_runs.get(owner, 0) + 1
        self._touch(task_id)
        config = self.core.config
        if config.max_run_time is not None or config.run_idle_time is not None:
            clock = self._clocks[task_id] = _RunClock(run, now, now)
            self._arm(task_id, clock)
        self._act(start)

    def _forget_owner(self, task_id: str) -> None:
        owner = self._run_owners.pop(task_id, None)
        if owner is not None:
            left = self._owner_runs[owner] - 1
            if left:
                self._owner_runs[owner] = left
            else:
                del self._owner_runs[owner]

    def _reserve(self, job: _Job, decision: Decision) -> "_Reserved | BusyError | None":
        """What a caller's ``decision`` would start (runs, a stream) if it is within the
        capacity limits, or the busy error that refuses it (before anything is written: a
        refused send leaves no task behind). ``None``: it starts nothing that is limited."""
        if not self._limited or not isinstance(job.input, Call) or job.dispatch is None:
            # No limit to keep; or not a caller's: recovery and agents' own progress are
            # never refused.
            return None
        config = self.core.config
        runs = sum(1 for effect in decision.effects if isinstance(effect, StartRun))
        stream = isinstance(decision.reply, FollowTask)
        if not runs and not stream:
            return None
        held = self._reserved.values()
        owner = job.input.caller.principal
        if runs and config.max_runs is not None:
            under_way = len(self._runs) + sum(r.runs for r in held)
            if under_way + runs > config.max_runs:
                return BusyError(
                    f"The server is running {under_way} agents, its limit is "
                    f"{config.max_runs}; retry later"
                )
        if runs and config.max_runs_per_owner is not None:
            mine = self._owner_runs.get(owner, 0)
            mine += sum(r.runs for r in held if r.owner == owner)
            if mine + runs > config.max_runs_per_owner:
                return BusyError(
                    f"You have {mine} agent runs under way, the limit per caller is "
                    f"{config.max_runs_per_owner}; retry once one has finished"
                )
        if stream and config.max_streams is not None:
            open_ = len(self._streams) + sum(1 for r in held if r.stream)
            if open_ + 1 > config.max_streams:
                return BusyError(
                    f"The server has {open_} streams open, its limit is {config.max_streams}; "
                    "retry later"
                )
        return _Reserved(owner, runs, stream)

    def _arm(self, task_id: str, clock: _RunClock) -> None:
        due = clock.due(self.core.config.max_run_time, self.core.config.run_idle_time)
        heapq.heappush(self._timers, (due, next(self._timer_numbers), task_id, clock.run))

    def _time_runs(self, now: datetime) -> None:
        """Stop the runs past a time limit, failing each task with a record of which."""
        config = self.core.config
        while self._timers and self._timers[0][0] <= now:
            _, _, task_id, run = heapq.heappop(self._timers)
            clock = self._clocks.get(task_id)
            if clock is None or clock.run != run:
                continue  # that run has ended: its timer is stale
            why = clock.passed(config.max_run_time, config.run_idle_time, now)
            if why is None:
                self._arm(task_id, clock)  # it spoke since: look again later
                continue
            del self._clocks[task_id]
            self._act(StopRun(task_id, run))
            self._start(_Job(AgentDone(task_id, run, error=why)), now)
            self._touch(task_id)

    def _hand_out(self, push: Push, attempts: int = 0) -> None:
        """A :class:`Notify` for ``push``, unless one is out already (until it is reported)."""
        key = (push.task_id, push.config.id, push.event.seq)
        if key not in self._owed:
            self._owed.add(key)
            self._act(self.core.notification(push, attempts))

    def _read_outbox(self, after: tuple[str, str, int] | None, now: datetime) -> None:
        # Until the outbox is read through once, what is decided waits behind it; a shared
        # store's later reads only bring what replicas that died left, for other webhooks' sake.
        self._holding = not self._outbox_read
        op = next(self._ops)
        self._jobs[op] = _Owed()
        self._store(op, Read(op, Reads(outbox=OutboxQuery(RECOVER_BATCH, after))))

    def _deliver_owed(self, owed: tuple[Pending, ...], now: datetime) -> None:
        """Hand out again what the server before this one left undelivered (at least once:
        a receiver may see a notification twice, with the same ``X-A2A-Notification-Id``)."""
        for pending in owed:
            record, event = pending.record, pending.event
            config = next((c for c in record.push_configs if c.id == pending.config_id), None)
            if config is None:  # the config was deleted since: nothing is owed to anyone
                self._note(Sent(record.id, pending.config_id, event.seq), now)
                continue
            self._read_owed.add((record.id, config.id, event.seq))
            self._hand_out(Push(record.id, config, event), pending.attempts)
        if len(owed) == RECOVER_BATCH:
            last = owed[-1]
            self._read_outbox((last.record.id, last.config_id, last.event.seq), now)
        else:
            # Read to its end: what was decided meanwhile goes out after it (what the outbox
            # held of it already went, in its webhook's order, and is not handed out twice).
            self._outboxed, self._reading_outbox, self._holding = True, False, False
            self._outbox_read = True
            self._reclaim_later(now)
            held, self._held_pushes = self._held_pushes, []
            read, self._read_owed = self._read_owed, set()
            for push in held:
                if (push.task_id, push.config.id, push.event.seq) not in read:
                    self._hand_out(push)

    def _note(self, sent: Sent, now: datetime) -> None:
        self._commit_note(_Note(sent))

    def _commit_note(self, note: _Note) -> None:
        op = next(self._ops)
        self._jobs[op] = note
        self._store(op, Commit(op, (note.sent,)))

    def _read_running(self, after: str, now: datetime) -> None:
        op = next(self._ops)
        self._jobs[op] = _Recover()
        self._store(op, Read(op, Reads(running=RunningQuery(RECOVER_BATCH, after))))

    def _settle_orphans(self, records: tuple[TaskRecord, ...], now: datetime) -> None:
        """End every run that counted when the server before this one stopped: no run
        survives its process. A task it left submitted or working is failed with a record of
        why (or, with ``on_restart="rerun"``, run again on its user's last message); one it left
        waiting for its user keeps waiting, as when a run ends there. With a shared store these
        are the runs of replicas that stopped, which the store claimed for this server (so that
        two servers never both take one over); the commits settle them as usual, guarded by the
        version, so a server that loses a race decides again on what the winner wrote."""
        for record in records:
            if self._runs.get(record.id) == record.run:
                continue  # a run this server started since (a client continued the task)
            again = self.core.config.on_restart == "rerun" and last_user_message(record)
            if not record.state.settled and again:
                self._start(_Job(Rerun(record.id, record.run)), now)
                continue
            # Alone on its store, the server that ran it was this one's process before; with
            # replicas, one that stopped (and whose lease the store saw lapse).
            why = RunAbandoned(restarted=not self.shared)
            left = None if record.state.settled else why
            self._start(_Job(AgentDone(record.id, record.run, error=left)), now)
        if len(records) == RECOVER_BATCH:
            self._read_running(records[-1].id, now)
        else:
            self._recovered, self._recovering = True, False
            self._reclaim_later(now)

    def _reclaim_later(self, now: datetime) -> None:
        if self.shared and self._recovered and self._outboxed and self._reclaim_at is None:
            self._reclaim_at = now + self._reclaim_every

    def _end_run(self, task_id: str, run: int) -> None:
        clock = self._clocks.get(task_id)
        if clock is not None and clock.run == run:
            del self._clocks[task_id]
        if self._runs.get(task_id) == run:
            del self._runs[task_id]
            self._forget_owner(task_id)
            self._known.pop(task_id, None)
            self._touch(task_id)

    def _remember(self, writes: Iterable[Write]) -> None:
        """Keep what was just committed of the tasks this server runs (see ``_known``).

        Only a record of the run going on here, and never over a later one: a store may answer
        commits out of order, and a run's output decided on the record of the run before it
        would find itself superseded and stop, with no write to lose a compare-and-set (the
        task would stay working with no run behind it)."""
        for write in writes:
            if isinstance(write, Put):
                record = write.record
                key = record.id
                known = self._known.get(key)
                if known is not None and known.version >= record.version:
                    continue  # answered after a later commit of ours, remembered already
                if record.running and self._runs.get(key) == record.run:
                    self._known[key] = record
                else:
                    self._known.pop(key, None)
            elif isinstance(write, Delete):
                self._known.pop(write.task_id, None)

    # --- replies ------------------------------------------------------------------------------

    def _reply(
        self,
        exchange: int,
        dispatch: Dispatch,
        decision: Decision,
        snapshot: Snapshot | None,
        now: datetime,
    ) -> None:
        match decision.reply:
            case Respond() | Fail() as reply:
                self._act(Answer(exchange, self.core.render(dispatch, reply)))
            case AwaitTask() as wait:
                written = [w for w in decision.writes if isinstance(w, Put)]
                if written:
                    # Our own write: the task settles only through later commits, whose
                    # effects come after these.
                    record = written[-1].record
                    self._listen(_Waiter(exchange, dispatch, wait, record.version, record.task.id))
                else:
                    # Decided from a snapshot (a re-sent message): the task may have settled
                    # since it was read. Listen, then look again.
                    found = snapshot.task if snapshot is not None else None
                    version, shown = (found.version, found.task.id) if found else (0, wait.task_id)
                    self._listen(_Waiter(exchange, dispatch, wait, version, shown))
                    op = next(self._ops)
                    self._jobs[op] = _Verify(exchange)
                    self._store(op, Read(op, Reads(task_id=wait.task_id)))
            case FollowTask() as opened:
                self._open(exchange, dispatch, opened, now)
            case None:  # pragma: no cover - the core answers every call
                raise AssertionError("the core returned no reply for a call")

    def _listen(self, waiter: _Waiter) -> None:
        self._exchanges[waiter.exchange] = waiter
        self._waiters.setdefault(waiter.wait.task_id, []).append(waiter)
        self._touch(waiter.wait.task_id)

    def _verified(self, verify: _Verify, record: TaskRecord | None) -> None:
        waiter = self._exchanges.get(verify.exchange)
        if waiter is None:
            return
        if record is None:
            self._vanished(waiter)
        elif record.version > waiter.version and record.state.settled:
            self._settled(waiter, record)

    def _check(self, task_id: str, now: datetime) -> None:
        if task_id in self._checking:
            self._checking[task_id] = True  # changed again meanwhile: read once more after
            return
        self._checking[task_id] = False
        op = next(self._ops)
        self._jobs[op] = _Check(task_id)
        self._store(op, Read(op, Reads(task_id=task_id)))

    def _checked(self, task_id: str, record: TaskRecord | None, now: datetime) -> None:
        """What another server did to a task this one waits on or runs: a waiter whose task
        settled is answered; a run here that no longer counts (its task was canceled or
        deleted, or another server started a run of its own over it) is stopped."""
        again = self._checking.pop(task_id, False)
        for waiter in list(self._waiters.get(task_id, ())):
            if record is None:
                self._vanished(waiter)
            elif record.version > waiter.version and record.state.settled:
                self._settled(waiter, record)
        run = self._runs.get(task_id)
        if run is not None and _superseded(run, record):
            self._end_run(task_id, run)
            self._act(StopRun(task_id, run))
        if again and (task_id in self._waiters or task_id in self._runs):
            self._check(task_id, now)

    def _settled(self, waiter: _Waiter, record: TaskRecord) -> None:
        self._exchanges.pop(waiter.exchange, None)
        _discard(self._waiters, waiter.wait.task_id, waiter)
        self._touch(waiter.wait.task_id)
        reply = self.core.settled_reply(waiter.wait, record)
        self._act(Answer(waiter.exchange, self.core.render(waiter.dispatch, reply)))

    def _vanished(self, waiter: _Waiter) -> None:
        """The task is gone before this server saw it settle: it settled on another server
        and expired before this one looked (its bus was down that long). Nothing will settle
        it now: the request is told the task is not found, as a read of it would be."""
        self._exchanges.pop(waiter.exchange, None)
        _discard(self._waiters, waiter.wait.task_id, waiter)
        self._touch(waiter.wait.task_id)
        reply = Fail(not_found(waiter.shown_id))
        self._act(Answer(waiter.exchange, self.core.render(waiter.dispatch, reply)))

    def _answer_error(self, exchange: int, why: str, unavailable: bool = False) -> None:
        waiter = self._exchanges.pop(exchange, None)
        if waiter is None:
            return
        _discard(self._waiters, waiter.wait.task_id, waiter)
        self._touch(waiter.wait.task_id)
        error = _store_error(why, unavailable)
        self._act(Answer(exchange, self.core.render(waiter.dispatch, Fail(error))))

    def _publish(
        self, record: TaskRecord, events: tuple[LoggedEvent, ...], settled: bool, now: datetime
    ) -> None:
        key = record.id
        for follower in list(self._followers.get(key, ())):
            if follower.reading or follower.behind:
                follower.seen = max(follower.seen, record.seq)
            else:
                self._deliver(follower, advance(follower.cursor, events), now)
        if settled:
            for waiter in list(self._waiters.get(key, ())):
                # A waiter that registered at a later version waits for a later settling.
                if record.version > waiter.version:
                    self._settled(waiter, record)

    # --- streams ------------------------------------------------------------------------------

    def _open(self, exchange: int, dispatch: Dispatch, opened: FollowTask, now: datetime) -> None:
        step = open_cursor(opened)
        follower = _Follower(exchange, dispatch, step.cursor)
        frames = self._render(follower, step.frames)
        headers = self.core.stream_headers(dispatch)
        keepalive = b"" if dispatch.binding is Binding.GRPC else KEEPALIVE
        shown = task_concerned(dispatch.call.request, opened.snapshot)
        served = served_by(dispatch)
        if step.cursor.done:
            tail, trailers = self.core.stream_end(dispatch)
            frames += tail
            self._act(
                StreamOpened(
                    exchange,
                    200,
                    headers,
                    frames,
                    True,
                    trailers,
                    keepalive,
                    task_id=shown,
                    served=served,
                )
            )
            return
        self._streams[exchange] = follower
        self._followers.setdefault(opened.task_id, []).append(follower)
        self._touch(opened.task_id)
        self._moved(follower, step.cursor)
        self._act(
            StreamOpened(
                exchange,
                200,
                headers,
                frames,
                False,
                keepalive=keepalive,
                task_id=shown,
                served=served,
            )
        )
        # Events may have been committed since the decision's snapshot: the log has them.
        self._read_log(follower, now)

    def _render(self, follower: _Follower, frames: Iterable[LoggedEvent]) -> tuple[bytes, ...]:
        render = self.core.render_event if self.sse else self.core.event_payload
        return tuple(r for f in frames if (r := render(follower.dispatch, f)))

    def _deliver(self, follower: _Follower, step: Advance, now: datetime) -> None:
        """Send what ``step`` produced; read the log when it found a gap."""
        self._moved(follower, step.cursor)
        frames = self._render(follower, step.frames)
        if step.cursor.done:
            self._end(follower, frames)
            return
        if frames:
            self._send(follower, frames)
        if step.gap:
            self._read_log(follower, now)

    def _moved(self, follower: _Follower, cursor: StreamCursor) -> None:
        follower.cursor = cursor
        if cursor.release_at is not None:
            self._held[follower.exchange] = follower
        else:
            self._held.pop(follower.exchange, None)

    def _send(self, follower: _Follower, frames: tuple[bytes, ...]) -> None:
        self._act(Frames(follower.exchange, frames, ended=False))
        if self._window is not None:
            follower.unsent += 1
            if follower.unsent >= self._window:
                self.stalls += 1
                follower.behind = True  # it reads the log once what it has is sent

    def _end(
        self, follower: _Follower, frames: tuple[bytes, ...], error: A2AError | None = None
    ) -> None:
        tail, trailers = self.core.stream_end(follower.dispatch, error)
        self._act(Frames(follower.exchange, frames + tail, ended=True, trailers=trailers))
        self.client_left(follower.exchange)

    def _read_log(self, follower: _Follower, now: datetime) -> None:
        if follower.reading or follower.exchange not in self._streams:
            return
        follower.reading = True
        follower.rung = False
        op = next(self._ops)
        self._jobs[op] = _LogRead(follower.exchange)
        query = log_page(follower.cursor)
        self._store(op, Read(op, Reads(task_id=query.task_id, log=query)))

    def _log_read(self, op: int, job: _LogRead, snapshot: Snapshot, now: datetime) -> None:
        del self._jobs[op]
        follower = self._streams.get(job.exchange)
        if follower is None:
            return  # its client left meanwhile
        follower.reading = False
        if snapshot.task is None:
            self._end(follower, ())  # the task is gone (expired): nothing more will come
            return
        step = advance(follower.cursor, snapshot.log)
        full_page = len(snapshot.log) == log_page(follower.cursor).limit
        self._deliver(follower, step, now)
        if follower.exchange not in self._streams or follower.behind:
            return
        more = follower.cursor.last_seq < max(follower.seen, snapshot.task.seq)
        if full_page or more or follower.rung:
            self._read_log(follower, now)  # there is more, or more came while reading

    # --- the timer ----------------------------------------------------------------------------

    def _wake_by(self, due: datetime | None) -> None:
        if due is not None and (self._tick_at is None or due < self._tick_at):
            self._tick_at = due


def _answers(action: Action) -> TypeGuard[Answer | StreamOpened | Frames]:
    """Whether ``action`` is the end of its exchange's answer."""
    match action:
        case Answer():
            return True
        case StreamOpened(ended=ended) | Frames(ended=ended):
            return ended
    return False


def _store_error(why: str, unavailable: bool) -> InternalError | UnavailableError:
    if unavailable:
        return UnavailableError(STORE_AWAY + "; retry shortly")
    return InternalError(f"Internal error: {why}; the failure was logged")


def _put_keys(decision: Decision) -> frozenset[str]:
    writes = decision.writes
    if len(writes) == 1 and type(writes[0]) is Put:  # as nearly every decision's
        return frozenset((writes[0].record.id,))
    return frozenset(w.record.id for w in writes if isinstance(w, Put))


def _written(decision: Decision, snapshot: Snapshot) -> bool:
    """Whether ``snapshot`` (a read of an agent's task) shows ``decision``'s write of that task
    in the store: the very record it put, which no other writer could have put."""
    found = snapshot.task
    if found is None:
        return False
    return any(
        isinstance(write, Put) and write.record.id == found.id and write.record == found
        for write in decision.writes
    )


def _superseded(run: int, record: TaskRecord | None) -> bool:
    """Whether ``record`` says run ``run`` of its task no longer counts: the task is gone, a
    later run began, or this one ended. A record of an *earlier* run says nothing about it: it
    was read before the commit that started this run, and answered after it (a store may
    answer its operations out of order)."""
    if record is None or record.run > run:
        return True
    return record.run == run and not record.running


def _discard(table: "dict[str, list[Any]]", key: str, entry: object) -> None:
    entries = table.get(key)
    if entries is not None:
        kept = [e for e in entries if e is not entry]
        if kept:
            table[key] = kept
        else:
            del table[key]
