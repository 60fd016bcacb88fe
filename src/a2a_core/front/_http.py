"""The framework-free HTTP front: requests in as plain values, responses out as plain values.

An adapter (Quart, trio, a raw h11 loop, anything) hands over the method, the path below the
A2A root, the headers, the body and the caller it authenticated. The front answers at once when
it can (the agent card, the extended card, every malformed request) or returns a
:class:`Dispatch`: a decoded call for the server machine, plus what the front needs to render
its reply later. Decoding (``_decoding``) and encoding (``_encoding``, one small object per
dialect) are modules of their own; the front routes between them.
"""

import attrs

from a2a_core._config import CoreConfig
from a2a_core._errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    PayloadTooLargeError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from a2a_core._json import dumps
from a2a_core.decide._card import CardRenderer, etag_matches
from a2a_core.decide._effects import Fail, Notify, Push, Respond
from a2a_core.decide._inputs import Call, Caller, Dialect, Operation
from a2a_core.decide._push_policy import header_id, host_allowed, host_of
from a2a_core.model._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    Request,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from a2a_core.model._task import Message, Task, TaskPushNotificationConfig
from a2a_core.store._contract import LoggedEvent
from a2a_core.wire._jsonrpc import RpcFailure, RpcId
from a2a_core.wire._sse import SSE_HEADERS
from a2a_core.wire._v1 import V1Codec

from ._decoding import Decoder, RestFailure
from ._encoding import Encoder
from ._exchange import JSON, Binding, Dispatch, HttpRequest, HttpResponse, Served, json_response
from ._grpc import GrpcFront, PayloadCodec
from ._rest import match_rest

__all__ = [
    "CARD_PATHS",
    "Binding",
    "Dispatch",
    "HttpFront",
    "HttpRequest",
    "HttpResponse",
    "served_by",
    "task_concerned",
]

#: Where the card is served: the current well-known path, and the one v0.1 to v0.2 clients use.
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
#: Where the card signer's public keys are served, when the configuration gives them.
JWKS_PATH = "/.well-known/jwks.json"


