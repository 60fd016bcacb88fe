"""The reducer: one input, the records it touches, and the time in; a decision out.

This is where every protocol decision is made. It is a pure function of its arguments: it reads
no clock (``ctx.now``), draws no ids of its own (``ctx.new_id``), touches no store (the adapter
passes the :class:`Snapshot` it asked for in :meth:`Reducer.needs`) and starts nothing (it
returns effects). That is what lets the same code run under asyncio, under trio, in a
hypothesis state machine, or inside someone else's event loop.

Theory of operation
-------------------

A task's life is driven by three kinds of input:

* a **client call** creates a task (``SendMessage``), adds a turn to it (a follow-up
  ``SendMessage`` with its ``taskId``), cancels it, or reads it;
* **agent output**, tagged with the number of the run that produced it, moves the task through
  the states of :mod:`._states`, adds artifacts, or answers directly;
* the **clock** (ticks) expires what has outlived its time.

Each agent run has a number (``TaskRecord.run``). Output only counts while it comes from the
task's current run and that run is still marked ``running``; a cancel (or a follow-up that starts
a new run) clears the mark, so a late answer from a canceled or superseded run is dropped, and
the decision tells the adapter to stop that run. Together with the transition table, where
terminal states have no way out, this is what guarantees that a canceled task stays canceled.

Every change is written as a new :class:`TaskRecord` whose version is one more than the version
it was decided from; the store refuses the write if someone else wrote in between, and the
adapter decides again on fresh data.
"""

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import attrs

