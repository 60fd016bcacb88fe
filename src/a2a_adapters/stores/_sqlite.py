"""Tasks in a SQLite file: the durable store, embedded, the same on asyncio and trio.

Built on the standard library's ``sqlite3`` (no asyncio-only driver, so trio runs it too). Each
call of the store contract is one synchronous function run in one worker-thread hop: a read is
one transaction of one or a few indexed queries, a commit one ``BEGIN IMMEDIATE`` transaction
that checks every expected version and message id, then writes the records, their events,
their message ids, the notifications they owe and the listing counts (the commits that queued
up meanwhile join it, each in a savepoint of its own: one fsync for many). A commit once
started is finished (a worker thread is never abandoned), and a failure inside it rolls all of
it back, so a crash, a full disk or a bug leaves either the whole commit or none of it. Calls
are serialised on one connection by a capacity limiter of one: SQLite has one writer anyway,
and queueing on the loop costs no thread per waiting request.

Durability is SQLite's WAL with ``synchronous=FULL`` unless told (each commit is on disk before
it is acknowledged, through a power loss too); ``NORMAL`` survives the process being killed but
may lose the last commits to a power loss, for about half the cost of a commit.

Records and events are kept in their stored form (:func:`a2a_core.store.dump_record`), with the
columns listings, expiry and recovery need beside them, each behind an index, so that no request
scans the table. ``PRAGMA user_version`` holds the schema's number: an older file is migrated
when opened, a newer one refused. One server process owns a file at a time (an advisory lock).
"""

import fcntl
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
from anyio.lowlevel import RunVar

from a2a_core.errors import UsageError
from a2a_core.store import (
    Cursor,
    Delete,
    Expired,
    ExpiryQuery,
    ListQuery,
    LoggedEvent,
    LogQuery,
    OutboxQuery,
    Page,
    Pending,
    Put,
    Reads,
    RunningQuery,
    Sent,
    Snapshot,
    StoreUnavailable,
    TaskRecord,
    Write,
    dump_event,
    load_event,
    load_record,
)

from ._rows import from_micros, micros, row

__all__ = ["SCHEMA_VERSION", "SqliteStore"]

T = TypeVar("T")

#: The schema this release writes (``PRAGMA user_version``).
SCHEMA_VERSION = 3

