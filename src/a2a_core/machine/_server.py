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

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, assert_never

from a2a_core._agent_api import RunAbandoned
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
    Rerun,
    Tick,
    World,
)
from a2a_core.decide._sends import last_user_message
from a2a_core.decide._streams import Advance, FollowTask, advance, release
from a2a_core.decide._validation import not_found
from a2a_core.front._exchange import Binding
from a2a_core.front._http import HttpRequest, HttpResponse
from a2a_core.model._records import TaskRecord
from a2a_core.store._contract import (
    LoggedEvent,
    OutboxQuery,
    Pending,
    Put,
    Reads,
    RunningQuery,
    Sent,
    Snapshot,
    SyncStore,
)

from ._actions import Action, Answer, Commit, OutputTaken, Problem, Read, answers
from ._core import Core
from ._follow import Follower, Followers
from ._jobs import (
    JOB_PHASES,
    Check,
    Job,
    JobPhase,
    Known,
    LogRead,
    Note,
    Owed,
    Recover,
    StoreJobs,
    Verify,
    written,
)
from ._outbox import Outbox
from ._recovery import Upkeep
from ._replicas import Replicas
from ._runs import Runs, superseded
from ._waits import Waiter, Waits

__all__ = ["Server"]

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
#: How many tasks (or owed notifications) a restart's recovery reads at a time.
RECOVER_BATCH = 100
#: With a shared store, how often a server looks for runs and notifications that a replica
#: which died left behind (the store decides which replicas died: their leases lapsed).
RECLAIM_EVERY = timedelta(seconds=5)


