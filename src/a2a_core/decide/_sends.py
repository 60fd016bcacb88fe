"""Deciding a send: a new task, a turn of an existing one, or the replay of a re-sent message.

A send first looks at idempotency (the same ``messageId`` from the same owner returns the task it
made, without running anything; the same id with another message is refused), then at the task
it names, if any. A new task starts its first run; a follow-up moves its task back to working and
starts a new run over the whole conversation (the run machine, ``_states.RUNS``, stops the run
under way first). The reply is the task at once, the task once it settles, or a stream.
"""

from datetime import UTC, datetime, timedelta

import attrs

from a2a_core._agent_api import AgentContext
from a2a_core._config import CoreConfig
from a2a_core._errors import UnsupportedOperationError
from a2a_core.model._card import AgentCard
from a2a_core.model._records import Owner, TaskRecord, message_fingerprint, named_key
from a2a_core.model._requests import SendMessageRequest
from a2a_core.model._task import (
    Message,
    Role,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from a2a_core.store._contract import Delete, Put, Snapshot, Write

from ._changes import (
    claim,
    commit,
    in_task,
    status_event,
    successor,
    view,
    with_push_config,
    with_status,
)
from ._effects import AwaitTask, CallReply, Decision, Effect, Respond, StartRun, StopRun
from ._inputs import Call, Dialect, Rerun, World
from ._states import IllegalTransition, RunEffect, RunTrigger, Trigger, run_step, transition
from ._streams import FollowTask, StreamMode
from ._validation import (
    bad_param,
    check_config_count,
    check_history_length,
    check_media_types,
    check_message,
    check_push_config,
    skill_of,
)
from ._visibility import live, mine, owned

__all__ = ["last_user_message", "rerun", "send", "settled_reply"]


def settled_reply(wait: AwaitTask, record: TaskRecord) -> Respond:
    """The answer to a blocking send once its task has settled."""
    if record.replied and record.task.status.message is not None:
        return Respond(record.task.status.message)
    return Respond(view(record.task, wait.history_length))


def send(
    config: CoreConfig,
    card: AgentCard,
    request: SendMessageRequest,
    call: Call,
    snapshot: Snapshot,
    ctx: World,
    *,
    streaming: bool,
) -> Decision:
    legacy = call.dialect is Dialect.LEGACY
    message = request.message
    unnamed = legacy and not message.message_id  # v0.1 messages carry no id
    if unnamed:
        message = attrs.evolve(message, message_id=ctx.new_id())
        request = attrs.evolve(request, message=message)
    check_message(config, message)
    settings = request.configuration
    history_length = settings.history_length if settings else None
    check_history_length(history_length, "params.configuration.historyLength")
    owner = Owner(call.caller.principal, request.tenant)
    idempotent = config.idempotent_sends and not unnamed
    fingerprint = message_fingerprint(message) if idempotent else None
    immediately = settings is not None and settings.return_immediately
    push = settings.task_push_notification_config if settings else None
    if push is not None:
        check_push_config(config, push, "params.configuration.taskPushNotificationConfig")

    clear: tuple[Write, ...] = ()
    holder = snapshot.by_message if fingerprint is not None else None
    if holder is not None and holder.owner == owner:
        if live(config, holder, ctx.now) is None:
            # Expired but not yet swept: it still holds the message id, so remove it now.
            clear = (Delete(holder.id, holder.version),)
        elif holder.fingerprint(message.message_id) != fingerprint:
            raise bad_param(
                "params.message.messageId",
                f"{message.message_id!r} was already sent with a different message; "
                "a message id may be reused only to re-send the same message",
            )
        else:
            reply = _replay(config, holder, immediately, history_length, streaming, ctx)
            return Decision(reply=reply)

    named = ""  # the key of a new task whose id the client chose (v0.1)
    if message.task_id and legacy:
        # The id is a turn of the caller's own task with that id, or else names a new one.
        # Someone else's task with that id makes no difference (ids the client chooses are
        # per owner, see ``named_key``), so the answer tells nothing about other owners.
        found = mine(snapshot, message.task_id, owner)
        if found is not None and live(config, found, ctx.now) is None:
            if not any(isinstance(w, Delete) and w.task_id == found.id for w in clear):
                clear = (*clear, Delete(found.id, found.version))  # expired: gone now
            found = None
        if found is None:
            named = named_key(owner, message.task_id)
    if message.task_id and not named:
        previous = owned(config, snapshot, message.task_id, owner, ctx.now)
        check_media_types(card, message, previous.skill_id)  # a follow-up keeps its skill
        write, effects = _follow_up(
            config, previous, message, fingerprint, request, push, ctx, call.extensions
        )
    else:
        skill = skill_of(card, config, request)
        check_media_types(card, message, skill)
        write, effects = _create(
            config,
            owner,
            skill,
            message,
            fingerprint,
            request,
            push,
            ctx,
            named=named,
            extensions=call.extensions,
        )

    record = write.record
    answer: CallReply
    if streaming:
        answer = _send_stream(record, history_length, _hold_until(config, ctx))
    elif immediately:
        answer = Respond(view(record.task, history_length))
    else:
        answer = AwaitTask(record.id, history_length)
    return Decision(writes=(*clear, write), effects=effects, reply=answer)


def _replay(
    config: CoreConfig,
    record: TaskRecord,
    immediately: bool,
    history_length: int | None,
    streaming: bool,
    ctx: World,
) -> CallReply:
    """The answer to a re-sent message: the task it created, without running anything."""
    wait = AwaitTask(record.id, history_length)
    if streaming:
        return _send_stream(record, history_length, _hold_until(config, ctx))
    if immediately:
        return Respond(view(record.task, history_length))
    if record.state.settled:
        return settled_reply(wait, record)
    return wait


def _hold_until(config: CoreConfig, ctx: World) -> datetime | None:
    """Until when a streamed send may hold its task back for a direct reply."""
    window = config.direct_reply_window
    if window is None:
        return datetime.max.replace(tzinfo=UTC)
    return ctx.now + window if window > timedelta(0) else None


def _send_stream(
    record: TaskRecord, history_length: int | None, hold_until: datetime | None
) -> FollowTask:
    """The stream of a send: the task as of now, then whatever follows."""
    snapshot: Task | Message = view(record.task, history_length)
    if record.replied and record.state.settled and record.task.status.message is not None:
        snapshot = record.task.status.message
    return FollowTask(record.id, StreamMode.SEND, record.seq, snapshot, record.state, hold_until)


def _create(
    config: CoreConfig,
    owner: Owner,
    skill: str,
    message: Message,
    fingerprint: str | None,
    request: SendMessageRequest,
    push: TaskPushNotificationConfig | None,
    ctx: World,
    *,
    named: str = "",
    extensions: frozenset[str] = frozenset(),
) -> tuple[Put, tuple[Effect, ...]]:
    """A new task; ``named``: the key of the id its client chose (the message's task id)."""
    task_id = request.message.task_id if named else ctx.new_id()
    context_id = message.context_id or ctx.new_id()
    message = in_task(message, task_id, context_id)
    task = Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(TaskState.SUBMITTED, timestamp=ctx.now),
        history=(message,),
    )
    _, running = run_step(False, RunTrigger.TURN)
    record = TaskRecord(
        task=task,
        owner=owner,
        version=1,
        created_at=ctx.now,
        run=1,
        running=running,
        skill_id=skill,
        seq=1,
        messages=claim(message, fingerprint),
        key=named,
    )
    if push is not None:
        record = with_push_config(record, push, ctx)
    put, published = commit(config, None, record, (task,))
    start = StartRun(record.id, 1, _agent_context(record, message, request, extensions))
    return put, (*published, start)