#: Each schema version's steps from the one before (version 1: from an empty file).
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE tasks (
            key TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            principal TEXT NOT NULL,
            tenant TEXT NOT NULL,
            context_id TEXT NOT NULL,
            state TEXT NOT NULL,
            terminal INTEGER NOT NULL,
            running INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            messages INTEGER NOT NULL,
            record TEXT NOT NULL
        ) STRICT""",
        "CREATE INDEX tasks_by_owner ON tasks (principal, tenant, updated_at, key)",
        "CREATE INDEX tasks_by_context ON tasks (principal, tenant, context_id, updated_at, key)",
        "CREATE INDEX tasks_by_state ON tasks (principal, tenant, state, updated_at, key)",
        "CREATE INDEX tasks_terminal ON tasks (updated_at, key) WHERE terminal = 1",
        "CREATE INDEX tasks_running ON tasks (key) WHERE running = 1",
        """CREATE TABLE events (
            key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            event TEXT NOT NULL,
            PRIMARY KEY (key, seq)
        ) STRICT, WITHOUT ROWID""",
        """CREATE TABLE message_ids (
            principal TEXT NOT NULL,
            tenant TEXT NOT NULL,
            message_id TEXT NOT NULL,
            key TEXT NOT NULL,
            PRIMARY KEY (principal, tenant, message_id)
        ) STRICT, WITHOUT ROWID""",
        "CREATE INDEX message_ids_by_task ON message_ids (key)",
    ),
    # The push outbox: a notification is owed from the commit of its event until delivered.
    2: (
        """CREATE TABLE outbox (
            key TEXT NOT NULL,
            config_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (key, config_id, seq)
        ) STRICT, WITHOUT ROWID""",
    ),
    # Counts kept with every commit, so that a listing's total costs one lookup, not a count of
    # the owner's tasks: per owner, and per owner and context; per state, and ('') in all.
    3: (
        """CREATE TABLE counts_by_owner (
            principal TEXT NOT NULL,
            tenant TEXT NOT NULL,
            state TEXT NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (principal, tenant, state)
        ) STRICT, WITHOUT ROWID""",
        """CREATE TABLE counts_by_context (
            principal TEXT NOT NULL,
            tenant TEXT NOT NULL,
            context_id TEXT NOT NULL,
            state TEXT NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (principal, tenant, context_id, state)
        ) STRICT, WITHOUT ROWID""",
        "INSERT INTO counts_by_owner SELECT principal, tenant, '', count(*) FROM tasks "
        "GROUP BY principal, tenant",
        "INSERT INTO counts_by_owner SELECT principal, tenant, state, count(*) FROM tasks "
        "GROUP BY principal, tenant, state",
        "INSERT INTO counts_by_context SELECT principal, tenant, context_id, '', count(*) "
        "FROM tasks GROUP BY principal, tenant, context_id",
        "INSERT INTO counts_by_context SELECT principal, tenant, context_id, state, count(*) "
        "FROM tasks GROUP BY principal, tenant, context_id, state",
    ),
}

_SYNCHRONOUS = ("FULL", "NORMAL", "EXTRA")


#: SQLite's primary result codes for a file that cannot be used *now*: another writer holds it
#: past the busy timeout, the disk is full, an I/O error, no memory. Those are the store being
#: away, as a Redis that does not answer is: a later try may well succeed (the server holds an
#: agent's output meanwhile). A constraint, a misuse or a corrupt file is a fault instead.
_PASSING = frozenset(
    {
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_NOMEM,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PROTOCOL,
    }
)


def _passing(error: BaseException) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(error, sqlite3.Error) and code is not None and code & 0xFF in _PASSING


class SqliteStore:
    """Tasks, their event logs, message ids and push configs in one SQLite file."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "FULL",
        busy_timeout: float = 5.0,
    ) -> None:
        self.path = Path(path)
        #: SQLite's ``synchronous`` setting the file is written with (FULL, NORMAL or EXTRA).
        self.durability = synchronous.upper()
        if self.durability not in _SYNCHRONOUS:
            raise StoreUnavailable(
                f"synchronous={synchronous!r}: expected one of {', '.join(_SYNCHRONOUS)}"
            )
        if not 0 <= busy_timeout <= 3600:
            raise StoreUnavailable(f"busy_timeout={busy_timeout!r}: expected 0 to 3600 seconds")
        #: Seconds a commit waits for another process that holds the file's write lock before
        #: the store counts as unavailable (and the commit is tried again later).
        self.busy_timeout = busy_timeout
        self._lock = threading.Lock()
        # One call at a time queues on the loop, not in a thread; a limiter belongs to one
        # event loop, and a store may outlive one (a test reads it after its server stopped).
        self._limiter: RunVar[anyio.CapacityLimiter] = RunVar(f"a2a-sqlite-{id(self)}")
        # Commits waiting for the one being written; the next to write takes them all.
        self._queued: list[_Queued] = []
        self._queue_lock = threading.Lock()
        self._owner_lock = self._claim()
        try:
            self._db = self._connect()
        except BaseException:
            os.close(self._owner_lock)
            raise

    # --- opening ------------------------------------------------------------------------------

    def _claim(self) -> int:
        """Hold the file's advisory lock for as long as the store is open: two servers on one
        file would each serve streams and waits that the other's commits never reach."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise StoreUnavailable(f"cannot open {lock_path}: {error.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreUnavailable(
                f"{self.path} is in use by another server (it holds {lock_path}); "
                "give each server a file of its own"
            ) from None
        return fd

    def _connect(self) -> sqlite3.Connection:
        where = str(self.path)
        try:
            db = sqlite3.connect(
                where, isolation_level=None, check_same_thread=False, cached_statements=64
            )
        except sqlite3.Error as error:
            raise StoreUnavailable(f"cannot open the task store {where}: {error}") from None
        try:
            db.execute(f"PRAGMA busy_timeout = {round(self.busy_timeout * 1000)}")
            # Whose file it is comes first: switching to WAL is written into the file, and a
            # file that is refused must be left as it was found.
            version = self._check_schema(db)
            mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreUnavailable(f"{where}: SQLite would not use its write-ahead log")
            db.execute(f"PRAGMA synchronous = {self.durability}")
            self._migrate(db, version)
            db.execute("BEGIN IMMEDIATE")  # proves the file is writable now, not at 1st commit
            db.execute("ROLLBACK")
        except sqlite3.Error as error:
            db.close()
            raise StoreUnavailable(f"cannot use the task store {where}: {error}") from None
        except BaseException:
            db.close()
            raise
        return db

    def _check_schema(self, db: sqlite3.Connection) -> int:
        """The file's schema version, if it is a task store this release can use."""
        version: int = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"{self.path} has schema version {version}, newer than this release's "
                f"{SCHEMA_VERSION}: it was written by a later a2a-sansio; upgrade, or give "
                "this server another file"
            )
        if version == 0 and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise StoreUnavailable(f"{self.path} is an SQLite file, but not a task store")
        return version

    def _migrate(self, db: sqlite3.Connection, version: int) -> None:
        if version == SCHEMA_VERSION:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            for step in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[step]:
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    @property
    def schema_version(self) -> int:
        """The schema version of the open file."""
        with self._lock:
            version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
            return version

    # --- the store contract -------------------------------------------------------------------

    async def read(self, reads: Reads) -> Snapshot:
        try:
            return await self._in_thread(self._read, reads)
        except sqlite3.Error as error:
            self._away(error)
            raise

    async def commit(self, writes: Sequence[Write]) -> bool:
        # Group commit: the commits that queued up while one was being written go to disk
        # together, in one transaction, each in a savepoint of its own, so each keeps its own
        # outcome (a conflict or an error undoes that one only) and none is answered before
        # the transaction that holds it is on disk. Under load that is one fsync for many.
        waiting = _Queued(tuple(writes))
        with self._queue_lock:  # a store may serve more than one loop (each its own limiter)
            self._queued.append(waiting)
        try:
            async with self._limiter_here():
                with self._queue_lock:
                    batch: list[_Queued] = []
                    if not waiting.taken:  # nobody wrote it while it waited: write the queue
                        batch, self._queued = self._queued, []
                        for entry in batch:
                            entry.taken = True
                # Shielded: once a group is taken off the queue it is written and every member
                # told, or a member would be written twice, or never answered.
                with anyio.CancelScope(shield=True):
                    if batch:
                        outcomes = await anyio.to_thread.run_sync(self._commit_all, batch)
                        for entry, outcome in zip(batch, outcomes, strict=True):
                            entry.outcome = outcome
                            entry.written.set()
                    elif not waiting.written.is_set():
                        # Taken by a group another loop is writing: wait for it to be told.
                        await anyio.to_thread.run_sync(waiting.written.wait)
        except anyio.get_cancelled_exc_class():
            with self._queue_lock:
                if not waiting.taken:
                    self._queued.remove(waiting)  # never started: nothing of it is written
            raise
        result = waiting.outcome
        if isinstance(result, BaseException):
            self._away(result)
            raise result
        return result is True

    def _away(self, error: BaseException) -> None:
        """Raise :class:`StoreUnavailable` for ``error`` when SQLite says the file cannot be
        used for now (any other error is the caller's to raise)."""
        if _passing(error):
            raise StoreUnavailable(f"the task store {self.path} failed: {error}") from error

    async def ping(self) -> None:
        """Answer a readiness probe: the file is open and can be read (raises
        :class:`StoreUnavailable` saying why not)."""
        await self._in_thread(self._ping)

    async def aclose(self) -> None:
        await self._in_thread(self._close)

    def close(self) -> None:
        """Close the file and give up its lock (what :meth:`aclose` does, with no loop)."""
        self._close()

    def __len__(self) -> int:
        with self._lock:
            count: int = self._db.execute("SELECT count(*) FROM tasks").fetchone()[0]
            return count

    def _limiter_here(self) -> anyio.CapacityLimiter:
        try:
            return self._limiter.get()
        except LookupError:
            limiter = anyio.CapacityLimiter(1)
            self._limiter.set(limiter)
            return limiter

    async def _in_thread(self, call: Callable[[Any], T], argument: Any = None) -> T:
        # A worker thread is never abandoned: cancelling the caller waits for it to finish, so
        # a call that has started is always finished (or rolled back), never cut in half.
        return await anyio.to_thread.run_sync(call, argument, limiter=self._limiter_here())

    def _ping(self, _: object = None) -> None:
        with self._lock:
            try:
                self._db.execute("SELECT 1 FROM tasks LIMIT 0").fetchall()
            except sqlite3.Error as error:
                raise StoreUnavailable(f"the task store {self.path} failed: {error}") from None

    def _close(self, _: object = None) -> None:
        with self._lock:
            if self._owner_lock < 0:
                return
            self._db.close()
            os.close(self._owner_lock)
            self._owner_lock = -1

    # --- reads --------------------------------------------------------------------------------

    def _read(self, reads: Reads) -> Snapshot:
        with self._lock:
            db = self._db
            db.execute("BEGIN")  # one consistent view for every part of the snapshot
            try:
                task = self._record(db, reads.task_id) if reads.task_id else None
                named = self._record(db, reads.named) if reads.named else None
                by_message = None
                if reads.message is not None:
                    owner = reads.message.owner
                    row = db.execute(
                        "SELECT t.record FROM message_ids m JOIN tasks t ON t.key = m.key "
                        "WHERE m.principal = ? AND m.tenant = ? AND m.message_id = ?",
                        (owner.principal, owner.tenant, reads.message.message_id),
                    ).fetchone()
                    by_message = load_record(row[0]) if row else None
                page = _page(db, reads.listing) if reads.listing is not None else None
                expired = _expired(db, reads.expiry) if reads.expiry is not None else None
                log = _log(db, reads.log) if reads.log is not None else ()
                running = _running(db, reads.running) if reads.running is not None else ()
                outbox = _owed(db, reads.outbox) if reads.outbox is not None else ()
            finally:
                if db.in_transaction:
                    db.execute("COMMIT")
        return Snapshot(
            task=task,
            named=named,
            by_message=by_message,
            page=page,
            expired=expired,
            log=log,
            running=running,
            outbox=outbox,
        )

    @staticmethod
    def _record(db: sqlite3.Connection, key: str) -> TaskRecord | None:
        row = db.execute("SELECT record FROM tasks WHERE key = ?", (key,)).fetchone()
        return load_record(row[0]) if row else None

    # --- commits ------------------------------------------------------------------------------

    def _commit_all(self, batch: Sequence["_Queued"]) -> list[bool | BaseException]:
        """Write ``batch`` in one transaction, each commit in its savepoint, in order: what
        each would have done alone, since each sees the ones before it. The outcome of each:
        done, refused (a version or message id that no longer holds) or the error it raised;
        if the transaction itself fails, every one of them fails with that error."""
        outcomes: list[bool | BaseException] = []
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                for entry in batch:
                    db.execute("SAVEPOINT one_commit")
                    try:
                        done: bool | BaseException = _apply(db, entry.writes)
                    except Exception as error:
                        if not db.in_transaction:
                            raise  # SQLite undid the whole transaction itself (a full disk)
                        done = error
                    if done is not True:
                        db.execute("ROLLBACK TO one_commit")
                    db.execute("RELEASE one_commit")
                    outcomes.append(done)
                db.execute("COMMIT")
            except BaseException as error:
                # Roll back only what is still open, so that the error that matters is raised.
                if db.in_transaction:
                    db.execute("ROLLBACK")
                return [error] * len(batch)
        return outcomes


