"""The in-memory store: the default, for one process.

Records live in a dict by task id. Listings come from per-owner (and per owner-and-context)
indexes kept sorted by (status timestamp, task id), so a page costs a binary search plus the
records it returns, never a scan of every task; terminal tasks have such an index too, for the
expiry sweep. Client message ids map to their task per owner, and a commit that would give one id
to two tasks fails like a version conflict. The store is synchronous underneath; its methods are
``async`` only to fit the contract, and none of them awaits, so a commit is atomic with respect
to the event loop.
"""

import bisect
from collections.abc import Sequence
from datetime import datetime

from a2a_core import (
    Cursor,
    Delete,
    Expired,
    ExpiryQuery,
    ListQuery,
    LoggedEvent,
    LogQuery,
    Owner,
    Page,
    Put,
    Reads,
    Snapshot,
    TaskRecord,
    UsageError,
    Write,
)

__all__ = ["MemoryStore"]

_Key = tuple[datetime, str]
#: Sorts after every task id (ids are text), to make a range end inclusive.
_MAX_ID = "\U0010ffff"


class _SortedIndex:
    """Task keys in ascending (updated_at, id) order."""

    __slots__ = ("keys",)

    def __init__(self) -> None:
        self.keys: list[_Key] = []

    def add(self, key: _Key) -> None:
        bisect.insort(self.keys, key)

    def remove(self, key: _Key) -> None:
        index = bisect.bisect_left(self.keys, key)
        if index < len(self.keys) and self.keys[index] == key:
            del self.keys[index]

    def newest_first(self, before: _Key | None, since: datetime | None) -> list[_Key]:
        """Keys strictly older than ``before`` and not older than ``since``, newest first."""
        stop = len(self.keys) if before is None else bisect.bisect_left(self.keys, before)
        start = 0 if since is None else bisect.bisect_left(self.keys, (since, ""))
        return self.keys[start:stop][::-1]

    def oldest(self, before: datetime, limit: int) -> tuple[list[_Key], _Key | None]:
        """Up to ``limit`` oldest keys not newer than ``before``, and the key after them."""
        stop = min(bisect.bisect_right(self.keys, (before, _MAX_ID)), limit)
        after = self.keys[stop] if stop < len(self.keys) else None
        return self.keys[:stop], after

    def count_since(self, since: datetime | None) -> int:
        if since is None:
            return len(self.keys)
        return len(self.keys) - bisect.bisect_left(self.keys, (since, ""))


