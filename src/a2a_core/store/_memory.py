"""Tasks in memory: the data structure behind the default store, with no I/O at all.

Synchronous, so that it serves the asyncio and trio adapters' ``MemoryStore`` (which wraps it in
the store contract's coroutines), the deterministic driver of ``a2a_core.testing`` (which runs a
whole server with no event loop) and benchmarks of the core alone.

Records live in a dict by task id. Listings come from per-owner (and per owner-and-context)
indexes kept sorted by (status timestamp, task id), so a page costs a binary search plus the
records it returns, never a scan of every task; terminal tasks have such an index too, for the
expiry sweep. Client message ids map to their task per owner, and a commit that would give one id
to two tasks fails like a version conflict.

A task that has settled (terminal, no run under way) is kept with its event log as one compact
blob (:mod:`a2a_core.store._compact`, about a tenth of the objects' size) and decoded when read: a
store holds mostly such tasks, read now and then, listed, and finally expired. The blob's head
holds its state and version, so that a commit's version check and a listing's state filter need
no decoding. Per task, the indexes then cost more than the task: a context holding one task
keeps its key alone, not in a list.
"""

import bisect
from array import array
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from a2a_core._errors import UsageError
from a2a_core.model._records import Owner, TaskRecord
from a2a_core.model._task import StreamEvent, Task, TaskState, TaskStatus

from . import _compact
from ._contract import (
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
    Write,
)

__all__ = ["MemoryTasks"]

#: An index's key: (status time in microseconds since 1970, task id). An int rather than the
#: datetime: 32 bytes rather than 48, and for a settled task the key is the only one left.
_Key = tuple[int, str]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
#: A stored task: its record, or (settled) the blob of its record and log.
_Entry = TaskRecord | bytes


class _SortedIndex:
    """Task keys in ascending (updated_at, id) order, kept in blocks of bounded size.

    One flat sorted list would make every insert and removal a ``memmove`` of the keys after it:
    cheap at a thousand tasks, tens of microseconds at a hundred thousand. Blocks of at most
    ``2 * LOAD`` keys, found by bisecting the blocks' last keys, keep both near constant (the
    design of ``sortedcontainers.SortedList``, cut down to what a store needs).

    A block keeps its keys in two columns, the times in an ``array`` of 64-bit integers and
    the ids (the very strings the records hold) in a list: 16 bytes a key, where a list of
    ``(time, id)`` tuples costs 96 (a tuple and an int object each), which was most of what a
    settled task cost beside its blob. Keys come out as tuples, built for a page only.
    """

    __slots__ = ("_blocks", "_len", "_maxes")

    LOAD = 512

    def __init__(self) -> None:
        self._blocks: list[tuple[array[int], list[str]]] = []
        self._maxes: list[_Key] = []  # the last key of each block
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def add(self, key: _Key) -> None:
        self._len += 1
        moment, task_id = key
        if not self._blocks:
            self._blocks.append((array("q", (moment,)), [task_id]))
            self._maxes.append(key)
            return
        if key > self._maxes[-1]:
            # The newest key yet, as nearly every task's is (keys are status times): it goes
            # at the end, with no search.
            at = len(self._blocks) - 1
            times, ids = self._blocks[at]
            index = len(times)
        else:
            at = min(bisect.bisect_left(self._maxes, key), len(self._blocks) - 1)
            times, ids = self._blocks[at]
            index = _first_not_less(times, ids, key)
        times.insert(index, moment)
        ids.insert(index, task_id)
        self._maxes[at] = (times[-1], ids[-1])
        if len(times) > 2 * self.LOAD:
            half = self.LOAD
            self._blocks[at : at + 1] = [(times[:half], ids[:half]), (times[half:], ids[half:])]
            self._maxes[at : at + 1] = [(times[half - 1], ids[half - 1]), (times[-1], ids[-1])]

    def remove(self, key: _Key) -> None:
        at = bisect.bisect_left(self._maxes, key)
        if at == len(self._blocks):
            return
        times, ids = self._blocks[at]
        index = _first_not_less(times, ids, key)
        if index == len(times) or (times[index], ids[index]) != key:
            return
        del times[index], ids[index]
        self._len -= 1
        if times:
            self._maxes[at] = (times[-1], ids[-1])
        else:
            del self._blocks[at], self._maxes[at]

    def _locate(self, key: _Key) -> tuple[int, int]:
        """(block, offset) of the first key not less than ``key`` (may be one past the end)."""
        at = bisect.bisect_left(self._maxes, key)
        if at == len(self._blocks):
            return at, 0
        times, ids = self._blocks[at]
        return at, _first_not_less(times, ids, key)

    def _rank(self, key: _Key) -> int:
        """How many keys are less than ``key``."""
        at, offset = self._locate(key)
        return sum(len(times) for times, _ in self._blocks[:at]) + offset

    def newest_first(
        self, before: _Key | None, since: int | None, limit: int | None = None
    ) -> list[_Key]:
        """Keys strictly older than ``before`` and not older than ``since``, newest first (at
        most ``limit`` of them)."""
        at, offset = self._locate(before) if before is not None else (len(self._blocks), 0)
        if at == len(self._blocks):  # every key is older than ``before``
            at -= 1
            offset = len(self._blocks[at][0]) if at >= 0 else 0
        found: list[_Key] = []
        while at >= 0:
            times, ids = self._blocks[at]
            for index in range(offset - 1, -1, -1):
                moment = times[index]
                if since is not None and moment < since:
                    return found
                found.append((moment, ids[index]))
                if len(found) == limit:
                    return found
            at -= 1
            offset = len(self._blocks[at][0]) if at >= 0 else 0
        return found

    def oldest(self, before: int, limit: int) -> tuple[list[_Key], _Key | None]:
        """Up to ``limit`` oldest keys not newer than ``before``, and the key after them."""
        found: list[_Key] = []
        for times, ids in self._blocks:
            for key in zip(times, ids, strict=True):
                if key[0] > before or len(found) == limit:
                    return found, key
                found.append(key)
        return found, None

    def count_since(self, since: int | None) -> int:
        if since is None:
            return self._len
        return self._len - self._rank((since, ""))


