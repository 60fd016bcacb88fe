"""The SQLite store's own promises: a file that survives reopening, versioned and migrated, one
server at a time, races decided by version, and nothing half-written when a commit fails.

The contract every store keeps is ``test_conformance.py`` (which runs this store too); this is
what only a store on disk can get wrong.
"""

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

from a2a_adapters.stores import (
    SCHEMA_VERSION,
    RedisStore,
    SqliteStore,
    StoreUnavailable,
    open_store,
)
from a2a_core import TaskState
from a2a_core.errors import UsageError
from a2a_core.store import (
    LoggedEvent,
    LogQuery,
    MessageKey,
    OutboxQuery,
    Put,
    Reads,
    Sent,
)

from .test_conformance import ALICE, bump, query, record, run


def filled(path: Path) -> None:
    """A store at ``path`` holding one task with an event log, a message id and an outbox."""
    store = SqliteStore(path)
    first = attrs.evolve(record("t1"), seq=2, messages=(("m-1", "f"),))
    events = (LoggedEvent(1, first.task), LoggedEvent(2, first.task))
    assert run(store.commit([Put(first, 0, events, (("c", 2),))]))
    store.close()


def test_everything_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    filled(path)
    store = SqliteStore(path)
    try:
        found = run(store.read(Reads(task_id="t1", message=MessageKey(ALICE, "m-1"))))
        assert found.task is not None
        assert found.task == found.by_message
        assert found.task.messages == (("m-1", "f"),)
        log = run(store.read(Reads(log=LogQuery("t1", 0)))).log
        assert [e.seq for e in log] == [1, 2]
        owed = run(store.read(Reads(outbox=OutboxQuery(10)))).outbox
        assert [(p.config_id, p.event.seq) for p in owed] == [("c", 2)]
        assert store.schema_version == SCHEMA_VERSION
    finally:
        store.close()


