"""What the durable stores share of a stored task: times as integers, and the values each keeps
beside a record to index it by.

A record is kept in its stored form (:func:`a2a_core.store.dump_record`); beside it a store
keeps what its listings, expiry and recovery look up without parsing it (:class:`Row`): the
owner, context, state, whether it is terminal or its run still counts, its status time in
microseconds since the epoch (:func:`micros`, and back with :func:`from_micros`: an integer
sorts as the time does, in SQL and in a Redis sorted set alike), its event count and how many
message ids it holds. SQLite writes them as columns, Redis as fields of the task's hash.
"""

from datetime import UTC, datetime, timedelta

import attrs

from a2a_core.store import TaskRecord, dump_record

__all__ = ["Row", "from_micros", "micros", "row"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def micros(value: datetime) -> int:
    """``value`` as microseconds since the epoch."""
    return (value - _EPOCH) // _MICROSECOND


def from_micros(value: int) -> datetime:
    """The time of :func:`micros` ``value`` (in UTC)."""
    return _EPOCH + timedelta(microseconds=value)


@attrs.frozen
class Row:
    """A record in its stored form, with the values a store indexes it by."""

    key: str
    version: int
    principal: str
    tenant: str
    context_id: str
    state: str
    terminal: int
    running: int
    updated: int
    seq: int
    messages: int
    record: str


def row(record: TaskRecord) -> Row:
    """``record`` as a store keeps it."""
    owner, state = record.owner, record.state
    return Row(
        key=record.id,
        version=record.version,
        principal=owner.principal,
        tenant=owner.tenant,
        context_id=record.task.context_id,
        state=state.value,
        terminal=int(state.terminal),
        running=int(record.running),
        updated=micros(record.updated_at),
        seq=record.seq,
        messages=len(record.messages),
        record=dump_record(record),
    )