class _Queued:
    """A commit waiting its turn, and once written, how it went."""

    __slots__ = ("outcome", "taken", "writes", "written")

    def __init__(self, writes: tuple[Write, ...]) -> None:
        self.writes = writes
        #: A group holds it: it will be written, and told, by whoever took it.
        self.taken = False
        self.outcome: bool | BaseException | None = None
        #: Set once ``outcome`` is (a thread's event: the group may be another loop's).
        self.written = threading.Event()


def _page(db: sqlite3.Connection, query: ListQuery) -> Page:
    where = ["principal = ?", "tenant = ?"]
    values: list[Any] = [query.owner.principal, query.owner.tenant]
    if query.context_id:
        where.append("context_id = ?")
        values.append(query.context_id)
    if query.state is not None:
        where.append("state = ?")
        values.append(query.state.value)
    if query.updated_since is not None:
        where.append("updated_at >= ?")
        values.append(micros(query.updated_since))
    filters = " AND ".join(where)
    total = _total(db, query, filters, values)
    paged, bound = filters, list(values)
    if query.cursor is not None:
        paged += " AND (updated_at, key) < (?, ?)"
        bound += [micros(query.cursor.updated_at), query.cursor.task_id]
    rows = db.execute(
        f"SELECT record FROM tasks WHERE {paged} "  # noqa: S608  the text is ours; values are bound
        "ORDER BY updated_at DESC, key DESC LIMIT ?",
        [*bound, query.page_size + 1],
    ).fetchall()
    records = [load_record(row[0]) for row in rows[: query.page_size]]
    more = len(rows) > query.page_size and records
    next_cursor = Cursor(records[-1].updated_at, records[-1].id) if more else None
    return Page(tuple(records), total, next_cursor)