from ._agent_api import (
    AgentContext,
    ArtifactChunk,
    Status,
    Update,
    agent_message,
    exception_status,
    normalize,
)
from ._card import complete_card
from ._config import CoreConfig
from ._effects import (
    AwaitTask,
    Decision,
    Effect,
    Fail,
    Publish,
    Push,
    Reply,
    Respond,
    StartRun,
    StopRun,
)
from ._errors import (
    A2AError,
    ContentTypeNotSupportedError,
    FieldViolation,
    InvalidAgentResponseError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ._inputs import AgentDone, AgentOutput, Call, Context, Dialect, Input, Operation, Tick
from ._model import (
    Artifact,
    ListTaskPushNotificationConfigsResponse,
    ListTasksResponse,
    Message,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from ._push_policy import (
    auth_scheme_problem,
    header_value_problem,
    url_problem,
    url_text_problem,
)
from ._records import Owner, TaskRecord, message_fingerprint, named_key
from ._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from ._states import Event, IllegalTransition, transition
from ._storage import (
    Cursor,
    Delete,
    Expired,
    ExpiryQuery,
    ListQuery,
    LoggedEvent,
    MessageKey,
    Page,
    Put,
    Reads,
    Snapshot,
    Write,
)
from ._streams import OpenStream, StreamMode
from ._wire_v1 import V1Codec

__all__ = ["Reducer"]

_AGENT_EVENTS = {
    TaskState.WORKING: Event.AGENT_WORKING,
    TaskState.INPUT_REQUIRED: Event.AGENT_INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED: Event.AGENT_AUTH_REQUIRED,
    TaskState.COMPLETED: Event.AGENT_COMPLETED,
    TaskState.FAILED: Event.AGENT_FAILED,
    TaskState.REJECTED: Event.AGENT_REJECTED,
    TaskState.CANCELED: Event.AGENT_CANCELED,
}

_PUSH_OPERATIONS = frozenset(
    {
        Operation.CREATE_PUSH_CONFIG,
        Operation.GET_PUSH_CONFIG,
        Operation.LIST_PUSH_CONFIGS,
        Operation.DELETE_PUSH_CONFIG,
    }
)


def _bad_param(field: str, problem: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Invalid parameters: {field}: {problem}", violations=(FieldViolation(field, problem),)
    )


def _not_found(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(f"Task {task_id} not found", metadata={"taskId": task_id})


def view(task: Task, history_length: int | None, *, artifacts: bool = True) -> Task:
    """The task as a reply shows it: the last ``history_length`` messages, artifacts or not."""
    history = task.history
    if history_length is not None and len(history) > history_length:
        history = history[len(history) - history_length :] if history_length else ()
    if history is task.history and (artifacts or not task.artifacts):
        return task
    return attrs.evolve(task, history=history, artifacts=task.artifacts if artifacts else ())


def _media_type_accepted(media_type: str, accepted: Sequence[str]) -> bool:
    if not accepted:
        return True
    kind = media_type.split(";", 1)[0].strip().lower()
    major = kind.split("/", 1)[0]
    for mode in accepted:
        mode = mode.split(";", 1)[0].strip().lower()
        if mode in ("*/*", "*", kind) or mode == f"{major}/*":
            return True
    return False


class Reducer:
    """Decides every input. Holds only configuration, never state."""

    def __init__(self, config: CoreConfig, codec: V1Codec) -> None:
        self.config = config
        self._codec = codec
        self._card = complete_card(config)

    # --- what to read -------------------------------------------------------------------------

    def needs(self, inp: Input) -> Reads:
        """The records :meth:`decide` needs for ``inp``: fetch them and pass a Snapshot."""
        match inp:
            case Call(request=SendMessageRequest(message=message, tenant=tenant)):
                owner = Owner(inp.caller.principal, tenant)
                key = MessageKey(owner, message.message_id) if message.message_id else None
                return attrs.evolve(_task_reads(owner, message.task_id), message=key)
            case Call(
                request=GetTaskRequest(id=task_id, tenant=tenant)
                | CancelTaskRequest(id=task_id, tenant=tenant)
                | SubscribeToTaskRequest(id=task_id, tenant=tenant)
            ):
                return _task_reads(Owner(inp.caller.principal, tenant), task_id)
            case Call(operation=Operation.LIST_TASKS, request=ListTasksRequest() as request):
                try:
                    return Reads(listing=self._list_query(inp.caller.principal, request))
                except A2AError:
                    return Reads()  # decide() reports the same error
            case Call(
                request=TaskPushNotificationConfig(task_id=task_id, tenant=tenant)
                | GetTaskPushNotificationConfigRequest(task_id=task_id, tenant=tenant)
                | ListTaskPushNotificationConfigsRequest(task_id=task_id, tenant=tenant)
                | DeleteTaskPushNotificationConfigRequest(task_id=task_id, tenant=tenant)
            ):
                return _task_reads(Owner(inp.caller.principal, tenant), task_id)
            case AgentOutput(task_id=task_id) | AgentDone(task_id=task_id):
                return Reads(task_id=task_id)
            case Tick(now=now) if self.config.task_ttl is not None:
                return Reads(
                    expiry=ExpiryQuery(now - self.config.task_ttl, self.config.sweep_batch)
                )
        return Reads()

    # --- the decision -------------------------------------------------------------------------

    def decide(self, inp: Input, snapshot: Snapshot, ctx: Context) -> Decision:
        """The decision for ``inp`` given what the store holds."""
        match inp:
            case Call():
                try:
                    decision = self._call(inp, snapshot, ctx)
                except A2AError as error:
                    return Decision(reply=Fail(error))
            case AgentOutput():
                decision = self._agent_output(inp, snapshot.task, ctx)
            case AgentDone():
                decision = self._agent_done(inp, snapshot.task, ctx)
            case Tick():
                return self._sweep(inp.now, snapshot.expired)
        return self._with_expiry_alarm(decision)

    def settled_reply(self, wait: AwaitTask, record: TaskRecord) -> Respond:
        """The answer to a blocking send once its task has settled."""
        if record.replied and record.task.status.message is not None:
            return Respond(record.task.status.message)
        return Respond(view(record.task, wait.history_length))

    # --- client calls -------------------------------------------------------------------------

    def _call(self, call: Call, snapshot: Snapshot, ctx: Context) -> Decision:
        principal = call.caller.principal
        match call.operation, call.request:
            case Operation.SEND_MESSAGE, SendMessageRequest() as request:
                return self._send(request, call, snapshot, ctx, streaming=False)
            case Operation.SEND_STREAMING_MESSAGE, SendMessageRequest() as request if (
                self.config.streaming
            ):
                return self._send(request, call, snapshot, ctx, streaming=True)
            case Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest() as request if (
                self.config.streaming
            ):
                owner = Owner(principal, request.tenant)
                record = self._owned(snapshot, request.id, owner, ctx)
                return Decision(reply=_subscription(record, call.last_event_id))
            case Operation.GET_TASK, GetTaskRequest() as request:
                _check_history_length(request.history_length, "params.historyLength")
                record = self._owned(snapshot, request.id, Owner(principal, request.tenant), ctx)
                return Decision(reply=Respond(view(record.task, request.history_length)))
            case Operation.LIST_TASKS, ListTasksRequest() as request:
                query = self._list_query(principal, request)
                assert snapshot.page is not None, "ListTasks needs the page it asked for"
                page = self._unexpired(snapshot.page, ctx.now)
                return Decision(reply=Respond(_list_reply(request, query, page)))
            case Operation.CANCEL_TASK, CancelTaskRequest() as request:
                record = self._owned(snapshot, request.id, Owner(principal, request.tenant), ctx)
                return self._cancel(record, ctx)
            case (Operation.SEND_STREAMING_MESSAGE | Operation.SUBSCRIBE_TO_TASK, _) if (
                not self.config.streaming
            ):
                raise UnsupportedOperationError(
                    "Streaming is not supported by this agent (capabilities.streaming is false)"
                )
            case operation, _ if operation in _PUSH_OPERATIONS:
                return self._push_call(call, snapshot, ctx)
        # GetExtendedAgentCard is the HTTP front's: configuration, nothing to decide.
        raise UnsupportedOperationError(  # pragma: no cover - every operation is matched above
            f"This operation is not supported: {call.operation.value}"
        )

    def _send(
        self,
        request: SendMessageRequest,
        call: Call,
        snapshot: Snapshot,
        ctx: Context,
        *,
        streaming: bool,
    ) -> Decision:
        principal = call.caller.principal
        legacy = call.dialect is Dialect.LEGACY
        message = request.message
        unnamed = legacy and not message.message_id  # v0.1 messages carry no id
        if unnamed:
            message = attrs.evolve(message, message_id=ctx.new_id())
            request = attrs.evolve(request, message=message)
        self._check_message(message)
        config = request.configuration
        history_length = config.history_length if config else None
        _check_history_length(history_length, "params.configuration.historyLength")
        owner = Owner(principal, request.tenant)
        idempotent = self.config.idempotent_sends and not unnamed
        fingerprint = message_fingerprint(message) if idempotent else None
        immediately = config is not None and config.return_immediately
        push = config.task_push_notification_config if config else None
        if push is not None:
            self._check_push_config(push, "params.configuration.taskPushNotificationConfig")

        clear: tuple[Write, ...] = ()
        holder = snapshot.by_message if fingerprint is not None else None
        if holder is not None and holder.owner == owner:
            if self._live(holder, ctx.now) is None:
                # Expired but not yet swept: it still holds the message id, so remove it now.
                clear = (Delete(holder.id, holder.version),)
            elif holder.fingerprint(message.message_id) != fingerprint:
                raise _bad_param(
                    "params.message.messageId",
                    f"{message.message_id!r} was already sent with a different message; "
                    "a message id may be reused only to re-send the same message",
                )
            else:
                return Decision(
                    reply=self._replay(holder, immediately, history_length, streaming, ctx)
                )

        named = ""  # the key of a new task whose id the client chose (v0.1)
        if message.task_id and legacy:
            # The id is a turn of the caller's own task with that id, or else names a new one.
            # Someone else's task with that id makes no difference (ids the client chooses are
            # per owner, see ``named_key``), so the answer tells nothing about other owners.
            found = _mine(snapshot, message.task_id, owner)
            if found is not None and self._live(found, ctx.now) is None:
                if not any(isinstance(w, Delete) and w.task_id == found.id for w in clear):
                    clear = (*clear, Delete(found.id, found.version))  # expired: gone now
                found = None
            if found is None:
                named = named_key(owner, message.task_id)
        if message.task_id and not named:
            previous = self._owned(snapshot, message.task_id, owner, ctx)
            self._check_media_types(message, previous.skill_id)  # a follow-up keeps its skill
            write, effects = self._follow_up(previous, message, fingerprint, request, push, ctx)
        else:
            skill = self._skill(request)
            self._check_media_types(message, skill)
            message = attrs.evolve(message, task_id="")
            write, effects = self._create(
                owner, skill, message, fingerprint, request, push, ctx, named=named
            )

        record = write.record
        reply: Reply
        if streaming:
            reply = _send_stream(record, history_length, self._hold_until(ctx))
        elif immediately:
            reply = Respond(view(record.task, history_length))
        else:
            reply = AwaitTask(record.id, history_length)
        return Decision(writes=(*clear, write), effects=effects, reply=reply)

    def _replay(
        self,
        record: TaskRecord,
        immediately: bool,
        history_length: int | None,
        streaming: bool,
        ctx: Context,
    ) -> Reply:
        """The answer to a re-sent message: the task it created, without running anything."""
        wait = AwaitTask(record.id, history_length)
        if streaming:
            return _send_stream(record, history_length, self._hold_until(ctx))
        if immediately:
            return Respond(view(record.task, history_length))
        if record.state.settled:
            return self.settled_reply(wait, record)
        return wait

    def _hold_until(self, ctx: Context) -> datetime | None:
        """Until when a streamed send may hold its task back for a direct reply."""
        window = self.config.direct_reply_window
        if window is None:
            return datetime.max.replace(tzinfo=UTC)
        return ctx.now + window if window > timedelta(0) else None

    def _skill(self, request: SendMessageRequest) -> str:
        """The skill a new task is routed to: named in the request's or message's metadata."""
        for field, metadata in (
            ("params.metadata.skillId", request.metadata),
            ("params.message.metadata.skillId", request.message.metadata),
        ):
            if metadata is None or "skillId" not in metadata:
                continue
            skill_id = metadata["skillId"]
            if not isinstance(skill_id, str) or self._card.skill(skill_id) is None:
                known = ", ".join(s.id for s in self._card.skills)
                raise _bad_param(field, f"unknown skill {skill_id!r}; this agent has: {known}")
            return skill_id
        return self.config.default_skill

    def _check_message(self, message: Message) -> None:
        if message.role is not Role.USER:
            raise _bad_param("params.message.role", "a client's message must have role ROLE_USER")
        if not message.message_id:
            raise _bad_param("params.message.messageId", "must not be empty")
        if not message.parts:
            raise _bad_param("params.message.parts", "must hold at least one part")
        if len(message.parts) > self.config.max_message_parts:
            raise _bad_param(
                "params.message.parts",
                f"holds {len(message.parts)} parts; a message may hold at most "
                f"{self.config.max_message_parts}",
            )

    def _check_media_types(self, message: Message, skill_id: str) -> None:
        """Every part's media type must be one the skill (or else the agent) accepts."""
        skill = self._card.skill(skill_id) if skill_id else None
        accepted = (skill.input_modes if skill else ()) or self._card.default_input_modes
        for index, part in enumerate(message.parts):
            if part.media_type and not _media_type_accepted(part.media_type, accepted):
                raise ContentTypeNotSupportedError(
                    f"Incompatible content types: params.message.parts[{index}] has media type "
                    f"{part.media_type!r}; this agent accepts {', '.join(accepted)}",
                    metadata={"mediaType": part.media_type},
                )

    def _create(
        self,
        owner: Owner,
        skill: str,
        message: Message,
        fingerprint: str | None,
        request: SendMessageRequest,
        push: TaskPushNotificationConfig | None,
        ctx: Context,
        *,
        named: str = "",
    ) -> tuple[Put, tuple[Effect, ...]]:
        """A new task; ``named``: the key of the id its client chose (the message's task id)."""
        task_id = request.message.task_id if named else ctx.new_id()
        context_id = message.context_id or ctx.new_id()
        message = attrs.evolve(message, task_id=task_id, context_id=context_id)
        task = Task(
            id=task_id,
            context_id=context_id,
            status=TaskStatus(TaskState.SUBMITTED, timestamp=ctx.now),
            history=(message,),
        )
        record = TaskRecord(
            task=task,
            owner=owner,
            version=1,
            created_at=ctx.now,
            run=1,
            running=True,
            skill_id=skill,
            seq=1,
            messages=_claim(message, fingerprint),
            key=named,
        )
        if push is not None:
            record = _with_push_config(record, push, ctx)
        put, published = self._commit(None, record, (task,))
        start = StartRun(record.id, 1, self._agent_context(record, message, request))
        return put, (*published, start)

    def _follow_up(
        self,
        record: TaskRecord,
        message: Message,
        fingerprint: str | None,
        request: SendMessageRequest,
        push: TaskPushNotificationConfig | None,
        ctx: Context,
    ) -> tuple[Put, tuple[Effect, ...]]:
        task = record.task
        if message.context_id and message.context_id != task.context_id:
            raise _bad_param(
                "params.message.contextId",
                f"{message.context_id!r} is not the context of task {task.id}",
            )
        try:
            state = transition(record.state, Event.USER_MESSAGE)
        except IllegalTransition:
            raise UnsupportedOperationError(
                f"Task {task.id} is in terminal state {record.state.value}: "
                "it accepts no more messages; start a new task in the same context",
                metadata={"taskId": task.id, "state": record.state.value},
            ) from None
        limit = self.config.max_task_messages
        superseded = () if task.status.message is None else (task.status.message,)
        held = len(task.history) + len(superseded)
        if limit is not None and held >= limit:
            raise _bad_param(
                "params.message",
                f"task {task.id} holds {held} messages and may hold at most {limit}; "
                f"go on in a new task of the same context ({task.context_id})",
            )
        message = attrs.evolve(message, task_id=task.id, context_id=task.context_id)
        status = TaskStatus(state, timestamp=ctx.now)
        # One copy of the history, however long (an immutable task can do no better).
        task = attrs.evolve(task, status=status, history=(*task.history, *superseded, message))
        run = record.run + 1
        updated = attrs.evolve(
            record,
            task=task,
            version=record.version + 1,
            run=run,
            running=True,
            seq=record.seq + 1,
            replied=False,
            messages=(*record.messages, *_claim(message, fingerprint)),
        )
        if push is not None:
            updated = self._checked_config_count(_with_push_config(updated, push, ctx))
        put, published = self._commit(record, updated, (_status_event(task),))
        effects: list[Effect] = []
        if record.running:
            effects.append(StopRun(record.id, record.run))
        effects.extend(published)
        effects.append(StartRun(record.id, run, self._agent_context(updated, message, request)))
        return put, tuple(effects)

    def _agent_context(
        self, record: TaskRecord, message: Message, request: SendMessageRequest
    ) -> AgentContext:
        config = request.configuration
        return AgentContext(
            task_id=record.task.id,
            context_id=record.task.context_id,
            message=message,
            history=record.task.history,
            principal=record.owner.principal,
            tenant=record.owner.tenant,
            skill_id=record.skill_id,
            metadata=request.metadata or {},
            accepted_output_modes=config.accepted_output_modes if config else (),
        )

    def _cancel(self, record: TaskRecord, ctx: Context) -> Decision:
        try:
            state = transition(record.state, Event.CANCEL)
        except IllegalTransition:
            raise TaskNotCancelableError(
                f"Task {record.task.id} cannot be canceled: it is already {record.state.value}",
                metadata={"taskId": record.task.id, "state": record.state.value},
            ) from None
        task = record.task
        task = attrs.evolve(
            task,
            status=TaskStatus(state, timestamp=ctx.now),
            history=_history_with_status(task),
        )
        updated = attrs.evolve(
            record, task=task, version=record.version + 1, running=False, seq=record.seq + 1
        )
        put, published = self._commit(record, updated, (_status_event(task),))
        effects: list[Effect] = []
        if record.running:
            effects.append(StopRun(record.id, record.run))
        effects.extend(published)
        return Decision(writes=(put,), effects=tuple(effects), reply=Respond(task))

    def _list_query(self, principal: str, request: ListTasksRequest) -> ListQuery:
        config = self.config
        page_size = config.default_page_size if request.page_size is None else request.page_size
        if not 1 <= page_size <= config.max_page_size:
            raise _bad_param(
                "params.pageSize", f"must be between 1 and {config.max_page_size}, got {page_size}"
            )
        _check_history_length(request.history_length, "params.historyLength")
        try:
            cursor = Cursor.decode(request.page_token) if request.page_token else None
        except ValueError as error:
            raise _bad_param("params.pageToken", str(error)) from None
        return ListQuery(
            owner=Owner(principal, request.tenant),
            page_size=page_size,
            context_id=request.context_id,
            state=None if request.status is TaskState.UNSPECIFIED else request.status,
            updated_since=request.status_timestamp_after,
            cursor=cursor,
        )

    # --- push notification configs ------------------------------------------------------------

    def _check_push_config(self, config: TaskPushNotificationConfig, field: str) -> None:
        if not self.config.push_notifications:
            raise _push_not_supported()
        problem = url_text_problem(config.url) or url_problem(
            config.url, self.config.push_allow_hosts
        )
        if problem is not None:
            raise _bad_param(f"{field}.url", problem)
        checks: list[tuple[str, str, Callable[[str], str | None]]] = [
            ("token", config.token, header_value_problem)
        ]
        if config.authentication is not None:
            checks.append(
                ("authentication.scheme", config.authentication.scheme, auth_scheme_problem)
            )
            checks.append(
                (
                    "authentication.credentials",
                    config.authentication.credentials,
                    header_value_problem,
                )
            )
        for name, value, check in checks:
            problem = check(value)
            if problem is not None:
                raise _bad_param(f"{field}.{name}", problem)

    def _checked_config_count(self, record: TaskRecord) -> TaskRecord:
        if len(record.push_configs) > self.config.max_push_configs:
            raise _bad_param(
                "params.id",
                f"task {record.task.id} already has {self.config.max_push_configs} push configs, "
                "the most it may have; delete one first",
            )
        return record

    def _push_call(self, call: Call, snapshot: Snapshot, ctx: Context) -> Decision:
        if not self.config.push_notifications:
            raise _push_not_supported()
        request = call.request
        assert isinstance(
            request,
            TaskPushNotificationConfig
            | GetTaskPushNotificationConfigRequest
            | ListTaskPushNotificationConfigsRequest
            | DeleteTaskPushNotificationConfigRequest,
        )
        if not request.task_id:
            raise _bad_param("params.taskId", "required field is missing")
        owner = Owner(call.caller.principal, request.tenant)
        record = self._owned(snapshot, request.task_id, owner, ctx)
        configs = record.push_configs
        match request:
            case TaskPushNotificationConfig():
                self._check_push_config(request, "params")
                updated = self._checked_config_count(_with_push_config(record, request, ctx))
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
            case DeleteTaskPushNotificationConfigRequest(id=config_id):
                kept = tuple(c for c in configs if c.id != config_id)
                if len(kept) == len(configs):
                    return Decision(reply=Respond(None))  # deleting is idempotent
                updated = attrs.evolve(record, push_configs=kept, version=record.version + 1)
                return Decision(writes=(Put(updated, record.version),), reply=Respond(None))

    # --- committing changes ---------------------------------------------------------------------

    def _commit(
        self, previous: TaskRecord | None, updated: TaskRecord, events: Sequence[StreamEvent]
    ) -> tuple[Put, tuple[Effect, ...]]:
        """The write of ``updated`` with its new events numbered; their publication and pushes."""
        first = updated.seq - len(events) + 1
        logged = tuple(LoggedEvent(first + i, event) for i, event in enumerate(events))
        put = Put(updated, previous.version if previous else 0, logged)
        if not logged:
            return put, ()
        publish = Publish(updated, logged, settled=updated.state.settled)
        if not self.config.push_notifications:
            return put, (publish,)  # configs stored while push was on are not served now
        pushes = [
            Push(updated.id, config, event) for event in logged for config in updated.push_configs
        ]
        return put, (publish, *pushes)

    # --- visibility and expiry -----------------------------------------------------------------

    def _owned(self, snapshot: Snapshot, task_id: str, owner: Owner, ctx: Context) -> TaskRecord:
        """``owner``'s task with this id; for anyone else exactly what a missing task gets."""
        if not task_id:
            raise _bad_param("params.id", "must not be empty")
        record = self._live(_mine(snapshot, task_id, owner), ctx.now)
        if record is None:
            raise _not_found(task_id)
        return record

    def _live(self, record: TaskRecord | None, now: datetime) -> TaskRecord | None:
        """``record``, unless it is a terminal task older than the TTL (then it is gone)."""
        ttl = self.config.task_ttl
        if record is None or ttl is None or not record.state.terminal:
            return record
        return record if record.updated_at + ttl > now else None  # expired at the TTL itself

    def _unexpired(self, page: Page, now: datetime) -> Page:
        live = tuple(r for r in page.records if self._live(r, now) is not None)
        if len(live) == len(page.records):
            return page
        return Page(live, max(page.total - (len(page.records) - len(live)), len(live)), page.next)

    def _sweep(self, now: datetime, expired: Expired | None) -> Decision:
        """A tick: delete the expired tasks the store found, and say when to look again."""
        ttl = self.config.task_ttl
        if ttl is None or expired is None:
            return Decision()
        gone = tuple(r for r in expired.records if self._live(r, now) is None)
        if len(expired.records) >= self.config.sweep_batch:
            wake_at: datetime | None = now  # a full batch: more may be waiting
        else:
            wake_at = expired.next_at + ttl if expired.next_at is not None else None
        return Decision(writes=tuple(Delete(r.id, r.version) for r in gone), wake_at=wake_at)

    def _with_expiry_alarm(self, decision: Decision) -> Decision:
        """Ask for a tick when a task this decision finished will have expired."""
        ttl = self.config.task_ttl
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

    # --- agent output -------------------------------------------------------------------------

    def _agent_output(self, out: AgentOutput, record: TaskRecord | None, ctx: Context) -> Decision:
        if record is None or record.run != out.run or not record.running:
            return Decision(effects=(StopRun(out.task_id, out.run),), run_over=True)
        updates: list[Update]
        try:
            updates = normalize(out.value, final=False)
        except InvalidAgentResponseError as error:
            updates = [exception_status(error)]
        return self._apply(record, updates, ctx, finished=False)

    def _agent_done(self, done: AgentDone, record: TaskRecord | None, ctx: Context) -> Decision:
        if record is None or record.run != done.run or not record.running:
            return Decision()
        updates: list[Update]
        if done.error is not None:
            updates = [exception_status(done.error)]
        else:
            try:
                updates = normalize(done.value, final=True)
            except InvalidAgentResponseError as error:
                updates = [exception_status(error)]
        return self._apply(record, updates, ctx, finished=True)

    def _apply(
        self, record: TaskRecord, updates: list[Update], ctx: Context, *, finished: bool
    ) -> Decision:
        task = record.task
        replied = record.replied
        events: list[StreamEvent] = []
        for update in updates:
            if task.status.state.terminal:
                break  # the run said more after finishing the task: it no longer counts
            match update:
                case Status(state=state, message=message):
                    event = _AGENT_EVENTS.get(state)
                    if event is None:
                        state, message = _invalid_state(state)
                        event = Event.AGENT_FAILED
                    task = _set_status(task, transition(task.status.state, event), message, ctx)
                    events.append(_status_event(task))
                case ArtifactChunk(artifact=artifact, append=append, last_chunk=last_chunk):
                    transition(task.status.state, Event.AGENT_ARTIFACT)  # legal while not terminal
                    if not artifact.artifact_id:
                        artifact = attrs.evolve(artifact, artifact_id=ctx.new_id())
                    task = attrs.evolve(task, artifacts=_merge(task.artifacts, artifact, append))
                    index = next(
                        i
                        for i, a in enumerate(task.artifacts)
                        if a.artifact_id == artifact.artifact_id
                    )
                    events.append(
                        TaskArtifactUpdateEvent(
                            task.id,
                            task.context_id,
                            artifact,
                            append=append,
                            last_chunk=last_chunk,
                            index=index,
                        )
                    )
                case Message() as message:
                    state = transition(task.status.state, Event.AGENT_COMPLETED)
                    task = _set_status(task, state, message, ctx)
                    replied = True
                    # The reply itself is logged before the completion it causes, so that a
                    # stream (from the log alone) can tell a reply from a completion with text.
                    assert task.status.message is not None
                    events.append(task.status.message)
                    events.append(_status_event(task))
        if finished and task.status.state in (TaskState.SUBMITTED, TaskState.WORKING):
            task = _set_status(task, TaskState.COMPLETED, None, ctx)
            events.append(_status_event(task))

        running = not finished and not task.status.state.terminal
        if not events and running == record.running:
            return Decision(run_over=not running)
        updated = attrs.evolve(
            record,
            task=task,
            version=record.version + 1,
            running=running,
            seq=record.seq + len(events),
            replied=replied,
        )
        put, published = self._commit(record, updated, events)
        return Decision(writes=(put,), effects=published, run_over=not running)


# --- helpers ----------------------------------------------------------------------------------


def _task_reads(owner: Owner, task_id: str) -> Reads:
    """The reads that find ``owner``'s task with this id: kept under the id, or under its
    :func:`named_key` if its client chose the id."""
    return Reads(task_id=task_id, named=named_key(owner, task_id) if task_id else "")


def _mine(snapshot: Snapshot, task_id: str, owner: Owner) -> TaskRecord | None:
    """``owner``'s task with this (wire) id in ``snapshot``, if there is one. The id must be
    the task's own: a key asked for as an id finds nothing."""
    for record in (snapshot.named, snapshot.task):
        if record is not None and record.owner == owner and record.task.id == task_id:
            return record
    return None


def _claim(message: Message, fingerprint: str | None) -> tuple[tuple[str, str], ...]:
    """The message id a task takes for idempotency (none when sends are not deduplicated)."""
    return () if fingerprint is None else ((message.message_id, fingerprint),)


def _push_not_supported() -> PushNotificationNotSupportedError:
    return PushNotificationNotSupportedError(
        "Push Notification is not supported by this agent (capabilities.pushNotifications is false)"
    )


def _with_push_config(
    record: TaskRecord, config: TaskPushNotificationConfig, ctx: Context
) -> TaskRecord:
    """``record`` holding ``config`` last (with its ids filled in), replacing one with its id."""
    config = attrs.evolve(
        config, id=config.id or ctx.new_id(), task_id=record.task.id, tenant=record.owner.tenant
    )
    kept = tuple(c for c in record.push_configs if c.id != config.id)
    return attrs.evolve(record, push_configs=(*kept, config))


def _subscription(record: TaskRecord, after: int | None) -> OpenStream:
    """A ``SubscribeToTask`` stream: from now (snapshot first), or resumed after an event."""
    terminal = UnsupportedOperationError(
        f"Task {record.task.id} is in terminal state {record.state.value}: "
        "no more events will come, so there is nothing to subscribe to",
        metadata={"taskId": record.task.id, "state": record.state.value},
    )
    if after is None:
        if record.state.terminal:
            raise terminal
        return OpenStream(
            record.id, StreamMode.SUBSCRIBE, record.seq, view(record.task, None), record.state
        )
    if not 0 <= after <= record.seq:
        raise _bad_param(
            "Last-Event-ID",
            f"{after} is not an event of task {record.task.id} (latest: {record.seq})",
        )
    if after == record.seq and record.state.terminal:
        raise terminal
    # Resumed: the client has everything up to ``after``; the log has the rest.
    state = record.state if after == record.seq else None
    return OpenStream(record.id, StreamMode.SUBSCRIBE, after, None, state)


def _send_stream(
    record: TaskRecord, history_length: int | None, hold_until: datetime | None
) -> OpenStream:
    """The stream of a send: the task as of now, then whatever follows."""
    snapshot: Task | Message = view(record.task, history_length)
    if record.replied and record.state.settled and record.task.status.message is not None:
        snapshot = record.task.status.message
    return OpenStream(record.id, StreamMode.SEND, record.seq, snapshot, record.state, hold_until)


def _list_reply(request: ListTasksRequest, query: ListQuery, page: Page) -> ListTasksResponse:
    artifacts = bool(request.include_artifacts)
    return ListTasksResponse(
        tasks=tuple(
            view(r.task, request.history_length, artifacts=artifacts) for r in page.records
        ),
        next_page_token=page.next.encode() if page.next else "",
        page_size=query.page_size,
        total_size=page.total,
    )


def _check_history_length(history_length: int | None, field: str) -> None:
    if history_length is not None and history_length < 0:
        raise _bad_param(field, f"must not be negative, got {history_length}")


def _history_with_status(task: Task) -> tuple[Message, ...]:
    """The history once the current status message is superseded (it becomes history)."""
    message = task.status.message
    return task.history if message is None else (*task.history, message)


def _set_status(task: Task, state: TaskState, message: Message | None, ctx: Context) -> Task:
    if message is not None:
        message = attrs.evolve(
            message,
            message_id=message.message_id or ctx.new_id(),
            role=Role.AGENT,
            task_id=task.id,
            context_id=task.context_id,
        )
    return attrs.evolve(
        task,
        status=TaskStatus(state, message, ctx.now),
        history=_history_with_status(task),
    )


def _status_event(task: Task) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task.id, task.context_id, task.status)


def _merge(
    artifacts: tuple[Artifact, ...], artifact: Artifact, append: bool
) -> tuple[Artifact, ...]:
    """Add an artifact, replace the one with its id, or (``append``) extend that one's parts."""
    for index, existing in enumerate(artifacts):
        if existing.artifact_id == artifact.artifact_id:
            if append:
                artifact = attrs.evolve(existing, parts=(*existing.parts, *artifact.parts))
            return (*artifacts[:index], artifact, *artifacts[index + 1 :])
    return (*artifacts, artifact)


def _invalid_state(state: TaskState) -> tuple[TaskState, Message]:
    return TaskState.FAILED, agent_message(
        f"Invalid agent response: an agent cannot move a task to {state.value}"
    )
