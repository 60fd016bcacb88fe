"""Several server machines over one shared store, in any interleaving, against a model.

Two or three replicas (``Server(shared=True)``) share one :class:`~.replicas.Shared` store, but
unlike :class:`~.test_replicas.Replicas` nothing is performed inline (:class:`~.replicas.Cluster`):
each machine's :class:`Read` and :class:`Commit` wait until a rule completes them, in any order
across the replicas. A read sees the store as it is when the store performs it, which is
usually when it is answered but may be earlier (its answer was on its way while others were
performed and answered); a commit is refused by the store's compare-and-set when another
replica wrote first, and now and then at random as well. The event bus is modelled too: a
commit rings every *other* replica that listens to its task, and a rule delivers each ring, late
and in any order; a :class:`Watch` is in place only once a rule says so (a subscription takes a
round trip), and then the bus calls ``changed`` once; a rule reconnects a replica's bus, which
drops the rings it had not delivered and calls ``changed`` for every task it watches (the only
way a ring is lost). A replica may be killed: its store operations are dropped (a commit may
have landed first), its clients and agent runs go with it, and the store's leases let the
others claim its runs when they next reclaim.

Whatever the order: every request is answered at most once (exactly once after everything
settled), every stream carries its task's events once, in order, with no hole, and ends with
its task; a terminal task stays as it ended; a run starts once; a replica keeps no run whose
task moved on; no task is left live with no run behind it (a dead replica's runs were taken
over); a caller sees only its own tasks; and nothing is kept for clients that left.
"""

import json
from datetime import timedelta
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from a2a_core import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    completed,
    input_required,
    working,
)
from a2a_core.store import LogQuery, Reads
from a2a_core.transport import Answer, Frames, Problem, StreamOpened

from .replicas import Cluster, Replica, Request

PRINCIPALS = ("alice", "bob")
KINDS = ("wait", "stream", "now")
#: How many new messages (so tasks) a run sends at most: few, so that requests, runs and
#: replicas meet on the same tasks.
NEW_MESSAGES = 3