def test_an_older_file_is_migrated_and_keeps_its_tasks(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    filled(path)
    # What version 1 of the schema was: no outbox (version 2), no kept counts (version 3).
    with sqlite3.connect(path) as db:
        for table in ("outbox", "counts_by_owner", "counts_by_context"):
            db.execute(f"DROP TABLE {table}")
        db.execute("PRAGMA user_version = 1")
    store = SqliteStore(path)
    try:
        assert store.schema_version == SCHEMA_VERSION == 3
        assert run(store.read(Reads(task_id="t1"))).task is not None
        # The counts were made from the tasks the file held.
        for listing in (query(), query(context_id="ctx"), query(state=TaskState.WORKING)):
            page = run(store.read(Reads(listing=listing))).page
            assert page is not None
            assert page.total == 1
        later = bump(attrs.evolve(record("t1"), seq=2, messages=(("m-1", "f"),)))
        later = attrs.evolve(later, seq=3)
        event = LoggedEvent(3, later.task)
        assert run(store.commit([Put(later, 1, (event,), (("c", 3),))]))
        owed = run(store.read(Reads(outbox=OutboxQuery(10)))).outbox
        assert [p.event.seq for p in owed] == [3]
    finally:
        store.close()


def test_a_newer_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    filled(path)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    before = path.read_bytes()
    with pytest.raises(StoreUnavailable, match="schema version 99, newer than this release's"):
        SqliteStore(path)
    assert path.read_bytes() == before
    SqliteStore(tmp_path / "other.db").close()  # the refusal held no lock of its own


def test_a_file_that_is_not_a_task_store_is_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "app.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    with pytest.raises(StoreUnavailable, match="not a task store"):
        SqliteStore(foreign)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is no database, just bytes " * 64)
    with pytest.raises(StoreUnavailable, match="cannot use the task store"):
        SqliteStore(garbage)
    assert garbage.read_bytes() == b"this is no database, just bytes " * 64


def test_one_server_at_a_time_owns_a_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    first = SqliteStore(path)
    with pytest.raises(StoreUnavailable, match="in use by another server"):
        SqliteStore(path)
    first.close()
    SqliteStore(path).close()  # released on close (and by the kernel if the process dies)


def test_store_urls(tmp_path: Path) -> None:
    store = open_store(f"sqlite:{tmp_path}/a.db?synchronous=normal")
    assert isinstance(store, SqliteStore)
    assert store.durability == "NORMAL"
    store.close()
    absolute = open_store(f"sqlite://{tmp_path}/b.db")
    assert isinstance(absolute, SqliteStore)
    assert absolute.path == tmp_path / "b.db"
    absolute.close()
    with pytest.raises(ValueError, match=r"expected memory, sqlite:PATH .* redis://"):
        open_store("postgres://localhost/db")
    with pytest.raises(ValueError, match="unknown option 'mode'"):
        open_store(f"sqlite:{tmp_path}/c.db?mode=ro")
    with pytest.raises(StoreUnavailable, match="synchronous='sometimes'"):
        open_store(f"sqlite:{tmp_path}/d.db?synchronous=sometimes")
    waiting = open_store(f"sqlite:{tmp_path}/f.db?busy_timeout=0.25")
    assert isinstance(waiting, SqliteStore)
    assert waiting.busy_timeout == 0.25
    waiting.close()
    with pytest.raises(ValueError, match="busy_timeout='soon' is not a number"):
        open_store(f"sqlite:{tmp_path}/g.db?busy_timeout=soon")
    with pytest.raises(StoreUnavailable, match=r"busy_timeout=-1\.0"):
        open_store(f"sqlite:{tmp_path}/h.db?busy_timeout=-1")
    with pytest.raises(StoreUnavailable, match="no directory"):
        open_store(f"sqlite:{tmp_path}/missing/e.db")
    assert not (tmp_path / "missing").exists()


def test_redis_store_urls() -> None:
    """The Redis forms, parsed (a Redis store connects on first use: test_redis.py uses them)."""
    store = open_store("redis://:sekrit@127.0.0.1:6390/2?prefix=blue&lease=0.5")
    assert isinstance(store, RedisStore)
    assert (store.prefix, store.lease) == ("blue", 0.5)
    assert store.url == "redis://:sekrit@127.0.0.1:6390/2"  # the store's options are its own
    assert store.where == "redis://:***@127.0.0.1:6390/2"  # what messages show
    defaults = open_store("rediss://redis.internal:6380/0?ssl_cert_reqs=none")
    assert isinstance(defaults, RedisStore)
    assert (defaults.prefix, defaults.lease) == ("a2a", 5.0)
    assert defaults.url == "rediss://redis.internal:6380/0?ssl_cert_reqs=none"
    socket = open_store("unix:///run/redis/redis.sock?db=3&prefix=p")
    assert isinstance(socket, RedisStore)
    assert socket.url == "unix:///run/redis/redis.sock?db=3"
    refused = {
        "redis://127.0.0.1/0?mode=ro": "unknown option 'mode' .*known: prefix, lease, db",
        "redis://127.0.0.1/0?ssl_ca_certs=ca.pem": "unknown option 'ssl_ca_certs'",  # TLS only
        "redis://127.0.0.1:port/0": "the port is not a number",
        "redis://127.0.0.1/zero": "the database 'zero' is not a number",
        "redis:///0": "the Redis host is missing",
        "unix://?db=1": "the Unix socket's path is missing",
        "unix:///tmp/r.sock?db=x": "db='x' is not a number",
        "redis://127.0.0.1/0?lease=soon": "lease='soon' is not a number of seconds",
        "redis://127.0.0.1/0?lease=0": "expected a number of seconds above 0",
        "redis://:sekrit@127.0.0.1/0?prefix=": r"redis://:\*\*\*@.*prefix='': expected a non-empty",
    }
    for url, message in refused.items():
        with pytest.raises(ValueError, match=message) as refusal:
            open_store(url)
        assert "sekrit" not in str(refusal.value)


def test_writers_racing_on_one_task_decide_by_version(tmp_path: Path) -> None:
    """Eight threads, each with an event loop of its own (so no one limiter queues them), race
    to move one task from version 1: exactly one wins, and every writer is told how it went."""
    store = SqliteStore(tmp_path / "tasks.db")
    try:
        assert run(store.commit([Put(record("t1"), 0)]))
        results: list[bool] = []
        start = threading.Barrier(8)

        def write(n: int) -> None:
            start.wait()
            # Each writer read version 1 and decided its own next version.
            results.append(run(store.commit([Put(bump(record("t1"), at=n), 1)])))

        threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert sorted(results) == [False] * 7 + [True]
        found = run(store.read(Reads(task_id="t1"))).task
        assert found is not None
        assert found.version == 2
    finally:
        store.close()


def test_a_commit_another_loops_group_took_is_told_how_that_group_went(tmp_path: Path) -> None:
    """Each event loop queues on a limiter of its own, so a commit may be taken into a group
    that another loop is writing: it must wait for that group, not report itself refused."""
    store = SqliteStore(tmp_path / "tasks.db")
    held, free = anyio.CapacityLimiter(1), anyio.CapacityLimiter(1)  # one per "loop"
    limiters = iter([held, free])
    store._limiter_here = lambda: next(limiters)  # type: ignore[method-assign]
    writing, finish = threading.Event(), threading.Event()
    write_all = store._commit_all

    def slow(batch: Any) -> Any:
        if batch:
            writing.set()
            finish.wait(10)
        return write_all(batch)

    store._commit_all = slow  # type: ignore[method-assign]

    async def scenario() -> dict[str, bool]:
        told: dict[str, bool] = {}

        async def commit(task_id: str) -> None:
            told[task_id] = await store.commit([Put(record(task_id), 0)])

        async with anyio.create_task_group() as group:
            await held.acquire_on_behalf_of(held)  # the first loop is busy for now
            group.start_soon(commit, "first")  # queued, waiting for its loop
            await anyio.wait_all_tasks_blocked()
            assert store._queued
            group.start_soon(commit, "second")  # its loop is free: it writes both
            await anyio.to_thread.run_sync(writing.wait, 10)
            held.release_on_behalf_of(held)  # the first's turn, while its group is written
            await anyio.sleep(0.05)
            finish.set()
        return told

    try:
        assert run(scenario()) == {"first": True, "second": True}
        assert len(store) == 2
    finally:
        store.close()


def test_a_commit_that_fails_part_way_leaves_nothing_of_itself(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "tasks.db")
    try:
        good = Put(record("t1"), 0)
        gap = Put(attrs.evolve(record("t2"), seq=5), 0, (LoggedEvent(5, record("t2").task),))
        with pytest.raises(UsageError, match="without a gap"):
            run(store.commit([good, gap]))
        assert run(store.read(Reads(task_id="t1"))).task is None
        assert run(store.commit([good]))  # and the store goes on
    finally:
        store.close()


def test_a_full_disk_is_an_error_for_that_commit_and_tears_nothing(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "tasks.db")
    try:
        assert run(store.commit([Put(record("t1"), 0)]))
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages}")  # the disk is now full
        big = attrs.evolve(bump(record("t1")), skill_id="x" * 200_000)
        # Unavailable, as a Redis that does not answer is: the server tries it again later.
        with pytest.raises(StoreUnavailable, match="full") as raised:
            run(store.commit([Put(big, 1), Sent("t1", "c", 1)]))
        assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
        found = run(store.read(Reads(task_id="t1"))).task
        assert found is not None
        assert found.version == 1  # the old version, whole
        store._db.execute("PRAGMA max_page_count = 1073741823")
        assert run(store.commit([Put(big, 1)]))
    finally:
        store.close()


