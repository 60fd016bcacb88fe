"""The blocked sorted index behind ``MemoryTasks``: the same answers as one sorted list.

The store conformance suite (``tests/a2a_adapters/stores``) runs too few tasks to split a
block, so the index is checked here with tiny blocks against a plain sorted list.
"""

import bisect
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core import (
    LoggedEvent,
    LogQuery,
    MemoryTasks,
    Message,
    Owner,
    Part,
    Put,
    Reads,
    Role,
    Task,
    TaskRecord,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    text_artifact,
)
from a2a_core._memory import _CREATED, _SortedIndex

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

Key = tuple[datetime, str]

keys = st.builds(
    lambda seconds, name: (EPOCH + timedelta(seconds=seconds), name),
    st.integers(0, 40),
    st.sampled_from("abcdefgh"),
)
operations = st.lists(st.tuples(st.booleans(), keys), max_size=200)


class TinyBlocks(_SortedIndex):
    LOAD = 2


def build(ops: list[tuple[bool, Key]]) -> tuple[_SortedIndex, list[Key]]:
    index: _SortedIndex = TinyBlocks()
    reference: list[Key] = []
    for adding, key in ops:
        if adding and key not in reference:
            index.add(key)
            bisect.insort(reference, key)
        elif not adding:
            index.remove(key)  # removing an absent key is a no-op
            if key in reference:
                reference.remove(key)
    return index, reference


@settings(max_examples=300)
@given(ops=operations, before=st.none() | keys, since=st.none() | st.integers(0, 40))
def test_the_index_answers_as_a_sorted_list(
    ops: list[tuple[bool, Key]], before: Key | None, since: int | None
) -> None:
    index, reference = build(ops)
    assert len(index) == len(reference)
    floor = EPOCH + timedelta(seconds=since) if since is not None else None
    expected = [
        k
        for k in reversed(reference)
        if (before is None or k < before) and (floor is None or k >= (floor, ""))
    ]
    assert index.newest_first(before, floor) == expected
    for limit in (1, 3):
        assert index.newest_first(before, floor, limit) == expected[:limit]
    assert index.count_since(floor) == len(
        [k for k in reference if floor is None or k >= (floor, "")]
    )
    if floor is not None:
        ceiling = [k for k in reference if k[0] <= floor]
        found, after = index.oldest(floor, 3)
        assert found == ceiling[:3]
        rest = reference[len(found) :]
        assert after == (rest[0] if rest else None)


def test_blocks_split_and_empty_blocks_go() -> None:
    index = TinyBlocks()
    added = [(EPOCH + timedelta(seconds=n), "t") for n in range(50)]
    for key in added:
        index.add(key)
    assert len(index._blocks) > 10
    for key in added[:48]:
        index.remove(key)
    assert index.newest_first(None, None) == added[:47:-1]
    assert len(index._blocks) <= 2


@pytest.mark.parametrize("count", [0, 1, 5])
def test_an_index_may_be_small_or_empty(count: int) -> None:
    index = TinyBlocks()
    for n in range(count):
        index.add((EPOCH + timedelta(seconds=n), "t"))
    assert len(index.newest_first(None, None)) == count
    assert index.count_since(None) == count


def test_a_logged_creation_is_rebuilt_from_the_record_not_kept() -> None:

    first = Message("m-1", Role.USER, (Part(text="hi"),), context_id="c", task_id="t")
    created = Task("t", TaskStatus(TaskState.SUBMITTED, timestamp=EPOCH), "c", history=(first,))
    record = TaskRecord(created, Owner("alice"), 1, EPOCH, run=1, running=True, seq=1)
    tasks = MemoryTasks()
    assert tasks.commit([Put(record, 0, (LoggedEvent(1, created),))])
    # The task moves on: more history, an artifact, another state.
    later = Task(
        "t",
        TaskStatus(TaskState.COMPLETED, timestamp=EPOCH + timedelta(seconds=5)),
        "c",
        artifacts=(text_artifact("out", artifact_id="a"),),
        history=(first, Message("m-2", Role.USER, (Part(text="more"),), "c", "t")),
    )
    done = TaskRecord(later, Owner("alice"), 2, EPOCH, run=1, seq=2)
    status = LoggedEvent(2, TaskStatusUpdateEvent("t", "c", later.status))
    assert tasks.commit([Put(done, 1, (status,))])
    assert tasks._logs["t"][0] is _CREATED  # kept as a marker, not a copy
    log = tasks.read(Reads(task_id="t", log=LogQuery("t", 0))).log
    assert [e.seq for e in log] == [1, 2]
    assert log[0].event == created


def test_a_first_event_that_is_not_the_creation_is_kept_as_it_is() -> None:

    odd = Task("t", TaskStatus(TaskState.WORKING, timestamp=EPOCH), "c")
    record = TaskRecord(odd, Owner("alice"), 1, EPOCH, seq=1)
    tasks = MemoryTasks()
    assert tasks.commit([Put(record, 0, (LoggedEvent(1, odd),))])
    assert tasks.read(Reads(task_id="t", log=LogQuery("t", 0))).log[0].event == odd


def test_a_log_grows_as_a_list_while_its_task_runs_and_rests_as_a_tuple() -> None:

    tasks = MemoryTasks()
    status = TaskStatus(TaskState.WORKING, timestamp=EPOCH)
    task = Task("t", status, "c")
    for version in range(1, 5):
        event = LoggedEvent(version, TaskStatusUpdateEvent("t", "c", status))
        record = TaskRecord(task, Owner("a"), version, EPOCH, run=1, running=version < 4)
        assert tasks.commit([Put(record, version - 1, (event,))])
        assert isinstance(tasks._logs["t"], list if version < 4 else tuple)
    log = tasks.read(Reads(task_id="t", log=LogQuery("t", 1))).log
    assert [e.seq for e in log] == [2, 3, 4]
    # A follow-up starts a run again: the log grows again.
    more = TaskRecord(task, Owner("a"), 5, EPOCH, run=2, running=True)
    event = LoggedEvent(5, TaskStatusUpdateEvent("t", "c", status))
    assert tasks.commit([Put(more, 4, (event,))])
    assert [e.seq for e in tasks.read(Reads(task_id="t", log=LogQuery("t", 0))).log] == [
        1,
        2,
        3,
        4,
        5,
    ]