def _follow_up(
    config: CoreConfig,
    record: TaskRecord,
    message: Message,
    fingerprint: str | None,
    request: SendMessageRequest,
    push: TaskPushNotificationConfig | None,
    ctx: World,
    extensions: frozenset[str] = frozenset(),
) -> tuple[Put, tuple[Effect, ...]]:
    task = record.task
    if message.context_id and message.context_id != task.context_id:
        raise bad_param(
            "params.message.contextId",
            f"{message.context_id!r} is not the context of task {task.id}",
        )
    try:
        state = transition(record.state, Trigger.USER_MESSAGE)
    except IllegalTransition:
        raise UnsupportedOperationError(
            f"Task {task.id} is in terminal state {record.state.value}: "
            "it accepts no more messages; start a new task in the same context",
            metadata={"taskId": task.id, "state": record.state.value},
        ) from None
    limit = config.max_task_messages
    superseded = () if task.status.message is None else (task.status.message,)
    held = len(task.history) + len(superseded)
    if limit is not None and held >= limit:
        raise bad_param(
            "params.message",
            f"task {task.id} holds {held} messages and may hold at most {limit}; "
            f"go on in a new task of the same context ({task.context_id})",
        )
    message = in_task(message, task.id, task.context_id)
    status = TaskStatus(state, timestamp=ctx.now)
    # One copy of the history, however long (an immutable task can do no better).
    history = (*task.history, *superseded, message)
    task = with_status(task, status, history)
    run_effects, running = run_step(record.running, RunTrigger.TURN)
    run = record.run + 1
    updated = successor(
        record,
        task,
        events=1,
        run=run,
        running=running,
        replied=False,
        messages=(*record.messages, *claim(message, fingerprint)),
    )
    if push is not None:
        updated = check_config_count(config, with_push_config(updated, push, ctx))
    put, published = commit(config, record, updated, (status_event(task),))
    effects: list[Effect] = []
    if RunEffect.STOP_CURRENT in run_effects:
        effects.append(StopRun(record.id, record.run))
    effects.extend(published)
    effects.append(StartRun(record.id, run, _agent_context(updated, message, request, extensions)))
    return put, tuple(effects)


