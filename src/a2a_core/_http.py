"""The framework-free HTTP front: requests in as plain values, responses out as plain values.

An adapter (Quart, trio, a raw h11 loop, anything) hands over the method, the path below the
A2A root, the headers, the body and the caller it authenticated. The front answers at once when
it can (the agent card, every malformed request) or returns a :class:`Dispatch`: a decoded call
for the read-decide-commit-perform loop, plus what the front needs to render its reply later.

Checks run in the order that makes each error precise: body size (before any parsing), content
type, JSON, envelope, protocol version, method, and only then the parameters.
"""

import enum
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

import attrs

from ._card import CardRenderer, etag_matches
from ._config import CoreConfig
from ._effects import Fail, Notify, Push, Respond
from ._errors import (
    A2AError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    FieldViolation,
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    ParseError,
    PayloadTooLargeError,
    UnauthenticatedError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from ._inputs import Call, Caller, Dialect, Operation
from ._json import BadValue, JsonLimits, NotJson, TooManyItems, dumps, loads
from ._jsonrpc import RpcFailure, RpcId, error_body, parse_request, peek_id, result_body
from ._model import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from ._push_policy import host_allowed, host_of
from ._requests import (
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
from ._rest import match_rest, rest_error_body, rest_params, status_of
from ._sse import SSE_HEADERS, sse_event
from ._storage import LoggedEvent
from ._wire import ascii_int
from ._wire_v03 import (
    event_out,
    legacy_push_in,
    legacy_send_in,
    push_get_in,
    push_id_in,
    push_list_out,
    push_out,
    push_set_in,
    send_in,
    task_out,
    value_out,
)
from ._wire_v1 import V1Codec

__all__ = ["CARD_PATHS", "Dispatch", "HttpFront", "HttpRequest", "HttpResponse"]

#: Where the card is served: the current well-known path, and the one v0.1 to v0.2 clients use.
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")

_JSON = "application/json"
_STREAMING = frozenset({Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK})
_JSON_TYPES = frozenset({_JSON, "application/a2a+json"})

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


def _lower_keys(headers: Mapping[str, str]) -> Mapping[str, str]:
    if all(name.islower() for name in headers):
        return headers
    return {name.lower(): value for name, value in headers.items()}


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


@attrs.frozen
class HttpRequest:
    """An HTTP request as the core sees it (header names are compared in lower case)."""

    method: str
    #: The path below the A2A root (the adapter strips any mount prefix).
    path: str
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_lower_keys)
    body: bytes = b""
    #: The raw query string, without the ``?``.
    query: str = ""


@attrs.frozen
class HttpResponse:
    """An HTTP response to send as is."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""


class Binding(enum.Enum):
    """How a request reached us, and so how its reply is written."""

    JSONRPC = "JSONRPC"
    REST = "HTTP+JSON"


@attrs.frozen
class Dispatch:
    """A call to run through the store and the reducer; render its reply with ``Core.render``."""

    call: Call
    rpc_id: RpcId = None
    binding: Binding = Binding.JSONRPC


class _RestFailure(Exception):
    def __init__(self, error: A2AError) -> None:
        self.error = error


def _json_response(body: bytes, status: int = 200) -> HttpResponse:
    return HttpResponse(status, (("content-type", _JSON),), body)


def requested_version(request: HttpRequest) -> str:
    """The ``A2A-Version`` the client asked for (header, else query parameter), or ``""``."""
    value = request.headers.get("a2a-version", "")
    if not value and request.query:
        values = parse_qs(request.query).get("A2A-Version")
        value = values[0] if values else ""
    return value.split(",", 1)[0].strip()


def _major_minor(version: str) -> tuple[int, int] | None:
    """``(major, minor)`` of ``Major.Minor`` or ``Major.Minor.patch`` (the patch is ignored)."""
    parts = version.split(".")
    if not 2 <= len(parts) <= 3 or any(ascii_int(p, max_digits=6) is None for p in parts):
        return None
    return int(parts[0]), int(parts[1])


class HttpFront:
    """Routes HTTP requests and renders replies: the card, JSON-RPC and HTTP+JSON."""

    def __init__(self, config: CoreConfig, codec: V1Codec) -> None:
        self._config = config
        self._codec = codec
        self.cards = CardRenderer(config, codec)
        self._json_limits = JsonLimits(config.max_json_depth, config.max_json_items)

    def route(self, request: HttpRequest, caller: Caller, base_url: str) -> HttpResponse | Dispatch:
        """Answer ``request`` now, or say which call to run for it."""
        path = request.path or "/"
        if path in CARD_PATHS:
            if request.method not in ("GET", "HEAD"):
                return _not_allowed("GET, HEAD")
            return self._card(request, base_url)
        dispatch: Dispatch
        if path == self._config.rpc_path and request.method == "POST":
            try:
                dispatch = self._rpc(request, caller)
            except RpcFailure as failure:
                return self.render_error(failure.id, failure.error)
        else:
            found = match_rest(request.method, path) if self._config.rest else None
            if isinstance(found, frozenset):
                return _not_allowed(", ".join(sorted(found)))
            if found is None:
                if path == self._config.rpc_path:
                    return _not_allowed("POST")
                return _json_response(
                    b'{"error":{"code":404,"status":"NOT_FOUND",'
                    b'"message":"No A2A endpoint at this path"}}',
                    404,
                )
            try:
                dispatch = self._rest(request, found, caller)
            except _RestFailure as failure:
                return self._rest_error(failure.error)
        if dispatch.call.operation is Operation.GET_EXTENDED_CARD:
            # Nothing to read or decide: the card is configuration, answered here alone.
            return self.render(dispatch, self._extended_card(dispatch.call, base_url))
        return dispatch

    def _extended_card(self, call: Call, base_url: str) -> Respond | Fail:
        if self._config.extended_card is None:
            if call.dialect is not Dialect.V1_0:
                # v0.3 has a code of its own for this (AuthenticatedExtendedCardNotConfigured).
                return Fail(
                    ExtendedAgentCardNotConfiguredError(
                        "The agent has no authenticated extended card "
                        "(supportsAuthenticatedExtendedCard is false)"
                    )
                )
            return Fail(
                UnsupportedOperationError(
                    "This operation is not supported: the agent has no extended card "
                    "(capabilities.extendedAgentCard is false)"
                )
            )
        if not call.caller.authenticated:
            return Fail(
                UnsupportedOperationError(
                    "The extended agent card is only served to authenticated callers"
                )
            )
        return Respond(self.cards.card(base_url, extended=True))

    def serves(self, method: str, path: str) -> bool:
        """Whether ``path`` is an A2A endpoint (with any method: :meth:`route` answers a wrong
        one with 405). An adapter that shares its server with other routes asks before it
        reads the body."""
        path = path or "/"
        if path in CARD_PATHS or path == self._config.rpc_path:
            return True
        return self._config.rest and match_rest(method, path) is not None

    def is_public(self, request: HttpRequest) -> bool:
        """Whether ``request`` is served without authentication (only the public card is)."""
        return (request.path or "/") in CARD_PATHS and request.method in ("GET", "HEAD")

    def render(self, dispatch: Dispatch, reply: Respond | Fail) -> HttpResponse:
        """The HTTP response for a call's final reply, in the binding it came in."""
        rest = dispatch.binding is Binding.REST
        match reply:
            case Fail(error=error):
                if rest:
                    return self._rest_error(error)
                call = dispatch.call
                if call.dialect is not Dialect.V1_0 and call.operation in _STREAMING:
                    # v0.3 servers answered a streaming call with a stream, errors included.
                    details = self._codec.encode_error_details(error)
                    frame = sse_event(error_body(dispatch.rpc_id, error, details))
                    return HttpResponse(200, SSE_HEADERS, frame)
                return self.render_error(dispatch.rpc_id, error)
            case Respond(value=value):
                result = self._result(dispatch.call, value, rest=rest)
                if rest:
                    return _json_response(dumps(result))
                return _json_response(result_body(dispatch.rpc_id, result))

    def stream_headers(self) -> tuple[tuple[str, str], ...]:
        """The headers of an event-stream response."""
        return SSE_HEADERS

    def render_event(self, dispatch: Dispatch, frame: LoggedEvent) -> bytes:
        """One SSE frame holding a ``StreamResponse``: bare on REST, in a JSON-RPC response
        (with the request's id) on JSON-RPC, as the old dialects' events for their calls
        (empty when the dialect has no such event: v0.1 streams carry only updates)."""
        payload = self.event_payload(dispatch, frame)
        return sse_event(payload, event_id=frame.seq) if payload else b""

    def event_payload(self, dispatch: Dispatch, frame: LoggedEvent) -> bytes:
        """What :meth:`render_event` puts in its frame's ``data``: the JSON of one event (a
        JSON-RPC response on JSON-RPC), for transports that frame events their own way;
        empty when the dialect has no such event."""
        event = self._codec.encode_event(frame.event)
        dialect = dispatch.call.dialect
        if dialect is not Dialect.V1_0:
            if dialect is Dialect.LEGACY and isinstance(frame.event, Task | Message):
                return b""
            index = frame.event.index if isinstance(frame.event, TaskArtifactUpdateEvent) else 0
            event = event_out(event, final=self._final(dispatch, frame), artifact_index=index or 0)
        if dispatch.binding is Binding.REST:
            return dumps(event)
        return result_body(dispatch.rpc_id, event)

    @staticmethod
    def _final(dispatch: Dispatch, frame: LoggedEvent) -> bool:
        """v0.3's ``final``: this status update ends the stream (the cursor's rule)."""
        event = frame.event
        if not isinstance(event, TaskStatusUpdateEvent):
            return False
        state = event.status.state
        if dispatch.call.operation is Operation.SUBSCRIBE_TO_TASK:
            return state.terminal
        return state.settled

    def render_stream_error(self, dispatch: Dispatch, error: A2AError) -> bytes:
        """The last frame of a stream that failed after it started."""
        details = self._codec.encode_error_details(error)
        if dispatch.binding is Binding.REST:
            status = status_of(error, self._config.error_mapping)
            return sse_event(dumps(rest_error_body(error, status, details)), event="error")
        return sse_event(error_body(dispatch.rpc_id, error, details), event="error")

    def render_error(self, rpc_id: RpcId, error: A2AError) -> HttpResponse:
        """A JSON-RPC error response (HTTP 200, as JSON-RPC over HTTP answers; 413 for size)."""
        body = error_body(rpc_id, error, self._codec.encode_error_details(error))
        # JSON-RPC answers errors with 200, but for what HTTP itself must say (size, credentials).
        status = (
            error.codes.http
            if isinstance(error, PayloadTooLargeError | UnauthenticatedError)
            else 200
        )
        return _json_response(body, status)

    def _result(self, call: Call, value: Any, *, rest: bool) -> Any:
        operation = call.operation
        if value is None:
            # google.protobuf.Empty: {} on REST; JSON-RPC answers null, as the reference SDK.
            return {} if rest else None
        if operation is Operation.SEND_MESSAGE:
            # SendMessageResponse is a oneof: {"task": …} or {"message": …}.
            assert isinstance(value, Task | Message)
            encoded = self._codec.encode_event(value)
            return encoded if call.dialect is Dialect.V1_0 else value_out(encoded)
        encoded = self._codec.encode(value)
        if call.dialect is Dialect.V1_0:
            return encoded
        match operation:
            case Operation.GET_TASK | Operation.CANCEL_TASK:
                return task_out(encoded)
            case Operation.CREATE_PUSH_CONFIG | Operation.GET_PUSH_CONFIG:
                return push_out(encoded)
            case Operation.LIST_PUSH_CONFIGS:
                return push_list_out(encoded)
            case Operation.GET_EXTENDED_CARD:
                return self.cards.with_v03_fields(encoded)
        return encoded

    def _rest_error(self, error: A2AError) -> HttpResponse:
        """A ``google.rpc.Status`` error with the HTTP status of the configured mapping."""
        if any(v.field.startswith("params.") for v in error.violations):
            # REST has no "params": its fields are named from the root of the request.
            error = type(error)(
                error.message.replace("params.", ""),
                metadata=error.metadata,
                violations=tuple(
                    FieldViolation(v.field.removeprefix("params."), v.description)
                    for v in error.violations
                ),
            )
        status = status_of(error, self._config.error_mapping)
        details = self._codec.encode_error_details(error)
        return _json_response(dumps(rest_error_body(error, status, details)), status)

    def _card(self, request: HttpRequest, base_url: str) -> HttpResponse:
        rendered = self.cards.render(base_url)
        headers = [
            ("content-type", _JSON),
            ("cache-control", f"public, max-age={self._config.card_max_age}"),
            ("etag", rendered.etag),
        ]
        if self.cards.last_modified:
            headers.append(("last-modified", self.cards.last_modified))
        if etag_matches(request.headers.get("if-none-match", ""), rendered.etag):
            return HttpResponse(304, tuple(headers))
        if request.method == "HEAD":
            # No body, but the length GET would send (RFC 9110 §9.3.2).
            headers.append(("content-length", str(len(rendered.body))))
            return HttpResponse(200, tuple(headers))
        return HttpResponse(200, tuple(headers), rendered.body)

    def too_large(self, path: str = "") -> HttpResponse:
        """The answer to a body the adapter stopped reading because it passed the limit: a
        ``google.rpc.Status`` on an HTTP+JSON route, a JSON-RPC error anywhere else."""
        limit = self._config.max_body_bytes
        error = PayloadTooLargeError(f"Request body too large: the limit is {limit} bytes")
        rest = self._config.rest and path not in ("", self._config.rpc_path)
        if rest and match_rest("POST", path) is not None:
            return self._rest_error(error)
        return self.render_error(None, error)

    def unauthenticated(self, request: HttpRequest, challenges: tuple[str, ...]) -> HttpResponse:
        """401 for a request without valid credentials, in its binding's error format, with a
        ``WWW-Authenticate`` challenge per accepted scheme. The body is not read: nothing a
        client that is not authenticated sends is parsed."""
        error = UnauthenticatedError(
            "Missing or invalid credentials: see WWW-Authenticate and the agent card"
        )
        path = request.path or "/"
        if self._config.rest and path != self._config.rpc_path and match_rest(request.method, path):
            response = self._rest_error(error)
        else:
            response = self.render_error(None, error)
        extra = tuple(("www-authenticate", challenge) for challenge in challenges)
        return HttpResponse(response.status, (*response.headers, *extra), response.body)

    def notification(self, push: Push) -> Notify:
        """One webhook delivery: the event as a v1.0 ``StreamResponse``, with the config's
        credentials, guarded unless its host is allow-listed (the rule ``url_problem`` used
        when the config was created)."""
        config = push.config
        headers = [("content-type", "application/a2a+json")]
        if config.authentication is not None:
            auth = config.authentication
            value = f"{auth.scheme} {auth.credentials}" if auth.credentials else auth.scheme
            headers.append(("authorization", value))
        if config.token:
            headers.append(("x-a2a-notification-token", config.token))
        body = dumps(self._codec.encode_event(push.event.event))
        guarded = not host_allowed(host_of(config.url), self._config.push_allow_hosts)
        return Notify(
            push.task_id, config.id, push.event.seq, config.url, tuple(headers), body, guarded
        )

    def internal_error(self, path: str, message: str) -> HttpResponse:
        """The answer to a request the adapter failed to handle (the server's fault, not the
        client's): -32603 on JSON-RPC, a ``google.rpc.Status`` with 500 on an HTTP+JSON route."""
        error = InternalError(f"Internal error: {message}")
        if self._config.rest and path not in ("", self._config.rpc_path):
            return self._rest_error(error)
        return self.render_error(None, error)

    def _rpc(self, request: HttpRequest, caller: Caller) -> Dispatch:
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
            raise RpcFailure(rpc.id, self._version_error(version))
        if asked != (1, 0) and not self._config.v03:
            # The older dialects are off: only 1.0 is spoken.
            raise RpcFailure(rpc.id, self._version_error(version))
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
            raise RpcFailure(rpc.id, self._version_error(version))
        try:
            decoded = self._codec.decode(request_type, transform(rpc.params), "params")
            last_event_id = _last_event_id(request) if operation in _STREAMING else None
        except A2AError as error:
            raise RpcFailure(rpc.id, error) from None
        return Dispatch(Call(operation, decoded, caller, last_event_id, dialect), rpc.id)

    def _rest(self, request: HttpRequest, found: Any, caller: Caller) -> Dispatch:
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
                raise self._version_error(version)
            request_type = V1_METHODS[route.operation.value][1]
            params = rest_params(found, request.query, body)
            decoded = self._codec.decode(request_type, params, "")
            last_event_id = _last_event_id(request) if route.operation in _STREAMING else None
        except A2AError as error:
            raise _RestFailure(error) from None
        return Dispatch(Call(route.operation, decoded, caller, last_event_id), None, Binding.REST)

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
        declared = ascii_int(request.headers.get("content-length", "").strip(), max_digits=30)
        size = max(len(request.body), declared or 0)
        if size > limit:
            raise PayloadTooLargeError(
                f"Request body too large: {size} bytes, the limit is {limit}"
            )

    def _check_content_type(self, request: HttpRequest, what: str) -> None:
        content_type = request.headers.get("content-type", "")
        media_type = content_type.split(";", 1)[0].strip().lower()
        if media_type and media_type not in _JSON_TYPES:
            raise ContentTypeNotSupportedError(
                f"Incompatible content types: the request's Content-Type is {media_type!r}; "
                f"{what} must be application/json"
            )

    def _version_error(self, version: str) -> VersionNotSupportedError:
        if not version:
            message = (
                "Protocol version is not supported: no A2A-Version header was sent, which means "
                "0.3; this server speaks 1.0 (send A2A-Version: 1.0)"
            )
        else:
            message = f"Protocol version is not supported: {version!r}; this server speaks 1.0"
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


def _not_allowed(allow: str) -> HttpResponse:
    return HttpResponse(
        405,
        (("content-type", _JSON), ("allow", allow)),
        b'{"error":{"code":405,"status":"METHOD_NOT_ALLOWED","message":"Method not allowed"}}',
    )
