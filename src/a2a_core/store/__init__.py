"""What a store writer needs: the store contract and the in-memory store.

The core never calls a store. It says what to read (:class:`Reads`) and what to write
(:class:`Put`, :class:`Delete`, each guarded by the version it was decided on); a store returns
a :class:`Snapshot` and applies all writes or none. :class:`SyncStore` is the contract a
transport calls directly, :class:`AsyncStore` the one it awaits; both decide nothing, so every
backend answers alike. A store that cannot be used raises :class:`StoreUnavailable` (for now)
or :class:`StoreMisconfigured` (until it is set up otherwise); what a store offers beyond the
contract is declared by :class:`InlineStore`, :class:`PingableStore`, :class:`ClosableStore`
and :class:`SharedStore`, which a transport checks with ``isinstance``.
"""

from a2a_core.model._records import Owner, TaskRecord, message_fingerprint

from ._contract import (
    AsyncStore,
    ClosableStore,
    Cursor,
    Delete,
    EventBus,
    Expired,
    ExpiryQuery,
    InlineStore,
    ListQuery,
    LoggedEvent,
    LogQuery,
    MessageKey,
    OutboxQuery,
    Page,
    Pending,
    PingableStore,
    Put,
    Reads,
    RunningQuery,
    Sent,
    SharedStore,
    Snapshot,
    StoreMisconfigured,
    StoreUnavailable,
    SyncStore,
    Write,
)
from ._memory import MemoryTasks
from ._rows import RECORD_FORMAT, dump_event, dump_record, load_event, load_record

__all__ = [
    "RECORD_FORMAT",
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
    "MemoryTasks",
    "MessageKey",
    "OutboxQuery",
    "Owner",
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
    "TaskRecord",
    "Write",
    "dump_event",
    "dump_record",
    "load_event",
    "load_record",
    "message_fingerprint",
]