class MemoryStore:
    """Tasks in a dict, listings from sorted per-owner indexes."""

    def __init__(self) -> None:
        self._records: dict[str, TaskRecord] = {}
        # (owner, None) indexes all of an owner's tasks; (owner, context_id) one context's.
        self._indexes: dict[tuple[Owner, str | None], _SortedIndex] = {}
        self._terminal = _SortedIndex()
        self._messages: dict[tuple[Owner, str], str] = {}
        # Event number n of a task is at index n - 1 of its log.
        self._logs: dict[str, list[LoggedEvent]] = {}

    def __len__(self) -> int:
        return len(self._records)

    async def read(self, reads: Reads) -> Snapshot:
        task = self._records.get(reads.task_id) if reads.task_id else None
        by_message = None
        if reads.message is not None:
            holder = self._messages.get((reads.message.owner, reads.message.message_id))
            by_message = self._records.get(holder) if holder else None
        page = self._page(reads.listing) if reads.listing is not None else None
        expired = self._expired(reads.expiry) if reads.expiry is not None else None
        log = self._log(reads.log) if reads.log is not None else ()
        return Snapshot(task=task, by_message=by_message, page=page, expired=expired, log=log)

    async def commit(self, writes: Sequence[Write]) -> bool:
        for write in writes:
            current = self._records.get(_task_id(write))
            if (current.version if current else 0) != write.expected:
                return False
        if not self._message_ids_free(writes):
            return False
        for write in writes:
            self._apply(write)
        return True

    def _message_ids_free(self, writes: Sequence[Write]) -> bool:
        """Whether no Put claims a message id that another task (after the batch) holds."""
        deleted = {w.task_id for w in writes if isinstance(w, Delete)}
        claimed: dict[tuple[Owner, str], str] = {}
        for write in writes:
            if not isinstance(write, Put):
                continue
            record = write.record
            for message_id, _ in record.messages:
                key = (record.owner, message_id)
                holder = claimed.setdefault(key, record.id)
                stored = self._messages.get(key)
                if holder != record.id or stored not in (None, record.id, *deleted):
                    return False
        return True

    async def aclose(self) -> None:
        self._records.clear()
        self._indexes.clear()
        self._terminal = _SortedIndex()
        self._messages.clear()
        self._logs.clear()

    def _apply(self, write: Write) -> None:
        old = self._records.get(_task_id(write))
        match write:
            case Put(record=record, events=events):
                if record.version != write.expected + 1:
                    raise UsageError("a Put must advance the version by exactly one")
                log = self._logs.setdefault(record.id, [])
                if events and events[0].seq != len(log) + 1:
                    raise UsageError("logged events must continue the task's log without a gap")
                log.extend(events)
                self._records[record.id] = record
                if old is None or _index_key(old) != _index_key(record):
                    if old is not None:
                        self._unindex(old)
                    self._index(record)
            case Delete(task_id=task_id):
                if old is not None:
                    self._unindex(old)
                self._records.pop(task_id, None)
                self._logs.pop(task_id, None)

    def _index(self, record: TaskRecord) -> None:
        key = (record.updated_at, record.id)
        for index_key in ((record.owner, None), (record.owner, record.task.context_id)):
            self._indexes.setdefault(index_key, _SortedIndex()).add(key)
        if record.state.terminal:
            self._terminal.add(key)
        for message_id, _ in record.messages:
            self._messages[record.owner, message_id] = record.id

    def _unindex(self, record: TaskRecord) -> None:
        key = (record.updated_at, record.id)
        for index_key in ((record.owner, None), (record.owner, record.task.context_id)):
            index = self._indexes[index_key]
            index.remove(key)
            if not index.keys:
                del self._indexes[index_key]
        if record.state.terminal:
            self._terminal.remove(key)
        for message_id, _ in record.messages:
            if self._messages.get((record.owner, message_id)) == record.id:
                del self._messages[record.owner, message_id]

    def _log(self, query: LogQuery) -> tuple[LoggedEvent, ...]:
        log = self._logs.get(query.task_id, [])
        return tuple(log[query.after : query.after + query.limit])

    def _expired(self, query: ExpiryQuery) -> Expired:
        keys, after = self._terminal.oldest(query.before, query.limit)
        records = tuple(self._records[task_id] for _, task_id in keys)
        return Expired(records, after[0] if after else None)

    def _page(self, query: ListQuery) -> Page:
        index = self._indexes.get((query.owner, query.context_id or None))
        if index is None:
            return Page((), 0, None)
        cursor = (query.cursor.updated_at, query.cursor.task_id) if query.cursor else None
        if query.state is None:
            # Only the time filter applies: the index answers the count directly.
            total = index.count_since(query.updated_since)
            keys = index.newest_first(cursor, query.updated_since)[: query.page_size + 1]
            records = [self._records[task_id] for _, task_id in keys]
        else:
            matching = [
                self._records[task_id]
                for _, task_id in index.newest_first(None, query.updated_since)
                if self._records[task_id].state is query.state
            ]
            total = len(matching)
            records = [r for r in matching if cursor is None or (r.updated_at, r.id) < cursor]
        page = records[: query.page_size]
        more = len(records) > query.page_size
        last = page[-1] if page else None
        next_cursor = Cursor(last.updated_at, last.id) if more and last else None
        return Page(tuple(page), total, next_cursor)


def _index_key(record: TaskRecord) -> tuple[object, ...]:
    """Everything the indexes depend on: a write that keeps it needs no re-indexing (most
    agent output, such as an artifact, changes none of it)."""
    return (
        record.updated_at,
        record.owner,
        record.task.context_id,
        record.state.terminal,
        record.messages,
    )


def _task_id(write: Write) -> str:
    return write.record.id if isinstance(write, Put) else write.task_id