def test_a_file_another_process_keeps_locked_is_unavailable_for_commits(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    store = SqliteStore(path, busy_timeout=0.1)
    try:
        assert run(store.commit([Put(record("t1"), 0)]))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer holds the file past the timeout
        try:
            with pytest.raises(StoreUnavailable, match="locked") as raised:
                run(store.commit([Put(bump(record("t1")), 1)]))
            assert raised.value.__cause__ is not None
            found = run(store.read(Reads(task_id="t1"))).task  # reads go on (WAL)
            assert found is not None
            assert found.version == 1
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert run(store.commit([Put(bump(record("t1")), 1)]))
    finally:
        store.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only files")
def test_a_file_it_cannot_write_is_refused_at_start(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    filled(path)
    path.chmod(0o444)
    with pytest.raises(StoreUnavailable, match="cannot use the task store"):
        SqliteStore(path)


def test_a_terminal_task_is_found_by_the_expiry_index(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "tasks.db")
    try:
        done = record("t1", state=TaskState.COMPLETED)
        assert run(store.commit([Put(done, 0)]))
        plan = store._db.execute(
            "EXPLAIN QUERY PLAN SELECT updated_at, record FROM tasks WHERE terminal = 1 "
            "ORDER BY updated_at, key LIMIT 5"
        ).fetchall()
        assert any("tasks_terminal" in str(row) for row in plan), plan
    finally:
        store.close()


def test_commits_written_together_keep_their_own_outcomes(tmp_path: Path) -> None:
    """Group commit: the commits queued behind one go to disk in one transaction, and each
    is done, refused or failed as it would have been alone."""
    store = SqliteStore(tmp_path / "tasks.db")
    groups: list[int] = []
    write_all = store._commit_all

    def counted(batch: Any) -> Any:
        groups.append(len(batch))
        return write_all(batch)

    store._commit_all = counted  # type: ignore[method-assign]

    async def scenario() -> dict[str, bool | str]:
        assert await store.commit([Put(record("race"), 0)])
        outcomes: dict[str, bool | str] = {}

        async def commit(name: str, writes: list[Put]) -> None:
            try:
                outcomes[name] = await store.commit(writes)
            except UsageError as error:
                outcomes[name] = str(error)

        gap = Put(attrs.evolve(record("gap"), seq=5), 0, (LoggedEvent(5, record("gap").task),))
        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(commit, f"new-{n}", [Put(record(f"t{n}"), 0)])
            group.start_soon(commit, "gap", [gap])
            for n in range(5):  # five writers decided on version 1: one of them wins
                group.start_soon(commit, f"race-{n}", [Put(bump(record("race"), at=n), 1)])
        return outcomes

    try:
        outcomes = run(scenario())
        assert all(outcomes[f"new-{n}"] is True for n in range(20))
        assert "without a gap" in str(outcomes["gap"])
        assert sorted(outcomes[f"race-{n}"] is True for n in range(5)) == [False] * 4 + [True]
        assert len(store) == 21  # the twenty, the race's task; nothing of the failed one
        assert run(store.read(Reads(task_id="gap"))).task is None
        assert sum(groups) == 27
        assert max(groups) > 1, groups  # they were written together, not one by one
    finally:
        store.close()


def test_a_commit_cancelled_before_its_turn_is_not_written(tmp_path: Path) -> None:
    """A queued commit whose caller gives up before its turn is dropped unwritten; the one
    being written when that happens is finished and told."""
    store = SqliteStore(tmp_path / "tasks.db")
    entered, release = threading.Event(), threading.Event()
    write_all = store._commit_all

    def slow(batch: Any) -> Any:
        entered.set()
        release.wait(10)
        return write_all(batch)

    store._commit_all = slow  # type: ignore[method-assign]

    async def scenario() -> bool | None:
        first: list[bool] = []

        async def commit_first() -> None:
            first.append(await store.commit([Put(record("t1"), 0)]))

        async with anyio.create_task_group() as group:
            group.start_soon(commit_first)
            await anyio.to_thread.run_sync(entered.wait, 10)  # the first is being written
            with anyio.move_on_after(0.05):
                await store.commit([Put(record("t2"), 0)])  # queued behind it: cancelled
            release.set()
        return first[0] if first else None

    try:
        assert run(scenario()) is True
        assert run(store.read(Reads(task_id="t1"))).task is not None
        assert run(store.read(Reads(task_id="t2"))).task is None
        assert store._queued == []
    finally:
        store.close()
