"""The core's side of the store contract: what it asks to read, and what it asks to write.

The core never calls a store. It says which records an input touches (:class:`Reads`), the
adapter fetches them (:class:`Snapshot`), and the decision lists the writes (:class:`Put`,
:class:`Delete`), each guarded by the version the decision was based on. The adapter commits them
all or none; on a conflict it reads again and asks again. That is the whole concurrency story,
and it is the same for one process and for many replicas over Redis.
"""

import base64
import binascii
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import attrs

from a2a_core.model._records import Owner, TaskRecord
from a2a_core.model._task import StreamEvent, TaskState
from a2a_core.wire._strict import format_timestamp, parse_timestamp

__all__ = [
    "AsyncStore",
    "ClosableStore",
    "Cursor",
    "Delete",
    "EventBus",
    "Expired",
    "ExpiryQuery",
    "InlineStore",
    "ListQuery",
    "LogQuery",
    "LoggedEvent",
    "MessageKey",
    "OutboxQuery",
    "Page",
    "Pending",
    "PingableStore",
    "Put",
    "Reads",
    "RunningQuery",
    "Sent",
    "SharedStore",
    "Snapshot",
    "StoreMisconfigured",
    "StoreUnavailable",
    "SyncStore",
    "Write",
]


@attrs.frozen(order=True)
class Cursor:
    """A position in the newest-first listing: strictly after this (timestamp, id)."""

    updated_at: datetime
    task_id: str

    def encode(self) -> str:
        """The opaque ``pageToken`` a client passes back."""
        raw = f"{format_timestamp_us(self.updated_at)}|{self.task_id}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> "Cursor":
        """Parse a ``pageToken``; raises ``ValueError`` if it is not one of ours."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
            stamp, task_id = raw.split("|", 1)
            return cls(parse_timestamp(stamp), task_id)
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise ValueError("not a page token issued by this server") from None


def format_timestamp_us(value: datetime) -> str:
    """A timestamp with full microseconds (a cursor must not lose precision)."""
    return format_timestamp(value)[:-1] + f"{value.microsecond % 1000:03d}Z"


@attrs.frozen
class LoggedEvent:
    """Event number ``seq`` of a task's event log (numbers start at 1 and have no gaps)."""

    seq: int
    event: StreamEvent


@attrs.frozen
class LogQuery:
    """A task's logged events after number ``after`` (at most ``limit`` of them)."""

    task_id: str
    after: int
    limit: int = 100


@attrs.frozen
class ListQuery:
    """One page of an owner's tasks, newest status first, after ``cursor``."""

    owner: Owner
    page_size: int
    context_id: str = ""
    state: TaskState | None = None
    updated_since: datetime | None = None
    cursor: Cursor | None = None

    def matches(self, record: TaskRecord) -> bool:
        """Whether ``record`` passes the filters (the cursor aside). Stores may index instead."""
        return (
            record.owner == self.owner
            and (not self.context_id or record.task.context_id == self.context_id)
            and (self.state is None or record.state is self.state)
            and (self.updated_since is None or record.updated_at >= self.updated_since)
        )


@attrs.frozen
class MessageKey:
    """A client message id, which is unique per owner."""

    owner: Owner
    message_id: str


@attrs.frozen
class ExpiryQuery:
    """Terminal tasks whose status is not newer than ``before`` (at most ``limit``, oldest first).

    Inclusive, like the reducer's TTL check: a task whose TTL ends exactly now has expired.
    """

    before: datetime
    limit: int


@attrs.frozen
class RunningQuery:
    """Tasks whose agent run still counts (``TaskRecord.running``), by store key after
    ``after``, at most ``limit`` of them: what a server that restarts must settle, since no run
    of the process before it survived."""

    limit: int
    after: str = ""


@attrs.frozen
class OutboxQuery:
    """Push notifications not yet delivered, in order of (store key, config id, event number),
    after ``after`` in that order, at most ``limit`` of them: what a server that restarts
    delivers first, since the process before it may have died with them queued."""

    limit: int
    after: tuple[str, str, int] | None = None


@attrs.frozen
class Pending:
    """One undelivered notification: event ``event`` of ``record``'s task, for its push config
    ``config_id``, after ``attempts`` failed attempts."""

    record: TaskRecord
    config_id: str
    event: LoggedEvent
    attempts: int = 0


