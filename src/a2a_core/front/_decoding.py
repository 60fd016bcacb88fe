"""Decoding requests: the JSON-RPC envelope and method tables of every dialect, and the
HTTP+JSON routes' parameters, into one v1.0 :class:`~a2a_core.decisions.Call`.

Checks run in the order that makes each error precise: body size (before any parsing), content
type, JSON, envelope, protocol version, method, and only then the parameters. The older
dialects (v0.3, and v0.1 "legacy") are rewritten into v1.0 JSON by the transforms of
``_wire_v03`` and then decoded by the same strict v1.0 decoder.
"""

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from a2a_core._config import CoreConfig
from a2a_core._errors import (
    A2AError,
    ContentTypeNotSupportedError,
    FieldViolation,
    InvalidParamsError,
    MethodNotFoundError,
    ParseError,
    PayloadTooLargeError,
    VersionNotSupportedError,
)
from a2a_core._json import BadValue, JsonLimits, NotJson, TooManyItems, loads
from a2a_core.decide._inputs import Call, Caller, Dialect, Operation
from a2a_core.model._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from a2a_core.model._task import Message, TaskPushNotificationConfig
from a2a_core.wire._jsonrpc import RpcFailure, parse_request, peek_id
from a2a_core.wire._strict import ascii_int
from a2a_core.wire._v03 import (
    legacy_push_in,
    legacy_send_in,
    push_get_in,
    push_id_in,
    push_set_in,
    send_in,
)
from a2a_core.wire._v1 import V1Codec

from ._exchange import JSON, Binding, Dispatch, HttpRequest
from ._extensions import declared, missing_required, refusal
from ._rest import rest_params

__all__ = ["LEGACY_METHODS", "STREAMING", "V03_METHODS", "V1_METHODS", "Decoder", "RestFailure"]

STREAMING = frozenset({Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK})
_JSON_TYPES = frozenset({JSON, "application/a2a+json"})


#: The v1.0 JSON-RPC methods and the request type each one's params decode into.
V1_METHODS: Mapping[str, tuple[Operation, type[Any]]] = {
    "SendMessage": (Operation.SEND_MESSAGE, SendMessageRequest),
    "SendStreamingMessage": (Operation.SEND_STREAMING_MESSAGE, SendMessageRequest),
    "GetTask": (Operation.GET_TASK, GetTaskRequest),
    "ListTasks": (Operation.LIST_TASKS, ListTasksRequest),
    "CancelTask": (Operation.CANCEL_TASK, CancelTaskRequest),
    "SubscribeToTask": (Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest),
    "CreateTaskPushNotificationConfig": (
        Operation.CREATE_PUSH_CONFIG,
        TaskPushNotificationConfig,
    ),
    "GetTaskPushNotificationConfig": (
        Operation.GET_PUSH_CONFIG,
        GetTaskPushNotificationConfigRequest,
    ),
    "ListTaskPushNotificationConfigs": (
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsRequest,
    ),
    "DeleteTaskPushNotificationConfig": (
        Operation.DELETE_PUSH_CONFIG,
        DeleteTaskPushNotificationConfigRequest,
    ),
    "GetExtendedAgentCard": (Operation.GET_EXTENDED_CARD, GetExtendedAgentCardRequest),
}


def _same(params: Any) -> Any:
    return params


def _no_params(params: Any) -> Any:
    return {}


#: Methods of the older dialects: the operation, the v1.0 request type their params become,
#: and the transform that reshapes the params into v1.0 JSON first (see ``_wire_v03``).
#: ``tasks/get``, ``tasks/cancel`` and ``tasks/resubscribe`` are common to v0.3 and v0.1.
V03_METHODS: Mapping[str, tuple[Operation, type[Any], Any]] = {
    "message/send": (Operation.SEND_MESSAGE, SendMessageRequest, send_in),
    "message/stream": (Operation.SEND_STREAMING_MESSAGE, SendMessageRequest, send_in),
    "tasks/get": (Operation.GET_TASK, GetTaskRequest, _same),
    "tasks/cancel": (Operation.CANCEL_TASK, CancelTaskRequest, _same),
    "tasks/resubscribe": (Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest, _same),
    "tasks/pushNotificationConfig/set": (
        Operation.CREATE_PUSH_CONFIG,
        TaskPushNotificationConfig,
        push_set_in,
    ),
    "tasks/pushNotificationConfig/get": (
        Operation.GET_PUSH_CONFIG,
        GetTaskPushNotificationConfigRequest,
        push_get_in,
    ),
    "tasks/pushNotificationConfig/list": (
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsRequest,
        push_id_in,
    ),
    "tasks/pushNotificationConfig/delete": (
        Operation.DELETE_PUSH_CONFIG,
        DeleteTaskPushNotificationConfigRequest,
        push_get_in,
    ),
    "agent/getAuthenticatedExtendedCard": (
        Operation.GET_EXTENDED_CARD,
        GetExtendedAgentCardRequest,
        _no_params,
    ),
}
LEGACY_METHODS: Mapping[str, tuple[Operation, type[Any], Any]] = {
    "tasks/send": (Operation.SEND_MESSAGE, SendMessageRequest, legacy_send_in),
    "tasks/sendSubscribe": (Operation.SEND_STREAMING_MESSAGE, SendMessageRequest, legacy_send_in),
    "tasks/pushNotification/set": (
        Operation.CREATE_PUSH_CONFIG,
        TaskPushNotificationConfig,
        legacy_push_in,
    ),
    "tasks/pushNotification/get": (
        Operation.GET_PUSH_CONFIG,
        GetTaskPushNotificationConfigRequest,
        push_get_in,
    ),
}
#: The v1.0 name of each old method, for the hint when a v1.0 client calls one.
_V1_NAMES = {name: entry[0].value for name, entry in {**V03_METHODS, **LEGACY_METHODS}.items()}


