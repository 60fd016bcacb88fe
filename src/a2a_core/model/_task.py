"""The version-neutral A2A data model.

Every wire dialect (v1.0 ProtoJSON, v0.3 JSON-RPC, the legacy ``tasks/send`` family) is decoded
into these classes and encoded from them, so the reducer reasons about one shape only. The shape
follows the normative v1.0 proto (``lf.a2a.v1``) because it is the richest: older dialects map
into it without loss, while the reverse would not hold.

Conventions, taken from proto3 so that encoding is a straight mapping:

* a plain proto3 string is ``str`` defaulting to ``""`` (the empty string *is* "unset" on the
  wire, and an empty string is never emitted);
* a ``oneof`` member or an ``optional`` field is ``X | None`` defaulting to ``None``, because
  there presence matters (``Part(text="")`` is a real, empty text part);
* repeated fields are tuples, so that values are immutable and can be shared between the stored
  task, the events published about it and the replies rendered from it without copying.

Everything is a frozen attrs class: a task is never edited in place, a new version replaces it.
"""

import enum
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

__all__ = [
    "Artifact",
    "AuthenticationInfo",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksResponse",
    "Message",
    "Part",
    "Role",
    "SendMessageResponse",
    "StreamEvent",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskPushNotificationConfig",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
]

#: A JSON object as carried by ``metadata`` fields (``google.protobuf.Struct``).
Metadata = Mapping[str, Any]

#: Field metadata for a field that is REQUIRED on the wire although the model gives it a
#: default: the codecs write it even when it holds that default.
ALWAYS_KEY = "a2a_emit_always"
ALWAYS: Mapping[str, bool] = {ALWAYS_KEY: True}
#: Field metadata for what the server keeps beside a wire object but never sends or accepts.
SERVER_ONLY_KEY = "a2a_server_only"
SERVER_ONLY: Mapping[str, bool] = {SERVER_ONLY_KEY: True}


class FastEnum(enum.Enum):
    """An enum hashed by identity. ``enum.Enum`` hashes a member by its name in Python code,
    and the core looks members up in sets and tables on every decision (the state tables, the
    terminal states): its members are singletons, so identity is the same equality, in C."""

    __hash__ = object.__hash__


class TaskState(FastEnum):
    """The lifecycle state of a task; values are the v1.0 ProtoJSON names."""

    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"

    # Set on each member below, once: asked of a state several times in every decision, an
    # attribute is read in C, where a property ran Python code each time.
    #: A terminal task is immutable: no message, cancel or agent output changes it.
    terminal: bool
    #: The agent waits on the client (input or credentials); a blocking send returns here.
    interrupted: bool
    #: Terminal or interrupted: the point where a blocking send answers and a stream closes.
    settled: bool


_TERMINAL = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)
_INTERRUPTED = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
for _state in TaskState:
    _state.terminal = _state in _TERMINAL
    _state.interrupted = _state in _INTERRUPTED
    _state.settled = _state.terminal or _state.interrupted
del _state


class Role(FastEnum):
    """Who wrote a message; values are the v1.0 ProtoJSON names."""

    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"


def _one_content(instance: "Part", attribute: "attrs.Attribute[Any]", value: Any) -> None:
    del attribute, value
    # (Summed by hand, not with a generator: every Part built, decoded ones too, runs this.)
    present = (
        (instance.text is not None)
        + (instance.raw is not None)
        + (instance.url is not None)
        + (instance.data is not None)
    )
    if present != 1:
        raise ValueError("a Part holds exactly one of text, raw, url or data")


@attrs.frozen
class Part:
    """One piece of content: exactly one of ``text``, ``raw`` bytes, a ``url`` or JSON ``data``."""

    text: str | None = None
    raw: bytes | None = None
    url: str | None = None
    data: Any = attrs.field(default=None, validator=_one_content)
    metadata: Metadata | None = None
    filename: str = ""
    media_type: str = ""


@attrs.frozen
class Message:
    """A turn in the conversation between a client (user) and the agent."""

    message_id: str
    role: Role
    parts: tuple[Part, ...]
    context_id: str = ""
    task_id: str = ""
    metadata: Metadata | None = None
    extensions: tuple[str, ...] = ()
    reference_task_ids: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The message's text parts joined by newlines (the common case for simple agents)."""
        return "\n".join(p.text for p in self.parts if p.text is not None)


@attrs.frozen
class Artifact:
    """An output of the agent, identified by ``artifact_id`` within its task."""

    artifact_id: str
    parts: tuple[Part, ...]
    name: str = ""
    description: str = ""
    metadata: Metadata | None = None
    extensions: tuple[str, ...] = ()


@attrs.frozen
class TaskStatus:
    """A task's state, the agent message that goes with it, and when it was entered."""

    state: TaskState
    message: Message | None = None
    timestamp: datetime | None = None


@attrs.frozen
class Task:
    """The unit of work an A2A server tracks for a client."""

    id: str
    status: TaskStatus
    context_id: str = ""
    artifacts: tuple[Artifact, ...] = ()
    history: tuple[Message, ...] = ()
    metadata: Metadata | None = None


@attrs.frozen
class TaskStatusUpdateEvent:
    """A streamed (or pushed) change of a task's status."""

    task_id: str
    context_id: str
    status: TaskStatus
    metadata: Metadata | None = None


@attrs.frozen
class TaskArtifactUpdateEvent:
    """A streamed (or pushed) artifact, or a chunk of one when ``append`` is set."""

    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: Metadata | None = None
    #: The artifact's place in the task's artifacts (v0.1 told artifacts apart by it; the v1.0
    #: wire has no such field). Bookkeeping, so equality ignores it.
    index: int | None = attrs.field(default=None, eq=False, metadata=SERVER_ONLY)


@attrs.frozen
class AuthenticationInfo:
    """Credentials a push-notification sender puts in the ``Authorization`` header."""

    scheme: str
    credentials: str = ""


@attrs.frozen
class TaskPushNotificationConfig:
    """Where (and with which credentials) to deliver a task's updates by webhook."""

    url: str
    tenant: str = ""
    id: str = ""
    task_id: str = ""
    token: str = ""
    authentication: AuthenticationInfo | None = None


@attrs.frozen
class ListTasksResponse:
    """One page of ``ListTasks``; every field is required on the wire, hence no defaults."""

    tasks: tuple[Task, ...]
    next_page_token: str
    page_size: int
    total_size: int


@attrs.frozen
class ListTaskPushNotificationConfigsResponse:
    """The push configs of a task (all of them: a task holds only a few)."""

    configs: tuple[TaskPushNotificationConfig, ...]
    next_page_token: str = attrs.field(default="", metadata=ALWAYS)


#: The ``oneof`` payload of ``SendMessageResponse``: a task, or a direct message reply.
SendMessageResponse = Task | Message

#: The ``oneof`` payload of ``StreamResponse``: what streams, pushes and the event log carry.
StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