class ReplicaInterleavings(RuleBasedStateMachine):
    """Replicas over one store, its operations, doorbells and subscriptions in any order."""

    cluster: Cluster

    def __init__(self) -> None:
        super().__init__()
        #: (caller, message id, text) of every new message sent.
        self.messages: list[tuple[str, str, str]] = []
        #: The state each task ended in (terminal), once it did.
        self.final: dict[str, TaskState] = {}

    @initialize(count=st.integers(2, 3), rerun=st.booleans())
    def servers(self, count: int, rerun: bool) -> None:
        self.cluster = Cluster(
            "abc"[:count],
            stream_window=4,
            reclaim_every=timedelta(seconds=1),
            task_ttl=timedelta(seconds=30),
            on_restart="rerun" if rerun else "fail",
        )

    def live(self) -> list[str]:
        return [r.name for r in self.cluster.live()]

    # --- clients ------------------------------------------------------------------------------

    @precondition(lambda self: len(self.messages) < NEW_MESSAGES)
    @rule(data=st.data(), kind=st.sampled_from(KINDS), caller=st.sampled_from(PRINCIPALS))
    def send(self, data: st.DataObject, kind: str, caller: str) -> None:
        name = data.draw(st.sampled_from(self.live()))
        count = len(self.messages) + 1
        mid, text = f"m-{count}", f"t{count}"
        self.messages.append((caller, mid, text))
        self.cluster.send(name, caller, kind, text, mid)

    @precondition(lambda self: self.messages)
    @rule(data=st.data(), kind=st.sampled_from(KINDS))
    def resend(self, data: st.DataObject, kind: str) -> None:
        """The same message again (a client retrying), on any replica: the same task."""
        name = data.draw(st.sampled_from(self.live()))
        caller, mid, text = data.draw(st.sampled_from(self.messages))
        self.cluster.send(name, caller, kind, text, mid)

    def a_task(self, data: st.DataObject) -> tuple[str, str, str]:
        """A live replica, a stored task and a caller (mostly its owner, sometimes not)."""
        name = data.draw(st.sampled_from(self.live()))
        task_id = data.draw(st.sampled_from(sorted(self.cluster.owners)))
        owner = self.cluster.owners[task_id]
        caller = data.draw(st.sampled_from([owner, owner, owner, *PRINCIPALS]))
        return name, task_id, caller

    @precondition(lambda self: self.cluster.owners)
    @rule(data=st.data(), kind=st.sampled_from(["wait", "now"]))
    def follow_up(self, data: st.DataObject, kind: str) -> None:
        """A new message to a task (an answer to its question, or one superseding its turn)."""
        name, task_id, caller = self.a_task(data)
        self.cluster.count += 1
        text, mid = f"f{self.cluster.count}", f"f-{self.cluster.count}"
        self.cluster.send(name, caller, kind, text, mid, taskId=task_id)

    @precondition(lambda self: self.cluster.owners)
    @rule(data=st.data(), method=st.sampled_from(["SubscribeToTask", "CancelTask", "GetTask"]))
    def on_task(self, data: st.DataObject, method: str) -> None:
        name, task_id, caller = self.a_task(data)
        self.cluster.request(name, caller, method, {"id": task_id})

    def waiting_clients(self) -> list[int]:
        """The requests whose clients wait for an answer or a stream's next events."""
        return [
            i
            for i, r in enumerate(self.cluster.requests)
            if not r.left
            and not (replica := self.cluster[r.replica]).dead
            and (not replica.replies[r.number] or r.number in replica.streams)
        ]

    @precondition(lambda self: self.waiting_clients())
    @rule(data=st.data())
    def client_leaves(self, data: st.DataObject) -> None:
        self.cluster.leave(
            self.cluster.requests[data.draw(st.sampled_from(self.waiting_clients()))]
        )

    def unacknowledged(self) -> list[tuple[str, int]]:
        return [(r.name, n) for r in self.cluster.live() for n, left in r.streams.items() if left]

    @precondition(lambda self: self.unacknowledged())
    @rule(data=st.data())
    def frames_go_out(self, data: st.DataObject) -> None:
        self.cluster.frames_sent(*data.draw(st.sampled_from(self.unacknowledged())))

    # --- agents ---------------------------------------------------------------------------------

    def idle_runs(self) -> list[tuple[str, str, int]]:
        return [
            (r.name, *key)
            for r in self.cluster.live()
            for key in sorted(r.runs)
            if key not in r.busy
        ]

    @precondition(lambda self: self.idle_runs())
    @rule(data=st.data(), output=st.sampled_from(["work", "ask", "done", "end"]))
    def agent(self, data: st.DataObject, output: str) -> None:
        """The agent of a run going on (on the replica that runs it) says something, or ends."""
        name, task_id, run = data.draw(st.sampled_from(self.idle_runs()))
        if output == "end":
            self.cluster.done(name, task_id, run)
        else:
            value = {"work": working("w"), "ask": input_required("?"), "done": completed("ok")}
            self.cluster.output(name, task_id, run, value[output])

    # --- the store, the clock, the bus ----------------------------------------------------------

    def unperformed(self) -> list[tuple[str, int]]:
        return [(n, op) for n, op in self.cluster.operations() if op not in self.cluster[n].answers]

    @precondition(lambda self: self.unperformed())
    @rule(data=st.data(), count=st.integers(1, 8))
    def store_answers(self, data: st.DataObject, count: int) -> None:
        """The store performs a few of the operations under way, in any order, and answers
        each at once, or not yet: its answer is on its way while others are performed and
        answered (so a read answered later is stale, and a commit has rung the other
        replicas before its own knows it went through). Now and then it refuses a commit
        that would have gone through, as a race lost to a write since undone would look."""
        for _ in range(count):
            operations = self.unperformed()
            if not operations:
                return
            name, op = data.draw(st.sampled_from(operations))
            refuse = data.draw(st.integers(0, 7)) == 7
            if data.draw(st.integers(0, 3)) == 3:
                self.cluster.perform(name, op, refuse=refuse)
            else:
                self.cluster.complete(name, op, refuse=refuse)

    def in_flight(self) -> list[tuple[str, int]]:
        return [(r.name, op) for r in self.cluster.live() for op in sorted(r.answers)]

    @precondition(lambda self: self.in_flight())
    @rule(data=st.data())
    def late_answer(self, data: st.DataObject) -> None:
        """An answer on its way arrives."""
        self.cluster.complete(*data.draw(st.sampled_from(self.in_flight())))

    @precondition(lambda self: self.cluster.operations())
    @rule(data=st.data())
    def store_catches_up(self, data: st.DataObject) -> None:
        """The store does much of what is under way, and of what that causes, in any order."""
        self.store_answers(data, 50)

    def time_tells(self) -> bool:
        """Whether anything waits on the clock: the runs of a dead replica to reclaim, a
        finished task to expire, a stream's held snapshot to release."""
        cluster = self.cluster
        return bool(cluster.shared.dead or self.final or any(r.streams for r in cluster.live()))

    @precondition(time_tells)
    @rule(seconds=st.sampled_from([0.05, 1, 40]))
    def time_passes(self, seconds: float) -> None:
        self.cluster.tick(timedelta(seconds=seconds))

    def subscribing(self) -> list[tuple[str, str]]:
        return [(r.name, t) for r in self.cluster.live() for t in sorted(r.wanted - r.listening)]

    @precondition(lambda self: self.subscribing())
    @rule(data=st.data())
    def subscribed(self, data: st.DataObject) -> None:
        self.cluster.subscribe(*data.draw(st.sampled_from(self.subscribing())))

    def ringing(self) -> list[tuple[str, int]]:
        return [(r.name, i) for r in self.cluster.live() for i in range(len(r.rings))]

    @precondition(lambda self: self.ringing())
    @rule(data=st.data())
    def ring(self, data: st.DataObject) -> None:
        self.cluster.deliver(*data.draw(st.sampled_from(self.ringing())))

    @precondition(lambda self: any(r.wanted for r in self.cluster.live()))
    @rule(data=st.data())
    def reconnect(self, data: st.DataObject) -> None:
        self.cluster.reconnect(data.draw(st.sampled_from(self.live())))

    @precondition(
        lambda self: (
            len(self.cluster.live()) == len(self.cluster.replicas)
            and any(r.runs for r in self.cluster.live())
        )
    )
    @rule(data=st.data())
    def kill(self, data: st.DataObject) -> None:
        """A replica dies; of the commits it had under way, some may have landed."""
        name = data.draw(st.sampled_from(self.live()))
        self.cluster.kill(name, lambda op: data.draw(st.booleans()))

    # --- what holds after every step ----------------------------------------------------------

    @invariant()
    def answered_at_most_once(self) -> None:
        for replica in self.cluster.replicas.values():
            assert all(n <= 1 for n in replica.replies.values()), replica.replies

    @invariant()
    def a_finished_task_stays_as_it_ended(self) -> None:
        for task_id in self.cluster.owners:
            record = self.cluster.task(task_id)
            if record is None:
                continue  # it expired
            ended = self.final.get(task_id)
            if ended is not None:
                assert record.state is ended, (task_id, ended, record.state)
                assert not record.running, task_id
            elif record.state.terminal:
                self.final[task_id] = record.state

    @invariant()
    def nothing_is_kept_for_clients_that_left(self) -> None:
        for replica in self.cluster.live():
            there = sum(
                1 for r in self.cluster.requests if r.replica == replica.name and not r.left
            )
            assert replica.server.waiting + replica.server.open_streams <= there

    # --- the end --------------------------------------------------------------------------------

    def teardown(self) -> None:
        if not hasattr(self, "cluster"):
            return
        cluster = self.cluster
        cluster.reclaim()  # past reclaim_every: the runs of dead replicas are taken over
        self.runs_match_the_store()
        # Now let every run end, and finish every task, so that every stream ends too.
        for _ in range(100):
            for replica in cluster.live():
                for task_id, run in [k for k in replica.runs if k not in replica.busy]:
                    cluster.done(replica.name, task_id, run, value="end")
            cluster.settle()
            if not any(r.runs for r in cluster.live()):
                break
        cluster.reclaim()
        name = self.live()[0]
        for task_id in sorted(cluster.owners):
            record = cluster.task(task_id)
            if record is not None and not record.state.terminal:
                cluster.request(name, record.owner.principal, "CancelTask", {"id": task_id})
        cluster.reclaim()
        self.runs_match_the_store()
        for task_id in cluster.owners:
            record = cluster.task(task_id)
            assert record is None or record.state.terminal, record
        self.every_request_answered_once()
        for replica in cluster.live():
            server = replica.server
            assert (server.waiting, server.open_streams, server.busy) == (0, 0, 0), replica
            assert server.live_runs == 0, replica
            assert not replica.wanted, (replica, replica.wanted)  # it unwatched all
            assert not [a for a in replica.seen if isinstance(a, Problem)], replica

    def runs_match_the_store(self) -> None:
        """Settled: a replica runs only what counts, and whatever counts is run by a live
        replica (the runs of dead ones were taken over); a live task has a run behind it."""
        runners: dict[tuple[str, int], str] = {}
        for replica in self.cluster.live():
            assert replica.server.live_runs == len(replica.runs), (replica, sorted(replica.runs))
            for task_id, run in replica.runs:
                record = self.cluster.task(task_id)
                assert record is not None, (replica, task_id, run)
                assert (record.run, record.running) == (run, True), (replica, run, record)
                assert not record.state.terminal, (replica, record)
                assert (task_id, run) not in runners
                runners[task_id, run] = replica.name
        for task_id in self.cluster.owners:
            record = self.cluster.task(task_id)
            if record is None:
                continue
            if record.running:
                assert (task_id, record.run) in runners, ("no live replica runs it", record)
            live = (TaskState.SUBMITTED, TaskState.WORKING)
            assert record.state not in live or record.running, ("left live, no run", record)

    def every_request_answered_once(self) -> None:
        tasks_of: dict[tuple[str, str], set[str]] = {}
        for request in self.cluster.requests:
            replica = self.cluster[request.replica]
            if replica.dead or request.left:
                continue
            replies = self.cluster.replies(request)
            assert len(replies) == 1, (request, replies)
            if isinstance(replies[0], Answer):
                results = [json.loads(replies[0].response.body).get("result")]
            else:
                results = self.check_stream(replica, request)
            seen = {t for result in results for t in task_ids(result)}
            for task_id in seen:
                assert self.cluster.owners[task_id] == request.caller, (request, task_id)
            if request.mid:
                tasks_of.setdefault((request.caller, request.mid), set()).update(seen)
        for key, found in tasks_of.items():
            # One message, one task, wherever re-sent (unless the task expired meanwhile,
            # which frees its message ids).
            kept = {t for t in found if self.cluster.task(t)}
            assert len(kept) <= 1, (key, found)

    def check_stream(self, replica: Replica, request: Request) -> list[Any]:
        """A stream's events: its task's, once and in order from the log, ending with it (or
        cut short, with no hole, where its task expired)."""
        frames: list[bytes] = []
        ended = False
        for action in replica.seen:
            if isinstance(action, StreamOpened | Frames) and action.exchange == request.number:
                assert not ended, request
                frames.extend(action.frames)
                ended = action.ended
        assert ended, request
        events: list[tuple[int, Any]] = []
        for frame in frames:
            lines = frame.decode().split("\n")
            (number,) = [int(line[4:]) for line in lines if line.startswith("id: ")]
            (data,) = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
            events.append((number, data["result"]))
        followed = {t for _, result in events for t in task_ids(result)}
        if request.task_id:
            followed.add(request.task_id)
        elif not events:
            followed = self.cluster.holders[request.caller, request.mid]
        stored = {t: self.cluster.task(t) for t in followed}
        if not events:
            assert not all(stored.values()), (request, "an empty stream of a task still kept")
            return []
        numbers = [n for n, _ in events]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), (request, numbers)
        ((task_id, record),) = stored.items()
        if record is None:
            return [result for _, result in events]  # it expired: the stream may end early
        log = self.cluster.shared.tasks.read(Reads(log=LogQuery(task_id, 0, 10_000))).log
        for number, result in events[1:]:
            assert kind_of(log[number - 1].event) == kind_of_result(result), (request, number)
        last = events[-1][1]
        if "statusUpdate" in last or "task" in last:
            state = TaskState((last.get("statusUpdate") or last["task"])["status"]["state"])
            ends = state.terminal if request.method == "SubscribeToTask" else state.settled
            assert ends, (request, state)
        else:
            assert "message" in last, (request, last)  # a direct reply is the whole stream
        return [result for _, result in events]