def _total(db: sqlite3.Connection, query: ListQuery, filters: str, values: list[Any]) -> int:
    """How many tasks match ``query``: the kept count, unless a time filter asks for a range."""
    if query.updated_since is not None:
        counted: int = db.execute(
            f"SELECT count(*) FROM tasks WHERE {filters}",  # noqa: S608  our text; values bound
            values,
        ).fetchone()[0]
        return counted
    owner, state = query.owner, query.state.value if query.state is not None else ""
    if query.context_id:
        row = db.execute(
            "SELECT n FROM counts_by_context "
            "WHERE principal = ? AND tenant = ? AND context_id = ? AND state = ?",
            (owner.principal, owner.tenant, query.context_id, state),
        ).fetchone()
    else:
        row = db.execute(
            "SELECT n FROM counts_by_owner WHERE principal = ? AND tenant = ? AND state = ?",
            (owner.principal, owner.tenant, state),
        ).fetchone()
    return int(row[0]) if row else 0


_Counted = tuple[str, str, str, str]  # principal, tenant, context id, state


def _counted(db: sqlite3.Connection, key: str) -> _Counted | None:
    """What the counts know of the task stored under ``key`` (``None``: no such task)."""
    row = db.execute(
        "SELECT principal, tenant, context_id, state FROM tasks WHERE key = ?", (key,)
    ).fetchone()
    return (row[0], row[1], row[2], row[3]) if row else None


