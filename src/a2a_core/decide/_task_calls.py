"""Deciding the calls on a task that already exists: cancel, subscribe, its push configs, and
listing tasks. (Reading one is a lookup the reducer does itself; sends are ``_sends``.)"""

import attrs

from a2a_core._config import CoreConfig
from a2a_core._errors import TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError
from a2a_core.model._records import Owner, TaskRecord
from a2a_core.model._requests import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
)
from a2a_core.model._task import (
    ListTaskPushNotificationConfigsResponse,
    ListTasksResponse,
    TaskPushNotificationConfig,
    TaskStatus,
)
from a2a_core.store._contract import ListQuery, Page, Put, Snapshot

from ._changes import commit, history_with_status, status_event, view, with_push_config
from ._effects import Decision, Effect, Respond, StopRun
from ._inputs import Call, World
from ._states import IllegalTransition, RunEffect, RunTrigger, Trigger, run_step, transition
from ._streams import FollowTask, StreamMode
from ._validation import (
    bad_param,
    check_config_count,
    check_push_config,
    push_not_supported,
)
from ._visibility import owned

__all__ = ["cancel", "list_reply", "push_call", "subscription"]


def cancel(config: CoreConfig, record: TaskRecord, ctx: World) -> Decision:
    try:
        state = transition(record.state, Trigger.CANCEL)
    except IllegalTransition:
        raise TaskNotCancelableError(
            f"Task {record.task.id} cannot be canceled: it is already {record.state.value}",
            metadata={"taskId": record.task.id, "state": record.state.value},
        ) from None
    task = record.task
    task = attrs.evolve(
        task, status=TaskStatus(state, timestamp=ctx.now), history=history_with_status(task)
    )
    run_effects, running = run_step(record.running, RunTrigger.CANCEL)
    updated = attrs.evolve(
        record, task=task, version=record.version + 1, running=running, seq=record.seq + 1
    )
    put, published = commit(config, record, updated, (status_event(task),))
    effects: list[Effect] = []
    if RunEffect.STOP_CURRENT in run_effects:
        effects.append(StopRun(record.id, record.run))
    effects.extend(published)
    return Decision(writes=(put,), effects=tuple(effects), reply=Respond(task))


def subscription(record: TaskRecord, after: int | None) -> FollowTask:
    """A ``SubscribeToTask`` stream: from now (snapshot first), or resumed after an event."""
    terminal = UnsupportedOperationError(
        f"Task {record.task.id} is in terminal state {record.state.value}: "
        "no more events will come, so there is nothing to subscribe to",
        metadata={"taskId": record.task.id, "state": record.state.value},
    )
    if after is None:
        if record.state.terminal:
            raise terminal
        return FollowTask(
            record.id, StreamMode.SUBSCRIBE, record.seq, view(record.task, None), record.state
        )
    if not 0 <= after <= record.seq:
        raise bad_param(
            "Last-Event-ID",
            f"{after} is not an event of task {record.task.id} (latest: {record.seq})",
        )
    if after == record.seq and record.state.terminal:
        raise terminal
    # Resumed: the client has everything up to ``after``; the log has the rest.
    state = record.state if after == record.seq else None
    return FollowTask(record.id, StreamMode.SUBSCRIBE, after, None, state)


def list_reply(request: ListTasksRequest, query: ListQuery, page: Page) -> ListTasksResponse:
    artifacts = bool(request.include_artifacts)
    return ListTasksResponse(
        tasks=tuple(
            view(r.task, request.history_length, artifacts=artifacts) for r in page.records
        ),
        next_page_token=page.next.encode() if page.next else "",
        page_size=query.page_size,
        total_size=page.total,
    )


def push_call(config: CoreConfig, call: Call, snapshot: Snapshot, ctx: World) -> Decision:
    """Create, read, list or delete a task's push configs (the task must be the caller's)."""
    if not config.push_notifications:
        raise push_not_supported()
    request = call.request
    assert isinstance(
        request,
        TaskPushNotificationConfig
        | GetTaskPushNotificationConfigRequest
        | ListTaskPushNotificationConfigsRequest
        | DeleteTaskPushNotificationConfigRequest,
    )
    if not request.task_id:
        raise bad_param("params.taskId", "required field is missing")
    owner = Owner(call.caller.principal, request.tenant)
    record = owned(config, snapshot, request.task_id, owner, ctx.now)
    configs = record.push_configs
    match request:
        case TaskPushNotificationConfig():
            check_push_config(config, request, "params")
            updated = check_config_count(config, with_push_config(record, request, ctx))
            put = Put(attrs.evolve(updated, version=record.version + 1), record.version)
            return Decision(writes=(put,), reply=Respond(updated.push_configs[-1]))
        case GetTaskPushNotificationConfigRequest(id=config_id):
            # Old clients name no config: they mean the task's (first) one.
            found = next((c for c in configs if c.id == config_id or not config_id), None)
            if found is None:
                raise TaskNotFoundError(
                    f"Push notification config {config_id} not found for task {record.task.id}",
                    metadata={"taskId": record.task.id, "configId": config_id},
                )
            return Decision(reply=Respond(found))
        case ListTaskPushNotificationConfigsRequest():
            return Decision(reply=Respond(ListTaskPushNotificationConfigsResponse(configs)))
        case _:  # a DeleteTaskPushNotificationConfigRequest (asserted above)
            kept = tuple(c for c in configs if c.id != request.id)
            if len(kept) == len(configs):
                return Decision(reply=Respond(None))  # deleting is idempotent
            updated = attrs.evolve(record, push_configs=kept, version=record.version + 1)
            return Decision(writes=(Put(updated, record.version),), reply=Respond(None))
