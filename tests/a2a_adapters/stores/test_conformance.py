"""The store contract, checked against every backend.

Each test takes the ``store`` fixture, which is parametrized over the backends, so a new backend
is conformant exactly when this file passes for it. Listings are also checked against a
reference model (filter with ``ListQuery.matches``, sort newest first) on random data.
"""

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_adapters.stores import MemoryStore, RedisStore, SqliteStore
from a2a_core import Task, TaskState, TaskStatus
from a2a_core.store import (
    AsyncStore,
    Cursor,
    Delete,
    ExpiryQuery,
    ListQuery,
    LoggedEvent,
    LogQuery,
    MessageKey,
    OutboxQuery,
    Owner,
    Put,
    Reads,
    RunningQuery,
    Sent,
    Snapshot,
    TaskRecord,
)
from examples import echo
from tests.a2a_adapters.conftest import unique_prefix
from tests.a2a_adapters.support import COMPLETED, get_task, list_tasks, send_task, state_of
from tests.servers import running_server

T = TypeVar("T")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALICE = Owner("alice")
BOB = Owner("bob")


@attrs.frozen
class Where:
    """What a backend may keep a new store in: a directory of its own, and the session's Redis
    (started only when a Redis store is made)."""

    directory: Path
    request: pytest.FixtureRequest

    def redis_url(self) -> str:
        url: str = self.request.getfixturevalue("redis_url")
        return url


BACKENDS: dict[str, Callable[[Where], AsyncStore]] = {
    "memory": lambda _: MemoryStore(),
    "sqlite": lambda where: SqliteStore(where.directory / "tasks.db"),
    # Each store under a prefix of its own: one Redis, and no store sees another's keys.
    "redis": lambda where: RedisStore(where.redis_url(), prefix=unique_prefix()),
}


@pytest.fixture(params=sorted(BACKENDS))
def make_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[], AsyncStore]:
    """A maker of empty stores of one backend (each SQLite store in a directory of its own,
    each Redis store under a key prefix of its own)."""
    backend = BACKENDS[request.param]
    return lambda: backend(Where(tmp_path_factory.mktemp("store"), request))


@pytest.fixture
def store(make_store: Callable[[], AsyncStore]) -> Iterator[AsyncStore]:
    backend = make_store()
    yield backend
    run(backend.aclose())


def run(awaitable: Awaitable[T]) -> T:
    """Await what a store returns (the contract promises an awaitable, not a coroutine)."""

    async def wait() -> T:
        return await awaitable

    return asyncio.run(wait())


def record(
    task_id: str,
    *,
    owner: Owner = ALICE,
    at: int = 0,
    state: TaskState = TaskState.WORKING,
    context: str = "ctx",
    version: int = 1,
) -> TaskRecord:
    task = Task(
        id=task_id,
        context_id=context,
        status=TaskStatus(state, timestamp=T0 + timedelta(seconds=at)),
    )
    return TaskRecord(task=task, owner=owner, version=version, created_at=T0)


def bump(old: TaskRecord, **changes: object) -> TaskRecord:
    """The next version of ``old`` with its status moved (``at``/``state``) as given."""
    status = old.task.status
    at = changes.pop("at", None)
    state = changes.pop("state", status.state)
    timestamp = T0 + timedelta(seconds=at) if isinstance(at, int) else status.timestamp
    task = attrs.evolve(old.task, status=TaskStatus(state, timestamp=timestamp))  # type: ignore[arg-type]
    return attrs.evolve(old, task=task, version=old.version + 1)


def query(owner: Owner = ALICE, page_size: int = 50, **filters: object) -> ListQuery:
    return ListQuery(owner=owner, page_size=page_size, **filters)  # type: ignore[arg-type]


async def get(store: AsyncStore, task_id: str) -> TaskRecord | None:
    return (await store.read(Reads(task_id=task_id))).task


async def listing(store: AsyncStore, q: ListQuery) -> tuple[list[str], int, Cursor | None]:
    page = (await store.read(Reads(listing=q))).page
    assert page is not None
    return [r.id for r in page.records], page.total, page.next


# --- compare-and-set --------------------------------------------------------------------------