def _count(db: sqlite3.Connection, counted: _Counted, delta: int) -> None:
    """Move the counts a task is in by ``delta``. A count that reaches zero goes, so that the
    counts of contexts whose tasks have all expired do not pile up."""
    principal, tenant, context_id, state = counted
    db.executemany(
        "INSERT INTO counts_by_owner (principal, tenant, state, n) VALUES (?, ?, ?, ?) "
        "ON CONFLICT DO UPDATE SET n = n + excluded.n",
        [(principal, tenant, "", delta), (principal, tenant, state, delta)],
    )
    db.executemany(
        "INSERT INTO counts_by_context (principal, tenant, context_id, state, n) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n",
        [(principal, tenant, context_id, "", delta), (principal, tenant, context_id, state, delta)],
    )
    if delta < 0:
        db.execute(
            "DELETE FROM counts_by_owner WHERE principal = ? AND tenant = ? AND n = 0",
            (principal, tenant),
        )
        db.execute(
            "DELETE FROM counts_by_context "
            "WHERE principal = ? AND tenant = ? AND context_id = ? AND n = 0",
            (principal, tenant, context_id),
        )


def _expired(db: sqlite3.Connection, query: ExpiryQuery) -> Expired:
    """The oldest terminal tasks not newer than the cutoff, and the time of the one after them
    (as :meth:`MemoryTasks.read` answers)."""
    before = micros(query.before)
    rows = db.execute(
        "SELECT updated_at, record FROM tasks WHERE terminal = 1 ORDER BY updated_at, key LIMIT ?",
        (query.limit + 1,),
    ).fetchall()
    found: list[TaskRecord] = []
    for at, record in rows:
        if at > before or len(found) == query.limit:
            return Expired(tuple(found), from_micros(at))
        found.append(load_record(record))
    return Expired(tuple(found), None)


