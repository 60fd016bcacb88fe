"""What drives the core: client calls, agent output, and the clock.

Every input is a frozen value. Together with the store's snapshot and a :class:`World` (the
time, and a source of fresh ids) it fully determines the core's decision, so any run of the
server can be replayed exactly from its inputs.
"""

from collections.abc import Callable
from datetime import datetime
from typing import Any

import attrs

from a2a_core.model._requests import Request
from a2a_core.model._task import FastEnum

__all__ = [
    "ANONYMOUS",
    "AgentDone",
    "AgentOutput",
    "Call",
    "Caller",
    "Dialect",
    "Input",
    "Operation",
    "Rerun",
    "Tick",
    "World",
]


class Operation(FastEnum):
    """An A2A operation; values are the v1.0 JSON-RPC method names."""

    SEND_MESSAGE = "SendMessage"
    SEND_STREAMING_MESSAGE = "SendStreamingMessage"
    GET_TASK = "GetTask"
    LIST_TASKS = "ListTasks"
    CANCEL_TASK = "CancelTask"
    SUBSCRIBE_TO_TASK = "SubscribeToTask"
    CREATE_PUSH_CONFIG = "CreateTaskPushNotificationConfig"
    GET_PUSH_CONFIG = "GetTaskPushNotificationConfig"
    LIST_PUSH_CONFIGS = "ListTaskPushNotificationConfigs"
    DELETE_PUSH_CONFIG = "DeleteTaskPushNotificationConfig"
    GET_EXTENDED_CARD = "GetExtendedAgentCard"


class Dialect(FastEnum):
    """Which version of the protocol a call was made in (it shapes a few semantics too)."""

    V1_0 = "1.0"
    V0_3 = "0.3"
    #: The ``tasks/send`` family (v0.1): client-chosen task ids, sends always acknowledged at
    #: once, messages without ids.
    LEGACY = "0.1"


@attrs.frozen
class Caller:
    """The identity a request comes from, as the adapter verified it (the core trusts it).

    ``authenticated`` is false for the shared anonymous caller of a server that runs open.
    """

    principal: str
    authenticated: bool = True


#: The caller of a server that authenticates nobody: every request is this one principal's.
ANONYMOUS = Caller("anonymous", authenticated=False)


@attrs.frozen
class Call:
    """A decoded client request.

    ``last_event_id`` is the event a reconnecting stream client says it has (``Last-Event-ID``);
    ``extensions``, the extension URIs it declared (``A2A-Extensions``).
    """

    operation: Operation
    request: Request
    caller: Caller
    last_event_id: int | None = None
    dialect: Dialect = Dialect.V1_0
    extensions: frozenset[str] = frozenset()


@attrs.frozen
class AgentOutput:
    """Run ``run`` of the agent on task ``task_id`` yielded ``value``."""

    task_id: str
    run: int
    value: Any


@attrs.frozen
class AgentDone:
    """Run ``run`` ended: it returned ``value``, or raised ``error``."""

    task_id: str
    run: int
    value: Any = None
    error: BaseException | None = None


@attrs.frozen
class Rerun:
    """The server restarted while run ``run`` counted: start the agent again on the task's
    last message from the user (``CoreConfig.on_restart="rerun"``)."""

    task_id: str
    run: int


@attrs.frozen
class Tick:
    """The deadline the core asked for (``Decision.wake_at``) has passed; it is now ``now``.

    Adapters also tick once when they start, so that what expired while they were down goes.
    """

    now: datetime


Input = Call | AgentOutput | AgentDone | Rerun | Tick


@attrs.frozen
class World:
    """The world outside the core, passed in so that the core never reads it itself."""

    now: datetime
    #: Returns a fresh unique id on each call (task, context, message and artifact ids).
    new_id: Callable[[], str]