def _first_not_less(times: "array[int]", ids: list[str], key: _Key) -> int:
    """Where ``key`` goes in a block: the times first, then the ids among equal times (which
    are in order, as the keys are)."""
    moment, task_id = key
    low = bisect.bisect_left(times, moment)
    if low == len(times) or times[low] != moment:
        return low
    # Keys rarely share a time: look at the next one before searching for the run's end. In
    # a block of a large store every probe of a search is a cache miss (about a microsecond
    # a search at a million tasks), and a second search over the rest of the block would
    # probe lines the first never touched.
    high = low + 1
    if high < len(times) and times[high] == moment:
        high = bisect.bisect_right(times, moment, high)
    return bisect.bisect_left(ids, task_id, low, high)


class _ContextKeys:
    """A context's keys (one plain sorted list) seen through the index's reading methods."""

    __slots__ = ("keys",)

    def __init__(self, keys: list[_Key]) -> None:
        self.keys = keys

    def newest_first(
        self, before: _Key | None, since: int | None, limit: int | None = None
    ) -> list[_Key]:
        stop = len(self.keys) if before is None else bisect.bisect_left(self.keys, before)
        start = 0 if since is None else bisect.bisect_left(self.keys, (since, ""))
        if limit is not None:
            start = max(start, stop - limit)
        return self.keys[start:stop][::-1]

    def count_since(self, since: int | None) -> int:
        if since is None:
            return len(self.keys)
        return len(self.keys) - bisect.bisect_left(self.keys, (since, ""))


