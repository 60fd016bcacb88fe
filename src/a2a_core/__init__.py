"""a2a_core: a synchronous, I/O-free Agent2Agent (A2A) protocol server.

This namespace is for agent authors: the agent API (what an agent receives and may yield or
return), the A2A data model, the protocol's requests, and the :class:`Core` with its
:class:`CoreConfig` that a server is built from. The other faces are namespaces of their own,
so that each reader sees the names meant for them:

- :mod:`a2a_core.transport`: the :class:`~a2a_core.transport.Server` machine a transport drives
  and the actions it emits, with the HTTP values and SSE framing;
- :mod:`a2a_core.decisions`: the pure deciders below the machine (inputs, decisions, effects, the
  state tables and the stream cursor), for tests and for transports that want to go lower;
- :mod:`a2a_core.store`: the store contract, sync and async, and the in-memory store;
- :mod:`a2a_core.card`: the agent card and its security schemes;
- :mod:`a2a_core.errors`: the protocol errors with their codes;
- :mod:`a2a_core.testing`: a synchronous driver and hypothesis strategies.

See ``docs/core.md`` for how the pieces fit.
"""

from ._agent_api import (
    Agent,
    AgentContext,
    ArtifactChunk,
    InputError,
    MissingInput,
    RunAbandoned,
    StateChange,
    Update,
    agent_message,
    auth_required,
    completed,
    exception_status,
    failed,
    input_required,
    rejected,
    reply,
    text_artifact,
    working,
)
from ._config import CoreConfig, ErrorMapping
from .machine._core import Core
from .model._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Request,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from .model._task import (
    Artifact,
    AuthenticationInfo,
    ListTaskPushNotificationConfigsResponse,
    ListTasksResponse,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = [
    "Agent",
    "AgentContext",
    "Artifact",
    "ArtifactChunk",
    "AuthenticationInfo",
    "CancelTaskRequest",
    "Core",
    "CoreConfig",
    "DeleteTaskPushNotificationConfigRequest",
    "ErrorMapping",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "InputError",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksRequest",
    "ListTasksResponse",
    "Message",
    "MissingInput",
    "Part",
    "Request",
    "Role",
    "RunAbandoned",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "StateChange",
    "StreamEvent",
    "SubscribeToTaskRequest",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskPushNotificationConfig",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "Update",
    "agent_message",
    "auth_required",
    "completed",
    "exception_status",
    "failed",
    "input_required",
    "rejected",
    "reply",
    "text_artifact",
    "working",
]
