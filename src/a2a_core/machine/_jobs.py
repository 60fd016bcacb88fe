"""Store jobs: each store operation under way, what it is for, and where its job stands.

Every input that needs the store becomes a job that reads, is decided, and commits its
writes compare-and-set; a commit that loses the race is decided again on fresh data, and one
the store could not take is held and tried again. The machine may have many under way at
once, answered in any order; a job's phase says which answer it waits for, so an answer that
does not fit (a commit's answer to a job that is reading) is a bug caught where it happens.

Kept here too: which of this server's commits write each task (``writing``) and which tasks
moved meanwhile, because a store may answer commits out of order, and a run started by a
commit answered late must be looked at again (:meth:`StoreJobs.answered`).
"""

import itertools
from collections import deque

import attrs

from a2a_core.decide._effects import Decision
from a2a_core.decide._inputs import Input
from a2a_core.front._http import Dispatch
from a2a_core.store._contract import Put, Reads, Sent, Snapshot

from ._actions import Commit, Read
from ._phases import Phase, Phases

__all__ = [
    "JOB_PHASES",
    "Check",
    "Job",
    "JobPhase",
    "Known",
    "LogRead",
    "Note",
    "Owed",
    "Recover",
    "StoreJobs",
    "Verify",
    "Work",
    "put_keys",
    "written",
]


class JobPhase(Phase):
    """Where a decision's job stands."""

    #: Its read is asked for; it is decided on the answer.
    READING = "reading"
    #: Decided; its writes are being committed.
    COMMITTING = "committing"
    #: Its store work failed; it waits for the next tick to be read and decided again.
    HELD = "held"


_J = JobPhase
JOB_PHASES: Phases[JobPhase] = Phases(
    "a store job",
    {
        (_J.READING, "decided"): _J.COMMITTING,
        (_J.COMMITTING, "lost the race"): _J.READING,
        (_J.READING, "failed"): _J.HELD,
        (_J.COMMITTING, "failed"): _J.HELD,
        (_J.HELD, "tried again"): _J.READING,
    },
)


@attrs.define
class Job:
    """One input on its way through read, decide, commit."""

    input: Input
    #: The exchange a call answers (``None`` for agent output, ends of runs and ticks).
    exchange: int | None = None
    dispatch: Dispatch | None = None
    phase: JobPhase = JobPhase.READING
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
class LogRead:
    """Read the log of the task stream ``exchange`` follows."""

    exchange: int


@attrs.frozen
class Owed:
    """Read a batch of the push notifications the store still owes."""


@attrs.frozen
class Note:
    """Record a notification's fate in the outbox (nobody waits on it)."""

    sent: Sent
    #: How many times its commit failed before.
    holds: int = 0


@attrs.frozen
class Recover:
    """Read a batch of the tasks whose runs a restart left counting."""


@attrs.frozen
class Verify:
    """Read a task whose waiter registered from a snapshot, in case it settled meanwhile."""

    exchange: int


@attrs.frozen
class Check:
    """Read a task that changed elsewhere, for whoever waits on it or runs it here."""

    task_id: str


@attrs.frozen
class Known:
    """A read answered from what this server last committed (the runs' known records)."""

    op: int
    snapshot: Snapshot


#: What a store operation is for.
Work = Job | LogRead | Verify | Check | Recover | Owed | Note


class StoreJobs:
    """The store operations under way: ``jobs`` by op, the actions not yet answered
    (``pending``), and, for a server with a store of its own, the ``queue`` it performs them
    from before its call returns."""

    def __init__(self, inline: bool) -> None:
        self._ops = itertools.count(1)
        self.jobs: dict[int, Work] = {}
        self.pending: dict[int, Read | Commit] = {}
        self.inline = inline
        self.queue: deque[Read | Commit | Known] = deque()
        # Per task, this server's commits that write it and are not answered yet; and those
        # tasks that moved meanwhile, to be looked at again once the last is.
        self.writing: dict[str, set[int]] = {}
        self.meanwhile: set[str] = set()

    def new(self, work: Work) -> int:
        """A new op for ``work``."""
        op = next(self._ops)
        self.jobs[op] = work
        return op

    def ask(self, action: Read | Commit) -> Read | Commit | None:
        """Keep ``action`` pending; return it if the transport must perform it."""
        self.pending[action.op] = action
        if self.inline:
            self.queue.append(action)
            return None
        return action

    def read(self, work: Work, reads: Reads) -> Read | Commit | None:
        """A new op reading ``reads`` for ``work`` (see :meth:`ask`)."""
        # (new and ask, written out: every send reads at least once.)
        op = next(self._ops)
        self.jobs[op] = work
        action = self.pending[op] = Read(op, reads)
        if self.inline:
            self.queue.append(action)
            return None
        return action

    def commit(self, op: int, job: Job, decision: Decision) -> Read | Commit | None:
        """Commit ``decision``'s writes for ``job`` (see :meth:`ask`)."""
        job.phase = JOB_PHASES[job.phase, "decided"]
        job.decision = decision
        job.keys = put_keys(decision)
        for key in job.keys:
            self.writing.setdefault(key, set()).add(op)
        action = self.pending[op] = Commit(op, decision.writes)
        if self.inline:
            self.queue.append(action)
            return None
        return action

    def answered(self, op: int, keys: frozenset[str], ok: bool) -> set[str]:
        """Commit ``op``, which puts the tasks ``keys``, was answered (``ok``: it went
        through, or failed). A store may answer out of order: a commit that starts a run may
        be answered after one that canceled or superseded that run (whose StopRun found
        nothing here to stop), or after another server did so (whose doorbell found no run
        here to look at). So the tasks it wrote that moved while it was under way (another
        commit of theirs was answered first, or a doorbell rang), once no commit of theirs is
        under way here any more, are returned: the runs here of those are looked at again."""
        again: set[str] = set()
        for key in keys:
            writing = self.writing.get(key, set())
            writing.discard(op)
            if writing:
                if ok:
                    self.meanwhile.add(key)  # for the commits of it still under way
                continue
            self.writing.pop(key, None)
            if key in self.meanwhile:
                self.meanwhile.discard(key)
                again.add(key)
        return again

    def moved(self, task_id: str) -> None:
        """Task ``task_id`` changed elsewhere: a commit of it under way here may start a run
        too late, so it is looked at again once answered."""
        if task_id in self.writing:
            self.meanwhile.add(task_id)


def put_keys(decision: Decision) -> frozenset[str]:
    """The tasks ``decision`` puts."""
    writes = decision.writes
    if len(writes) == 1 and type(writes[0]) is Put:  # as nearly every decision's
        return frozenset((writes[0].record.id,))
    return frozenset(w.record.id for w in writes if isinstance(w, Put))


def written(decision: Decision, snapshot: Snapshot) -> bool:
    """Whether ``snapshot`` (a read of an agent's task) shows ``decision``'s write of that task
    in the store: the very record it put, which no other writer could have put."""
    found = snapshot.task
    if found is None:
        return False
    return any(
        isinstance(write, Put) and write.record.id == found.id and write.record == found
        for write in decision.writes
    )
