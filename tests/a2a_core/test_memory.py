"""The blocked sorted index behind ``MemoryTasks``: the same answers as one sorted list.

The store conformance suite (``tests/a2a_adapters/stores``) runs too few tasks to split a
block, so the index is checked here with tiny blocks against a plain sorted list.
"""

import bisect
from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core import (
    AgentContext,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    _compact,
    input_required,
    text_artifact,
)
from a2a_core._memory import _CREATED, _SortedIndex
from a2a_core.errors import UsageError
from a2a_core.store import Delete, LoggedEvent, LogQuery, MemoryTasks, Owner, Put, Reads, TaskRecord
from a2a_core.testing import Driver
from a2a_core.transport import ANONYMOUS

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
ANONYMOUS_OWNER = Owner(ANONYMOUS.principal)

#: The indexes' keys: (status time in microseconds, task id).
Key = tuple[int, str]

keys = st.tuples(st.integers(0, 40), st.sampled_from("abcdefgh"))
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
    floor = since
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
    added = [(n, "t") for n in range(50)]
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
        index.add((n, "t"))
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
    # Kept as a marker, not a copy, in the settled task's blob.
    assert _compact.decode(tasks._records["t"], _CREATED)[1][0] is _CREATED  # type: ignore[arg-type]
    log = tasks.read(Reads(task_id="t", log=LogQuery("t", 0))).log
    assert [e.seq for e in log] == [1, 2]
    assert log[0].event == created


def test_a_first_event_that_is_not_the_creation_is_kept_as_it_is() -> None:

    odd = Task("t", TaskStatus(TaskState.WORKING, timestamp=EPOCH), "c")
    record = TaskRecord(odd, Owner("alice"), 1, EPOCH, seq=1)
    tasks = MemoryTasks()
    assert tasks.commit([Put(record, 0, (LoggedEvent(1, odd),))])
    assert tasks.read(Reads(task_id="t", log=LogQuery("t", 0))).log[0].event == odd


def test_a_log_grows_as_a_list_until_its_task_ends_and_then_rests_in_its_blob() -> None:
    # A task waiting for input gets more events with its next turn: turning its log into a
    # tuple at every turn would copy the whole log each time (a long conversation's turns would
    # cost more and more). Only a settled task's log rests, encoded with its record.
    tasks = MemoryTasks()
    states = [TaskState.WORKING] * 3 + [TaskState.INPUT_REQUIRED, TaskState.WORKING]
    states.append(TaskState.COMPLETED)
    for version, state in enumerate(states, 1):
        status = TaskStatus(state, timestamp=EPOCH)
        event = LoggedEvent(version, TaskStatusUpdateEvent("t", "c", status))
        running = state is TaskState.WORKING
        record = TaskRecord(Task("t", status, "c"), Owner("a"), version, EPOCH, running=running)
        log_before = tasks._logs.get("t")
        assert tasks.commit([Put(record, version - 1, (event,))])
        if state.terminal:
            assert "t" not in tasks._logs
            assert type(tasks._records["t"]) is bytes
            continue
        log = tasks._logs["t"]
        assert isinstance(log, list), state
        if isinstance(log_before, list):
            assert log is log_before, "a growing log is extended, not copied"
    found = tasks.read(Reads(task_id="t", log=LogQuery("t", 1))).log
    assert [e.seq for e in found] == [2, 3, 4, 5, 6]


class CountingDict(dict[str, str]):
    """A dict that counts every look-up and change made through it."""

    touched = 0

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        self.touched += 1
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.touched += 1
        return super().__getitem__(key)

    def __setitem__(self, key: str, value: str) -> None:
        self.touched += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.touched += 1
        super().__delitem__(key)

    def __contains__(self, key: object) -> bool:
        self.touched += 1
        return super().__contains__(key)


def test_a_turn_of_a_long_conversation_touches_as_many_message_ids_as_the_first() -> None:
    # Each follow-up once re-checked and re-indexed every message id the task held, so a long
    # conversation's turns grew slower and slower. A turn now looks only at its own message.
    async def asks(ctx: AgentContext) -> object:
        return input_required("and then?")

    driver = Driver(asks, max_task_messages=None)
    first = driver.send("start")
    driver.run_agents()
    task_id = first.result()["task"]["id"]
    tasks = driver.tasks

    def touched_by_a_turn() -> int:
        index = CountingDict(tasks._messages[ANONYMOUS_OWNER])
        tasks._messages[ANONYMOUS_OWNER] = index
        driver.send("more", task_id=task_id, configuration={"historyLength": 0})
        driver.run_agents()
        return index.touched

    early = touched_by_a_turn()
    for _ in range(300):
        touched_by_a_turn()
    assert len(tasks._record(task_id).messages) == 302
    assert touched_by_a_turn() == early <= 3


def test_a_put_must_keep_the_message_ids_it_had() -> None:
    # The message index is kept by what each Put adds: a write that dropped or replaced ids
    # would leave it wrong, so it is refused before anything is applied.
    tasks = MemoryTasks()
    task = Task("t", TaskStatus(TaskState.WORKING, timestamp=EPOCH), "c")
    first = TaskRecord(task, Owner("a"), 1, EPOCH, messages=(("m-1", "f1"), ("m-2", "f2")))
    assert tasks.commit([Put(first, 0)])
    for messages in [(("m-1", "f1"),), (("m-1", "f1"), ("m-3", "f3")), ()]:
        with pytest.raises(UsageError, match="message ids"):
            tasks.commit([Put(attrs.evolve(first, version=2, messages=messages), 1)])
    with pytest.raises(UsageError, match="owner"):
        tasks.commit([Put(attrs.evolve(first, version=2, owner=Owner("b")), 1)])
    assert tasks._records["t"] == first
    assert tasks._messages[Owner("a")] == {"m-1": "t", "m-2": "t"}
    more = attrs.evolve(first, version=2, messages=(*first.messages, ("m-3", "f3")))
    assert tasks.commit([Put(more, 1)])
    assert tasks._messages[Owner("a")] == {"m-1": "t", "m-2": "t", "m-3": "t"}
    assert tasks.commit([Delete("t", 2)])
    assert tasks._messages == {}


def test_a_task_without_message_ids_comes_and_goes() -> None:
    tasks = MemoryTasks()
    task = Task("t", TaskStatus(TaskState.COMPLETED, timestamp=EPOCH), "c")
    assert tasks.commit([Put(TaskRecord(task, Owner("a"), 1, EPOCH), 0)])
    assert tasks._messages == {}
    assert tasks.commit([Delete("t", 1)])
    assert len(tasks) == 0