def _method(name: str, *, old_dialects: bool) -> tuple[Dialect, Operation, type[Any], Any] | None:
    if name in V1_METHODS:
        operation, request_type = V1_METHODS[name]
        return Dialect.V1_0, operation, request_type, _same
    if not old_dialects:
        return None
    for dialect, table in ((Dialect.V0_3, V03_METHODS), (Dialect.LEGACY, LEGACY_METHODS)):
        if name in table:
            return (dialect, *table[name])
    return None


class RestFailure(Exception):
    """A REST request that fails before its call: answer ``error`` as a ``google.rpc.Status``."""

    def __init__(self, error: A2AError) -> None:
        self.error = error


#: The versions clients send, as :func:`_major_minor` reads them: looked up rather than parsed
#: again on every request (the parse is a dozen calls).
_USUAL_VERSIONS: Mapping[str, tuple[int, int]] = {
    "1.0": (1, 0),
    "0.3": (0, 3),
    "1.0.0": (1, 0),
    "0.3.0": (0, 3),
}


def requested_version(request: HttpRequest) -> str:
    """The ``A2A-Version`` the client asked for (header, else query parameter), or ``""``."""
    value = request.headers.get("a2a-version", "")
    if value in _USUAL_VERSIONS:
        return value  # (nothing to split off or strip)
    if not value and request.query:
        values = parse_qs(request.query).get("A2A-Version")
        value = values[0] if values else ""
    return value.split(",", 1)[0].strip()


def _major_minor(version: str) -> tuple[int, int] | None:
    """``(major, minor)`` of ``Major.Minor`` or ``Major.Minor.patch`` (the patch is ignored)."""
    if version in _USUAL_VERSIONS:
        return _USUAL_VERSIONS[version]
    parts = version.split(".")
    if not 2 <= len(parts) <= 3 or any(ascii_int(p, max_digits=6) is None for p in parts):
        return None
    return int(parts[0]), int(parts[1])


