"""Encoding replies: results, stream events and errors, in the binding and dialect a call came in.

The binding decides the envelope (a JSON-RPC response with the request's id, or a bare body and
a ``google.rpc.Status`` on HTTP+JSON); the dialect decides the shapes inside it. Each dialect is
one small object (:data:`DIALECTS`): v1.0 writes the model as the codec encodes it; v0.3 reshapes
results and events into its own JSON (``kind``, lower-case states, ``final``); v0.1 ("legacy")
does the same and has no task or message events on its streams.
"""

from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from a2a_core._config import CoreConfig
from a2a_core._errors import (
    A2AError,
    BusyError,
    FieldViolation,
    PayloadTooLargeError,
    UnauthenticatedError,
)
from a2a_core._json import dumps
from a2a_core.decide._card import CardRenderer
from a2a_core.decide._effects import Fail, Respond
from a2a_core.decide._inputs import Dialect, Operation
from a2a_core.model._task import Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from a2a_core.store._contract import LoggedEvent
from a2a_core.wire._jsonrpc import RpcId, error_body, result_body
from a2a_core.wire._sse import SSE_HEADERS, sse_event
from a2a_core.wire._v03 import event_out, push_list_out, push_out, task_out, value_out
from a2a_core.wire._v1 import V1Codec

from ._decoding import STREAMING
from ._exchange import Binding, Dispatch, HttpResponse, json_response
from ._extensions import HEADER as EXTENSIONS_HEADER
from ._extensions import active
from ._rest import rest_error_body, status_of

__all__ = ["DIALECTS", "Encoder"]


class _Dialect(Protocol):
    """How one dialect writes results and events (``None``: it has no such event)."""

    def send_result(self, encoded: Any) -> Any: ...

    def result(self, operation: Operation, encoded: Any, cards: CardRenderer) -> Any: ...

    def event(self, encoded: Any, frame: LoggedEvent, dispatch: Dispatch) -> Any | None: ...


class _V1:
    """v1.0: the model as the codec writes it."""

    def send_result(self, encoded: Any) -> Any:
        return encoded

    def result(self, operation: Operation, encoded: Any, cards: CardRenderer) -> Any:
        return encoded

    def event(self, encoded: Any, frame: LoggedEvent, dispatch: Dispatch) -> Any | None:
        return encoded


class _V03:
    """v0.3: bare results with ``kind``, its own names for push configs, ``final`` on events."""

    def send_result(self, encoded: Any) -> Any:
        return value_out(encoded)

    def result(self, operation: Operation, encoded: Any, cards: CardRenderer) -> Any:
        match operation:
            case Operation.GET_TASK | Operation.CANCEL_TASK:
                return task_out(encoded)
            case Operation.CREATE_PUSH_CONFIG | Operation.GET_PUSH_CONFIG:
                return push_out(encoded)
            case Operation.LIST_PUSH_CONFIGS:
                return push_list_out(encoded)
            case Operation.GET_EXTENDED_CARD:
                return cards.with_v03_fields(encoded)
        # The rest answer with nothing (``None``, written before this) or with a stream.
        return encoded  # pragma: no cover - no other call of the old dialects gets a value

    def event(self, encoded: Any, frame: LoggedEvent, dispatch: Dispatch) -> Any | None:
        index = frame.event.index if isinstance(frame.event, TaskArtifactUpdateEvent) else 0
        return event_out(encoded, final=_final(dispatch, frame), artifact_index=index or 0)


class _Legacy(_V03):
    """v0.1: as v0.3, but its streams carry only updates (no task or message events)."""

    def event(self, encoded: Any, frame: LoggedEvent, dispatch: Dispatch) -> Any | None:
        if isinstance(frame.event, Task | Message):
            return None
        return super().event(encoded, frame, dispatch)


#: How each dialect writes what the core answers.
DIALECTS: Mapping[Dialect, _Dialect] = {
    Dialect.V1_0: _V1(),
    Dialect.V0_3: _V03(),
    Dialect.LEGACY: _Legacy(),
}


def _final(dispatch: Dispatch, frame: LoggedEvent) -> bool:
    """v0.3's ``final``: this status update ends the stream (the cursor's rule)."""
    event = frame.event
    if not isinstance(event, TaskStatusUpdateEvent):
        return False
    state = event.status.state
    if dispatch.call.operation is Operation.SUBSCRIBE_TO_TASK:
        return state.terminal
    return state.settled


