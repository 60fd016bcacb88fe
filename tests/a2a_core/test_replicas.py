"""Several server machines over one shared store, as replicas over Redis are, with no event loop.

:class:`~.replicas.Shared` plays what Redis does for replicas (one store, doorbells, run
ownership and leases), and :class:`Replicas` performs their store operations inline. The
machines only see their :class:`Watch` and :class:`Unwatch` actions answered and
:meth:`Server.changed` called, which is the whole contract an event bus has with them.
"""

import json
from datetime import timedelta
from typing import Any

from a2a_core import Core, CoreConfig, TaskState, completed, input_required, working
from a2a_core.store import MemoryTasks, Reads
from a2a_core.testing import counting_ids
from a2a_core.transport import (
    Action,
    Answer,
    Frames,
    HttpRequest,
    Server,
    StartRun,
    StopRun,
    StreamOpened,
    Unwatch,
    Watch,
)

from .replicas import Cluster, Shared, ids
from .support import CARD, EPOCH
from .test_server import message, rpc


class Replicas:
    """Servers named ``a``, ``b``… over one :class:`Shared` store, with a bus between them."""

    def __init__(self, *names: str, **options: Any) -> None:
        options.setdefault("card", CARD)
        options.setdefault("streaming", True)
        reclaim = options.pop("reclaim_every", timedelta(seconds=5))
        self.shared = Shared()
        self.now = EPOCH
        self.servers = {
            n: Server(
                Core(CoreConfig(**options)),
                store=self.shared.view(n),
                shared=True,
                new_id=ids(n),
                reclaim_every=reclaim,
            )
            for n in names
        }
        self.watched: dict[str, set[str]] = {n: set() for n in names}
        self.seen: dict[str, list[Action]] = {n: [] for n in names}
        #: Rings the bus lost (the test drops them instead of delivering them).
        self.dropping = False

    def pump(self) -> None:
        """Take every server's actions, answer its watches, ring the doorbells; until quiet."""
        while True:
            quiet = True
            for name, server in self.servers.items():
                if name in self.shared.dead:
                    continue
                for action in server.take_actions():
                    quiet = False
                    self.seen[name].append(action)
                    if isinstance(action, Watch):
                        self.watched[name].add(action.task_id)
                        server.changed(action.task_id, self.now)  # listening now: look once
                    elif isinstance(action, Unwatch):
                        self.watched[name].discard(action.task_id)
            rings, self.shared.rings = self.shared.rings, []
            for committer, task_id in rings:
                quiet = False
                for name, server in self.servers.items():
                    alive = name not in self.shared.dead and not self.dropping
                    if alive and name != committer and task_id in self.watched[name]:
                        server.changed(task_id, self.now)
            if quiet:
                return

    def receive(self, name: str, request: HttpRequest) -> int:
        number = self.servers[name].receive(request, self.now)
        self.pump()
        return number

    def output(self, name: str, value: Any) -> None:
        start = self.run_on(name)
        self.servers[name].agent_output(start.task_id, start.run, value, self.now)
        self.pump()

    def run_on(self, name: str) -> StartRun:
        return [a for a in self.seen[name] if isinstance(a, StartRun)][-1]

    def answer(self, name: str, number: int) -> dict[str, Any]:
        (found,) = [a for a in self.seen[name] if isinstance(a, Answer) and a.exchange == number]
        document: dict[str, Any] = json.loads(found.response.body)
        return document

    def events(self, name: str, number: int) -> tuple[list[dict[str, Any]], bool]:
        """What stream ``number`` on server ``name`` carried, and whether it ended."""
        frames: list[bytes] = []
        ended = False
        for action in self.seen[name]:
            if isinstance(action, StreamOpened | Frames) and action.exchange == number:
                frames.extend(action.frames)
                ended = ended or action.ended
        payloads = [
            json.loads(line[6:])
            for f in frames
            for line in f.decode().splitlines()
            if line.startswith("data: ")
        ]
        return [p["result"] for p in payloads], ended

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
        for name, server in self.servers.items():
            if name not in self.shared.dead:
                server.tick(self.now)
        self.pump()


