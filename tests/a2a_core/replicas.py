"""Several servers over one shared store, as replicas over Redis are, with no event loop.

:class:`Shared` plays what Redis does for replicas: one store, a doorbell for every task a
commit changed (rung to the other servers that watch it), the run each commit starts owned by
the server that made it, and leases (a server the test declares dead is one whose runs and
notifications the next reader claims). Each server calls it through a :class:`View`, as a Redis
store knows which replica it serves.

:class:`Cluster` puts servers over it with nothing performed inline: their store operations,
doorbells and subscriptions wait until a test completes them, in whatever order it likes
(``test_replicas_property`` tries every order; ``test_replicas`` pins a few down).
"""

import json
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import attrs

from a2a_core import Core, CoreConfig
from a2a_core.store import Delete, MemoryTasks, Put, Reads, Snapshot, TaskRecord, Write
from a2a_core.transport import (
    Action,
    Answer,
    Caller,
    Commit,
    Frames,
    OutputTaken,
    Read,
    Server,
    StartRun,
    StopRun,
    StreamOpened,
    Unwatch,
    Watch,
)

from .support import CARD, EPOCH
from .test_server import message, rpc


class Shared:
    """One store for several servers: who committed what, who runs what, who is gone."""

    def __init__(self) -> None:
        self.tasks = MemoryTasks()
        #: (server that committed, task key), in commit order: the doorbells still to ring.
        self.rings: list[tuple[str, str]] = []
        self.runner: dict[str, str] = {}
        self.dead: set[str] = set()

    def view(self, name: str) -> "View":
        return View(self, name)


@attrs.define
class View:
    """The shared store as server ``name`` calls it (a Redis store knows its replica too)."""

    shared: Shared
    name: str

    def read(self, reads: Reads) -> Snapshot:
        snapshot = self.shared.tasks.read(reads)
        if reads.running is not None:
            # A shared store hands out only the runs of servers that are gone, and claims them.
            lapsed = tuple(
                r for r in snapshot.running if self.shared.runner.get(r.id) in self.shared.dead
            )
            for record in lapsed:
                self.shared.runner[record.id] = self.name
            snapshot = attrs.evolve(snapshot, running=lapsed)
        return snapshot

    def commit(self, writes: Sequence[Write]) -> bool:
        before = {
            w.record.id: self.shared.tasks.read(Reads(task_id=w.record.id)).task
            for w in writes
            if isinstance(w, Put)
        }
        if not self.shared.tasks.commit(writes):
            return False
        for write in writes:
            if isinstance(write, Put):
                record, old = write.record, before[write.record.id]
                if record.running and (old is None or not old.running or old.run != record.run):
                    self.shared.runner[record.id] = self.name
                self.shared.rings.append((self.name, record.id))
            elif isinstance(write, Delete):
                self.shared.rings.append((self.name, write.task_id))
        return True


def ids(prefix: str) -> Callable[[], str]:
    """Ids drawn by server ``prefix`` (``a-1``, ``a-2``…): unique across replicas."""
    count = iter(range(1, 10**9))
    return lambda: f"{prefix}-{next(count)}"


# --- replicas whose store and bus answer when a test says so --------------------------------


@attrs.define
class Replica:
    """One server of a :class:`Cluster`, and what its transport and event bus are doing."""

    name: str
    server: Server = attrs.field(repr=False)
    view: View = attrs.field(repr=False)
    #: Its store operations under way.
    pending: dict[int, Read | Commit] = attrs.field(factory=dict, repr=False)
    #: Those of them the store has performed, whose answers are still on their way.
    answers: dict[int, Snapshot | bool] = attrs.field(factory=dict, repr=False)
    seen: list[Action] = attrs.field(factory=list, repr=False)
    #: The tasks it asked to watch, and those of them whose subscription is in place.
    wanted: set[str] = attrs.field(factory=set, repr=False)
    listening: set[str] = attrs.field(factory=set, repr=False)
    #: Doorbells rung for it and not yet delivered (task keys).
    rings: list[str] = attrs.field(factory=list, repr=False)
    #: Agent runs going on here (task key, run number), and those whose last output is not
    #: yet taken.
    runs: dict[tuple[str, int], StartRun] = attrs.field(factory=dict, repr=False)
    busy: set[tuple[str, int]] = attrs.field(factory=set, repr=False)
    #: Open streams -> batches sent and not yet acknowledged (``frames_sent``).
    streams: dict[int, int] = attrs.field(factory=dict, repr=False)
    #: Exchange -> how many times it was answered (an Answer or a StreamOpened).
    replies: Counter[int] = attrs.field(factory=Counter, repr=False)
    dead: bool = False