def task_ids(result: Any) -> set[str]:
    """The ids of the tasks a result (or a stream event) speaks of."""
    found: set[str] = set()
    if isinstance(result, dict):
        if "taskId" in result:
            found.add(result["taskId"])
        if "contextId" in result and "status" in result and "id" in result:
            found.add(result["id"])
        for value in result.values():
            found |= task_ids(value)
    elif isinstance(result, list):
        for value in result:
            found |= task_ids(value)
    return found


def kind_of(event: Any) -> tuple[str, str]:
    """What a logged event is, as a stream frame names it (and the state it carries)."""
    match event:
        case TaskStatusUpdateEvent(status=status) | Task(status=status):
            kind = "statusUpdate" if isinstance(event, TaskStatusUpdateEvent) else "task"
            return kind, status.state.value
        case TaskArtifactUpdateEvent():
            return "artifactUpdate", ""
        case Message():
            return "message", ""
    raise AssertionError(event)


def kind_of_result(result: Any) -> tuple[str, str]:
    (kind,) = result
    state = result[kind]["status"]["state"] if kind in ("statusUpdate", "task") else ""
    return kind, state


TestReplicaInterleavings = ReplicaInterleavings.TestCase
# make test runs its search fixed (tests/conftest.py); A2A_HYPOTHESIS_PROFILE=random searches
# afresh (one found a task recorded as running that no live replica ran: the regression test is
# test_replicas's test_a_late_answer_to_an_earlier_commit_...).
TestReplicaInterleavings.settings = settings(
    max_examples=100,
    stateful_step_count=40,
    deadline=None,
)