@attrs.frozen
class Reads:
    """What a decision needs from the store."""

    task_id: str = ""
    #: The record under this key too (``named_key`` of the caller and ``task_id``): a task id
    #: a client reads may be one it chose itself, which is kept under a key of its own.
    named: str = ""
    #: The task that holds this owner's message id, if any (for idempotent re-sends).
    message: MessageKey | None = None
    listing: ListQuery | None = None
    expiry: ExpiryQuery | None = None
    log: LogQuery | None = None
    running: RunningQuery | None = None
    outbox: OutboxQuery | None = None


@attrs.frozen
class Page:
    """A page of records, the total number matching the query, and where the next page starts."""

    records: tuple[TaskRecord, ...]
    total: int
    next: Cursor | None


@attrs.frozen
class Expired:
    """The oldest terminal tasks past the cutoff, and the status time of the next one after them.

    ``next_at`` is the ``updated_at`` of the oldest terminal task *not* in ``records`` (whether
    or not it is past the cutoff), so the core can say when the next one expires.
    """

    records: tuple[TaskRecord, ...]
    next_at: datetime | None


@attrs.frozen
class Snapshot:
    """What the store returned for :class:`Reads` (``None`` where nothing was found)."""

    task: TaskRecord | None = None
    named: TaskRecord | None = None
    by_message: TaskRecord | None = None
    page: Page | None = None
    expired: Expired | None = None
    log: tuple[LoggedEvent, ...] = ()
    #: For :class:`RunningQuery`: those tasks, in the order of their keys.
    running: tuple[TaskRecord, ...] = ()
    #: For :class:`OutboxQuery`: those notifications, in its order.
    outbox: tuple[Pending, ...] = ()


@attrs.frozen
class Put:
    """Store ``record`` (under ``record.id``), provided the stored version is still ``expected``
    (0: must be new). A batch is checked in order, so a Delete earlier in it frees the key.

    The commit must also fail if one of ``record.messages``' ids is already held by another
    task of the same owner: that uniqueness is what stops two concurrent sends of one message
    from starting two runs. A task's messages only grow: ``record.messages`` holds the stored
    version's and then any new ones, so a store need look only at those past the stored count
    (and a long conversation's next turn costs it no more than the first). ``events`` are
    appended to the task's log in the same commit, and ``outbox`` (push config id, event
    number) pairs recorded as notifications to deliver, so that a notification is owed exactly
    when its event is stored: a crash between the two cannot lose one.
    """

    record: TaskRecord
    expected: int
    events: tuple[LoggedEvent, ...] = ()
    outbox: tuple[tuple[str, int], ...] = ()


@attrs.frozen
class Delete:
    """Remove the task (and its message ids), provided its stored version is still ``expected``."""

    task_id: str
    expected: int


@attrs.frozen
class Sent:
    """A notification's fate: delivered or given up on (``attempts`` is ``None``: it leaves the
    outbox), or failed ``attempts`` times so far (it stays, to be tried again, after a restart
    too). Checked against no version: it changes no task, and a missing one is no error."""

    task_id: str
    config_id: str
    seq: int
    attempts: int | None = None


Write = Put | Delete | Sent


# --- how a store fails -------------------------------------------------------------------------


class StoreUnavailable(Exception):
    """The store cannot be reached or used for now (the message says why, and where): a Redis
    that is down, busy, loading or read-only, a SQLite file another process keeps locked, a
    full disk. Nothing of a commit that raises it was written. A transport reports the read or
    commit failed as unavailable, so that clients are told to retry and agents' outputs are
    held until the store answers again."""


class StoreMisconfigured(Exception):
    """The store refuses what the server asks of it as it is set up (a Redis user without a
    permission the store needs): the message names what was refused and what is missing.
    Nothing of a commit that raises it was written. Not an outage: it lasts until an operator
    changes the store's configuration, so a transport reports it as a failure, not as a
    reason to retry."""


# --- the store itself, as the two kinds of transport see it -------------------------------------


