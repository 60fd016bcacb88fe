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
    Artifact,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    input_required,
    text_artifact,
)
from a2a_core.errors import UsageError
from a2a_core.store import (
    Delete,
    ExpiryQuery,
    ListQuery,
    LoggedEvent,
    LogQuery,
    MemoryTasks,
    MessageKey,
    OutboxQuery,
    Owner,
    Put,
    Reads,
    RunningQuery,
    Sent,
    TaskRecord,
    _compact,
)
from a2a_core.store._memory import _CREATED, _micros, _SortedIndex
from a2a_core.testing import Driver, strategies
from a2a_core.transport import ANONYMOUS
from tests.a2a_core.store.test_rows import records

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
ANONYMOUS_OWNER = Owner(ANONYMOUS.principal)

#: The indexes' keys: (status time in microseconds, task id).
Key = tuple[int, str]

keys = st.tuples(st.integers(0, 40), st.sampled_from("abcdefgh"))
operations = st.lists(st.tuples(st.booleans(), keys), max_size=200)


class TinyBlocks(_SortedIndex):
    LOAD = 2


class Compacting(MemoryTasks):
    """A store that compacts every task as soon as it settles."""

    YOUNG = 0


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
    tasks = Compacting()
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
    tasks = Compacting()
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


def test_a_put_must_advance_the_version_by_one_and_continue_the_log() -> None:
    """Bugs of the machine, not refusals: a refused commit would be retried the same way."""
    tasks = MemoryTasks()
    task = Task("t", TaskStatus(TaskState.WORKING, timestamp=EPOCH), "c")
    with pytest.raises(UsageError, match="advance the version by exactly one"):
        tasks.commit([Put(TaskRecord(task, Owner("a"), 2, EPOCH), 0)])
    note = TaskStatusUpdateEvent("t", "c", task.status)
    with pytest.raises(UsageError, match="without a gap"):
        tasks.commit([Put(TaskRecord(task, Owner("a"), 1, EPOCH), 0, (LoggedEvent(2, note),))])
    assert len(tasks) == 0


def test_deleting_a_task_that_is_not_there_changes_nothing() -> None:
    tasks = MemoryTasks()
    assert tasks.commit([Delete("gone", 0)])
    assert len(tasks) == 0


def test_a_message_id_freed_and_claimed_in_one_commit_belongs_to_its_new_task() -> None:
    """An expired task still holding a message id is deleted by the send that reuses the id,
    in the same commit, whichever order the writes come in."""
    tasks = MemoryTasks()
    done = Task("old", TaskStatus(TaskState.COMPLETED, timestamp=EPOCH), "c")
    old = TaskRecord(done, Owner("a"), 1, EPOCH, messages=(("m-1", "f"),))
    assert tasks.commit([Put(old, 0)])
    fresh = Task("new", TaskStatus(TaskState.SUBMITTED, timestamp=EPOCH), "c")
    new = TaskRecord(fresh, Owner("a"), 1, EPOCH, messages=(("m-1", "f"),))
    assert tasks.commit([Put(new, 0), Delete("old", 1)])
    assert tasks._messages[Owner("a")] == {"m-1": "new"}
    snapshot = tasks.read(Reads(message=MessageKey(Owner("a"), "m-1")))
    assert snapshot.by_message is not None
    assert snapshot.by_message.id == "new"


def test_a_batch_may_delete_a_task_and_make_it_anew_and_settle_notifications() -> None:
    tasks = MemoryTasks()
    task = Task("t", TaskStatus(TaskState.WORKING, timestamp=EPOCH), "c")
    first = TaskRecord(task, Owner("a"), 1, EPOCH)
    note = LoggedEvent(1, TaskStatusUpdateEvent("t", "c", task.status))
    assert tasks.commit([Put(first, 0, (note,), outbox=(("p", 1), ("q", 1)))])
    pending = tasks.read(Reads(outbox=OutboxQuery(limit=10))).outbox
    assert [(p.config_id, p.event.seq) for p in pending] == [("p", 1), ("q", 1)]
    again = TaskRecord(task, Owner("a"), 1, EPOCH + timedelta(seconds=1))
    settled = [Sent("t", "p", 1), Sent("t", "q", 1, attempts=2), Sent("t", "r", 9)]
    assert tasks.commit([*settled, Delete("t", 1), Put(again, 0)])
    assert tasks._record("t") == again
    # (The task deleted and made anew in one batch keeps no outbox of the one before it.)
    assert tasks.read(Reads(outbox=OutboxQuery(limit=10))).outbox == ()
    assert not tasks.commit([Delete("t", 1), Put(again, 0), Put(again, 0)])  # versions still count