def state(result: dict[str, Any]) -> str:
    task = result.get("task", result)
    value: str = task["status"]["state"]
    return value


def started(replicas: Replicas, name: str = "a", text: str = "hi", mid: str = "m-1") -> str:
    """A task created on ``name`` whose agent is running there; its id."""
    params = {"message": message(text, mid), "configuration": {"returnImmediately": True}}
    number = replicas.receive(name, rpc("SendMessage", params))
    task_id: str = replicas.answer(name, number)["result"]["task"]["id"]
    return task_id


def test_a_task_created_on_one_server_is_read_on_another() -> None:
    replicas = Replicas("a", "b")
    replicas.tick(0)
    task_id = started(replicas)
    number = replicas.receive("b", rpc("GetTask", {"id": task_id}))
    assert replicas.answer("b", number)["result"]["id"] == task_id


def test_a_stream_on_one_server_follows_a_run_on_another_to_its_end() -> None:
    replicas = Replicas("a", "b")
    replicas.tick(0)
    task_id = started(replicas)
    number = replicas.receive("b", rpc("SubscribeToTask", {"id": task_id}))
    replicas.output("a", working("one"))
    replicas.output("a", working("two"))
    replicas.output("a", completed("done"))
    events, ended = replicas.events("b", number)
    assert ended
    assert events[0]["task"]["id"] == task_id  # the snapshot first, then every update in order
    states = [e["statusUpdate"]["status"]["state"] for e in events[1:]]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    assert replicas.servers["b"].following(task_id) == 0
    assert task_id not in replicas.watched["b"]  # the stream ended: b stopped listening


def test_a_blocking_resend_on_one_server_answers_when_the_run_on_another_settles() -> None:
    replicas = Replicas("a", "b")
    replicas.tick(0)
    task_id = started(replicas, mid="m-7")
    # The same message again, on b, blocking: it is the task a made (idempotent), still working.
    number = replicas.receive("b", rpc("SendMessage", {"message": message("hi", "m-7")}))
    assert not [a for a in replicas.seen["b"] if isinstance(a, Answer) and a.exchange == number]
    assert replicas.servers["b"].waiting == 1
    replicas.output("a", completed("done"))
    result = replicas.answer("b", number)["result"]
    assert result["task"]["id"] == task_id
    assert state(result) == "TASK_STATE_COMPLETED"
    assert not [a for a in replicas.seen["b"] if isinstance(a, StartRun)]  # it ran once, on a


def test_a_cancel_on_one_server_stops_the_run_on_another_at_once() -> None:
    replicas = Replicas("a", "b")
    replicas.tick(0)
    task_id = started(replicas)
    run = replicas.run_on("a")
    number = replicas.receive("b", rpc("CancelTask", {"id": task_id}))
    assert state(replicas.answer("b", number)["result"]) == "TASK_STATE_CANCELED"
    # a heard the doorbell, looked, and stopped its run without waiting for its next output.
    assert StopRun(task_id, run.run) in replicas.seen["a"]
    assert replicas.servers["a"].live_runs == 0
    assert task_id not in replicas.watched["a"]
    replicas.servers["a"].agent_output(task_id, run.run, completed("late"), replicas.now)
    replicas.pump()
    number = replicas.receive("b", rpc("GetTask", {"id": task_id}))
    assert state(replicas.answer("b", number)["result"]) == "TASK_STATE_CANCELED"


def test_a_server_watches_what_it_runs_waits_on_or_streams_and_nothing_else() -> None:
    replicas = Replicas("a", "b")
    replicas.tick(0)
    task_id = started(replicas)
    assert replicas.watched == {"a": {task_id}, "b": set()}
    number = replicas.receive("b", rpc("GetTask", {"id": task_id}))
    assert replicas.answer("b", number)  # a read needs no watch
    assert replicas.watched["b"] == set()
    replicas.output("a", completed("done"))
    assert replicas.watched == {"a": set(), "b": set()}
    watches = [a for a in replicas.seen["a"] if isinstance(a, Watch | Unwatch)]
    assert watches == [Watch(task_id), Unwatch(task_id)]