class Encoder:
    """Writes replies, stream events and errors."""

    def __init__(self, config: CoreConfig, codec: V1Codec, cards: CardRenderer) -> None:
        self._config = config
        self._codec = codec
        self._cards = cards

    def render(self, dispatch: Dispatch, reply: Respond | Fail) -> HttpResponse:
        """The HTTP response for a call's final reply, in the binding it came in, naming the
        extensions active for it."""
        response = self._render(dispatch, reply)
        if not dispatch.call.extensions:
            return response  # (none declared, none active: most calls)
        named = self.extension_headers(dispatch)
        if not named:
            return response
        return attrs.evolve(response, headers=(*response.headers, *named))

    def extension_headers(self, dispatch: Dispatch) -> tuple[tuple[str, str], ...]:
        """``A2A-Extensions`` with the extensions active for the call, if any are."""
        on = active(self._config.card, dispatch.call.extensions)
        return ((EXTENSIONS_HEADER, ", ".join(on)),) if on else ()

    def _render(self, dispatch: Dispatch, reply: Respond | Fail) -> HttpResponse:
        rest = dispatch.binding is Binding.REST
        if isinstance(reply, Fail):
            error = reply.error
            if rest:
                return self.rest_error(error)
            call = dispatch.call
            if call.dialect is not Dialect.V1_0 and call.operation in STREAMING:
                # v0.3 servers answered a streaming call with a stream, errors included.
                details = self._codec.encode_error_details(error)
                frame = sse_event(error_body(dispatch.rpc_id, error, details))
                return HttpResponse(200, SSE_HEADERS, frame)
            return self.render_error(dispatch.rpc_id, error)
        result = self._result(dispatch, reply.value, rest=rest)
        if rest:
            return json_response(dumps(result))
        return json_response(result_body(dispatch.rpc_id, result))

    def _result(self, dispatch: Dispatch, value: Any, *, rest: bool) -> Any:
        call = dispatch.call
        if value is None:
            # google.protobuf.Empty: {} on REST; JSON-RPC answers null, as the reference SDK.
            return {} if rest else None
        dialect = DIALECTS[call.dialect]
        if call.operation is Operation.SEND_MESSAGE:
            # SendMessageResponse is a oneof: {"task": …} or {"message": …}.
            assert isinstance(value, Task | Message)
            return dialect.send_result(self._codec.encode_event(value))
        return dialect.result(call.operation, self._codec.encode(value), self._cards)

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
        encoded = self._codec.encode_event(frame.event)
        event = DIALECTS[dispatch.call.dialect].event(encoded, frame, dispatch)
        if event is None:
            return b""
        if dispatch.binding is Binding.REST:
            return dumps(event)
        return result_body(dispatch.rpc_id, event)

    def render_stream_error(self, dispatch: Dispatch, error: A2AError) -> bytes:
        """The last frame of a stream that failed after it started."""
        details = self._codec.encode_error_details(error)
        if dispatch.binding is Binding.REST:
            status = status_of(error, self._config.error_mapping)
            return sse_event(dumps(rest_error_body(error, status, details)), event="error")
        return sse_event(error_body(dispatch.rpc_id, error, details), event="error")

    def render_error(self, rpc_id: RpcId, error: A2AError) -> HttpResponse:
        """A JSON-RPC error response (HTTP 200, as JSON-RPC over HTTP answers, except for what
        HTTP itself must say: size, credentials)."""
        body = error_body(rpc_id, error, self._codec.encode_error_details(error))
        # Busy too: a 503 is what proxies, load balancers and clients' retry logic act on.
        says_http = isinstance(error, PayloadTooLargeError | UnauthenticatedError | BusyError)
        return _retry_later(json_response(body, error.codes.http if says_http else 200), error)

    def rest_error(self, error: A2AError) -> HttpResponse:
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
        return _retry_later(
            json_response(dumps(rest_error_body(error, status, details)), status), error
        )


def _retry_later(response: HttpResponse, error: A2AError) -> HttpResponse:
    """``response``, with ``Retry-After`` when ``error`` says when to retry."""
    if not isinstance(error, BusyError):
        return response
    retry = ("retry-after", str(error.retry_after))
    return HttpResponse(response.status, (*response.headers, retry), response.body)
