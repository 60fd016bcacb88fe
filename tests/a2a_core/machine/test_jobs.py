"""Store jobs, driven alone: ops, pending actions, and commits answered out of order."""

from typing import Any

import pytest

from a2a_core.decide._effects import Decision
from a2a_core.decide._inputs import Tick
from a2a_core.machine._actions import Commit, Read
from a2a_core.machine._jobs import Job, JobPhase, StoreJobs
from a2a_core.machine._phases import IllegalPhase
from a2a_core.store import Reads


def test_a_transport_s_jobs_are_handed_out_and_an_inline_store_s_queued() -> None:
    outside, inline = StoreJobs(inline=False), StoreJobs(inline=True)
    job: Any = Job(Tick(None))  # type: ignore[arg-type]
    action = outside.read(job, Reads(task_id="t"))
    assert action == Read(1, Reads(task_id="t"))
    assert outside.pending == {1: action}
    assert inline.read(job, Reads(task_id="t")) is None
    assert list(inline.queue) == [Read(1, Reads(task_id="t"))]


def test_a_commit_answered_before_another_of_the_same_task_brings_it_back_once_both_are() -> None:
    jobs = StoreJobs(inline=False)
    first, second = Job(Tick(None)), Job(Tick(None))  # type: ignore[arg-type]
    decision: Any = Decision(writes=())
    for op, job in ((1, first), (2, second)):
        commit = jobs.commit(op, job, decision)
        assert isinstance(commit, Commit)
        assert job.phase is JobPhase.COMMITTING
    jobs.writing = {"t": {1, 2}}  # both write task t
    assert jobs.answered(2, frozenset({"t"}), ok=True) == set()  # 1 still under way
    assert jobs.answered(1, frozenset({"t"}), ok=True) == {"t"}  # looked at again now
    assert jobs.writing == {}
    with pytest.raises(IllegalPhase, match="decided"):
        jobs.commit(1, first, decision)  # a job committing cannot be decided again