class HttpFront:
    """Routes HTTP requests and renders replies: the card, JSON-RPC, HTTP+JSON and (given a
    payload codec) gRPC."""

    def __init__(
        self, config: CoreConfig, codec: V1Codec, grpc: PayloadCodec | None = None
    ) -> None:
        self._config = config
        self._codec = codec
        self.cards = CardRenderer(config, codec)
        self._decoder = Decoder(config, codec)
        self._encoder = Encoder(config, codec, self.cards)
        self._grpc = GrpcFront(config, codec, grpc, self._decoder) if grpc is not None else None

    def _grpc_path(self, path: str) -> GrpcFront | None:
        """The gRPC front, if ``path`` is a gRPC call's (and gRPC is served)."""
        grpc = self._grpc
        return grpc if grpc is not None and grpc.serves(path) else None

    def route(self, request: HttpRequest, caller: Caller, base_url: str) -> HttpResponse | Dispatch:
        """Answer ``request`` now, or say which call to run for it."""
        path = request.path or "/"
        if path in CARD_PATHS:
            if request.method not in ("GET", "HEAD"):
                return _not_allowed("GET, HEAD")
            return self._card(request, base_url)
        if path == JWKS_PATH and self._config.card_jwks is not None:
            if request.method not in ("GET", "HEAD"):
                return _not_allowed("GET, HEAD")
            return self._jwks(request)
        dispatch: Dispatch
        grpc = self._grpc_path(path)
        if grpc is not None:
            routed = grpc.route(request, caller)
            if isinstance(routed, HttpResponse):
                return routed
            dispatch = routed
        elif path == self._config.rpc_path and request.method == "POST":
            try:
                dispatch = self._decoder.rpc(request, caller)
            except RpcFailure as failure:
                response = self._encoder.render_error(failure.id, failure.error)
                served = Served("", Binding.JSONRPC, error=failure.error.codes, rpc_id=failure.id)
                return attrs.evolve(response, served=served)
        else:
            found = match_rest(request.method, path) if self._config.rest else None
            if isinstance(found, frozenset):
                return _not_allowed(", ".join(sorted(found)))
            if found is None:
                if path == self._config.rpc_path:
                    return _not_allowed("POST")
                return json_response(
                    b'{"error":{"code":404,"status":"NOT_FOUND",'
                    b'"message":"No A2A endpoint at this path"}}',
                    404,
                )
            try:
                dispatch = self._decoder.rest(request, found, caller)
            except RestFailure as failure:
                response = self._encoder.rest_error(failure.error)
                served = Served("", Binding.REST, error=failure.error.codes)
                return attrs.evolve(response, served=served)
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
        if path in CARD_PATHS or path == self._config.rpc_path or self._grpc_path(path):
            return True
        if path == JWKS_PATH and self._config.card_jwks is not None:
            return True
        return self._config.rest and match_rest(method, path) is not None

    def is_public(self, request: HttpRequest) -> bool:
        """Whether ``request`` is served without authentication (only the public card is, and
        the keys that verify its signatures)."""
        path = request.path or "/"
        public = path in CARD_PATHS or (path == JWKS_PATH and self._config.card_jwks is not None)
        return public and request.method in ("GET", "HEAD")

    def render(self, dispatch: Dispatch, reply: Respond | Fail) -> HttpResponse:
        """The HTTP response for a call's final reply, in the binding it came in (naming the
        task it concerns: :attr:`HttpResponse.task_id`)."""
        if dispatch.binding is Binding.GRPC and self._grpc is not None:
            response = self._grpc.render(dispatch, reply)
            named = self._encoder.extension_headers(dispatch)  # as initial metadata
            response = attrs.evolve(response, headers=(*response.headers, *named))
        else:
            response = self._encoder.render(dispatch, reply)
        value = reply.value if isinstance(reply, Respond) else None
        task_id = task_concerned(dispatch.call.request, value)
        # Built anew rather than evolved (evolve looks every field up by name, a few
        # microseconds a reply); tests/a2a_core/decide/test_changes.py holds the fields to
        # this list.
        served = served_by(dispatch, reply)
        r = response
        return HttpResponse(r.status, r.headers, r.body, r.trailers, task_id, served)

    def stream_headers(self, dispatch: Dispatch | None = None) -> tuple[tuple[str, str], ...]:
        """The headers of a streamed response (an event stream, or gRPC's; for ``dispatch``:
        with the extensions active for it)."""
        if dispatch is None:
            return SSE_HEADERS
        extensions = self._encoder.extension_headers(dispatch)
        if dispatch.binding is Binding.GRPC and self._grpc is not None:
            return (*self._grpc.stream_headers(), *extensions)
        return (*SSE_HEADERS, *extensions)

    def render_event(self, dispatch: Dispatch, frame: LoggedEvent) -> bytes:
        """One frame of a stream's event: SSE, or a gRPC message (empty where the dialect has
        no such event)."""
        if dispatch.binding is Binding.GRPC and self._grpc is not None:
            return self._grpc.event(dispatch, frame)
        return self._encoder.render_event(dispatch, frame)

    def stream_end(
        self, dispatch: Dispatch, error: A2AError | None = None
    ) -> tuple[tuple[bytes, ...], tuple[tuple[str, str], ...]]:
        """How a stream ends: its last frames and its trailers. An SSE stream that failed ends
        with an error event; a gRPC stream ends with its status in trailers (OK, or the error)."""
        if dispatch.binding is Binding.GRPC and self._grpc is not None:
            return (), self._grpc.trailers(error)
        if error is None:
            return (), ()
        return (self._encoder.render_stream_error(dispatch, error),), ()

    def event_payload(self, dispatch: Dispatch, frame: LoggedEvent) -> bytes:
        """One event's JSON, without SSE framing."""
        return self._encoder.event_payload(dispatch, frame)

    def render_stream_error(self, dispatch: Dispatch, error: A2AError) -> bytes:
        """The last frame of a stream that failed after it started."""
        return self._encoder.render_stream_error(dispatch, error)

    def render_error(self, rpc_id: RpcId, error: A2AError) -> HttpResponse:
        """A JSON-RPC error response."""
        return self._encoder.render_error(rpc_id, error)

    def _card(self, request: HttpRequest, base_url: str) -> HttpResponse:
        rendered = self.cards.render(base_url)
        headers = [
            ("content-type", JSON),
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

    def _jwks(self, request: HttpRequest) -> HttpResponse:
        body = self._config.card_jwks or b""
        headers = [
            ("content-type", JSON),
            ("cache-control", f"public, max-age={self._config.card_max_age}"),
        ]
        if request.method == "HEAD":
            headers.append(("content-length", str(len(body))))
            return HttpResponse(200, tuple(headers))
        return HttpResponse(200, tuple(headers), body)

    def too_large(self, path: str = "") -> HttpResponse:
        """The answer to a body the adapter stopped reading because it passed the limit: a
        ``google.rpc.Status`` on an HTTP+JSON route, a JSON-RPC error anywhere else."""
        limit = self._config.max_body_bytes
        error = PayloadTooLargeError(f"Request body too large: the limit is {limit} bytes")
        grpc = self._grpc_path(path)
        if grpc is not None:
            return grpc.error(error)
        rest = self._config.rest and path not in ("", self._config.rpc_path)
        if rest and match_rest("POST", path) is not None:
            return self._encoder.rest_error(error)
        return self._encoder.render_error(None, error)

    def unauthenticated(self, request: HttpRequest, challenges: tuple[str, ...]) -> HttpResponse:
        """401 for a request without valid credentials, in its binding's error format, with a
        ``WWW-Authenticate`` challenge per accepted scheme. The body is not read: nothing a
        client that is not authenticated sends is parsed."""
        error = UnauthenticatedError(
            "Missing or invalid credentials: see WWW-Authenticate and the agent card"
        )
        path = request.path or "/"
        grpc = self._grpc_path(path)
        if grpc is not None:
            response = grpc.error(error)
        elif (
            self._config.rest and path != self._config.rpc_path and match_rest(request.method, path)
        ):
            response = self._encoder.rest_error(error)
        else:
            response = self._encoder.render_error(None, error)
        extra = tuple(("www-authenticate", challenge) for challenge in challenges)
        headers = (*response.headers, *extra)
        return HttpResponse(response.status, headers, response.body, response.trailers)

    def notification(self, push: Push, attempts: int = 0) -> Notify:
        """One webhook delivery: the event as a v1.0 ``StreamResponse``, with the config's
        credentials, guarded unless its host is allow-listed (the rule ``url_problem`` used
        when the config was created). ``X-A2A-Notification-Id`` is the same for every attempt,
        before a restart and after, so that a receiver can drop what it has seen."""
        config = push.config
        headers = [
            ("content-type", "application/a2a+json"),
            (
                "x-a2a-notification-id",
                f"{header_id(config.task_id or push.task_id)}/{header_id(config.id)}/"
                f"{push.event.seq}",
            ),
        ]
        if config.authentication is not None:
            auth = config.authentication
            value = f"{auth.scheme} {auth.credentials}" if auth.credentials else auth.scheme
            headers.append(("authorization", value))
        if config.token:
            headers.append(("x-a2a-notification-token", config.token))
        body = dumps(self._codec.encode_event(push.event.event))
        guarded = not host_allowed(host_of(config.url), self._config.push_allow_hosts)
        return Notify(
            push.task_id,
            config.id,
            push.event.seq,
            config.url,
            tuple(headers),
            body,
            guarded,
            attempts,
        )

    def internal_error(self, path: str, message: str) -> HttpResponse:
        """The answer to a request the adapter failed to handle (the server's fault, not the
        client's): -32603 on JSON-RPC, a ``google.rpc.Status`` with 500 on an HTTP+JSON route."""
        error = InternalError(f"Internal error: {message}")
        grpc = self._grpc_path(path)
        if grpc is not None:
            return grpc.error(error)
        if self._config.rest and path not in ("", self._config.rpc_path):
            return self._encoder.rest_error(error)
        return self._encoder.render_error(None, error)


def _not_allowed(allow: str) -> HttpResponse:
    return HttpResponse(
        405,
        (("content-type", JSON), ("allow", allow)),
        b'{"error":{"code":405,"status":"METHOD_NOT_ALLOWED","message":"Method not allowed"}}',
    )


def served_by(dispatch: Dispatch, reply: Respond | Fail | None = None) -> Served:
    """What ``dispatch`` was, answered with ``reply`` (``None``: a stream, which succeeded)."""
    call = dispatch.call
    match reply:
        case Respond(value=Task(context_id=context_id) | Message(context_id=context_id)):
            pass
        case _ if isinstance(call.request, SendMessageRequest):
            context_id = call.request.message.context_id
        case _:
            context_id = ""
    return Served(
        call.operation._value_,  # (``.value`` is a property: two calls more each)
        dispatch.binding,
        call.dialect._value_,
        error=reply.error.codes if isinstance(reply, Fail) else None,
        rpc_id=dispatch.rpc_id,
        context_id=context_id,
    )


def task_concerned(request: Request, value: object = None) -> str:
    """The id of the task a request concerns, as its client knows it: the task its answer
    ``value`` is (a send that created it), else the one the request names; "" for none."""
    if isinstance(value, Task):
        return value.id
    if isinstance(value, Message) and value.task_id:
        return value.task_id
    match request:
        case SendMessageRequest(message=message):
            return message.task_id
        case GetTaskRequest(id=task_id) | CancelTaskRequest(id=task_id):
            return task_id
        case SubscribeToTaskRequest(id=task_id):
            return task_id
        case (
            TaskPushNotificationConfig(task_id=task_id)
            | GetTaskPushNotificationConfigRequest(task_id=task_id)
            | DeleteTaskPushNotificationConfigRequest(task_id=task_id)
            | ListTaskPushNotificationConfigsRequest(task_id=task_id)
        ):
            return task_id
    return ""
