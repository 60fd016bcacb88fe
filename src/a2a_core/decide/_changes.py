"""How a task changes: new versions of its record, the events they log, and what they publish.

Every change is a new :class:`TaskRecord` one version up, committed with its events numbered on
from the task's last (no gaps), published to whoever listens and, while push is on, pushed to
each of its webhooks (:func:`commit`). The helpers here build those records: statuses, history,
artifacts, push configs, and the view of a task a reply shows.
"""

from collections.abc import Sequence

import attrs

from a2a_core._agent_api import agent_message
from a2a_core._config import CoreConfig
from a2a_core.model._records import TaskRecord
from a2a_core.model._task import (
    Artifact,
    Message,
    Role,
    StreamEvent,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.store._contract import LoggedEvent, Put

from ._effects import Effect, Publish, Push
from ._inputs import World

__all__ = [
    "claim",
    "commit",
    "history_with_status",
    "in_task",
    "invalid_state",
    "merge",
    "set_status",
    "status_event",
    "successor",
    "view",
    "with_artifacts",
    "with_push_config",
    "with_status",
]

# The builders below call the records' constructors with every field, in order, rather than
# ``attrs.evolve``: a send makes a dozen new versions of its records, and evolve, which looks
# the fields up by name each time, cost about a tenth of the core's time. They are the only
# code that names every field (``tests/a2a_core/decide/test_changes.py`` holds them to the classes).


def successor(
    record: TaskRecord,
    task: Task,
    *,
    events: int,
    running: bool | None = None,
    run: int | None = None,
    replied: bool | None = None,
    messages: tuple[tuple[str, str], ...] | None = None,
) -> TaskRecord:
    """The next version of ``record``, holding ``task`` and ``events`` more logged events (the
    keywords left out are kept)."""
    return TaskRecord(
        task,
        record.owner,
        record.version + 1,
        record.created_at,
        record.run if run is None else run,
        record.running if running is None else running,
        record.skill_id,
        record.seq + events,
        record.replied if replied is None else replied,
        record.messages if messages is None else messages,
        record.push_configs,
        record.key,
    )


def with_artifacts(task: Task, artifacts: tuple[Artifact, ...]) -> Task:
    """``task`` holding ``artifacts`` instead of its own."""
    return Task(task.id, task.status, task.context_id, artifacts, task.history, task.metadata)


def with_status(task: Task, status: TaskStatus, history: tuple[Message, ...]) -> Task:
    """``task`` in ``status``, with ``history`` instead of its own."""
    return Task(task.id, status, task.context_id, task.artifacts, history, task.metadata)


def in_task(
    message: Message,
    task_id: str,
    context_id: str,
    *,
    message_id: str | None = None,
    role: Role | None = None,
) -> Message:
    """``message`` as its task holds it: naming the task and its context (and with the id and
    role given, if any)."""
    return Message(
        message.message_id if message_id is None else message_id,
        message.role if role is None else role,
        message.parts,
        context_id,
        task_id,
        message.metadata,
        message.extensions,
        message.reference_task_ids,
    )


def commit(
    config: CoreConfig,
    previous: TaskRecord | None,
    updated: TaskRecord,
    events: Sequence[StreamEvent],
) -> tuple[Put, tuple[Effect, ...]]:
    """The write of ``updated`` with its new events numbered; their publication and pushes."""
    first = updated.seq - len(events) + 1
    logged = tuple(LoggedEvent(first + i, event) for i, event in enumerate(events))
    expected = previous.version if previous else 0
    if not logged:
        return Put(updated, expected, logged), ()
    publish = Publish(updated, logged, settled=updated.state.settled)
    if not config.push_notifications or not updated.push_configs:
        # (Configs stored while push was on are not served while it is off.)
        return Put(updated, expected, logged), (publish,)
    pushes = [Push(updated.id, push, event) for event in logged for push in updated.push_configs]
    # Owed from the moment the events are stored: the same commit records them in the outbox.
    owed = tuple((push.config.id, push.event.seq) for push in pushes)
    return Put(updated, expected, logged, owed), (publish, *pushes)


def view(task: Task, history_length: int | None, *, artifacts: bool = True) -> Task:
    """The task as a reply shows it: the last ``history_length`` messages, artifacts or not."""
    history = task.history
    if history_length is not None and len(history) > history_length:
        history = history[len(history) - history_length :] if history_length else ()
    if history is task.history and (artifacts or not task.artifacts):
        return task
    return attrs.evolve(task, history=history, artifacts=task.artifacts if artifacts else ())


def claim(message: Message, fingerprint: str | None) -> tuple[tuple[str, str], ...]:
    """The message id a task takes for idempotency (none when sends are not deduplicated)."""
    return () if fingerprint is None else ((message.message_id, fingerprint),)


def with_push_config(
    record: TaskRecord, config: TaskPushNotificationConfig, ctx: World
) -> TaskRecord:
    """``record`` holding ``config`` last (with its ids filled in), replacing one with its id."""
    config = attrs.evolve(
        config, id=config.id or ctx.new_id(), task_id=record.task.id, tenant=record.owner.tenant
    )
    kept = tuple(c for c in record.push_configs if c.id != config.id)
    return attrs.evolve(record, push_configs=(*kept, config))


def history_with_status(task: Task) -> tuple[Message, ...]:
    """The history once the current status message is superseded (it becomes history)."""
    message = task.status.message
    return task.history if message is None else (*task.history, message)


def set_status(task: Task, state: TaskState, message: Message | None, ctx: World) -> Task:
    if message is not None:
        message_id = message.message_id or ctx.new_id()
        message = in_task(message, task.id, task.context_id, message_id=message_id, role=Role.AGENT)
    return with_status(task, TaskStatus(state, message, ctx.now), history_with_status(task))


def status_event(task: Task) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task.id, task.context_id, task.status)


def merge(
    artifacts: tuple[Artifact, ...], artifact: Artifact, append: bool
) -> tuple[Artifact, ...]:
    """Add an artifact, replace the one with its id, or (``append``) extend that one's parts."""
    for index, existing in enumerate(artifacts):
        if existing.artifact_id == artifact.artifact_id:
            if append:
                artifact = attrs.evolve(existing, parts=(*existing.parts, *artifact.parts))
            return (*artifacts[:index], artifact, *artifacts[index + 1 :])
    return (*artifacts, artifact)


def invalid_state(state: TaskState) -> tuple[TaskState, Message]:
    return TaskState.FAILED, agent_message(
        f"Invalid agent response: an agent cannot move a task to {state.value}"
    )