class MemoryTasks:
    """Tasks in a dict, listings from sorted per-owner indexes: a synchronous store."""

    #: How many of the latest settled tasks stay as objects before they are compacted: those
    #: are the ones read most (a client polling for its result, the first page of a listing,
    #: a stream catching up), and the ones written again if any is. A few hundred kilobytes,
    #: however many tasks the store holds.
    YOUNG = 256

    def __init__(self) -> None:
        self._records: dict[str, _Entry] = {}
        # (owner, None) indexes all of an owner's tasks; (owner, context_id) one context's.
        self._owners: dict[Owner, _SortedIndex] = {}
        # Per owner, each context's keys in one plain sorted list, or the id of its one task
        # alone: most contexts hold a task or a few, and a list costs a fraction of an index
        # object (this is most of a stored task's bookkeeping when every task has a context of
        # its own), a lone id (the string the record holds) nothing at all.
        self._contexts: dict[Owner, dict[str, str | list[_Key]]] = {}
        self._terminal = _SortedIndex()
        # Per owner, message id -> the task holding it (a dict per owner rather than one keyed
        # by (owner, id) pairs, which would cost a tuple for every task).
        self._messages: dict[Owner, dict[str, str]] = {}
        # Event number n of a task is at index n - 1 of its log (so numbers need no storing).
        # A settled task's log is in its blob instead.
        self._logs: dict[str, list[StreamEvent] | tuple[StreamEvent, ...]] = {}
        # Per task, the notifications still owed: (config id, event number) -> failed attempts.
        self._outbox: dict[str, dict[tuple[str, int], int]] = {}
        # The latest settled tasks still kept as objects, oldest first (a dict keeps the order).
        self._young: dict[str, None] = {}
        # The blob decoded last, with its record and log.
        self._decoded: tuple[bytes | None, TaskRecord | None, Sequence[StreamEvent]] = (
            None,
            None,
            (),
        )

    def __len__(self) -> int:
        return len(self._records)

    def _get(self, key: str) -> TaskRecord | None:
        """The record stored under ``key``, decoded if it has settled."""
        entry = self._records.get(key)
        if type(entry) is bytes:
            return _compact.decode_record(entry)
        return entry  # type: ignore[return-value]

    def _stored(self, key: str) -> tuple[TaskRecord | None, Sequence[StreamEvent]]:
        """The record stored under ``key`` and its log."""
        entry = self._records.get(key)
        if type(entry) is bytes:
            # A commit asks twice (its message-id check, then its write): decode once.
            if self._decoded[0] is not entry:
                self._decoded = (entry, *_compact.decode(entry, _CREATED))
            return self._decoded[1], self._decoded[2]
        return entry, self._logs.get(key, ())  # type: ignore[return-value]

    def _version(self, key: str) -> int:
        """The version stored under ``key`` (0 for none), read without decoding a blob."""
        entry = self._records.get(key)
        if entry is None:
            return 0
        return _compact.version_of(entry) if type(entry) is bytes else entry.version  # type: ignore[union-attr]

    def read(self, reads: Reads) -> Snapshot:
        """The records ``reads`` names."""
        task = self._get(reads.task_id) if reads.task_id else None
        named = self._get(reads.named) if reads.named else None
        by_message = None
        if reads.message is not None:
            held = self._messages.get(reads.message.owner, {})
            holder = held.get(reads.message.message_id)
            by_message = self._get(holder) if holder else None
        page = self._page(reads.listing) if reads.listing is not None else None
        expired = self._expired(reads.expiry) if reads.expiry is not None else None
        log = self._log(reads.log) if reads.log is not None else ()
        running = self._running(reads.running) if reads.running is not None else ()
        outbox = self._owed(reads.outbox) if reads.outbox is not None else ()
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

    def _owed(self, query: OutboxQuery) -> tuple[Pending, ...]:
        # A sort of what is owed: asked when a server starts (and a memory store starts empty).
        owed = sorted(
            (key, config_id, seq, attempts)
            for key, pending in self._outbox.items()
            for (config_id, seq), attempts in pending.items()
            if query.after is None or (key, config_id, seq) > query.after
        )
        found = []
        for key, config_id, seq, attempts in owed[: query.limit]:
            record, log = self._stored(key)
            assert record is not None, "what a task owes goes with it"
            found.append(Pending(record, config_id, _logged(record, log, seq - 1, 1)[0], attempts))
        return tuple(found)

    def _running(self, query: RunningQuery) -> tuple[TaskRecord, ...]:
        # A scan: asked once, when a server starts (and a memory store starts empty). A settled
        # task is never running, so the blobs need no decoding.
        keys = sorted(
            k
            for k, r in self._records.items()
            if type(r) is not bytes and r.running and k > query.after  # type: ignore[union-attr]
        )
        return tuple(self._records[k] for k in keys[: query.limit])  # type: ignore[misc]

    def commit(self, writes: Sequence[Write]) -> bool:
        """Apply all ``writes`` or none: ``False`` if an expected version no longer holds (or
        a message id would be held by two tasks). Versions are checked in the batch's order,
        so a task deleted by one write may be created anew by a later one."""
        if len(writes) == 1:
            (write,) = writes
            if type(write) is Put:
                return self._put_one(write)
            if isinstance(write, Sent):
                self._sent(write)
                return True
            if self._version(_task_id(write)) != write.expected:
                return False
        else:
            versions: dict[str, int] = {}
            for write in writes:
                if isinstance(write, Sent):
                    continue
                key = _task_id(write)
                if key not in versions:
                    versions[key] = self._version(key)
                if versions[key] != write.expected:
                    return False
                versions[key] = write.record.version if isinstance(write, Put) else 0
        if not self._message_ids_free(writes):
            return False
        for write in writes:
            if isinstance(write, Sent):
                self._sent(write)
            else:
                self._apply(write)
        return True

    def _put_one(self, write: Put) -> bool:
        """``commit`` of one Put, the write nearly every decision makes: the version and the
        message ids it adds checked on the one stored entry, read once (a blob decoded once)."""
        record = write.record
        key = record.id
        old, log = self._stored(key)
        if (old.version if old is not None else 0) != write.expected:
            return False
        added = _added_messages(old, record)
        if added:
            held = self._messages.get(record.owner)
            if held is not None:
                for message_id, _ in added:
                    if held.get(message_id, key) != key:
                        return False
        self._put(write, old, log, added)
        return True

    def _sent(self, sent: Sent) -> None:
        owed = self._outbox.get(sent.task_id)
        key = (sent.config_id, sent.seq)
        if owed is None or key not in owed:
            return  # delivered already, or its task is gone
        if sent.attempts is None:
            del owed[key]
            if not owed:
                del self._outbox[sent.task_id]
        else:
            owed[key] = sent.attempts

    def _message_ids_free(self, writes: Sequence[Write]) -> bool:
        """Whether no Put claims a message id that another task (after the batch) holds.

        Only the ids a Put adds are looked at: those its stored version held are this task's
        already. So a turn of a long conversation costs the same as the first one.
        """
        deleted = {w.task_id for w in writes if isinstance(w, Delete)}
        claimed: dict[tuple[Owner, str], str] = {}
        for write in writes:
            if not isinstance(write, Put):
                continue
            record = write.record
            key = record.id
            held = self._messages.get(record.owner, {})
            old = None if key in deleted else self._stored(key)[0]
            for message_id, _ in _added_messages(old, record):
                holder = claimed.setdefault((record.owner, message_id), key)
                stored = held.get(message_id)
                if holder != key or stored not in (None, key, *deleted):
                    return False
        return True

    def clear(self) -> None:
        """Forget every task."""
        self._records.clear()
        self._owners.clear()
        self._contexts.clear()
        self._terminal = _SortedIndex()
        self._messages.clear()
        self._logs.clear()
        self._outbox.clear()
        self._young.clear()
        self._decoded = (None, None, ())

    def _apply(self, write: Put | Delete) -> None:
        old, log = self._stored(_task_id(write))
        match write:
            case Put():
                self._put(write, old, log, _added_messages(old, write.record))
            case _:  # a Delete (commit applies Sent writes apart)
                task_id = write.task_id
                if old is not None:
                    self._unindex(old)
                    self._release(old)
                self._records.pop(task_id, None)
                self._logs.pop(task_id, None)
                self._outbox.pop(task_id, None)
                self._young.pop(task_id, None)

    def _put(
        self,
        write: Put,
        old: TaskRecord | None,
        log: Sequence[StreamEvent],
        added_messages: Sequence[tuple[str, str]],
    ) -> None:
        """Store ``write``, checked already, over ``old`` and its ``log``."""
        record, events = write.record, write.events
        key, terminal = record.id, record.state.terminal
        if record.version != write.expected + 1:
            raise UsageError("a Put must advance the version by exactly one")
        if events and events[0].seq != len(log) + 1:
            raise UsageError("logged events must continue the task's log without a gap")
        added = [_CREATED if _is_creation(e, record) else e.event for e in events]
        if not terminal:
            # Events may still come (a task waiting for input gets more with its next
            # turn): a list grows in amortized constant time.
            if isinstance(log, list):
                log.extend(added)
            else:
                self._logs[key] = [*log, *added]
        else:
            # Finished, a tuple holds exactly its events, where a list would keep room
            # for more that a stored task would carry for as long as it is kept.
            final = log if isinstance(log, tuple) and not added else (*log, *added)
            self._logs[key] = final
        self._records[key] = record
        self._young.pop(key, None)
        if terminal and not record.running:
            self._young[key] = None
            if len(self._young) > self.YOUNG:
                self._compact(next(iter(self._young)))
        if write.outbox:
            owed = self._outbox.setdefault(key, {})
            for config_id, seq in write.outbox:
                owed.setdefault((config_id, seq), 0)
        if old is None or _index_key(old) != _index_key(record):
            if old is not None:
                self._unindex(old)
            self._index(record)
        self._hold(record, added_messages)

    def _compact(self, key: str) -> None:
        """Keep the settled task under ``key`` as a blob from now on."""
        del self._young[key]
        record = self._records[key]
        assert isinstance(record, TaskRecord), "a young task is kept as objects"
        blob = _compact.encode(record, self._logs[key], _CREATED)
        if blob is not None:  # else a value it holds has no compact form: kept as it is
            self._records[key] = blob
            del self._logs[key]

    def _index(self, record: TaskRecord) -> None:
        key = (_micros(record.updated_at), record.id)
        owner = record.owner
        self._owners.setdefault(owner, _SortedIndex()).add(key)
        contexts = self._contexts.setdefault(owner, {})
        keys = contexts.get(record.task.context_id)
        if keys is None:
            contexts[record.task.context_id] = record.id  # alone: most contexts stay so
        elif isinstance(keys, str):
            contexts[record.task.context_id] = sorted((self._key(keys), key))
        else:
            bisect.insort(keys, key)
        if record.state.terminal:
            self._terminal.add(key)

    def _hold(self, record: TaskRecord, messages: Sequence[tuple[str, str]]) -> None:
        """Index ``messages`` (ids ``record`` claims) as the task's."""
        if messages:
            held = self._messages.setdefault(record.owner, {})
            for message_id, _ in messages:
                held[message_id] = record.id

    def _release(self, record: TaskRecord) -> None:
        """Forget the message ids of ``record``, which is gone."""
        held = self._messages.get(record.owner)
        if held is None:
            return
        for message_id, _ in record.messages:
            if held.get(message_id) == record.id:
                del held[message_id]
        if not held:
            del self._messages[record.owner]

    def _unindex(self, record: TaskRecord) -> None:
        key = (_micros(record.updated_at), record.id)
        owner, context_id = record.owner, record.task.context_id
        index = self._owners[owner]
        index.remove(key)
        if not index:
            del self._owners[owner]
        contexts = self._contexts[owner]
        keys = contexts[context_id]
        if isinstance(keys, list):
            del keys[bisect.bisect_left(keys, key)]
            if len(keys) == 1:
                contexts[context_id] = keys[0][1]
        else:
            del contexts[context_id]
            if not contexts:
                del self._contexts[owner]
        if record.state.terminal:
            self._terminal.remove(key)

    def _log(self, query: LogQuery) -> tuple[LoggedEvent, ...]:
        record, log = self._stored(query.task_id)
        if record is None:
            return ()  # a task's log goes with it
        return _logged(record, log, query.after, query.limit)

    def _expired(self, query: ExpiryQuery) -> Expired:
        keys, after = self._terminal.oldest(_micros(query.before), query.limit)
        records = tuple(self._record(task_id) for _, task_id in keys)
        return Expired(records, self._record(after[1]).updated_at if after else None)

    def _page(self, query: ListQuery) -> Page:
        index: _SortedIndex | _ContextKeys | None = self._owners.get(query.owner)
        if query.context_id:
            keys = self._contexts.get(query.owner, {}).get(query.context_id)
            if keys is not None:
                index = _ContextKeys(keys if isinstance(keys, list) else [self._key(keys)])
            else:
                index = None
        if index is None:
            return Page((), 0, None)
        cursor = (_micros(query.cursor.updated_at), query.cursor.task_id) if query.cursor else None
        since = _micros(query.updated_since) if query.updated_since is not None else None
        if query.state is None:
            # Only the time filter applies: the index answers the count directly.
            total = index.count_since(since)
            keys = index.newest_first(cursor, since, query.page_size + 1)
            records = [self._record(task_id) for _, task_id in keys]
        else:
            # The state is read from a blob's head: only the page's records are decoded.
            matching = [
                key for key in index.newest_first(None, since) if self._state(key[1]) is query.state
            ]
            total = len(matching)
            after = [key for key in matching if cursor is None or key < cursor]
            records = [self._record(task_id) for _, task_id in after[: query.page_size + 1]]
        page = records[: query.page_size]
        more = len(records) > query.page_size
        last = page[-1] if page else None
        next_cursor = Cursor(last.updated_at, last.id) if more and last else None
        return Page(tuple(page), total, next_cursor)

    def _record(self, key: str) -> TaskRecord:
        """The record an index holds the key of."""
        record = self._get(key)
        assert record is not None, "an index holds only stored tasks"
        return record

    def _key(self, task_id: str) -> _Key:
        """The index key of the task stored under ``task_id``."""
        return (_micros(self._record(task_id).updated_at), task_id)

    def _state(self, key: str) -> TaskState:
        """The state of the task stored under ``key`` (indexed), read without decoding a blob."""
        entry = self._records[key]
        return _compact.state_of(entry) if type(entry) is bytes else entry.state  # type: ignore[union-attr]