def test_a_server_alone_on_its_store_watches_nothing() -> None:
    server = Server(Core(CoreConfig(card=CARD)), store=MemoryTasks(), new_id=counting_ids())
    server.tick(EPOCH)
    params = {"message": message("hi", "m-1"), "configuration": {"returnImmediately": True}}
    server.receive(rpc("SendMessage", params), EPOCH)
    assert not [a for a in server.take_actions() if isinstance(a, Watch | Unwatch)]


def test_lost_rings_cost_latency_not_events_once_the_watch_is_restored() -> None:
    replicas = Replicas("a", "b")
    replicas.tick(0)
    task_id = started(replicas)
    number = replicas.receive("b", rpc("SubscribeToTask", {"id": task_id}))
    replicas.dropping = True  # b's bus connection is down: it hears nothing
    replicas.output("a", working("one"))
    replicas.output("a", completed("done"))
    events, ended = replicas.events("b", number)
    assert len(events) == 1
    assert not ended
    replicas.dropping = False
    # Reconnected, the bus tells the machine of every task it watches.
    for watched in sorted(replicas.watched["b"]):
        replicas.servers["b"].changed(watched, replicas.now)
    replicas.pump()
    events, ended = replicas.events("b", number)
    assert ended
    assert [e["statusUpdate"]["status"]["state"] for e in events[1:]] == [
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
    ]


def test_the_runs_of_a_server_that_died_are_settled_by_another_with_a_record() -> None:
    replicas = Replicas("a", "b", reclaim_every=timedelta(seconds=5))
    replicas.tick(0)
    task_id = started(replicas)
    replicas.shared.dead.add("a")  # a is killed; its lease lapses
    replicas.tick(1)
    number = replicas.receive("b", rpc("GetTask", {"id": task_id}))
    assert state(replicas.answer("b", number)["result"]) == "TASK_STATE_SUBMITTED"  # not yet
    replicas.tick(5)
    number = replicas.receive("b", rpc("GetTask", {"id": task_id}))
    task = replicas.answer("b", number)["result"]
    assert state(task) == "TASK_STATE_FAILED"
    reason = task["status"]["message"]["parts"][0]["text"]
    assert reason.startswith("The server stopped before the agent finished")
    assert not [a for a in replicas.seen["b"] if isinstance(a, StartRun)]


def test_the_runs_of_a_server_that_died_may_run_again_on_another() -> None:
    replicas = Replicas("a", "b", on_restart="rerun", reclaim_every=timedelta(seconds=5))
    replicas.tick(0)
    task_id = started(replicas)
    replicas.shared.dead.add("a")
    replicas.tick(6)
    rerun = replicas.run_on("b")
    assert (rerun.task_id, rerun.run) == (task_id, 2)
    assert replicas.shared.runner[task_id] == "b"
    replicas.output("b", completed("done"))
    number = replicas.receive("b", rpc("GetTask", {"id": task_id}))
    assert state(replicas.answer("b", number)["result"]) == "TASK_STATE_COMPLETED"


def test_a_live_servers_runs_are_not_taken_over() -> None:
    replicas = Replicas("a", "b", reclaim_every=timedelta(seconds=5))
    replicas.tick(0)
    task_id = started(replicas)
    replicas.tick(30)  # many reclaims on b; a's lease holds
    number = replicas.receive("b", rpc("GetTask", {"id": task_id}))
    assert state(replicas.answer("b", number)["result"]) == "TASK_STATE_SUBMITTED"
    assert replicas.servers["a"].live_runs == 1


# --- regressions the property test (test_replicas_property) found ------------------------------


