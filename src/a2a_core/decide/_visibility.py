"""Which tasks a caller can see: their own, and only while they have not expired.

Another caller's task answers exactly as a missing one does (-32001), so ids cannot be probed;
a terminal task past the TTL is gone at once for every read, before the sweep removes it. The
sweep itself (:func:`sweep`) and the alarm that schedules it (:func:`with_expiry_alarm`) are here
too: expiry is one rule, applied in one place.
"""

from datetime import datetime

import attrs

from a2a_core._config import CoreConfig
from a2a_core.model._records import Owner, TaskRecord, named_key
from a2a_core.store._contract import Delete, Expired, MessageKey, Page, Put, Reads, Snapshot

from ._effects import Decision
from ._validation import bad_param, not_found

__all__ = ["live", "mine", "owned", "sweep", "task_reads", "unexpired", "with_expiry_alarm"]


def task_reads(owner: Owner, task_id: str, message: MessageKey | None = None) -> Reads:
    """The reads that find ``owner``'s task with this id: kept under the id, or under its
    :func:`named_key` if its client chose the id (and the task holding ``message``, if
    given)."""
    return Reads(
        task_id=task_id, named=named_key(owner, task_id) if task_id else "", message=message
    )


def mine(snapshot: Snapshot, task_id: str, owner: Owner) -> TaskRecord | None:
    """``owner``'s task with this (wire) id in ``snapshot``, if there is one. The id must be
    the task's own: a key asked for as an id finds nothing."""
    for record in (snapshot.named, snapshot.task):
        if record is not None and record.owner == owner and record.task.id == task_id:
            return record
    return None


def live(config: CoreConfig, record: TaskRecord | None, now: datetime) -> TaskRecord | None:
    """``record``, unless it is a terminal task older than the TTL (then it is gone)."""
    ttl = config.task_ttl
    if record is None or ttl is None or not record.state.terminal:
        return record
    return record if record.updated_at + ttl > now else None  # expired at the TTL itself


def owned(
    config: CoreConfig, snapshot: Snapshot, task_id: str, owner: Owner, now: datetime
) -> TaskRecord:
    """``owner``'s task with this id; for anyone else exactly what a missing task gets."""
    if not task_id:
        raise bad_param("params.id", "must not be empty")
    record = live(config, mine(snapshot, task_id, owner), now)
    if record is None:
        raise not_found(task_id)
    return record


def unexpired(config: CoreConfig, page: Page, now: datetime) -> Page:
    kept = tuple(r for r in page.records if live(config, r, now) is not None)
    if len(kept) == len(page.records):
        return page
    return Page(kept, max(page.total - (len(page.records) - len(kept)), len(kept)), page.next)


def sweep(config: CoreConfig, now: datetime, expired: Expired | None) -> Decision:
    """A tick: delete the expired tasks the store found, and say when to look again."""
    ttl = config.task_ttl
    if ttl is None or expired is None:
        return Decision()
    gone = tuple(r for r in expired.records if live(config, r, now) is None)
    if len(expired.records) >= config.sweep_batch:
        wake_at: datetime | None = now  # a full batch: more may be waiting
    else:
        wake_at = expired.next_at + ttl if expired.next_at is not None else None
    return Decision(writes=tuple(Delete(r.id, r.version) for r in gone), wake_at=wake_at)


def with_expiry_alarm(config: CoreConfig, decision: Decision) -> Decision:
    """Ask for a tick when a task this decision finished will have expired."""
    ttl = config.task_ttl
    if ttl is None:
        return decision
    ends = [
        w.record.updated_at + ttl
        for w in decision.writes
        if isinstance(w, Put) and w.record.state.terminal
    ]
    if not ends:
        return decision
    return attrs.evolve(decision, wake_at=min(ends))