def test_a_batch_in_which_two_tasks_claim_one_message_id_is_refused_whole() -> None:
    tasks = MemoryTasks()
    one, two = (
        TaskRecord(
            Task(name, TaskStatus(TaskState.SUBMITTED, timestamp=EPOCH), "c"),
            Owner("a"),
            1,
            EPOCH,
            messages=(("m-1", "f"),),
        )
        for name in ("one", "two")
    )
    assert not tasks.commit([Put(one, 0), Put(two, 0)])
    assert len(tasks) == 0


def test_a_context_lists_its_tasks_newest_first_since_a_time() -> None:
    tasks = MemoryTasks()
    for n in range(3):
        at = EPOCH + timedelta(seconds=n)
        task = Task(f"t{n}", TaskStatus(TaskState.COMPLETED, timestamp=at), "c")
        assert tasks.commit([Put(TaskRecord(task, Owner("a"), 1, at), 0)])
    since = EPOCH + timedelta(seconds=1)
    query = ListQuery(Owner("a"), 10, context_id="c", updated_since=since)
    page = tasks.read(Reads(listing=query)).page
    assert page is not None
    assert [r.id for r in page.records] == ["t2", "t1"]
    assert page.total == 2
    done = ListQuery(Owner("a"), 10, context_id="c", state=TaskState.COMPLETED)
    listed = tasks.read(Reads(listing=done)).page
    assert listed is not None
    assert [r.id for r in listed.records] == ["t2", "t1", "t0"]


def test_a_time_without_a_zone_is_taken_as_utc() -> None:
    naive = datetime(2026, 1, 1, 12, 0, 0, 5)
    assert _micros(naive) == _micros(naive.replace(tzinfo=UTC))
    assert _micros(datetime(1970, 1, 1, 0, 0, 1)) == 1_000_000


# --- settled tasks, kept compact ----------------------------------------------------------------


def log_of(task: Task, *events: object) -> tuple[LoggedEvent, ...]:
    """``events`` numbered from 1, as a Put logs them."""
    return tuple(LoggedEvent(n, event) for n, event in enumerate(events, 1))  # type: ignore[arg-type]


@settings(max_examples=200)
@given(record=records(), log=st.lists(strategies.stream_events(), max_size=4))
def test_a_settled_task_and_its_log_decode_to_what_was_encoded(
    record: TaskRecord, log: list[StreamEvent]
) -> None:
    logged = (_CREATED, *log)
    blob = _compact.encode(record, logged, _CREATED)
    assert blob is not None, "every value a record holds has a compact form"
    assert _compact.decode(blob, _CREATED) == (record, logged)
    assert _compact.decode(blob, _CREATED)[1][0] is _CREATED
    assert _compact.decode_record(blob) == record
    assert _compact.state_of(blob) is record.state
    assert _compact.version_of(blob) == record.version


def settled(task_id: str, context_id: str, seconds: int, version: int = 3) -> TaskRecord:
    """A completed echo task, as a blocking send leaves it."""
    when = EPOCH + timedelta(seconds=seconds)
    message = Message(f"m-{task_id}", Role.USER, (Part(text="hi"),), context_id, task_id)
    status = TaskStatus(TaskState.COMPLETED, timestamp=when)
    artifact = text_artifact("hi", artifact_id="echo")
    task = Task(task_id, status, context_id, artifacts=(artifact,), history=(message,))
    messages = ((message.message_id, f"print-{task_id}"),)
    return TaskRecord(task, Owner("alice"), version, EPOCH, run=1, seq=3, messages=messages)


def settle(tasks: MemoryTasks, record: TaskRecord) -> tuple[LoggedEvent, ...]:
    """Commit ``record`` in three Puts (created, artifact, completed) as the core does."""
    task = record.task
    created = Task(
        task.id,
        TaskStatus(TaskState.SUBMITTED, timestamp=record.created_at),
        task.context_id,
        history=task.history[:1],
    )
    artifact = TaskArtifactUpdateEvent(task.id, task.context_id, task.artifacts[0], index=0)
    done = TaskStatusUpdateEvent(task.id, task.context_id, task.status)
    log = log_of(task, created, artifact, done)
    first = attrs.evolve(record, task=created, version=1, running=True, seq=1)
    working = attrs.evolve(
        first, version=2, seq=2, task=attrs.evolve(created, artifacts=(artifact.artifact,))
    )
    assert tasks.commit([Put(first, 0, log[:1])])
    assert tasks.commit([Put(working, 1, log[1:2])])
    assert tasks.commit([Put(record, 2, log[2:])])
    return log