def _owed(db: sqlite3.Connection, query: OutboxQuery) -> tuple[Pending, ...]:
    after = query.after or ("", "", 0)
    rows = db.execute(
        "SELECT o.key, o.config_id, o.seq, o.attempts, t.record, e.event FROM outbox o "
        "JOIN tasks t ON t.key = o.key JOIN events e ON e.key = o.key AND e.seq = o.seq "
        "WHERE (o.key, o.config_id, o.seq) > (?, ?, ?) ORDER BY o.key, o.config_id, o.seq "
        "LIMIT ?",
        (*after, query.limit),
    )
    records: dict[str, TaskRecord] = {}
    found = []
    for key, config_id, seq, attempts, record, event in rows:
        if key not in records:
            records[key] = load_record(record)
        found.append(
            Pending(records[key], config_id, LoggedEvent(seq, load_event(event)), attempts)
        )
    return tuple(found)


def _running(db: sqlite3.Connection, query: RunningQuery) -> tuple[TaskRecord, ...]:
    rows = db.execute(
        "SELECT record FROM tasks WHERE running = 1 AND key > ? ORDER BY key LIMIT ?",
        (query.after, query.limit),
    )
    return tuple(load_record(row[0]) for row in rows)


def _log(db: sqlite3.Connection, query: LogQuery) -> tuple[LoggedEvent, ...]:
    rows = db.execute(
        "SELECT seq, event FROM events WHERE key = ? AND seq > ? ORDER BY seq LIMIT ?",
        (query.task_id, query.after, query.limit),
    )
    return tuple(LoggedEvent(seq, load_event(event)) for seq, event in rows)


#: What deleting a task removes: the task, its log, its message ids, what it still owed.
_FORGET = tuple(
    f"DELETE FROM {table} WHERE key = ?"  # noqa: S608  our table names, no input
    for table in ("tasks", "events", "message_ids", "outbox")
)