@runtime_checkable
class SyncStore(Protocol):
    """A store a transport calls synchronously, such as :class:`~a2a_core.store.MemoryTasks`.

    Handing one to :class:`~a2a_core.transport.Server` lets the machine perform its own reads
    and commits, so that a transport that needs no I/O for storage never sees a ``Read`` or a
    ``Commit`` action.
    """

    def read(self, reads: Reads) -> Snapshot:
        """The records ``reads`` names: a task by id, and/or a page of a listing or a log."""
        ...

    def commit(self, writes: Sequence[Write]) -> bool:
        """Apply all ``writes`` or none: ``False`` if any expected version no longer holds."""
        ...


@runtime_checkable
class AsyncStore(Protocol):
    """A store a transport awaits (SQLite in a worker thread, Redis over the network).

    The methods return awaitables rather than being ``async def`` so that the core stays free of
    any event loop; an ``async def`` implementation satisfies the protocol. The transport performs
    the machine's ``Read`` and ``Commit`` actions on it and reports back with ``read_done`` and
    ``commit_done``. A store decides nothing: filtering, paging and ownership come from the
    :class:`Reads` the core built, so that every backend answers alike (the conformance suite in
    ``tests/a2a_adapters/stores`` holds each one to that).

    A store may offer more, each declared by a protocol of its own that a transport checks
    with ``isinstance``: :class:`InlineStore` (calls that never wait), :class:`PingableStore`
    (a readiness probe), :class:`ClosableStore` (closing with no loop) and
    :class:`SharedStore` (replicas sharing it: an event bus, leases, notifications' order).
    """

    def read(self, reads: Reads) -> Awaitable[Snapshot]:
        """The records ``reads`` names: a task by id, and/or a page of a listing or a log."""
        ...

    def commit(self, writes: Sequence[Write]) -> Awaitable[bool]:
        """Apply all ``writes`` or none: ``False`` if any expected version no longer holds."""
        ...

    def aclose(self) -> Awaitable[None]:
        """Release the store's resources."""
        ...


# --- what a store may offer beyond the contract -------------------------------------------------


@runtime_checkable
class InlineStore(Protocol):
    """A store whose calls never wait (the memory store): it offers a :class:`SyncStore` as
    ``inline``, which a transport hands to the machine to call inline, asking for no ``Read``
    or ``Commit`` at all. ``None`` where it cannot (a subclass that awaits something)."""

    @property
    def inline(self) -> SyncStore | None: ...


@runtime_checkable
class PingableStore(Protocol):
    """A store with something to reach (a file, a server): ``ping`` answers a readiness probe,
    raising :class:`StoreUnavailable` (or :class:`StoreMisconfigured`) saying why it cannot."""

    def ping(self) -> Awaitable[None]: ...


@runtime_checkable
class ClosableStore(Protocol):
    """A store that can be closed with no event loop running (``close``: what ``aclose`` does,
    once the loops it served have ended)."""

    def close(self) -> None: ...


class EventBus(Protocol):
    """How a store shared by replicas tells a transport of changes made elsewhere. The
    transport runs it for as long as it serves (``run``, in its task group: it reports started
    through ``task_status``, as anyio and trio start a task) and says which tasks to ring for
    (``watch`` and ``unwatch``, as the machine asks). ``ring(task_key, events)`` is called for
    each change: the events it logged, or none when the bus could not tell (then the task's
    log is read)."""

    def watch(self, task_key: str) -> None: ...

    def unwatch(self, task_key: str) -> None: ...

    def run(
        self,
        ring: Callable[[str, tuple[LoggedEvent, ...]], Awaitable[None]],
        *,
        task_status: Any = ...,
    ) -> Coroutine[Any, Any, None]: ...


@runtime_checkable
class SharedStore(Protocol):
    """A store several server replicas share (Redis): its ``bus`` rings for their changes,
    ``lease`` is how long, in seconds, a replica's runs stay its own without renewing, and
    ``owed_elsewhere`` says whether another replica still owes a notification of an earlier
    event of the task to the same push config (the sender waits for it: one webhook's
    notifications keep the order of their events, whichever replica committed each;
    ``mine_after``: this replica's own after that event count too)."""

    @property
    def bus(self) -> EventBus: ...

    @property
    def lease(self) -> float: ...

    def owed_elsewhere(
        self, task_key: str, config_id: str, seq: int, *, mine_after: int | None = None
    ) -> Awaitable[bool]: ...