@pytest.mark.parametrize("young", [0, 5, 256])
def test_a_settled_task_reads_back_equal_by_id_message_listing_log_and_expiry(young: int) -> None:
    tasks = Compacting()
    tasks.YOUNG = young
    records = [settled(f"t-{n}", f"c-{n % 3}", n) for n in range(12)]
    logs = {r.id: settle(tasks, r) for r in records}
    compact = [type(tasks._records[r.id]) is bytes for r in records]
    assert compact == [n < 12 - young for n in range(12)], "all but the latest: compact"
    assert set(tasks._logs) == {r.id for r in records[12 - min(young, 12) :]}
    for record in records:
        message = MessageKey(record.owner, record.messages[0][0])
        snapshot = tasks.read(Reads(task_id=record.id, message=message, log=LogQuery(record.id, 0)))
        assert snapshot.task == record
        assert snapshot.by_message == record
        assert snapshot.log == logs[record.id]
        assert tasks.read(Reads(log=LogQuery(record.id, 1, 1))).log == logs[record.id][1:2]
    owner = Owner("alice")
    page = tasks.read(Reads(listing=ListQuery(owner, page_size=5))).page
    assert page is not None
    assert page.records == tuple(records[::-1][:5])
    assert page.total == 12
    assert page.next is not None
    rest = tasks.read(Reads(listing=ListQuery(owner, page_size=20, cursor=page.next))).page
    assert rest is not None
    assert rest.records == tuple(records[::-1][5:])
    in_context = tasks.read(Reads(listing=ListQuery(owner, 20, context_id="c-1"))).page
    assert in_context is not None
    assert in_context.records == tuple(records[10::-3])
    done = ListQuery(owner, state=TaskState.COMPLETED, page_size=3)
    by_state = tasks.read(Reads(listing=done)).page
    assert by_state is not None
    assert by_state.records == tuple(records[:-4:-1])
    assert by_state.total == 12
    expiry = ExpiryQuery(EPOCH + timedelta(seconds=2), limit=3)
    expired = tasks.read(Reads(expiry=expiry)).expired
    assert expired is not None
    assert expired.records == tuple(records[:3])
    assert expired.next_at == records[3].updated_at
    # The sweep deletes them: their message ids, index entries and blobs go with them.
    assert tasks.commit([Delete(r.id, r.version) for r in expired.records])
    assert not tasks.commit([Delete(records[3].id, 2)]), "a settled task's version still counts"
    assert len(tasks) == 9
    for record in records[:3]:
        gone = tasks.read(
            Reads(task_id=record.id, message=MessageKey(owner, record.messages[0][0]))
        )
        assert gone.task is None
        assert gone.by_message is None
    after = tasks.read(Reads(listing=ListQuery(owner, page_size=20))).page
    assert after is not None
    assert after.records == tuple(records[:2:-1])
    # A context left with one task keeps its id alone; one with more, a sorted list of keys.
    assert tasks._contexts[owner]["c-0"] == [index_key(records[n]) for n in (3, 6, 9)]
    assert tasks.commit([Delete(records[n].id, 3) for n in (3, 6)])
    assert tasks._contexts[owner]["c-0"] == records[9].id
    alone = tasks.read(Reads(listing=ListQuery(owner, 20, context_id="c-0"))).page
    assert alone is not None
    assert alone.records == (records[9],)


def index_key(record: TaskRecord) -> tuple[int, str]:
    return (_micros(record.updated_at), record.id)


def test_a_settled_task_written_again_is_decoded_changed_and_kept_compact() -> None:
    # A push config set on a finished task, or a run that ends after its task was canceled:
    # rare writes to a settled task, which must see (and keep) its record and log.
    tasks = Compacting()
    record = settled("t", "c", 1)
    log = settle(tasks, record)
    config = TaskPushNotificationConfig("https://hook.example.com", id="p", task_id="t")
    changed = attrs.evolve(record, version=4, push_configs=(config,))
    assert tasks.commit([Put(changed, 3)])
    assert type(tasks._records["t"]) is bytes
    snapshot = tasks.read(Reads(task_id="t", log=LogQuery("t", 0)))
    assert snapshot.task == changed
    assert snapshot.log == log
    note = TaskStatusUpdateEvent("t", "c", record.task.status, metadata={"late": True})
    later = attrs.evolve(changed, version=5, seq=4)
    assert tasks.commit([Put(later, 4, (LoggedEvent(4, note),), outbox=(("p", 4),))])
    owed = tasks.read(Reads(outbox=OutboxQuery(10))).outbox
    assert [(p.record, p.config_id, p.event) for p in owed] == [(later, "p", LoggedEvent(4, note))]
    assert tasks.read(Reads(log=LogQuery("t", 3))).log == (LoggedEvent(4, note),)


