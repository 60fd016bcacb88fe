"""The record builders of ``_changes``, which call constructors with every field in order."""

from datetime import UTC, datetime

import attrs

from a2a_core.decide._changes import in_task, set_status, successor, with_artifacts, with_status
from a2a_core.decide._inputs import World
from a2a_core.front._exchange import HttpResponse
from a2a_core.model._records import Owner, TaskRecord
from a2a_core.model._task import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)

NOW = datetime(2026, 1, 2, tzinfo=UTC)


def _names(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in attrs.fields(cls))


def test_the_builders_know_every_field() -> None:
    # A field added to one of these classes must be added to the builders too (they pass every
    # field by position): this fails until it is, and the other tests say where.
    assert _names(TaskRecord) == (
        "task",
        "owner",
        "version",
        "created_at",
        "run",
        "running",
        "skill_id",
        "seq",
        "replied",
        "messages",
        "push_configs",
        "key",
    )
    assert _names(HttpResponse) == ("status", "headers", "body", "trailers", "task_id", "served")
    assert _names(Task) == ("id", "status", "context_id", "artifacts", "history", "metadata")
    assert _names(Message) == (
        "message_id",
        "role",
        "parts",
        "context_id",
        "task_id",
        "metadata",
        "extensions",
        "reference_task_ids",
    )


def _message() -> Message:
    return Message(
        "m-1",
        Role.USER,
        (Part(text="hi"),),
        metadata={"k": 1},
        extensions=("urn:x",),
        reference_task_ids=("t-0",),
    )


def _record() -> TaskRecord:
    task = Task(
        "t-1",
        TaskStatus(TaskState.WORKING, timestamp=NOW),
        "c-1",
        (Artifact("a-1", (Part(text="x"),)),),
        (_message(),),
        {"m": True},
    )
    return TaskRecord(
        task,
        Owner("alice", "acme"),
        3,
        NOW,
        run=2,
        running=True,
        skill_id="skill",
        seq=5,
        replied=True,
        messages=(("m-1", "f"),),
        push_configs=(TaskPushNotificationConfig("https://h/", id="p"),),
        key="named",
    )


def test_successor_keeps_what_it_is_not_told_and_counts_events() -> None:
    record = _record()
    assert successor(record, record.task, events=2) == attrs.evolve(record, version=4, seq=7)
    changed = successor(
        record, record.task, events=0, running=False, run=3, replied=False, messages=()
    )
    assert changed == attrs.evolve(
        record, version=4, running=False, run=3, replied=False, messages=()
    )


def test_with_artifacts_with_status_and_in_task_change_only_their_fields() -> None:
    task = _record().task
    assert with_artifacts(task, ()) == attrs.evolve(task, artifacts=())
    status = TaskStatus(TaskState.FAILED, timestamp=NOW)
    assert with_status(task, status, ()) == attrs.evolve(task, status=status, history=())
    message = _message()
    assert in_task(message, "t-9", "c-9") == attrs.evolve(message, task_id="t-9", context_id="c-9")
    renamed = in_task(message, "t-9", "c-9", message_id="m-9", role=Role.AGENT)
    assert renamed == attrs.evolve(
        message, task_id="t-9", context_id="c-9", message_id="m-9", role=Role.AGENT
    )


def test_set_status_keeps_the_rest_of_the_task() -> None:
    task = _record().task
    reply = Message("", Role.USER, (Part(text="done"),), metadata={"r": 2})
    world = World(NOW, lambda: "new-id")
    changed = set_status(task, TaskState.COMPLETED, reply, world)
    stamped = attrs.evolve(
        reply, message_id="new-id", role=Role.AGENT, task_id="t-1", context_id="c-1"
    )
    assert changed == attrs.evolve(
        task, status=TaskStatus(TaskState.COMPLETED, stamped, NOW), history=task.history
    )
