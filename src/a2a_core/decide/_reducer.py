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

from a2a_core._config import CoreConfig
from a2a_core._errors import A2AError, UnsupportedOperationError
from a2a_core.model._records import Owner, TaskRecord
from a2a_core.model._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from a2a_core.model._task import TaskPushNotificationConfig
from a2a_core.store._contract import ExpiryQuery, MessageKey, Reads, Snapshot
from a2a_core.wire._v1 import V1Codec

from ._card import complete_card
from ._changes import view
from ._effects import AwaitTask, Decision, Fail, Respond
from ._inputs import AgentDone, AgentOutput, Call, Input, Operation, Rerun, Tick, World
from ._outputs import agent_done, agent_output
from ._sends import rerun, send, settled_reply
from ._task_calls import cancel, list_reply, push_call, subscription
from ._validation import check_history_length, list_query
from ._visibility import owned, sweep, task_reads, unexpired, with_expiry_alarm

__all__ = ["Reducer"]

_PUSH_OPERATIONS = frozenset(
    {
        Operation.CREATE_PUSH_CONFIG,
        Operation.GET_PUSH_CONFIG,
        Operation.LIST_PUSH_CONFIGS,
        Operation.DELETE_PUSH_CONFIG,
    }
)


class Reducer:
    """Decides every input: a thin dispatcher over the concerns (sends, agent output, calls on
    existing tasks, visibility and expiry, validation). Holds only configuration, never state."""

    def __init__(self, config: CoreConfig, codec: V1Codec) -> None:
        self.config = config
        self._card = complete_card(config)

    def needs(self, inp: Input) -> Reads:
        """The records :meth:`decide` needs for ``inp``: fetch them and pass a Snapshot."""
        match inp:
            case Call(request=SendMessageRequest(message=message, tenant=tenant)):
                owner = Owner(inp.caller.principal, tenant)
                key = MessageKey(owner, message.message_id) if message.message_id else None
                return task_reads(owner, message.task_id, key)
            case Call(
                request=GetTaskRequest(id=task_id, tenant=tenant)
                | CancelTaskRequest(id=task_id, tenant=tenant)
                | SubscribeToTaskRequest(id=task_id, tenant=tenant)
            ):
                return task_reads(Owner(inp.caller.principal, tenant), task_id)
            case Call(operation=Operation.LIST_TASKS, request=ListTasksRequest() as request):
                try:
                    return Reads(listing=list_query(self.config, inp.caller.principal, request))
                except A2AError:
                    return Reads()  # decide() reports the same error
            case Call(
                request=TaskPushNotificationConfig(task_id=task_id, tenant=tenant)
                | GetTaskPushNotificationConfigRequest(task_id=task_id, tenant=tenant)
                | ListTaskPushNotificationConfigsRequest(task_id=task_id, tenant=tenant)
                | DeleteTaskPushNotificationConfigRequest(task_id=task_id, tenant=tenant)
            ):
                return task_reads(Owner(inp.caller.principal, tenant), task_id)
            case AgentOutput(task_id=task_id) | AgentDone(task_id=task_id) | Rerun(task_id=task_id):
                return Reads(task_id=task_id)
            case Tick(now=now) if self.config.task_ttl is not None:
                return Reads(
                    expiry=ExpiryQuery(now - self.config.task_ttl, self.config.sweep_batch)
                )
        return Reads()

    def decide(self, inp: Input, snapshot: Snapshot, ctx: World) -> Decision:
        """The decision for ``inp`` given what the store holds."""
        match inp:
            case Call():
                try:
                    decision = self._call(inp, snapshot, ctx)
                except A2AError as error:
                    return Decision(reply=Fail(error))
            case AgentOutput():
                decision = agent_output(self.config, inp, snapshot.task, ctx)
            case AgentDone():
                decision = agent_done(self.config, inp, snapshot.task, ctx)
            case Rerun():
                decision = rerun(inp, snapshot.task)
            case Tick():
                return sweep(self.config, inp.now, snapshot.expired)
        return with_expiry_alarm(self.config, decision)

    def settled_reply(self, wait: AwaitTask, record: TaskRecord) -> Respond:
        """The answer to a blocking send once its task has settled."""
        return settled_reply(wait, record)

    def _call(self, call: Call, snapshot: Snapshot, ctx: World) -> Decision:
        config = self.config
        principal = call.caller.principal
        match call.operation, call.request:
            case Operation.SEND_MESSAGE, SendMessageRequest() as request:
                return send(config, self._card, request, call, snapshot, ctx, streaming=False)
            case Operation.SEND_STREAMING_MESSAGE, SendMessageRequest() as request if (
                config.streaming
            ):
                return send(config, self._card, request, call, snapshot, ctx, streaming=True)
            case Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest() as request if (
                config.streaming
            ):
                owner = Owner(principal, request.tenant)
                record = owned(config, snapshot, request.id, owner, ctx.now)
                return Decision(reply=subscription(record, call.last_event_id))
            case Operation.GET_TASK, GetTaskRequest() as request:
                check_history_length(request.history_length, "params.historyLength")
                owner = Owner(principal, request.tenant)
                record = owned(config, snapshot, request.id, owner, ctx.now)
                return Decision(reply=Respond(view(record.task, request.history_length)))
            case Operation.LIST_TASKS, ListTasksRequest() as request:
                query = list_query(config, principal, request)
                assert snapshot.page is not None, "ListTasks needs the page it asked for"
                page = unexpired(config, snapshot.page, ctx.now)
                return Decision(reply=Respond(list_reply(request, query, page)))
            case Operation.CANCEL_TASK, CancelTaskRequest() as request:
                owner = Owner(principal, request.tenant)
                return cancel(config, owned(config, snapshot, request.id, owner, ctx.now), ctx)
            case (Operation.SEND_STREAMING_MESSAGE | Operation.SUBSCRIBE_TO_TASK, _) if (
                not config.streaming
            ):
                raise UnsupportedOperationError(
                    "Streaming is not supported by this agent (capabilities.streaming is false)"
                )
            case operation, _ if operation in _PUSH_OPERATIONS:
                return push_call(config, call, snapshot, ctx)
        # GetExtendedAgentCard is the HTTP front's: configuration, nothing to decide.
        raise UnsupportedOperationError(  # pragma: no cover - every operation is matched above
            f"This operation is not supported: {call.operation.value}"
        )