def test_a_request_waiting_on_a_task_that_settled_and_expired_unseen_is_told_it_is_gone() -> None:
    replicas = Replicas("a", "b", task_ttl=timedelta(seconds=30))
    replicas.tick(0)
    task_id = started(replicas, mid="m-7")
    # The same message again, on b, blocking: b waits on the task a runs.
    number = replicas.receive("b", rpc("SendMessage", {"message": message("hi", "m-7")}))
    replicas.dropping = True  # b's bus is down for longer than the task's time to live
    replicas.output("a", completed("done"))
    replicas.tick(31)  # the finished task expires, and goes
    assert replicas.shared.tasks.read(Reads(task_id=task_id)).task is None
    assert replicas.servers["b"].waiting == 1
    replicas.dropping = False
    for watched in sorted(replicas.watched["b"]):  # reconnected: b looks at what it watches
        replicas.servers["b"].changed(watched, replicas.now)
    replicas.pump()
    # Nothing will settle it now: b says the task is not found (it waited for ever before).
    assert replicas.answer("b", number)["error"]["code"] == -32001
    assert replicas.servers["b"].waiting == 0
    assert replicas.watched["b"] == set()


def test_a_run_superseded_unheard_elsewhere_is_stopped_when_the_next_run_starts_here() -> None:
    replicas = Replicas("a", "b")
    replicas.tick(0)
    task_id = started(replicas)  # run 1, on a
    replicas.dropping = True  # a does not hear that b's follow-up superseded it with run 2
    again = {"message": message("more", "m-2", taskId=task_id)}
    replicas.receive(
        "b", rpc("SendMessage", {**again, "configuration": {"returnImmediately": True}})
    )
    replicas.dropping = False
    # A follow-up on a: its decision stops run 2 (b's) and starts run 3 here; run 1, which a
    # still had, is stopped too (it went on, forgotten, before).
    third = {"message": message("again", "m-3", taskId=task_id)}
    replicas.receive(
        "a", rpc("SendMessage", {**third, "configuration": {"returnImmediately": True}})
    )
    assert replicas.run_on("a").run == 3
    assert StopRun(task_id, 1) in replicas.seen["a"]
    assert replicas.servers["a"].live_runs == 1
    assert StopRun(task_id, 2) in replicas.seen["b"]  # b heard a's commit: its run 2 stopped
    assert replicas.servers["b"].live_runs == 0


def started_on(cluster: Cluster, name: str = "a") -> str:
    """A task created (non-blocking) on ``name``, whose run 1 goes on there; its id."""
    cluster.send(name, "alice", "now", "hi", "m-1")
    cluster.settle()
    (task_id,) = cluster.owners
    return task_id


def test_a_stale_look_at_a_task_does_not_stop_the_run_that_began_here_since() -> None:
    cluster = Cluster("ab")
    cluster.settle()
    task_id = started_on(cluster)
    a = cluster["a"]
    cluster.changed("a", task_id)  # a doorbell: a reads the task...
    (look,) = a.pending
    cluster.perform("a", look)  # ...which the store reads now (run 1), answering slowly
    cluster.send("a", "alice", "now", "more", "m-2", taskId=task_id)
    cluster.settle(holding=("a", look))  # the follow-up goes through: run 2 goes on here
    assert sorted(a.runs) == [(task_id, 2)]
    cluster.complete("a", look)  # the stale answer: the task as it was before run 2
    assert StopRun(task_id, 2) not in a.seen  # (it stopped run 2, leaving the task working)
    assert sorted(a.runs) == [(task_id, 2)]
    assert a.server.live_runs == 1


def test_a_run_whose_commit_is_answered_after_a_later_runs_is_not_started() -> None:
    cluster = Cluster("ab")
    cluster.settle()
    cluster.send("a", "alice", "now", "hi", "m-1")
    a = cluster["a"]
    cluster.complete("a", min(a.pending))  # decided: the task is created with run 1...
    (create,) = a.pending
    cluster.perform("a", create)  # ...and stored, but the store's answer is slow
    (task_id,) = cluster.owners
    # Meanwhile the client (who learned of the task elsewhere: a re-send on b) follows up.
    cluster.send("a", "alice", "now", "more", "m-2", taskId=task_id)
    cluster.settle(holding=("a", create))
    assert sorted(a.runs) == [(task_id, 2)]
    cluster.complete("a", create)  # the late answer: run 1 no longer counts
    cluster.settle()
    assert [s.run for s in a.seen if isinstance(s, StartRun)] == [2]
    assert sorted(a.runs) == [(task_id, 2)]
    assert a.server.live_runs == 1  # (run 2 was forgotten, and run 1 stopped, before)