def last_user_message(record: TaskRecord) -> Message | None:
    """The message a task's current run was started on: its user's latest."""
    return next((m for m in reversed(record.task.history) if m.role is Role.USER), None)


def rerun(again: Rerun, record: TaskRecord | None) -> Decision:
    """Start the agent again on the task's last user message, as a new run (its run before
    died with the server that ran it). A run that no longer counts is not run again."""
    message = last_user_message(record) if record is not None else None
    if record is None or message is None or not (record.running and record.run == again.run):
        return Decision()
    run_effects, running = run_step(record.running, RunTrigger.TURN)
    updated = attrs.evolve(record, version=record.version + 1, run=record.run + 1, running=running)
    # The task is running (checked above), and a running task's turn stops its run first.
    assert RunEffect.STOP_CURRENT in run_effects
    request = SendMessageRequest(message, tenant=record.owner.tenant)
    effects: tuple[Effect, ...] = (
        StopRun(record.id, record.run),  # (long gone; the table says so anyway)
        StartRun(updated.id, updated.run, _agent_context(updated, message, request)),
    )
    return Decision(writes=(Put(updated, record.version),), effects=effects)


def _agent_context(
    record: TaskRecord,
    message: Message,
    request: SendMessageRequest,
    extensions: frozenset[str] = frozenset(),
) -> AgentContext:
    settings = request.configuration
    return AgentContext(
        task_id=record.task.id,
        context_id=record.task.context_id,
        message=message,
        history=record.task.history,
        principal=record.owner.principal,
        tenant=record.owner.tenant,
        skill_id=record.skill_id,
        metadata=request.metadata or {},
        accepted_output_modes=settings.accepted_output_modes if settings else (),
        requested_extensions=extensions,
    )