@attrs.define
class Request:
    replica: str
    number: int
    method: str
    caller: str
    #: A new message's id (re-sends share it), or "".
    mid: str = ""
    #: The task it names, if it names one.
    task_id: str = ""
    left: bool = False


class Cluster:
    """Servers ``a``, ``b``… over one :class:`Shared` store, where nothing happens by itself.

    Each server's :class:`Read` and :class:`Commit` wait until :meth:`complete` answers them
    (with the store as it is then, or as :meth:`perform` found it earlier: an answer in
    flight). A commit rings every *other* server that listens to its task; each ring waits
    for :meth:`deliver`. A :class:`Watch` is only wanted until :meth:`subscribe` puts it in
    place (and looks once); :meth:`reconnect` drops a bus's undelivered rings and looks at all
    it watches. :meth:`kill` stops a server for good.
    """

    def __init__(
        self,
        names: str = "ab",
        *,
        stream_window: int | None = None,
        reclaim_every: timedelta = timedelta(seconds=1),
        **options: Any,
    ) -> None:
        options.setdefault("card", CARD)
        options.setdefault("streaming", True)
        self.shared = Shared()
        self.now = EPOCH
        self.replicas: dict[str, Replica] = {}
        self.reclaim_every = reclaim_every
        for name in names:
            server = Server(
                Core(CoreConfig(**options)),
                shared=True,
                new_id=ids(name),
                stream_window=stream_window,
                reclaim_every=reclaim_every,
            )
            self.replicas[name] = Replica(name, server, self.shared.view(name))
        self.requests: list[Request] = []
        self.count = 0
        #: Every task ever stored -> its owner's principal.
        self.owners: dict[str, str] = {}
        #: (owner, message id) -> the tasks that have held it.
        self.holders: dict[tuple[str, str], set[str]] = {}
        self.started: set[tuple[str, int]] = set()
        for replica in self.live():
            replica.server.tick(self.now)
            self.take(replica)

    def __getitem__(self, name: str) -> Replica:
        return self.replicas[name]

    def live(self) -> list[Replica]:
        return [r for r in self.replicas.values() if not r.dead]

    def take(self, replica: Replica) -> None:
        """Perform what ``replica`` asked for (its store operations wait for :meth:`complete`)."""
        for action in replica.server.take_actions():
            match action:
                case Read() | Commit():
                    replica.pending[action.op] = action
                    continue
                case Watch(task_id=task_id):
                    replica.wanted.add(task_id)
                case Unwatch(task_id=task_id):
                    replica.wanted.discard(task_id)
                    replica.listening.discard(task_id)
                case StartRun(task_id=task_id, run=run):
                    assert (task_id, run) not in self.started, f"run {run} of {task_id} twice"
                    self.started.add((task_id, run))
                    replica.runs[task_id, run] = action
                case StopRun(task_id=task_id, run=run):
                    replica.runs.pop((task_id, run), None)
                    replica.busy.discard((task_id, run))
                case OutputTaken(task_id=task_id, run=run, counts=counts):
                    replica.busy.discard((task_id, run))
                    if not counts:
                        replica.runs.pop((task_id, run), None)
                case Answer(exchange=number):
                    replica.replies[number] += 1
                case StreamOpened(exchange=number, ended=ended):
                    replica.replies[number] += 1
                    if not ended:
                        replica.streams[number] = 0
                case Frames(exchange=number, ended=ended):
                    if ended:
                        replica.streams.pop(number, None)
                    elif number in replica.streams:
                        replica.streams[number] += 1
            replica.seen.append(action)

    # --- the store ----------------------------------------------------------------------------

    def apply(self, replica: Replica, writes: Sequence[Write]) -> bool:
        """Commit ``writes`` as ``replica``, and ring the others that listen."""
        ok = replica.view.commit(writes)
        if ok:
            for write in writes:
                if isinstance(write, Put):
                    record = write.record
                    assert record.id == record.task.id  # v1 clients never name a task
                    self.owners.setdefault(record.id, record.owner.principal)
                    for message_id, _ in record.messages:
                        key = (record.owner.principal, message_id)
                        self.holders.setdefault(key, set()).add(record.id)
        rings, self.shared.rings = self.shared.rings, []
        for committer, task_id in rings:
            for other in self.live():
                if other.name != committer and task_id in other.listening:
                    other.rings.append(task_id)
        return ok

    def perform(self, name: str, op: int, *, refuse: bool = False) -> None:
        """The store performs operation ``op`` now; its answer comes with :meth:`complete`."""
        replica = self.replicas[name]
        replica.answers[op] = self._perform(replica, op, refuse=refuse)

    def _perform(self, replica: Replica, op: int, *, refuse: bool = False) -> Snapshot | bool:
        action = replica.pending[op]
        if isinstance(action, Read):
            return replica.view.read(action.reads)
        # ``refuse``: as if another replica had won the race (with a write since undone).
        return not refuse and self.apply(replica, action.writes)

    def complete(self, name: str, op: int, *, refuse: bool = False) -> None:
        """Operation ``op`` is answered: as the store performed it earlier, or does now."""
        replica = self.replicas[name]
        if op in replica.answers:
            answer = replica.answers.pop(op)
        else:
            answer = self._perform(replica, op, refuse=refuse)
        action = replica.pending.pop(op)
        if isinstance(action, Read):
            assert isinstance(answer, Snapshot)
            replica.server.read_done(op, answer, self.now)
        else:
            assert isinstance(answer, bool)
            replica.server.commit_done(op, answer, self.now)
        self.take(replica)

    def operations(self) -> list[tuple[str, int]]:
        return [(r.name, op) for r in self.live() for op in sorted(r.pending)]

    # --- the bus ------------------------------------------------------------------------------

    def subscribe(self, name: str, task_id: str) -> None:
        """A watch is in place: the bus looks once (a change may have come just before)."""
        replica = self.replicas[name]
        replica.listening.add(task_id)
        replica.server.changed(task_id, self.now)
        self.take(replica)

    def changed(self, name: str, task_id: str) -> None:
        """The bus of server ``name`` tells it task ``task_id`` changed."""
        replica = self.replicas[name]
        replica.server.changed(task_id, self.now)
        self.take(replica)

    def deliver(self, name: str, index: int = 0) -> None:
        replica = self.replicas[name]
        task_id = replica.rings.pop(index)
        if task_id in replica.wanted:  # the bus drops a ring for a task no longer watched
            replica.server.changed(task_id, self.now)
            self.take(replica)

    def reconnect(self, name: str) -> None:
        """The bus lost its connection and made it again: the rings on their way are lost,
        and it tells the machine of every task it watches."""
        replica = self.replicas[name]
        replica.rings.clear()
        replica.listening = set(replica.wanted)
        for task_id in sorted(replica.wanted):
            replica.server.changed(task_id, self.now)
            self.take(replica)

    # --- clients, agents, the clock, death ----------------------------------------------------

    def request(
        self, name: str, caller: str, method: str, params: dict[str, Any], mid: str = ""
    ) -> Request:
        replica = self.replicas[name]
        self.count += 1
        request = rpc(method, params, self.count)
        number = replica.server.receive(request, self.now, caller=Caller(caller))
        task_id = params.get("id") or params.get("message", {}).get("taskId", "")
        made = Request(name, number, method, caller, mid, task_id)
        self.requests.append(made)
        self.take(replica)
        return made

    def send(
        self, name: str, caller: str, kind: str, text: str, mid: str, **fields: Any
    ) -> Request:
        """A message: ``kind`` is "wait" (blocking), "now" (returnImmediately) or "stream"."""
        params: dict[str, Any] = {"message": message(text, mid, **fields)}
        if kind == "now":
            params["configuration"] = {"returnImmediately": True}
        method = "SendStreamingMessage" if kind == "stream" else "SendMessage"
        return self.request(name, caller, method, params, "" if fields else mid)

    def leave(self, request: Request) -> None:
        request.left = True
        replica = self.replicas[request.replica]
        replica.streams.pop(request.number, None)
        replica.server.client_left(request.number)
        self.take(replica)

    def frames_sent(self, name: str, number: int) -> None:
        replica = self.replicas[name]
        replica.streams[number] -= 1
        replica.server.frames_sent(number, self.now)
        self.take(replica)

    def output(self, name: str, task_id: str, run: int, value: Any) -> None:
        replica = self.replicas[name]
        replica.busy.add((task_id, run))
        replica.server.agent_output(task_id, run, value, self.now)
        self.take(replica)

    def done(self, name: str, task_id: str, run: int, value: Any = None) -> None:
        replica = self.replicas[name]
        del replica.runs[task_id, run]
        replica.server.agent_done(task_id, run, self.now, value=value)
        self.take(replica)

    def tick(self, step: timedelta = timedelta(0)) -> None:
        self.now += step
        for replica in self.live():
            replica.server.tick(self.now)
            self.take(replica)

    def kill(self, name: str, landed: Callable[[int], bool] = lambda op: False) -> None:
        """Server ``name`` dies: the commits it had under way whose ops ``landed`` says (or
        that the store performed already) went through; the rest is lost with its clients,
        runs and bus. Its lease lapses: the others may claim its runs."""
        replica = self.replicas[name]
        for op in sorted(replica.pending):
            action = replica.pending[op]
            if isinstance(action, Commit) and op not in replica.answers and landed(op):
                self.apply(replica, action.writes)
        replica.dead = True
        self.shared.dead.add(name)
        for kept in (replica.pending, replica.answers, replica.runs, replica.streams):
            kept.clear()
        for gone in (replica.rings, replica.wanted, replica.listening, replica.busy):
            gone.clear()

    # --- letting everything finish ------------------------------------------------------------

    def settle(self, *, holding: tuple[str, int] | None = None) -> None:
        """Complete every store operation (but ``holding``, a server's op), put every watch
        in place, deliver every ring and send every frame, until nothing is left to do."""
        for _ in range(10_000):
            moved = False
            for replica in self.live():
                name = replica.name
                ops = [op for op in replica.pending if (name, op) != holding]
                if ops:
                    self.complete(name, min(ops))
                    moved = True
                for task_id in sorted(replica.wanted - replica.listening):
                    self.subscribe(name, task_id)
                    moved = True
                while replica.rings:
                    self.deliver(name)
                    moved = True
                for number, unsent in list(replica.streams.items()):
                    if unsent:
                        self.frames_sent(name, number)
                        moved = True
            if not moved:
                return
        raise AssertionError("the replicas never settled")

    def reclaim(self) -> None:
        """Let time pass until every replica has looked for what dead ones left, twice."""
        for _ in range(3):
            self.settle()
            self.tick(self.reclaim_every)
        self.settle()

    def task(self, task_id: str) -> TaskRecord | None:
        return self.shared.tasks.read(Reads(task_id=task_id)).task

    def replies(self, request: Request) -> list[Answer | StreamOpened]:
        return [
            a
            for a in self.replicas[request.replica].seen
            if isinstance(a, Answer | StreamOpened) and a.exchange == request.number
        ]

    def answer(self, request: Request) -> dict[str, Any]:
        (reply,) = self.replies(request)
        assert isinstance(reply, Answer)
        document: dict[str, Any] = json.loads(reply.response.body)
        return document