def test_a_run_canceled_before_its_commit_is_answered_is_stopped_once_it_starts() -> None:
    cluster = Cluster("ab")
    cluster.settle()
    task_id = started_on(cluster)
    a = cluster["a"]
    cluster.send("a", "alice", "now", "more", "m-2", taskId=task_id)
    cluster.complete("a", min(a.pending))  # decided: a follow-up, with run 2...
    (follow_up,) = a.pending
    cluster.perform("a", follow_up)  # ...stored, but the store's answer is slow
    cancel = cluster.request("a", "alice", "CancelTask", {"id": task_id})
    cluster.settle(holding=("a", follow_up))  # the cancel goes through, and is answered
    assert cluster.answer(cancel)["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    cluster.complete("a", follow_up)  # the late answer starts run 2, of a canceled task...
    cluster.settle()
    assert [s.run for s in a.seen if isinstance(s, StartRun)] == [1, 2]
    assert StopRun(task_id, 2) in a.seen  # ...which a looks at again, and stops
    assert not a.runs
    assert a.server.live_runs == 0
    record = cluster.task(task_id)
    assert record is not None
    assert record.state is TaskState.CANCELED


def test_a_run_superseded_elsewhere_before_its_commit_is_answered_is_stopped() -> None:
    cluster = Cluster("ab")
    cluster.settle()
    task_id = started_on(cluster)
    a = cluster["a"]
    stream = cluster.request("a", "alice", "SubscribeToTask", {"id": task_id})
    cluster.settle()  # a keeps watching the task throughout, for its stream
    cluster.send("a", "alice", "now", "more", "m-2", taskId=task_id)
    cluster.complete("a", min(a.pending))  # decided: a follow-up, with run 2...
    (follow_up,) = a.pending
    cluster.perform("a", follow_up)  # ...stored, but the store's answer is slow
    # Meanwhile a follow-up on b supersedes run 2 with run 3; a hears its doorbell.
    cluster.send("b", "alice", "now", "again", "m-3", taskId=task_id)
    cluster.settle(holding=("a", follow_up))
    cluster.complete("a", follow_up)  # the late answer starts run 2, which no longer counts...
    cluster.settle()
    assert StopRun(task_id, 2) in a.seen  # ...which a looks at again, and stops
    assert not a.runs
    assert a.server.live_runs == 0
    assert sorted(cluster["b"].runs) == [(task_id, 3)]
    assert a.server.following(task_id) == 1  # the stream goes on
    assert cluster.replies(stream)


def test_a_late_answer_to_an_earlier_commit_does_not_make_a_run_decide_on_a_stale_record() -> None:
    # Found by the property test's random search: a's first follow-up (run 2) is stored but
    # answered slowly; a second follow-up on a, decided on what the store held, starts run 3
    # and is answered first. The late answer must not leave a deciding run 3's output on the
    # record of run 2 (which would stop run 3 as superseded, with no write: the task stayed
    # working with no run behind it).
    cluster = Cluster("ab")
    cluster.settle()
    task_id = started_on(cluster, "b")
    a = cluster["a"]
    cluster.send("a", "alice", "now", "more", "m-2", taskId=task_id)
    cluster.complete("a", min(a.pending))  # decided: a follow-up, with run 2...
    (first,) = a.pending
    cluster.perform("a", first)  # ...stored, but the store's answer is slow
    cluster.send("a", "alice", "now", "again", "m-3", taskId=task_id)
    cluster.settle(holding=("a", first))  # the second follow-up goes through: run 3 here
    assert sorted(a.runs) == [(task_id, 3)]
    cluster.complete("a", first)  # the late answer: run 2 no longer counts
    cluster.settle()
    assert sorted(a.runs) == [(task_id, 3)]
    cluster.output("a", task_id, 3, input_required("?"))
    cluster.settle()
    record = cluster.task(task_id)
    assert record is not None
    assert (record.run, record.state) == (3, TaskState.INPUT_REQUIRED)
    assert StopRun(task_id, 3) not in a.seen
