"""The stored form of records and events: whatever a store writes, it reads back exactly."""

import json
from datetime import UTC, datetime

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core import Task, TaskState, TaskStatus
from a2a_core.errors import UsageError
from a2a_core.store import (
    Owner,
    TaskRecord,
    dump_event,
    dump_record,
    load_event,
    load_record,
)
from a2a_core.testing import strategies

#: Every microsecond counts: the order of a listing and its page tokens depend on them.
precise_times = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1), timezones=st.just(UTC)
)
texts = st.text(max_size=20)


@st.composite
def records(draw: st.DrawFn) -> TaskRecord:
    task = draw(strategies.tasks())
    status = TaskStatus(task.status.state, task.status.message, draw(precise_times))
    return TaskRecord(
        task=attrs.evolve(task, status=status),
        owner=Owner(draw(texts), draw(texts)),
        version=draw(st.integers(1, 2**40)),
        created_at=draw(precise_times),
        run=draw(st.integers(0, 1000)),
        running=draw(st.booleans()),
        skill_id=draw(texts),
        seq=draw(st.integers(0, 10**6)),
        replied=draw(st.booleans()),
        messages=tuple(draw(st.lists(st.tuples(strategies.ids, texts), max_size=4))),
        push_configs=tuple(draw(st.lists(strategies.push_configs(), max_size=2))),
        key=draw(st.just("") | texts),
    )


@given(records())
def test_a_record_reads_back_exactly(record: TaskRecord) -> None:
    assert load_record(dump_record(record)) == record


@given(strategies.stream_events())
def test_an_event_reads_back_exactly(event: object) -> None:
    assert load_event(dump_event(event)) == event  # type: ignore[arg-type]


def test_microseconds_survive_where_the_wire_shows_milliseconds() -> None:
    at = datetime(2026, 12, 1, 10, 0, 0, 123456, tzinfo=UTC)
    task = Task(id="t-1", status=TaskStatus(TaskState.WORKING, None, at), context_id="c-1")
    text = dump_record(TaskRecord(task=task, owner=Owner("alice"), version=1, created_at=at))
    assert "10:00:00.123456Z" in text
    assert load_record(text).updated_at == at


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        '{"format": 2}',  # written by a later release: refused, not misread
        '{"format": 1, "task": {}}',
        '{"format": 1, "task": {"id": "t", "contextId": "c", "status": {"state": 1}}, '
        '"owner": ["a", ""], "version": -1}',
    ],
)
def test_what_is_not_a_record_is_refused_with_the_reason(text: str) -> None:
    with pytest.raises(UsageError, match="stored task record"):
        load_record(text)


@pytest.mark.parametrize("text", ["", "{}", '{"task": {}, "message": {}}', '{"nope": {}}'])
def test_what_is_not_an_event_is_refused_with_the_reason(text: str) -> None:
    with pytest.raises(UsageError, match="stored event"):
        load_event(text)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("owner", [7, ""], "expected text, got int"),
        ("skillId", None, "expected text, got NoneType"),
        ("seq", -1, "expected a count, got -1"),
        ("version", True, "expected a count, got True"),
    ],
)
def test_a_record_with_a_field_of_the_wrong_type_is_refused_naming_it(
    field: str, value: object, reason: str
) -> None:
    at = datetime(2026, 12, 1, tzinfo=UTC)
    task = Task(id="t-1", status=TaskStatus(TaskState.WORKING, None, at), context_id="c-1")
    stored = json.loads(
        dump_record(TaskRecord(task=task, owner=Owner("alice"), version=1, created_at=at))
    )
    stored[field] = value
    with pytest.raises(UsageError, match=f"could not be read: {reason}"):
        load_record(json.dumps(stored))
