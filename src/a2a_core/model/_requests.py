"""The operations a client can ask for, as decoded request values.

One class per A2A operation, shaped like the v1.0 proto request messages. Fields the proto marks
REQUIRED have no default, so the codec rejects a request that lacks them and names the field.
"""

from datetime import datetime

import attrs

from ._task import Message, Metadata, TaskPushNotificationConfig, TaskState

__all__ = [
    "CancelTaskRequest",
    "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "ListTaskPushNotificationConfigsRequest",
    "ListTasksRequest",
    "Request",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SubscribeToTaskRequest",
]


@attrs.frozen
class SendMessageConfiguration:
    """How the client wants a send handled (blocking, history cap, accepted outputs, webhook)."""

    accepted_output_modes: tuple[str, ...] = ()
    task_push_notification_config: TaskPushNotificationConfig | None = None
    history_length: int | None = None
    return_immediately: bool = False


@attrs.frozen
class SendMessageRequest:
    """``SendMessage`` and ``SendStreamingMessage``."""

    message: Message
    tenant: str = ""
    configuration: SendMessageConfiguration | None = None
    metadata: Metadata | None = None


@attrs.frozen
class GetTaskRequest:
    """``GetTask``."""

    id: str
    tenant: str = ""
    history_length: int | None = None


@attrs.frozen
class ListTasksRequest:
    """``ListTasks``: filters, cursor and rendering options."""

    tenant: str = ""
    context_id: str = ""
    status: TaskState = TaskState.UNSPECIFIED
    page_size: int | None = None
    page_token: str = ""
    history_length: int | None = None
    status_timestamp_after: datetime | None = None
    include_artifacts: bool | None = None


@attrs.frozen
class CancelTaskRequest:
    """``CancelTask``."""

    id: str
    tenant: str = ""
    metadata: Metadata | None = None


@attrs.frozen
class SubscribeToTaskRequest:
    """``SubscribeToTask``."""

    id: str
    tenant: str = ""


@attrs.frozen
class GetTaskPushNotificationConfigRequest:
    """``GetTaskPushNotificationConfig``."""

    task_id: str
    id: str
    tenant: str = ""


@attrs.frozen
class DeleteTaskPushNotificationConfigRequest:
    """``DeleteTaskPushNotificationConfig``."""

    task_id: str
    id: str
    tenant: str = ""


@attrs.frozen
class ListTaskPushNotificationConfigsRequest:
    """``ListTaskPushNotificationConfigs``."""

    task_id: str
    tenant: str = ""
    page_size: int = 0
    page_token: str = ""


@attrs.frozen
class GetExtendedAgentCardRequest:
    """``GetExtendedAgentCard``."""

    tenant: str = ""


#: Any decoded client request. ``CreateTaskPushNotificationConfig`` takes the config itself.
Request = (
    SendMessageRequest
    | GetTaskRequest
    | ListTasksRequest
    | CancelTaskRequest
    | SubscribeToTaskRequest
    | TaskPushNotificationConfig
    | GetTaskPushNotificationConfigRequest
    | DeleteTaskPushNotificationConfigRequest
    | ListTaskPushNotificationConfigsRequest
    | GetExtendedAgentCardRequest
)