def test_put_new_then_read(store: AsyncStore) -> None:
    async def scenario() -> None:
        first = record("t1")
        assert await store.commit([Put(first, 0)])
        assert await get(store, "t1") == first
        assert await get(store, "missing") is None

    run(scenario())


def test_creating_an_existing_task_is_refused(store: AsyncStore) -> None:
    async def scenario() -> None:
        assert await store.commit([Put(record("t1"), 0)])
        assert not await store.commit([Put(record("t1", at=5), 0)])
        stored = await get(store, "t1")
        assert stored is not None
        assert stored.updated_at == T0

    run(scenario())


def test_update_needs_the_current_version(store: AsyncStore) -> None:
    async def scenario() -> None:
        v1 = record("t1")
        await store.commit([Put(v1, 0)])
        v2 = bump(v1, at=1)
        assert await store.commit([Put(v2, 1)])
        stale = bump(v1, at=2)  # decided from v1, which is gone
        assert not await store.commit([Put(stale, 1)])
        assert await get(store, "t1") == v2

    run(scenario())


def test_a_batch_applies_all_or_nothing(store: AsyncStore) -> None:
    async def scenario() -> None:
        a, b = record("a"), record("b")
        await store.commit([Put(a, 0), Put(b, 0)])
        ok = bump(a, at=3)
        conflicting = bump(b, at=3)
        assert not await store.commit([Put(ok, 1), Put(conflicting, 7)])
        assert await get(store, "a") == a
        assert await get(store, "b") == b

    run(scenario())


def test_delete_is_version_checked(store: AsyncStore) -> None:
    async def scenario() -> None:
        await store.commit([Put(record("t1"), 0)])
        assert not await store.commit([Delete("t1", 5)])
        assert await get(store, "t1") is not None
        assert await store.commit([Delete("t1", 1)])
        assert await get(store, "t1") is None
        ids, total, _ = await listing(store, query())
        assert ids == []
        assert total == 0

    run(scenario())


def test_a_batch_is_checked_in_order(store: AsyncStore) -> None:
    """A Delete frees its key for a Put later in the same batch (a task a client named anew
    once its old one expired), and a second Delete of one key in a batch is stale."""

    async def scenario() -> None:
        old = record("t1", state=TaskState.COMPLETED)
        await store.commit([Put(old, 0)])
        anew = record("t1", at=9)
        assert not await store.commit([Put(anew, 0), Delete("t1", 1)])
        assert not await store.commit([Delete("t1", 1), Delete("t1", 1)])
        assert await get(store, "t1") == old
        assert await store.commit([Delete("t1", 1), Put(anew, 0)])
        assert await get(store, "t1") == anew
        ids, _, _ = await listing(store, query())
        assert ids == ["t1"]

    run(scenario())


def test_a_named_task_is_read_under_its_own_key(store: AsyncStore) -> None:
    """``Reads.named`` finds the record kept under that key (``TaskRecord.key``), beside the
    one under ``task_id``."""

    async def scenario() -> None:
        plain = record("t1")
        named = attrs.evolve(record("t1", owner=BOB), key='["t1","bob",""]')
        assert await store.commit([Put(plain, 0), Put(named, 0)])
        found = await store.read(Reads(task_id="t1", named=named.key))
        assert found.task == plain
        assert found.named == named
        assert (await store.read(Reads(named='["t1","carol",""]'))).named is None
        ids, _, _ = await listing(store, query(BOB))
        assert ids == [named.key]

    run(scenario())


# --- listing ----------------------------------------------------------------------------------


def test_listing_is_scoped_to_the_owner(store: AsyncStore) -> None:
    async def scenario() -> None:
        await store.commit([Put(record("a1", at=1), 0), Put(record("b1", owner=BOB, at=2), 0)])
        assert (await listing(store, query(ALICE)))[:2] == (["a1"], 1)
        assert (await listing(store, query(BOB)))[:2] == (["b1"], 1)
        assert (await listing(store, query(Owner("alice", "tenant-x"))))[:2] == ([], 0)

    run(scenario())


