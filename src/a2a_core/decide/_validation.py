"""What a request must be, beyond what decoding checks: the rules the reducer applies before it
decides anything, each refusing with the protocol's error and the field it names.

Decoding (``_wire``) makes sure a request has the right JSON types; these rules look at what the
values mean: a client's message is the user's, non-empty, within the part limit, of media types
the skill accepts; a push config can be delivered; a listing's page is within bounds; a named
skill exists. Kept apart from the decisions so that each rule is written (and tested) once.
"""

from collections.abc import Callable, Sequence

from a2a_core._config import CoreConfig
from a2a_core._errors import (
    ContentTypeNotSupportedError,
    FieldViolation,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
)
from a2a_core.model._card import AgentCard
from a2a_core.model._records import Owner, TaskRecord
from a2a_core.model._requests import ListTasksRequest, SendMessageRequest
from a2a_core.model._task import Message, Role, TaskPushNotificationConfig, TaskState
from a2a_core.store._contract import Cursor, ListQuery

from ._push_policy import (
    auth_scheme_problem,
    header_value_problem,
    url_problem,
    url_text_problem,
)

__all__ = [
    "bad_param",
    "check_config_count",
    "check_history_length",
    "check_media_types",
    "check_message",
    "check_push_config",
    "list_query",
    "not_found",
    "push_not_supported",
    "skill_of",
]


def bad_param(field: str, problem: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Invalid parameters: {field}: {problem}", violations=(FieldViolation(field, problem),)
    )


def not_found(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(f"Task {task_id} not found", metadata={"taskId": task_id})


def push_not_supported() -> PushNotificationNotSupportedError:
    return PushNotificationNotSupportedError(
        "Push Notification is not supported by this agent (capabilities.pushNotifications is false)"
    )


def check_message(config: CoreConfig, message: Message) -> None:
    """A client's message: the user's, with an id, and between one part and the limit."""
    if message.role is not Role.USER:
        raise bad_param("params.message.role", "a client's message must have role ROLE_USER")
    if not message.message_id:
        raise bad_param("params.message.messageId", "must not be empty")
    if not message.parts:
        raise bad_param("params.message.parts", "must hold at least one part")
    if len(message.parts) > config.max_message_parts:
        raise bad_param(
            "params.message.parts",
            f"holds {len(message.parts)} parts; a message may hold at most "
            f"{config.max_message_parts}",
        )


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


def check_media_types(card: AgentCard, message: Message, skill_id: str) -> None:
    """Every part's media type must be one the skill (or else the agent) accepts."""
    skill = card.skill(skill_id) if skill_id else None
    accepted = (skill.input_modes if skill else ()) or card.default_input_modes
    for index, part in enumerate(message.parts):
        if part.media_type and not _media_type_accepted(part.media_type, accepted):
            raise ContentTypeNotSupportedError(
                f"Incompatible content types: params.message.parts[{index}] has media type "
                f"{part.media_type!r}; this agent accepts {', '.join(accepted)}",
                metadata={"mediaType": part.media_type},
            )


def check_history_length(history_length: int | None, field: str) -> None:
    if history_length is not None and history_length < 0:
        raise bad_param(field, f"must not be negative, got {history_length}")


def skill_of(card: AgentCard, config: CoreConfig, request: SendMessageRequest) -> str:
    """The skill a new task is routed to: named in the request's or message's metadata."""
    for field, metadata in (
        ("params.metadata.skillId", request.metadata),
        ("params.message.metadata.skillId", request.message.metadata),
    ):
        if metadata is None or "skillId" not in metadata:
            continue
        skill_id = metadata["skillId"]
        if not isinstance(skill_id, str) or card.skill(skill_id) is None:
            known = ", ".join(s.id for s in card.skills)
            raise bad_param(field, f"unknown skill {skill_id!r}; this agent has: {known}")
        return skill_id
    return config.default_skill


def list_query(config: CoreConfig, principal: str, request: ListTasksRequest) -> ListQuery:
    """The store query a ``ListTasks`` asks for, its page size and cursor checked."""
    page_size = config.default_page_size if request.page_size is None else request.page_size
    if not 1 <= page_size <= config.max_page_size:
        raise bad_param(
            "params.pageSize", f"must be between 1 and {config.max_page_size}, got {page_size}"
        )
    check_history_length(request.history_length, "params.historyLength")
    try:
        cursor = Cursor.decode(request.page_token) if request.page_token else None
    except ValueError as error:
        raise bad_param("params.pageToken", str(error)) from None
    return ListQuery(
        owner=Owner(principal, request.tenant),
        page_size=page_size,
        context_id=request.context_id,
        state=None if request.status is TaskState.UNSPECIFIED else request.status,
        updated_since=request.status_timestamp_after,
        cursor=cursor,
    )


def check_push_config(config: CoreConfig, push: TaskPushNotificationConfig, field: str) -> None:
    """A webhook the sender can reach (the SSRF guard's first half) and whose credentials HTTP
    can carry, each field within ``max_push_field_bytes``: refused now rather than when a
    notification is sent (or paid for, in every notification's headers)."""
    if not config.push_notifications:
        raise push_not_supported()
    sized = [("id", push.id), ("url", push.url), ("token", push.token)]
    if push.authentication is not None:
        sized.append(("authentication.scheme", push.authentication.scheme))
        sized.append(("authentication.credentials", push.authentication.credentials))
    for name, value in sized:
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > config.max_push_field_bytes:
            raise bad_param(
                f"{field}.{name}",
                f"holds {size} bytes; a push config's fields may hold at most "
                f"{config.max_push_field_bytes}",
            )
    problem = url_text_problem(push.url) or url_problem(push.url, config.push_allow_hosts)
    if problem is not None:
        raise bad_param(f"{field}.url", problem)
    checks: list[tuple[str, str, Callable[[str], str | None]]] = [
        ("token", push.token, header_value_problem)
    ]
    if push.authentication is not None:
        auth = push.authentication
        checks.append(("authentication.scheme", auth.scheme, auth_scheme_problem))
        checks.append(("authentication.credentials", auth.credentials, header_value_problem))
    for name, value, check in checks:
        problem = check(value)
        if problem is not None:
            raise bad_param(f"{field}.{name}", problem)


def check_config_count(config: CoreConfig, record: TaskRecord) -> TaskRecord:
    if len(record.push_configs) > config.max_push_configs:
        raise bad_param(
            "params.id",
            f"task {record.task.id} already has {config.max_push_configs} push configs, "
            "the most it may have; delete one first",
        )
    return record
