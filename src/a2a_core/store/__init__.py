"""What a store writer needs: the store contract and the in-memory store.

The core never calls a store. It says what to read (:class:`Reads`) and what to write
(:class:`Put`, :class:`Delete`, each guarded by the version it was decided on); a store returns
a :class:`Snapshot` and applies all writes or none. :class:`SyncStore` is the contract a
transport calls directly, :class:`AsyncStore` the one it awaits; both decide nothing, so every
backend answers alike.
"""

from a2a_core.model._records import Owner, TaskRecord, message_fingerprint

from ._contract import (
    AsyncStore,
    Cursor,
    Delete,
    Expired,
    ExpiryQuery,
    ListQuery,
    LoggedEvent,
    LogQuery,
    MessageKey,
    OutboxQuery,
    Page,
    Pending,
    Put,
    Reads,
    RunningQuery,
    Sent,
    Snapshot,
    SyncStore,
    Write,
)
from ._memory import MemoryTasks
from ._rows import RECORD_FORMAT, dump_event, dump_record, load_event, load_record

__all__ = [
    "RECORD_FORMAT",
    "AsyncStore",
    "Cursor",
    "Delete",
    "Expired",
    "ExpiryQuery",
    "ListQuery",
    "LogQuery",
    "LoggedEvent",
    "MemoryTasks",
    "MessageKey",
    "OutboxQuery",
    "Owner",
    "Page",
    "Pending",
    "Put",
    "Reads",
    "RunningQuery",
    "Sent",
    "Snapshot",
    "SyncStore",
    "TaskRecord",
    "Write",
    "dump_event",
    "dump_record",
    "load_event",
    "load_record",
    "message_fingerprint",
]