def test_listing_follows_status_updates(store: AsyncStore) -> None:
    async def scenario() -> None:
        old = record("old", at=1)
        await store.commit([Put(old, 0), Put(record("new", at=2), 0)])
        assert (await listing(store, query()))[0] == ["new", "old"]
        await store.commit([Put(bump(old, at=3, state=TaskState.COMPLETED), 1)])
        assert (await listing(store, query()))[0] == ["old", "new"]
        completed = query(state=TaskState.COMPLETED)
        assert (await listing(store, completed))[:2] == (["old"], 1)

    run(scenario())


def test_pages_cover_everything_once(store: AsyncStore) -> None:
    async def scenario() -> None:
        # Equal timestamps on purpose: the id breaks ties, so no task is skipped or repeated.
        await store.commit([Put(record(f"t{i:03}", at=i // 3), 0) for i in range(100)])
        seen: list[str] = []
        cursor = None
        for _ in range(100):
            ids, total, cursor = await listing(store, query(page_size=7, cursor=cursor))
            assert total == 100
            seen.extend(ids)
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == 100
        expected = sorted(range(100), key=lambda i: (i // 3, f"t{i:03}"), reverse=True)
        assert seen == [f"t{i:03}" for i in expected]

    run(scenario())


records_strategy = st.lists(
    st.builds(
        lambda n, owner, at, state, context: record(
            f"t{n}", owner=owner, at=at, state=state, context=context
        ),
        st.integers(0, 10_000),
        st.sampled_from([ALICE, BOB]),
        st.integers(0, 20),
        st.sampled_from([TaskState.WORKING, TaskState.COMPLETED, TaskState.INPUT_REQUIRED]),
        st.sampled_from(["c1", "c2"]),
    ),
    max_size=40,
    unique_by=lambda r: r.id,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    records=records_strategy,
    owner=st.sampled_from([ALICE, BOB]),
    context=st.sampled_from(["", "c1", "c2"]),
    state=st.sampled_from([None, TaskState.WORKING, TaskState.COMPLETED]),
    since=st.one_of(st.none(), st.integers(0, 20)),
    page_size=st.integers(1, 10),
)
def test_listing_matches_the_reference_model(
    make_store: Callable[[], AsyncStore],
    records: list[TaskRecord],
    owner: Owner,
    context: str,
    state: TaskState | None,
    since: int | None,
    page_size: int,
) -> None:
    q = query(
        owner,
        page_size,
        context_id=context,
        state=state,
        updated_since=None if since is None else T0 + timedelta(seconds=since),
    )
    expected = sorted(
        (r for r in records if q.matches(r)), key=lambda r: (r.updated_at, r.id), reverse=True
    )

    async def scenario() -> list[str]:
        backend = make_store()
        try:
            await backend.commit([Put(r, 0) for r in records])
            seen: list[str] = []
            cursor = None
            for _ in range(len(records) + 2):
                ids, total, cursor = await listing(backend, attrs.evolve(q, cursor=cursor))
                assert total == len(expected)
                assert len(ids) <= page_size
                seen.extend(ids)
                if cursor is None:
                    break
            return seen
        finally:
            await backend.aclose()

    assert run(scenario()) == [r.id for r in expected]


# --- message ids: the index behind idempotent sends ----------------------------------------------


def with_messages(rec: TaskRecord, *message_ids: str) -> TaskRecord:
    return attrs.evolve(rec, messages=tuple((m, f"fp-{m}") for m in message_ids))


async def holder(store: AsyncStore, owner: Owner, message_id: str) -> TaskRecord | None:
    return (await store.read(Reads(message=MessageKey(owner, message_id)))).by_message


def test_a_message_id_finds_its_task(store: AsyncStore) -> None:
    async def scenario() -> None:
        first = with_messages(record("t1"), "m1")
        await store.commit([Put(first, 0)])
        assert await holder(store, ALICE, "m1") == first
        assert await holder(store, BOB, "m1") is None  # ids are per owner
        assert await holder(store, ALICE, "m2") is None
        follow_up = with_messages(bump(first, at=1), "m1", "m2")
        await store.commit([Put(follow_up, 1)])
        assert await holder(store, ALICE, "m2") == follow_up

    run(scenario())


def test_one_message_id_cannot_go_to_two_tasks(store: AsyncStore) -> None:
    async def scenario() -> None:
        assert await store.commit([Put(with_messages(record("t1"), "m1"), 0)])
        # A concurrent send of the same message decided on a snapshot without t1: refused.
        assert not await store.commit([Put(with_messages(record("t2"), "m1"), 0)])
        assert await get(store, "t2") is None
        # Two tasks claiming one id in one batch: refused too.
        both = [
            Put(with_messages(record("t3"), "m9"), 0),
            Put(with_messages(record("t4"), "m9"), 0),
        ]
        assert not await store.commit(both)
        assert await get(store, "t3") is None
        # Another owner may use the same id.
        assert await store.commit([Put(with_messages(record("t5", owner=BOB), "m1"), 0)])

    run(scenario())


def test_deleting_a_task_frees_its_message_ids(store: AsyncStore) -> None:
    async def scenario() -> None:
        old = with_messages(record("old", state=TaskState.COMPLETED), "m1")
        await store.commit([Put(old, 0)])
        # Removing the expired holder and creating the new task is one atomic batch.
        fresh = with_messages(record("new"), "m1")
        assert await store.commit([Delete("old", 1), Put(fresh, 0)])
        assert await holder(store, ALICE, "m1") == fresh

    run(scenario())


# --- event logs ---------------------------------------------------------------------------------


def logged(first: int, count: int) -> tuple[LoggedEvent, ...]:
    return tuple(
        LoggedEvent(first + i, Task(id="t1", status=TaskStatus(TaskState.WORKING)))
        for i in range(count)
    )


async def log_after(store: AsyncStore, after: int, limit: int = 100) -> list[int]:
    found = await store.read(Reads(log=LogQuery("t1", after, limit)))
    return [e.seq for e in found.log]


def test_the_event_log_grows_with_each_commit_and_reads_in_pages(store: AsyncStore) -> None:
    async def scenario() -> None:
        v1 = attrs.evolve(record("t1"), seq=2)
        await store.commit([Put(v1, 0, logged(1, 2))])
        v2 = attrs.evolve(bump(v1, at=1), seq=5)
        await store.commit([Put(v2, 1, logged(3, 3))])
        assert await log_after(store, 0) == [1, 2, 3, 4, 5]
        assert await log_after(store, 2, limit=2) == [3, 4]
        assert await log_after(store, 5) == []
        # A refused commit appends nothing.
        assert not await store.commit([Put(attrs.evolve(bump(v2), seq=6), 1, logged(6, 1))])
        assert await log_after(store, 0) == [1, 2, 3, 4, 5]
        await store.commit([Delete("t1", 2)])
        assert await log_after(store, 0) == []

    run(scenario())


# --- expiry -------------------------------------------------------------------------------------


def test_expiry_finds_the_oldest_terminal_tasks_up_to_the_cutoff(store: AsyncStore) -> None:
    async def scenario() -> None:
        done = TaskState.COMPLETED
        await store.commit(
            [
                Put(record("a", at=1, state=done), 0),
                Put(record("b", at=2, state=TaskState.FAILED), 0),
                Put(record("live", at=0), 0),  # never expires, however old
                Put(record("c", at=5, state=done, owner=BOB), 0),
                Put(record("d", at=9, state=done), 0),
            ]
        )

        async def expired(before: int, limit: int = 10) -> tuple[list[str], datetime | None]:
            query = ExpiryQuery(T0 + timedelta(seconds=before), limit)
            found = (await store.read(Reads(expiry=query))).expired
            assert found is not None
            return [r.id for r in found.records], found.next_at

        assert await expired(0) == ([], T0 + timedelta(seconds=1))
        assert await expired(5) == (["a", "b", "c"], T0 + timedelta(seconds=9))  # inclusive
        assert await expired(5, limit=2) == (["a", "b"], T0 + timedelta(seconds=5))
        assert await expired(99) == (["a", "b", "c", "d"], None)

    run(scenario())


def test_the_memory_store_is_offered_inline_unless_a_subclass_changes_what_it_does() -> None:
    store = MemoryStore()
    inline = store.inline
    assert inline is not None
    assert inline.commit([Put(record("t-1"), 0)])
    assert run(get(store, "t-1")) is not None  # one store, seen both ways

    class Audited(MemoryStore):
        async def read(self, reads: Reads) -> Snapshot:
            return await super().read(reads)

    assert Audited().inline is None  # its read must be awaited, or it would be skipped


def test_a_store_offers_nothing_inline_but_a_sync_store(store: AsyncStore) -> None:
    # The engine hands whatever ``inline`` holds to the machine, to call inline: the SQLite
    # store once kept its PRAGMA setting there, a string, and every request on it failed.
    inline = getattr(store, "inline", None)
    if inline is not None:
        assert callable(inline.read)
        assert callable(inline.commit)


@pytest.mark.usefixtures("adapter")
def test_a_server_answers_from_the_store(make_store: Callable[[], AsyncStore]) -> None:
    backend = make_store()
    try:
        with running_server(echo.agent, store=backend) as url:
            task = send_task(url, "kept")
            assert state_of(task) == COMPLETED
            assert get_task(url, task["id"]) == task
            assert [t["id"] for t in list_tasks(url)["tasks"]] == [task["id"]]
    finally:
        # Closed here, not by the fixture: the store's worker-thread limiter belongs to the
        # loop that served it, which may be trio's.
        close = getattr(backend, "close", None)
        if close is not None:
            close()


# --- recovery: the tasks whose runs a restart left counting ---------------------------------------


def test_running_tasks_are_found_by_key_in_batches(store: AsyncStore) -> None:
    async def scenario() -> None:
        for n in range(5):
            running = attrs.evolve(record(f"t{n}"), running=n % 2 == 0, run=1)
            assert await store.commit([Put(running, 0)])
        first = await store.read(Reads(running=RunningQuery(limit=2)))
        assert [r.id for r in first.running] == ["t0", "t2"]
        rest = await store.read(Reads(running=RunningQuery(limit=2, after="t2")))
        assert [r.id for r in rest.running] == ["t4"]
        done = attrs.evolve(rest.running[0], running=False, version=2)
        assert await store.commit([Put(done, 1)])
        again = await store.read(Reads(running=RunningQuery(limit=10)))
        assert [r.id for r in again.running] == ["t0", "t2"]

    run(scenario())


# --- the push outbox: notifications owed from the commit of their event until delivered ----------


def test_the_outbox_keeps_what_is_owed_until_its_end_is_recorded(store: AsyncStore) -> None:
    async def scenario() -> None:
        first = record("t1")
        created = (LoggedEvent(1, first.task), LoggedEvent(2, first.task))
        assert await store.commit(
            [Put(attrs.evolve(first, seq=2), 0, created, (("c", 1), ("c", 2), ("d", 1)))]
        )
        assert await store.commit([Put(attrs.evolve(record("t0"), seq=0), 0)])  # owes nothing
        owed = (await store.read(Reads(outbox=OutboxQuery(limit=10)))).outbox
        assert [(p.record.id, p.config_id, p.event.seq, p.attempts) for p in owed] == [
            ("t1", "c", 1, 0),
            ("t1", "c", 2, 0),
            ("t1", "d", 1, 0),
        ]
        assert owed[1].event == created[1]
        after = (await store.read(Reads(outbox=OutboxQuery(2, ("t1", "c", 2))))).outbox
        assert [(p.config_id, p.event.seq) for p in after] == [("d", 1)]
        # A failed attempt is counted; a delivery (or a give-up) ends it; both always apply.
        assert await store.commit([Sent("t1", "c", 1, attempts=3), Sent("t1", "d", 1)])
        assert await store.commit([Sent("t1", "d", 1), Sent("nope", "x", 9)])
        owed = (await store.read(Reads(outbox=OutboxQuery(limit=10)))).outbox
        assert [(p.config_id, p.event.seq, p.attempts) for p in owed] == [("c", 1, 3), ("c", 2, 0)]
        # A task's notifications go with it.
        done = bump(attrs.evolve(first, seq=2), state=TaskState.COMPLETED)
        assert await store.commit([Put(done, 1), Delete("t1", 2)])
        assert (await store.read(Reads(outbox=OutboxQuery(limit=10)))).outbox == ()

    run(scenario())