def test_a_task_holding_a_value_with_no_compact_form_is_kept_as_it_is() -> None:
    # An agent may put any object in a part's data; the store must give back what it got.
    tasks = Compacting()
    odd = attrs.evolve(settled("t", "c", 1), version=1)
    data = Part(data={"at": EPOCH})
    odd = attrs.evolve(odd, task=attrs.evolve(odd.task, artifacts=(Artifact("x", (data,)),)))
    assert tasks.commit([Put(odd, 0)])
    assert tasks._records["t"] is odd
    assert tasks.read(Reads(task_id="t")).task == odd
    assert tasks.read(Reads(listing=ListQuery(Owner("alice"), 20, state=TaskState.COMPLETED))).page


def test_a_running_task_is_not_compacted_even_when_terminal() -> None:
    # Recovery after a restart scans for running tasks: a blob would have to be decoded there.
    tasks = Compacting()
    record = attrs.evolve(settled("t", "c", 1), version=1, running=True)
    assert tasks.commit([Put(record, 0)])
    assert tasks._records["t"] is record
    assert tasks.read(Reads(running=RunningQuery(10))).running == (record,)
    assert tasks.commit([Put(attrs.evolve(record, version=2, running=False), 1)])
    assert isinstance(tasks._records["t"], bytes)
    assert tasks.read(Reads(running=RunningQuery(10))).running == ()


def test_the_latest_settled_tasks_stay_objects_until_newer_ones_push_them_out() -> None:
    # The tasks read and written most are those just settled: they are compacted only once
    # YOUNG newer ones have settled, oldest first; a task written again is young again.
    tasks = MemoryTasks()
    tasks.YOUNG = 2
    first, second, third = (settled(f"t-{n}", "c", n) for n in range(3))
    settle(tasks, first)
    settle(tasks, second)
    assert tasks._records["t-0"] is first
    assert tasks._records["t-1"] is second
    config = TaskPushNotificationConfig("https://hook.example.com", id="p", task_id="t-0")
    again = attrs.evolve(first, version=4, push_configs=(config,))
    assert tasks.commit([Put(again, 3)])
    assert list(tasks._young) == ["t-1", "t-0"]
    log = settle(tasks, third)
    assert list(tasks._young) == ["t-0", "t-2"]
    assert isinstance(tasks._records["t-1"], bytes)
    assert "t-1" not in tasks._logs
    assert tasks.read(Reads(task_id="t-1")).task == second
    assert tasks.read(Reads(log=LogQuery("t-2", 0))).log == log
    assert tasks.commit([Delete("t-0", 4)])
    assert list(tasks._young) == ["t-2"]
    tasks.clear()
    assert tasks._young == {}


def test_a_listing_by_state_decodes_only_the_records_of_its_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The state filter reads each blob's head; decoding every matching task would make a
    # listing of a store holding many settled tasks cost a decode per task.
    tasks = Compacting()
    records = [settled(f"t-{n:02}", f"c-{n}", n) for n in range(30)]
    for record in records:
        settle(tasks, record)
    decoded: list[bytes] = []
    decode_record = _compact.decode_record

    def counting(blob: bytes) -> TaskRecord:
        decoded.append(blob)
        return decode_record(blob)

    monkeypatch.setattr(_compact, "decode_record", counting)
    query = ListQuery(Owner("alice"), 5, state=TaskState.COMPLETED)
    page = tasks.read(Reads(listing=query)).page
    assert page is not None
    assert page.records == tuple(records[:-6:-1])
    assert page.total == 30
    assert len(decoded) == 6  # the page and the one that says another page follows
    decoded.clear()
    following = tasks.read(Reads(listing=attrs.evolve(query, cursor=page.next))).page
    assert following is not None
    assert following.records == tuple(records[-6:-11:-1])
    assert len(decoded) == 6