class Server:
    """An A2A server as a state machine: inputs in, :data:`Action` values out.

    It coordinates its parts (:class:`StoreJobs`, :class:`Waits`, :class:`Followers`,
    :class:`Runs`, :class:`Outbox`, :class:`Upkeep`, :class:`Replicas`), each of which keeps
    its own state and never calls back. The rules that cross parts are kept here: the reply
    goes before the effects (a waiter listens before anything could settle its task); a
    client is answered only after its decision's commit; a run starts only once the commit
    that started it is in, and never once shutdown has begun."""

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
        #: Other servers (replicas) decide over the same store: see :meth:`changed`.
        self.shared = shared
        #: Makes the id of each new task, context and message. The core draws no random number,
        #: so the transport gives it a function that draws them from its own source: ids must be
        #: unguessable (a task's id is all a caller needs to ask for it) and never repeat, across
        #: restarts over a durable store too. Tests give a counter, for ids they can predict.
        self._new_id = new_id
        self._numbers = 0
        self._actions: list[Action] = []
        self._closing = False
        config = core.config
        self.jobs = StoreJobs(inline=store is not None)
        self.waits = Waits()
        self.streams = Followers(core, self._act, sse=sse, window=stream_window)
        self.runs = Runs(config)
        self.outbox = Outbox(config.push_notifications)
        self.upkeep = Upkeep(shared, reclaim_every)
        self.replicas = Replicas(shared)
        # Agent outputs, ends of runs and notes the store failed to record, tried again at the
        # next tick: an agent's work is never dropped because its store was away a moment.
        self._retrying: list[Job] = []
        self._unnoted: list[Note] = []

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
        self._numbers = number = self._numbers + 1
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
                self.waits.due[number] = now + routed.timeout
            self.waits.deciding.add(number)
            self._start(Job(routed.call, number, routed), now)
        self._settle(now)
        return number

    def agent_output(self, task_id: str, run: int, value: Any, now: datetime) -> None:
        """Run ``run`` of ``task_id``'s agent yielded ``value``; :class:`OutputTaken` says
        when it is decided, and whether the run goes on."""
        if self.runs.timed:
            self.runs.spoke(task_id, run, now)
        self._start(Job(AgentOutput(task_id, run, value)), now)
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
        self._start(Job(AgentDone(task_id, run, value, error)), now)
        self._settle(now)

    def tick(self, now: datetime) -> None:
        """The time :meth:`next_deadline` named has come (calling it early or late is
        harmless): expired tasks go, streamed sends whose agent has not spoken yet get their
        task, and what the store failed to record (an agent's output, the end of a run, a
        notification's fate) is tried again. A transport ticks once when it starts, too, so
        that what expired while no server ran is swept."""
        upkeep = self.upkeep
        if upkeep.reclaim_due(now):
            self.outbox.reclaim()  # and the runs: what replicas that died left
        for task_id in sorted(self.replicas.recheck):
            self.replicas.recheck.discard(task_id)
            self._check(task_id, now)
        self._try_held(now)
        if self.outbox.to_read:
            self._read_outbox(None)
        if upkeep.recovering():
            self._ask(Recover(), Reads(running=RunningQuery(RECOVER_BATCH, "")))
        if upkeep.sweep_due(now):
            self._start(Job(Tick(now)), now)
        for follower in self.streams.due(now):
            self._deliver(follower, release(follower.cursor, now), now)
        for exchange in self.waits.expired(now):
            error = DeadlineExceededError(
                "Deadline exceeded: the client's grpc-timeout passed before the call was done"
            )
            waiter = self.waits.take(exchange)
            stream = self.streams.streams.get(exchange)
            if waiter is not None:
                self.replicas.touch(waiter.wait.task_id)
                self._act(Answer(exchange, self.core.render(waiter.dispatch, Fail(error))))
            elif stream is not None:
                self._end(stream, error)
        for task_id, run, why in self.runs.timed_out(now):
            self._act(StopRun(task_id, run))
            self._start(Job(AgentDone(task_id, run, error=why)), now)
            self.replicas.touch(task_id)
        self._settle(now)

    def notified(self, task_id: str, config_id: str, seq: int, now: datetime) -> None:
        """The :class:`Notify` of event ``seq`` was delivered, or given up on for good: it
        leaves the outbox."""
        self.outbox.owed.discard((task_id, config_id, seq))
        self._note(Note(Sent(task_id, config_id, seq)))
        self._settle(now)

    def notify_failed(
        self, task_id: str, config_id: str, seq: int, attempts: int, now: datetime
    ) -> None:
        """An attempt at that :class:`Notify` failed, ``attempts`` in all, and it will be
        tried again: the count is kept, so that a restart goes on from it."""
        self._note(Note(Sent(task_id, config_id, seq, attempts)))
        self._settle(now)

    def changed(self, task_id: str, now: datetime, *, events: Sequence[LoggedEvent] = ()) -> None:
        """(Shared store.) Task ``task_id`` may have changed elsewhere: its doorbell rang, or
        a :class:`Watch` of it began or was restored after a lost connection. The streams that
        follow it take ``events`` (what the change logged, if the doorbell said) when they
        follow on from their cursors, and read its log otherwise; the requests that wait on it
        and its run here look at it again (a run whose task was canceled or taken over is
        stopped). A ring that never came costs latency, never an event: whoever watches looks
        again."""
        self.runs.known.pop(task_id, None)
        self.jobs.moved(task_id)
        logged = tuple(events)
        last = logged[-1].seq if logged else 0
        for follower in self.streams.of(task_id):
            if not self.streams.taking(follower, last, rang=not logged):
                continue  # the log read under way (or once caught up) may have missed it
            if logged:
                self._deliver(follower, advance(follower.cursor, logged), now)
            else:
                self._read_log(follower)
        if task_id in self.waits.by_task or task_id in self.runs.current:
            self._check(task_id, now)
        self._settle(now)

    def client_left(self, exchange: int) -> None:
        """The client of ``exchange`` (a waiting request, or a stream) went away: nothing more
        is kept or sent for it. What it asked for goes on (a created task still runs)."""
        waits = self.waits
        waits.deciding.discard(exchange)
        waits.due.pop(exchange, None)
        waiter = waits.take(exchange)
        follower = self.streams.forget(exchange)
        if waiter is not None:
            self.replicas.touch(waiter.wait.task_id)
        if follower is not None:
            self.replicas.touch(follower.cursor.task_id)
        self.replicas.watch(self._cares, self._act)

    def read_done(self, op: int, snapshot: Snapshot, now: datetime) -> None:
        """The store answered :class:`Read` ``op``."""
        self._read(op, snapshot, now)
        self._settle(now)

    def read_failed(self, op: int, now: datetime, *, unavailable: bool = False) -> None:
        """The store could not answer :class:`Read` ``op`` (the transport logged why).
        ``unavailable``: it could not be reached, so a client is told to retry (503) rather
        than that the server failed (500)."""
        if self.jobs.pending.pop(op, None) is not None:
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
        if self.jobs.pending.pop(op, None) is not None:
            self._failed(op, "the store failed", now, unavailable=unavailable)
        self._settle(now)

    def frames_sent(self, exchange: int, now: datetime) -> None:
        """A :class:`Frames` batch of exchange ``exchange`` went out (only with a
        ``stream_window``): a stream that fell behind reads on from the log once it has sent all
        it was given."""
        follower = self.streams.sent(exchange)
        if follower is not None:
            self._read_log(follower)
            self._settle(now)

    def begin_shutdown(self, now: datetime) -> None:
        """The server is stopping: every stream ends now (its client resumes elsewhere with
        ``Last-Event-ID``), and a run that would start is not started: its task is failed with
        a record of why. Runs under way may still finish (see :meth:`abandon_runs`)."""
        self._closing = True
        for follower in list(self.streams.streams.values()):
            # An SSE client resumes with Last-Event-ID; a gRPC stream has no such thing, and
            # ending it OK would say the task is done: it hears to call again (UNAVAILABLE).
            grpc = follower.dispatch.binding is Binding.GRPC
            self._end(follower, UnavailableError(_STOPPING) if grpc else None)
        self._settle(now)

    def abandon_runs(self, now: datetime) -> None:
        """Stop every run still going (the graceful period is over), failing each task with a
        record of why, so that none is left working with no agent behind it."""
        # What the store missed is tried once more now, not at a tick that may never come.
        self._try_held(now)
        for task_id, run in self.runs.clear():
            self._act(StopRun(task_id, run))
            self._start(Job(AgentDone(task_id, run, error=RunAbandoned())), now)
            self.replicas.touch(task_id)
        self._settle(now)

    # --- outputs ------------------------------------------------------------------------------

    def take_actions(self) -> list[Action]:
        """What the outside world must now do, in order (each action is returned once)."""
        actions, self._actions = self._actions, []
        return actions

    def next_deadline(self) -> datetime | None:
        """When :meth:`tick` should next be called (``None``: nothing is waiting for a time)."""
        due = self.upkeep.deadline()
        # Most parts wait for no time at all: each is asked only if it holds something.
        for part in (self.streams.held and self.streams, self.waits.due and self.waits):
            if part:
                when = part.deadline()
                if when is not None and (due is None or when < due):
                    due = when
        if self.runs.timers:
            when = self.runs.timers[0][0]
            due = when if due is None or when < due else due
        return due

    @property
    def open_streams(self) -> int:
        """How many streams are still following a task."""
        return len(self.streams.streams)

    def following(self, task_id: str) -> int:
        """How many streams follow task ``task_id`` (its store key)."""
        return len(self.streams.by_task.get(task_id, ()))

    @property
    def stalls(self) -> int:
        """How many times a stream fell a whole window behind (and read on from the log)."""
        return self.streams.stalls

    @property
    def waiting(self) -> int:
        """How many requests wait for their task to settle."""
        return len(self.waits)

    @property
    def closing(self) -> bool:
        """Whether :meth:`begin_shutdown` was called (the server takes no new work)."""
        return self._closing

    @property
    def live_runs(self) -> int:
        """How many agent runs are under way."""
        return len(self.runs.current)

    @property
    def busy(self) -> int:
        """How many store operations are under way."""
        return len(self.jobs.jobs)

    # --- read, decide, commit -----------------------------------------------------------------

    def _act(self, action: Action) -> None:
        self._actions.append(action)
        if self.waits.due and answers(action):
            self.waits.due.pop(action.exchange, None)  # answered: its deadline is no more

    def _ask(self, work: Check | LogRead | Owed | Recover | Verify, reads: Reads) -> None:
        action = self.jobs.read(work, reads)
        if action is not None:
            self._act(action)

    def _settle(self, now: datetime) -> None:
        """With a store of its own, perform the reads and commits the last input caused. A store
        that raises fails that operation only, as a transport's ``read_failed`` would."""
        store, queue = self.store, self.jobs.queue
        while queue:
            action = queue.popleft()
            if isinstance(action, Known):
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
                if self.jobs.pending.pop(action.op, None) is not None:
                    self._failed(action.op, "the store failed", now)
                continue
            if isinstance(action, Read):
                self._read(action.op, snapshot, now)
            else:
                self._committed(action.op, ok, now)
        if self.replicas.touched:  # alone on its store, a server watches nothing
            self.replicas.watch(self._cares, self._act)

    def _cares(self, task_id: str) -> bool:
        return (
            task_id in self.waits.by_task
            or task_id in self.streams.by_task
            or task_id in self.runs.current
        )

    def _start(self, job: Job, now: datetime) -> None:
        jobs = self.jobs
        inp = job.input
        if isinstance(inp, AgentOutput | AgentDone):
            # An agent's output needs its task's record alone (``needs``): the one this server
            # last wrote serves, if it is of this run (else the store says what won), decided
            # in turn with the store's answers.
            known = self.runs.known.get(inp.task_id)
            if known is not None and known.run == inp.run:
                op = jobs.new(job)
                jobs.pending[op] = Read(op, Reads(task_id=inp.task_id))
                jobs.queue.append(Known(op, Snapshot(task=known)))
                return
        action = jobs.read(job, self.core.needs(inp))
        if action is not None:
            self._act(action)

    def _read(self, op: int, snapshot: Snapshot, now: datetime) -> None:
        jobs = self.jobs
        if jobs.pending.pop(op, None) is None:
            return  # answered already (a transport's mistake; harmless)
        job = jobs.jobs[op]
        match job:
            case Job(tried=Decision() as tried) if written(tried, snapshot):
                # The commit that failed had gone through after all: it is done, not redone
                # (an artifact decided twice would be added twice).
                del jobs.jobs[op]
                self._finish(job, tried, None, now)
                self.runs.remember(tried.writes)
            case Job():  # first: nearly every read is a decision's
                decision = self.core.decide(job.input, snapshot, World(now, self._new_id))
                self.runs.reserved.pop(op, None)  # decided again: what it held is void
                if self.runs.limited and self._refused(op, job, decision):
                    return
                if decision.writes:
                    action = jobs.commit(op, job, decision)
                    if action is not None:
                        self._act(action)
                else:
                    del jobs.jobs[op]
                    self._finish(job, decision, snapshot, now)
            case LogRead(exchange=exchange):
                del jobs.jobs[op]
                follower = self.streams.streams.get(exchange)
                if follower is None:
                    return  # its client left meanwhile
                if snapshot.task is None:
                    self._end(follower)  # the task is gone (expired): nothing more will come
                elif self.streams.read_done(follower, snapshot):
                    self._read_log(follower)
                elif exchange not in self.streams.streams:
                    self._ended(follower)  # what it read took it to its end
            case Recover():
                del jobs.jobs[op]
                self._settle_orphans(snapshot.running, now)
            case Owed():
                del jobs.jobs[op]
                self._deliver_owed(snapshot.outbox, now)
            case Verify(exchange=exchange):
                del jobs.jobs[op]
                waiter = self.waits.get(exchange)
                if waiter is not None:
                    self._look_at(waiter, snapshot.task)
            case Check(task_id=task_id):
                del jobs.jobs[op]
                self._checked(task_id, snapshot.task, now)

    def _refused(self, op: int, job: Job, decision: Decision) -> bool:
        """Whether a caller's ``decision`` is refused for capacity (and answered busy, before
        anything is written: a refused send leaves no task behind); else what it starts is
        reserved until its commit is answered. Recovery and agents' own progress are never
        refused."""
        if not isinstance(job.input, Call) or job.dispatch is None or job.exchange is None:
            return False
        starts = sum(1 for e in decision.effects if isinstance(e, StartRun))
        stream = isinstance(decision.reply, FollowTask)
        if not starts and not stream:
            return False
        owner = job.input.caller.principal
        reserving = self.runs.reserve(owner, starts, stream, len(self.streams.streams))
        if isinstance(reserving, BusyError):
            del self.jobs.jobs[op]
            self.waits.deciding.discard(job.exchange)
            answer = self.core.render(job.dispatch, Fail(reserving))
            self._act(Answer(job.exchange, answer))
            return True
        if decision.writes:
            self.runs.reserved[op] = reserving
        return False

    def _committed(self, op: int, ok: bool, now: datetime) -> None:
        jobs = self.jobs
        if jobs.pending.pop(op, None) is None:
            return
        job = jobs.jobs[op]
        if isinstance(job, Note):
            del jobs.jobs[op]  # an outbox write checks no version: it cannot conflict
            return
        assert isinstance(job, Job)
        assert job.decision is not None
        # Committed: the runs and the stream start now (or it is decided again, and checked).
        self.runs.reserved.pop(op, None)
        again = jobs.answered(op, job.keys, ok)
        if ok:
            del jobs.jobs[op]
            self._finish(job, job.decision, None, now)
            self.runs.remember(job.decision.writes)
            self._look_again(again, now)
            return
        if isinstance(job.input, AgentOutput | AgentDone):
            self.runs.known.pop(job.input.task_id, None)  # it was stale: read what won
        self._look_again(again, now)
        job.attempts += 1
        if job.attempts >= MAX_ATTEMPTS:
            self._failed(op, f"its writes lost {MAX_ATTEMPTS} compare-and-set races in a row", now)
            return
        job.phase = JOB_PHASES[job.phase, "lost the race"]
        job.decision = None
        action = jobs.ask(Read(op, self.core.needs(job.input)))  # decide again, on fresh data
        if action is not None:
            self._act(action)

    def _look_again(self, tasks: set[str], now: datetime) -> None:
        for task_id in sorted(tasks):
            if task_id in self.runs.current:
                self._check(task_id, now)

    def _failed(self, op: int, why: str, now: datetime, *, unavailable: bool = False) -> None:
        """A store operation failed for good: the part that asked for it is told."""

        def say(message: str) -> None:
            self._act(Problem(message, store_away=unavailable))

        job = self.jobs.jobs.pop(op)
        self.runs.reserved.pop(op, None)
        retry = now + TICK_RETRY
        match job:
            case LogRead(exchange=stream):
                follower = self.streams.streams.get(stream)
                if follower is not None:
                    error = (
                        UnavailableError(STORE_AWAY + "; resume the stream shortly")
                        if unavailable
                        else InternalError("The stream failed: the server could not read the task")
                    )
                    self._end(follower, error)
            case Verify(exchange=exchange):
                self._answer_error(exchange, why, unavailable)
            case Check(task_id=task_id):
                say(f"task {task_id} changed elsewhere; reading it failed ({why})")
                self.replicas.failed(task_id)
                self.upkeep.wake_by(retry)
            case Owed():
                say(f"the push outbox could not be read ({why}); retrying")
                self.outbox.failed()
                self.upkeep.wake_by(retry)
            case Note(sent=sent, holds=holds):
                which = f"{sent.task_id}/{sent.config_id}/{sent.seq}"
                if unavailable or holds < MAX_HOLDS:
                    say(
                        f"the fate of push notification {which} was not recorded ({why}); "
                        "it is tried again shortly"
                    )
                    self._unnoted.append(Note(sent, holds + 1))
                    self.upkeep.wake_by(retry)
                else:
                    self._act(
                        Problem(f"the fate of push notification {which} was not recorded ({why})")
                    )
            case Recover():
                say(f"the runs a restart left could not be read ({why}); retrying")
                self.upkeep.recovery_step("failed")
                self.upkeep.wake_by(retry)
            case Job():
                if job.phase is JobPhase.COMMITTING:
                    self._look_again(self.jobs.answered(op, job.keys, ok=False), now)
                self._job_failed(job, why, now, unavailable, say)

    def _job_failed(
        self, job: Job, why: str, now: datetime, unavailable: bool, say: Callable[[str], None]
    ) -> None:
        match job.input:
            case Call():
                if job.exchange in self.waits.deciding and job.dispatch is not None:
                    self.waits.deciding.discard(job.exchange)
                    error = _store_error(why, unavailable)
                    self._act(Answer(job.exchange, self.core.render(job.dispatch, Fail(error))))
            case AgentOutput(task_id=task_id, run=run) if unavailable or job.holds < MAX_HOLDS:
                # Held, and tried again soon; the run waits for it (no OutputTaken yet), so
                # what it yields next is decided after it, in order.
                say(
                    f"the output of run {run} of task {task_id} was not recorded "
                    f"({why}); it is held and tried again shortly"
                )
                self._hold(job, task_id, now)
            case AgentOutput(task_id=task_id, run=run):
                say(f"the output of run {run} of task {task_id} was lost: {why}")
                self._act(OutputTaken(task_id, run, counts=False))
                self._act(StopRun(task_id, run))
                self._start(Job(AgentDone(task_id, run, error=InternalError())), now)
            case AgentDone(task_id=task_id, run=run):
                # Recorded again soon, for as long as it takes: a task must not stay working
                # with no run behind it because its store was away when the run ended.
                say(
                    f"the end of run {run} of task {task_id} was not recorded "
                    f"({why}); it is tried again shortly"
                )
                self._end_run(task_id, run)
                self._hold(job, task_id, now)
                if unavailable:
                    # Who waits for the task to settle is told to retry (a re-send of its
                    # message finds the task), rather than held for as long as the store is away.
                    for waiter in self.waits.of(task_id):
                        self._answer_error(waiter.exchange, why, unavailable=True)
            case Tick():
                say(f"the expiry sweep failed ({why}); it is tried again soon")
                self.upkeep.swept("failed")
                self.upkeep.wake_by(now + TICK_RETRY)

    def _hold(self, job: Job, task_id: str, now: datetime) -> None:
        """Keep ``job`` (an agent's output or the end of its run, whose store work failed) to
        be decided again at the next tick, on what the store then holds."""
        if job.phase is JobPhase.COMMITTING:
            job.tried = job.decision  # (a failed read leaves the last failed commit's)
        job.phase = JOB_PHASES[job.phase, "failed"]
        job.holds += 1
        job.attempts, job.decision, job.keys = 0, None, frozenset()
        # What this server last wrote of the task may be behind the store, or ahead of it.
        self.runs.known.pop(task_id, None)
        self._retrying.append(job)
        self.upkeep.wake_by(now + TICK_RETRY)

    def _try_held(self, now: datetime) -> None:
        retrying, self._retrying = self._retrying, []
        for job in retrying:
            # While an output is held it is the store, not the agent, that keeps the run
            # waiting: the run's idle clock starts again from now.
            if isinstance(job.input, AgentOutput):
                self.runs.spoke(job.input.task_id, job.input.run, now)
            job.phase = JOB_PHASES[job.phase, "tried again"]
            self._start(job, now)
        unnoted, self._unnoted = self._unnoted, []
        for note in unnoted:
            self._note(note)

    def _finish(
        self, job: Job, decision: Decision, snapshot: Snapshot | None, now: datetime
    ) -> None:
        """Perform a committed decision: reply, bookkeeping, effects, in that order."""
        inp = job.input
        if decision.wake_at is not None:
            self.upkeep.wake_by(decision.wake_at)
        if isinstance(inp, Tick):
            self.upkeep.swept()
        elif isinstance(inp, AgentOutput):
            self._act(OutputTaken(inp.task_id, inp.run, counts=not decision.run_over))
            if decision.run_over and self.runs.end(inp.task_id, inp.run):
                self.replicas.touch(inp.task_id)
        elif isinstance(inp, AgentDone) and self.runs.end(inp.task_id, inp.run):
            self.replicas.touch(inp.task_id)
        if job.exchange in self.waits.deciding and job.dispatch is not None:
            # The reply first: a waiter listens before the effects that could settle its task.
            self.waits.deciding.discard(job.exchange)
            self._reply(job, decision, snapshot)
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
                    if self.outbox.hand_out(effect):
                        self._act(self.core.notification(effect))
                case Publish(record=record, events=events, settled=settled):
                    self._publish(record, events, settled, now)
                case _:
                    assert_never(effect)

    def _begin(self, start: StartRun, now: datetime, owner: str = "") -> None:
        """Start a run (for caller ``owner``, if a caller's send started it: "" for none)."""
        task_id, run = start.task_id, start.run
        if self._closing:
            # Too late to start work: the task is failed with a record of why.
            self._start(Job(AgentDone(task_id, run, error=RunAbandoned())), now)
            return
        replaced = self.runs.begin(task_id, run, now, owner)
        if replaced is None:
            # A later run of the task began here already: the commit that started this one
            # was answered after the one that superseded it. It would never count.
            return
        if replaced:
            # A run of this server's that another one superseded before this one heard of it
            # (the decision's StopRun named the other server's run): stop it, or it would go
            # on, forgotten here.
            self._act(StopRun(task_id, replaced))
        self.replicas.touch(task_id)
        self._act(start)

    def _end_run(self, task_id: str, run: int) -> None:
        if self.runs.end(task_id, run):
            self.replicas.touch(task_id)

    # --- replies and waits --------------------------------------------------------------------

    def _reply(self, job: Job, decision: Decision, snapshot: Snapshot | None) -> None:
        exchange, dispatch = job.exchange, job.dispatch
        assert exchange is not None
        assert dispatch is not None
        match decision.reply:
            case Respond() | Fail() as reply:
                self._act(Answer(exchange, self.core.render(dispatch, reply)))
            case AwaitTask() as wait:
                written_ = [w for w in decision.writes if isinstance(w, Put)]
                if written_:
                    # Our own write: the task settles only through later commits, whose
                    # effects come after these.
                    record = written_[-1].record
                    self._listen(Waiter(exchange, dispatch, wait, record.version, record.task.id))
                else:
                    # Decided from a snapshot (a re-sent message): the task may have settled
                    # since it was read. Listen, then look again.
                    found = snapshot.task if snapshot is not None else None
                    version, shown = (found.version, found.task.id) if found else (0, wait.task_id)
                    self._listen(Waiter(exchange, dispatch, wait, version, shown))
                    self._ask(Verify(exchange), Reads(task_id=wait.task_id))
            case FollowTask() as opened:
                follower = self.streams.open(exchange, dispatch, opened)
                if follower is not None:
                    self.replicas.touch(opened.task_id)
                    # Events may have been committed since the decision's snapshot: the log
                    # has them.
                    self._read_log(follower)
            case None:  # pragma: no cover - the core answers every call
                raise AssertionError("the core returned no reply for a call")

    def _listen(self, waiter: Waiter) -> None:
        self.waits.listen(waiter)
        self.replicas.touch(waiter.wait.task_id)

    def _look_at(self, waiter: Waiter, record: TaskRecord | None) -> None:
        """Answer ``waiter`` if ``record`` (read since it began to wait) settles it."""
        if record is None:
            # The task is gone before this server saw it settle: it settled on another
            # server and expired before this one looked (its bus was down that long). Nothing
            # will settle it now: the request is told the task is not found, as a read would.
            self._answer(waiter, Fail(not_found(waiter.shown_id)))
        elif record.version > waiter.version and record.state.settled:
            self._answer(waiter, self.core.settled_reply(waiter.wait, record))

    def _answer(self, waiter: Waiter, reply: Respond | Fail) -> None:
        self.waits.take(waiter.exchange)
        self.replicas.touch(waiter.wait.task_id)
        self._act(Answer(waiter.exchange, self.core.render(waiter.dispatch, reply)))

    def _answer_error(self, exchange: int, why: str, unavailable: bool = False) -> None:
        waiter = self.waits.get(exchange)
        if waiter is not None:
            self._answer(waiter, Fail(_store_error(why, unavailable)))

    def _check(self, task_id: str, now: datetime) -> None:
        if self.replicas.check(task_id):
            self._ask(Check(task_id), Reads(task_id=task_id))

    def _checked(self, task_id: str, record: TaskRecord | None, now: datetime) -> None:
        """What another server did to a task this one waits on or runs: a waiter whose task
        settled is answered; a run here that no longer counts (its task was canceled or
        deleted, or another server started a run of its own over it) is stopped."""
        again = self.replicas.checked(task_id)
        for waiter in self.waits.of(task_id):
            self._look_at(waiter, record)
        run = self.runs.current.get(task_id)
        if run is not None and superseded(run, record):
            self._end_run(task_id, run)
            self._act(StopRun(task_id, run))
        if again and (task_id in self.waits.by_task or task_id in self.runs.current):
            self._check(task_id, now)

    def _publish(
        self, record: TaskRecord, events: tuple[LoggedEvent, ...], settled: bool, now: datetime
    ) -> None:
        key = record.id
        streams = self.streams
        followers = streams.by_task.get(key)
        if followers:
            for follower in list(followers):
                if streams.taking(follower, record.seq):
                    self._deliver(follower, advance(follower.cursor, events), now)
        waiters = self.waits.by_task.get(key) if settled else None
        if waiters:
            for waiter in list(waiters):
                # A waiter that registered at a later version waits for a later settling.
                if record.version > waiter.version:
                    self._answer(waiter, self.core.settled_reply(waiter.wait, record))

    # --- streams ------------------------------------------------------------------------------

    def _deliver(self, follower: Follower, step: Advance, now: datetime) -> None:
        if self.streams.deliver(follower, step):
            self._read_log(follower)  # a gap: the log has what is missing
        elif follower.exchange not in self.streams.streams:
            self._ended(follower)

    def _end(self, follower: Follower, error: A2AError | None = None) -> None:
        self.streams.end(follower, (), error)
        self._ended(follower)

    def _ended(self, follower: Follower) -> None:
        """``follower``'s stream ended: its exchange is over."""
        self.waits.due.pop(follower.exchange, None)
        self.replicas.touch(follower.cursor.task_id)
        self.replicas.watch(self._cares, self._act)

    def _read_log(self, follower: Follower) -> None:
        query = self.streams.start_read(follower)
        if query is not None:
            self._ask(LogRead(follower.exchange), Reads(task_id=query.task_id, log=query))

    # --- the outbox and recovery --------------------------------------------------------------

    def _read_outbox(self, after: tuple[str, str, int] | None) -> None:
        self.outbox.reading()
        self._ask(Owed(), Reads(outbox=OutboxQuery(RECOVER_BATCH, after)))

    def _deliver_owed(self, owed: tuple[Pending, ...], now: datetime) -> None:
        """Hand out again what the server before this one left undelivered (at least once:
        a receiver may see a notification twice, with the same ``X-A2A-Notification-Id``)."""
        out, gone = self.outbox.batch(owed)
        for sent in gone:  # the config was deleted since: nothing is owed to anyone
            self._note(Note(sent))
        for push, attempts in out:
            self._act(self.core.notification(push, attempts))
        if len(owed) == RECOVER_BATCH:
            last = owed[-1]
            self._read_outbox((last.record.id, last.config_id, last.event.seq))
            return
        for push in self.outbox.read_through():
            self._act(self.core.notification(push))
        self.upkeep.reclaim_later(now, self.outbox.settled)

    def _note(self, note: Note) -> None:
        action = self.jobs.ask(Commit(self.jobs.new(note), (note.sent,)))
        if action is not None:
            self._act(action)

    def _settle_orphans(self, records: tuple[TaskRecord, ...], now: datetime) -> None:
        """End every run that counted when the server before this one stopped: no run
        survives its process. A task it left submitted or working is failed with a record of
        why (or, with ``on_restart="rerun"``, run again on its user's last message); one it left
        waiting for its user keeps waiting, as when a run ends there. With a shared store these
        are the runs of replicas that stopped, which the store claimed for this server (so that
        two servers never both take one over); the commits settle them as usual, guarded by the
        version, so a server that loses a race decides again on what the winner wrote."""
        for record in records:
            if self.runs.current.get(record.id) == record.run:
                continue  # a run this server started since (a client continued the task)
            again = self.core.config.on_restart == "rerun" and last_user_message(record)
            if not record.state.settled and again:
                self._start(Job(Rerun(record.id, record.run)), now)
                continue
            # Alone on its store, the server that ran it was this one's process before; with
            # replicas, one that stopped (and whose lease the store saw lapse).
            why = RunAbandoned(restarted=not self.shared)
            left = None if record.state.settled else why
            self._start(Job(AgentDone(record.id, record.run, error=left)), now)
        if len(records) == RECOVER_BATCH:
            self._ask(Recover(), Reads(running=RunningQuery(RECOVER_BATCH, records[-1].id)))
            self.upkeep.recovery_step("read")
        else:
            self.upkeep.recovery_step("read to its end")
            self.upkeep.reclaim_later(now, self.outbox.settled)


def _store_error(why: str, unavailable: bool) -> InternalError | UnavailableError:
    if unavailable:
        return UnavailableError(STORE_AWAY + "; retry shortly")
    return InternalError(f"Internal error: {why}; the failure was logged")