class Decoder:
    """Turns requests into calls (or the protocol error that says why not)."""

    def __init__(self, config: CoreConfig, codec: V1Codec) -> None:
        self._config = config
        self._codec = codec
        self._json_limits = JsonLimits(config.max_json_depth, config.max_json_items)
        # Whether the card requires any extension (a frozen card, so once): most require none,
        # and then no request lacks one.
        self._requires_extensions = any(
            extension.required and extension.uri
            for extension in config.card.capabilities.extensions
        )

    def rpc(self, request: HttpRequest, caller: Caller) -> Dispatch:
        body = request.body
        try:
            self._check_size(request)
        except PayloadTooLargeError as error:
            raise RpcFailure(None, error) from None
        try:
            self._check_content_type(request, "JSON-RPC requests")
        except ContentTypeNotSupportedError as error:
            raise RpcFailure(peek_id(body, self._json_limits), error) from None
        rpc = parse_request(body, self._json_limits)
        version = requested_version(request)
        asked = _major_minor(version) if version else (0, 3)  # no header means 0.3 (§3.6.2)
        if asked is None or asked not in ((1, 0), (0, 3), (0, 2), (0, 1)):
            raise RpcFailure(rpc.id, self.version_error(version))
        if asked != (1, 0) and not self._config.v03:
            # The older dialects are off: only 1.0 is spoken.
            raise RpcFailure(rpc.id, self.version_error(version))
        found = _method(rpc.method, old_dialects=self._config.v03)
        if found is None or (found[0] is not Dialect.V1_0 and asked == (1, 0)):
            hint = f"; in A2A 1.0 it is {_V1_NAMES[rpc.method]!r}" if found else ""
            raise RpcFailure(
                rpc.id,
                MethodNotFoundError(
                    f"Method not found: {rpc.method!r} is not an A2A {version or '0.3'} "
                    f"method{hint}",
                    metadata={"method": rpc.method},
                ),
            )
        dialect, operation, request_type, transform = found
        if dialect is Dialect.V1_0 and asked != (1, 0):
            raise RpcFailure(rpc.id, self.version_error(version))
        try:
            decoded = self._codec.decode(request_type, transform(rpc.params), "params")
            last_event_id = _last_event_id(request) if operation in STREAMING else None
            extensions = self.extensions(request, operation, decoded)
        except A2AError as error:
            raise RpcFailure(rpc.id, error) from None
        call = Call(operation, decoded, caller, last_event_id, dialect, extensions)
        return Dispatch(call, rpc.id)

    def rest(self, request: HttpRequest, found: Any, caller: Caller) -> Dispatch:
        """A REST request as a call: body, query and path merged, then decoded like params."""
        route = found.route
        try:
            self._check_size(request)
            body: Any = None
            if route.body and request.body.strip():
                self._check_content_type(request, "HTTP+JSON requests")
                body = self._rest_body(request.body)
                if not isinstance(body, dict):
                    raise InvalidParamsError("Invalid parameters: the body must be a JSON object")
            version = requested_version(request)
            if _major_minor(version) != (1, 0):
                raise self.version_error(version)
            request_type = V1_METHODS[route.operation.value][1]
            params = rest_params(found, request.query, body)
            decoded = self._codec.decode(request_type, params, "")
            last_event_id = _last_event_id(request) if route.operation in STREAMING else None
            extensions = self.extensions(request, route.operation, decoded)
        except A2AError as error:
            raise RestFailure(error) from None
        call = Call(route.operation, decoded, caller, last_event_id, extensions=extensions)
        return Dispatch(call, None, Binding.REST)

    def extensions(
        self, request: HttpRequest, operation: Operation, decoded: Any
    ) -> frozenset[str]:
        """The extensions the request declares (its header, and a sent message's own); an
        error if it lacks one the card requires (the card's operations excepted: a client
        reads the card to learn what is required)."""
        found = declared(request.headers)
        message = getattr(decoded, "message", None)
        if isinstance(message, Message) and message.extensions:
            found = found | frozenset(message.extensions)
        if self._requires_extensions and operation is not Operation.GET_EXTENDED_CARD:
            missing = missing_required(self._config.card, found)
            if missing:
                raise refusal(missing)
        return found

    def _rest_body(self, raw: bytes) -> Any:
        """A REST request's body, parsed within the JSON limits (fields named from its root)."""
        try:
            return loads(raw, self._json_limits)
        except NotJson as error:
            raise ParseError(f"Invalid JSON payload: {error}") from None
        except TooManyItems as error:
            raise PayloadTooLargeError(f"Request too large: {error}") from None
        except BadValue as bad:
            path = bad.path or "body"
            raise InvalidParamsError(
                f"Invalid parameters: {path}: {bad.problem}",
                violations=(FieldViolation(path, bad.problem),),
            ) from None

    def _check_size(self, request: HttpRequest) -> None:
        limit = self._config.max_body_bytes
        headers = request.headers
        declared = (
            ascii_int(headers["content-length"].strip(), max_digits=30)
            if "content-length" in headers
            else None
        )
        size = max(len(request.body), declared or 0)
        if size > limit:
            raise PayloadTooLargeError(
                f"Request body too large: {size} bytes, the limit is {limit}"
            )

    def _check_content_type(self, request: HttpRequest, what: str) -> None:
        content_type = request.headers.get("content-type", "")
        if content_type == JSON:
            return  # what nearly every client sends: nothing to split off or fold
        media_type = content_type.split(";", 1)[0].strip().lower()
        if media_type and media_type not in _JSON_TYPES:
            raise ContentTypeNotSupportedError(
                f"Incompatible content types: the request's Content-Type is {media_type!r}; "
                f"{what} must be application/json"
            )

    def version_error(self, version: str) -> VersionNotSupportedError:
        if not version:
            message = (
                "Protocol version is not supported: no A2A-Version header was sent, which means "
                "0.3; this server speaks 1.0 (send A2A-Version: 1.0)"
            )
        else:
            message = (
                f"Protocol version is not supported: {version!r}; this server speaks 1.0 "
                "(send A2A-Version: 1.0)"
            )
        return VersionNotSupportedError(
            message, metadata={"requestedVersion": version or "0.3", "supportedVersions": "1.0"}
        )


def _last_event_id(request: HttpRequest) -> int | None:
    """The ``Last-Event-ID`` a reconnecting stream client sent (our ids are event numbers)."""
    value = request.headers.get("last-event-id", "").strip()
    if not value:
        return None
    number = ascii_int(value)
    if number is None:
        problem = f"{value[:40]!r} is not an event id this server sent (they are event numbers)"
        raise InvalidParamsError(
            f"Invalid parameters: Last-Event-ID: {problem}",
            violations=(FieldViolation("Last-Event-ID", problem),),
        )
    return number
