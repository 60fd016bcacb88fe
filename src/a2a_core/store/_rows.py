"""The stored form of task records and events: text a durable store keeps, and reads back exactly.

A store on disk or on the network (SQLite, Redis) must give back what it was given: the same
record at the same version, the same events. Python's ``pickle`` would, but it ties the file to
the classes of one release and runs code on load; the wire JSON would not, since clients are
shown timestamps in milliseconds and the order of a listing depends on the microseconds. So a
record is written as the v1.0 wire JSON of its task and push configs, with every microsecond
(:class:`~a2a_core.V1Codec` with ``precise=True``, still ProtoJSON), beside the fields only
the server knows. The format carries its own number (:data:`RECORD_FORMAT`), so that a store
can tell a record written by a later release and refuse it rather than misread it.

Decoding is the strict v1.0 decoder: a record that does not decode is reported as a
:class:`~a2a_core.errors.UsageError` naming what is wrong, never taken as something else.
"""

import json
from typing import Any

from a2a_core._errors import A2AError, UsageError
from a2a_core._json import encoder
from a2a_core.model._records import Owner, TaskRecord
from a2a_core.model._task import StreamEvent, Task, TaskPushNotificationConfig
from a2a_core.wire._strict import format_timestamp_precise, parse_timestamp
from a2a_core.wire._v1 import V1Codec

__all__ = ["RECORD_FORMAT", "dump_event", "dump_record", "load_event", "load_record"]

#: The number of the stored format; a record of another number is not read.
RECORD_FORMAT = 1

_CODEC = V1Codec(precise=True)
#: Compact JSON text, as ``json.dumps(separators=(",", ":"), ensure_ascii=False)`` writes it,
#: on the C encoder without ``json.dumps``' set-up per call (every write of a task).
_json_text = encoder()


def dump_record(record: TaskRecord) -> str:
    """``record`` as compact JSON text."""
    stored: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "task": _CODEC.encode(record.task),
        "owner": [record.owner.principal, record.owner.tenant],
        "version": record.version,
        "createdAt": format_timestamp_precise(record.created_at),
        "run": record.run,
        "running": record.running,
        "skillId": record.skill_id,
        "seq": record.seq,
        "replied": record.replied,
        "messages": [list(pair) for pair in record.messages],
        "pushConfigs": [_CODEC.encode(config) for config in record.push_configs],
        "key": record.key,
    }
    return _json_text(stored)


def load_record(text: str | bytes) -> TaskRecord:
    """The record :func:`dump_record` wrote; :class:`UsageError` if ``text`` is not one."""
    try:
        stored = json.loads(text)
        if not isinstance(stored, dict) or stored.get("format") != RECORD_FORMAT:
            raise ValueError(f"not a task record of format {RECORD_FORMAT}")
        principal, tenant = stored["owner"]
        return TaskRecord(
            task=_CODEC.decode(Task, stored["task"], "task"),
            owner=Owner(_text(principal), _text(tenant)),
            version=_number(stored["version"]),
            created_at=parse_timestamp(stored["createdAt"]),
            run=_number(stored["run"]),
            running=stored["running"] is True,
            skill_id=_text(stored["skillId"]),
            seq=_number(stored["seq"]),
            replied=stored["replied"] is True,
            messages=tuple((_text(m), _text(f)) for m, f in stored["messages"]),
            push_configs=tuple(
                _CODEC.decode(TaskPushNotificationConfig, config, "pushConfigs")
                for config in stored["pushConfigs"]
            ),
            key=_text(stored["key"]),
        )
    except (A2AError, KeyError, TypeError, ValueError) as error:
        raise UsageError(f"a stored task record could not be read: {error}") from None


def dump_event(event: StreamEvent) -> str:
    """A logged event as compact JSON text (a v1.0 ``StreamResponse``, every microsecond)."""
    return _json_text(_CODEC.encode_event(event))


def load_event(text: str | bytes) -> StreamEvent:
    """The event :func:`dump_event` wrote; :class:`UsageError` if ``text`` is not one."""
    try:
        return _CODEC.decode_event(json.loads(text), "event")
    except (A2AError, ValueError) as error:
        raise UsageError(f"a stored event could not be read: {error}") from None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value


def _number(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise TypeError(f"expected a count, got {value!r}")
    return value