def _logged(
    record: TaskRecord, log: Sequence[StreamEvent], after: int, limit: int
) -> tuple[LoggedEvent, ...]:
    """Up to ``limit`` events of ``record``'s ``log`` after number ``after``."""
    return tuple(
        LoggedEvent(after + n, _creation(record) if event is _CREATED else event)
        for n, event in enumerate(log[after : after + limit], 1)
    )


#: Stands in a log for its first event, the task as it was created: that can be rebuilt from
#: the record (its id, context, creation time and first message never change), and keeping the
#: copy would cost a task, a status and a tuple for every task ever stored.
_CREATED: Any = object()


def _creation(record: TaskRecord) -> Task:
    """The task as it was created: submitted, its first message the whole history."""
    task = record.task
    status = TaskStatus(TaskState.SUBMITTED, timestamp=record.created_at)
    return Task(task.id, status, context_id=task.context_id, history=task.history[:1])


def _is_creation(logged: LoggedEvent, record: TaskRecord) -> bool:
    return logged.seq == 1 and isinstance(logged.event, Task) and logged.event == _creation(record)


def _micros(moment: datetime) -> int:
    """``moment`` in microseconds since 1970 (a time without a zone taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MICRO


def _index_key(record: TaskRecord) -> tuple[object, ...]:
    """Everything the sorted indexes depend on: a write that keeps it needs no re-indexing (most
    agent output, such as an artifact, changes none of it). Message ids are indexed apart, as
    they are added (:func:`_added_messages`)."""
    return (record.updated_at, record.owner, record.task.context_id, record.state.terminal)


def _added_messages(old: TaskRecord | None, record: TaskRecord) -> Sequence[tuple[str, str]]:
    """The message ids ``record`` claims that its stored version ``old`` did not.

    A task's messages only grow (the store contract, ``Put``): the new version holds the old
    one's and then any new ones, so the new ones are those past the old count. Checked as far
    as constant time allows (the owner, the count, the last id the old version held), so that
    a caller that breaks the rule mostly hears of it.
    """
    if old is None:
        return record.messages
    before = len(old.messages)
    if (
        record.owner != old.owner
        or len(record.messages) < before
        or (before and record.messages[before - 1] != old.messages[-1])
    ):
        raise UsageError("a Put must keep the task's owner and message ids, adding any after them")
    return record.messages[before:]


def _task_id(write: Put | Delete) -> str:
    return write.record.id if isinstance(write, Put) else write.task_id