def _apply(db: sqlite3.Connection, writes: Sequence[Write]) -> bool:
    """Check then apply ``writes`` inside the caller's transaction; ``False`` on a conflict
    (the caller rolls back). Versions are checked in order, as the memory store does."""
    stored: dict[str, tuple[int, int, int]] = {}  # key -> (version, message count, seq)
    deleted: set[str] = set()
    claimed: dict[tuple[str, str, str], str] = {}
    added: dict[int, Sequence[tuple[str, str]]] = {}  # a Put's index -> the ids it adds
    for index, write in enumerate(writes):
        if isinstance(write, Sent):
            continue  # no version to check: it changes no task
        change: Put | Delete = write
        key = change.record.id if isinstance(change, Put) else change.task_id
        if key not in stored:
            row = db.execute(
                "SELECT version, messages, seq FROM tasks WHERE key = ?", (key,)
            ).fetchone()
            stored[key] = (row[0], row[1], row[2]) if row else (0, 0, 0)
        version, held, seq = stored[key]
        if version != change.expected:
            return False
        if isinstance(change, Delete):
            deleted.add(key)
            stored[key] = (0, 0, 0)
            continue
        record = change.record
        if record.version != change.expected + 1:
            raise UsageError("a Put must advance the version by exactly one")
        if len(record.messages) < held:
            raise UsageError("a Put must keep the task's message ids, adding any after")
        if change.events and change.events[0].seq != seq + 1:
            raise UsageError("logged events must continue the task's log without a gap")
        owner = record.owner
        added[index] = record.messages[held:]
        for message_id, _ in added[index]:
            holder = claimed.setdefault((owner.principal, owner.tenant, message_id), key)
            row = db.execute(
                "SELECT key FROM message_ids WHERE principal = ? AND tenant = ? AND message_id = ?",
                (owner.principal, owner.tenant, message_id),
            ).fetchone()
            if holder != key or (row is not None and row[0] != key and row[0] not in deleted):
                return False
        stored[key] = (record.version, len(record.messages), record.seq)
    for index, write in enumerate(writes):
        if isinstance(write, Delete):
            gone = _counted(db, write.task_id)
            if gone is not None:
                _count(db, gone, -1)
            for forget in _FORGET:
                db.execute(forget, (write.task_id,))
        elif isinstance(write, Sent):
            which = (write.task_id, write.config_id, write.seq)
            if write.attempts is None:
                db.execute("DELETE FROM outbox WHERE key = ? AND config_id = ? AND seq = ?", which)
            else:
                db.execute(
                    "UPDATE outbox SET attempts = ? WHERE key = ? AND config_id = ? AND seq = ?",
                    (write.attempts, *which),
                )
        else:
            _put(db, write, added[index])
    return True


def _put(db: sqlite3.Connection, write: Put, added: Sequence[tuple[str, str]]) -> None:
    stored = row(write.record)
    key = stored.key
    # Most writes (an artifact, a message) leave the counts as they were: only a new task, a
    # new state or (never, today) a new owner or context moves them.
    before = _counted(db, key)
    now: _Counted = (stored.principal, stored.tenant, stored.context_id, stored.state)
    if before != now:
        if before is not None:
            _count(db, before, -1)
        _count(db, now, +1)
    db.execute(
        "INSERT INTO tasks (key, version, principal, tenant, context_id, state, terminal, "
        "running, updated_at, seq, messages, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET version = excluded.version, "
        "principal = excluded.principal, tenant = excluded.tenant, "
        "context_id = excluded.context_id, state = excluded.state, "
        "terminal = excluded.terminal, running = excluded.running, "
        "updated_at = excluded.updated_at, seq = excluded.seq, messages = excluded.messages, "
        "record = excluded.record",
        (
            key,
            stored.version,
            stored.principal,
            stored.tenant,
            stored.context_id,
            stored.state,
            stored.terminal,
            stored.running,
            stored.updated,
            stored.seq,
            stored.messages,
            stored.record,
        ),
    )
    if write.events:
        db.executemany(
            "INSERT INTO events (key, seq, event) VALUES (?, ?, ?)",
            [(key, logged.seq, dump_event(logged.event)) for logged in write.events],
        )
    if write.outbox:
        db.executemany(
            "INSERT OR IGNORE INTO outbox (key, config_id, seq) VALUES (?, ?, ?)",
            [(key, config_id, seq) for config_id, seq in write.outbox],
        )
    db.executemany(
        "INSERT OR REPLACE INTO message_ids (principal, tenant, message_id, key) "
        "VALUES (?, ?, ?, ?)",
        [(stored.principal, stored.tenant, message_id, key) for message_id, _ in added],
    )
