"""The gRPC binding of v1.0 (``lf.a2a.v1.A2AService``), as the HTTP/2 exchange it is on the wire.

gRPC is HTTP too: a call is a ``POST /lf.a2a.v1.A2AService/<Method>`` with
``content-type: application/grpc``, its metadata are headers (``a2a-version``,
``a2a-extensions``, ``grpc-timeout``, ``grpc-encoding``), its body is length-prefixed messages
(a flag byte, a 4-byte big-endian length, the message), and its outcome is the trailers
``grpc-status``, ``grpc-message`` and ``grpc-status-details-bin`` (a ``google.rpc.Status`` with
an ``ErrorInfo``). So the core takes a gRPC call as one more :class:`HttpRequest`, routes it like
the other bindings into the same :class:`Call`, and answers with an :class:`HttpResponse` whose
trailers say how it went. The adapter only has to carry trailers (HTTP/2, hypercorn).

The core reads no protobuf: the messages' bytes are turned into their ProtoJSON (and back) by a
:class:`PayloadCodec` the adapter injects (built on the module generated from the spec's proto),
and the same v1.0 codec as JSON-RPC's ``params`` then decodes them, so every binding accepts
and refuses exactly the same requests. Only the two small messages gRPC itself defines for
errors (``google.rpc.Status``, ``ErrorInfo``, ``BadRequest``) are written here, by the few lines
of protobuf wire format they need.

Compression: a message compressed with gzip is decompressed (within the body limit); any other
algorithm is refused with UNIMPLEMENTED and ``grpc-accept-encoding``, as gRPC says. Replies are
never compressed.
"""

import base64
import re
import zlib
from collections.abc import Iterable
from datetime import timedelta
from typing import Any, Protocol

from a2a_core._config import CoreConfig, ErrorMapping
from a2a_core._errors import (
    ERROR_DOMAIN,
    A2AError,
    CompressionNotSupportedError,
    ContentTypeNotSupportedError,
    FieldViolation,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    PayloadTooLargeError,
)
from a2a_core.decide._effects import Fail, Respond
from a2a_core.decide._inputs import Call, Caller, Operation
from a2a_core.model._task import Message, Task
from a2a_core.store._contract import LoggedEvent
from a2a_core.wire._v1 import V1Codec

from ._decoding import V1_METHODS, Decoder, requested_version
from ._exchange import Binding, Dispatch, HttpRequest, HttpResponse

__all__ = [
    "GRPC_CODES",
    "GRPC_CONTENT_TYPE",
    "GRPC_PREFIX",
    "GrpcFailure",
    "GrpcFront",
    "PayloadCodec",
    "PayloadError",
    "frame",
    "grpc_timeout",
    "percent_encode",
    "status_details",
    "unframe",
]

SERVICE = "lf.a2a.v1.A2AService"
#: The path of every call: the service, then the method.
GRPC_PREFIX = f"/{SERVICE}/"
GRPC_CONTENT_TYPE = "application/grpc"
#: What a client may compress its messages with (``grpc-accept-encoding``).
ACCEPT_ENCODING = "identity, gzip"

#: ``google.rpc.Code``: the number of each status name the error table uses.
GRPC_CODES: dict[str, int] = {
    "OK": 0,
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}

_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
_TIMEOUT = re.compile(r"([0-9]{1,8})([HMSmun])")
#: The unit of each ``grpc-timeout`` suffix, in microseconds (timedelta's resolution).
_TIMEOUT_UNITS = {"H": 3_600_000_000, "M": 60_000_000, "S": 1_000_000, "m": 1_000, "u": 1}


class PayloadError(ValueError):
    """A message's bytes are not the message its method takes (raised by a codec); ``field``,
    when the bytes parse but a value cannot stand (a NaN, a timestamp past year 9999), is its
    ProtoJSON path, ``message.parts[0].data.x``."""

    def __init__(self, problem: str, *, field: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.field = field


class PayloadCodec(Protocol):
    """Protobuf bytes to ProtoJSON and back, for the messages of ``lf.a2a.v1.A2AService``.

    The adapter provides one (on the module generated from the spec's proto and
    ``google.protobuf.json_format``), so the core never imports protobuf.
    """

    def decode(self, method: str, payload: bytes) -> Any:
        """The request message of ``method`` as ProtoJSON (camelCase fields, enum names);
        raises :class:`PayloadError` when the bytes are not one, or hold a value ProtoJSON has
        no form for (naming its ``field``: the call is refused INVALID_ARGUMENT, naming it)."""
        ...

    def encode(self, method: str, value: Any) -> bytes:
        """The response message of ``method`` (one event, for a streaming method: a
        ``StreamResponse``) from its ProtoJSON; unknown fields are dropped."""
        ...


class GrpcFailure(Exception):
    """A call refused before it became one: answer ``error`` in trailers (with ``status`` as
    the HTTP status: 200 unless HTTP itself must say something, as for a wrong media type)."""

    def __init__(self, error: A2AError, status: int = 200) -> None:
        self.error = error
        self.status = status


# --- framing --------------------------------------------------------------------------------------


def frame(message: bytes) -> bytes:
    """One length-prefixed message (uncompressed)."""
    return b"\x00" + len(message).to_bytes(4, "big") + message


def unframe(body: bytes, encoding: str, limit: int) -> bytes:
    """The one message of a unary request body (every A2A method takes one), decompressed.

    ``encoding`` is the ``grpc-encoding`` header (``""`` when absent); ``limit`` bounds the
    message after decompression.
    """
    if len(body) < 5:
        raise InvalidRequestError(
            f"Invalid gRPC framing: the request body has {len(body)} bytes, less than the "
            "5-byte message prefix"
        )
    flag, length = body[0], int.from_bytes(body[1:5], "big")
    if flag not in (0, 1):
        raise InvalidRequestError(f"Invalid gRPC framing: the compressed flag is {flag}, not 0/1")
    if len(body) != 5 + length:
        raise InvalidRequestError(
            "Invalid gRPC framing: the request must be one message; the prefix says "
            f"{length} bytes and {len(body) - 5} follow"
        )
    message = body[5:]
    if flag == 0:
        return message
    if encoding in ("", "identity"):
        raise InvalidRequestError(
            "Invalid gRPC framing: a message marked compressed, but no grpc-encoding was sent"
        )
    if encoding != "gzip":
        raise CompressionNotSupportedError(
            f"Message compression is not supported: {encoding[:40]!r}; "
            f"this server accepts {ACCEPT_ENCODING}",
            metadata={"encoding": encoding[:40], "acceptedEncodings": ACCEPT_ENCODING},
        )
    return _gunzip(message, limit)


def _gunzip(data: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(wbits=31)  # 31: the gzip format
    try:
        out = inflater.decompress(data, limit + 1)  # never more than the limit: no zip bomb
    except zlib.error as error:
        raise InvalidRequestError(f"Invalid gzip message: {error}") from None
    if len(out) > limit:
        raise PayloadTooLargeError(f"Request message too large: the limit is {limit} bytes")
    if not inflater.eof:
        raise InvalidRequestError("Invalid gzip message: it ends before its end")
    return out


def grpc_timeout(value: str) -> timedelta | None:
    """The client's deadline from ``grpc-timeout`` (``None`` when it sent none)."""
    if not value:
        return None
    found = _TIMEOUT.fullmatch(value.strip())
    if found is None:
        raise InvalidRequestError(
            f"Invalid grpc-timeout: {value[:40]!r} (up to 8 digits and a unit, H M S m u n)"
        )
    amount, unit = int(found.group(1)), found.group(2)
    if unit == "n":
        return timedelta(microseconds=amount // 1000)
    return timedelta(microseconds=amount * _TIMEOUT_UNITS[unit])


# --- status --------------------------------------------------------------------------------------


def percent_encode(message: str) -> str:
    """``grpc-message``: the UTF-8 bytes, with any not printable ASCII or ``%`` escaped."""
    return "".join(
        chr(b) if 0x20 <= b <= 0x7E and b != 0x25 else f"%{b:02X}" for b in message.encode()
    )


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _field(number: int, value: bytes | str | int) -> bytes:
    """One field of a protobuf message: a varint (wire type 0) or length-delimited (2)."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    raw = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(raw)) + raw


def _message(fields: Iterable[tuple[int, bytes | str | int]]) -> bytes:
    return b"".join(_field(number, value) for number, value in fields)


def status_details(code: int, error: A2AError) -> bytes:
    """``google.rpc.Status{code, message, details}`` with an ``ErrorInfo`` (reason, domain
    ``a2a-protocol.org``, metadata) and, for bad fields, a ``BadRequest``: what peers put in
    ``grpc-status-details-bin``."""
    info = _message(
        [
            (1, error.codes.reason),
            (2, ERROR_DOMAIN),
            *((3, _message([(1, k), (2, v)])) for k, v in sorted(error.metadata.items())),
        ]
    )
    details = [(3, _message([(1, _ERROR_INFO), (2, info)]))]
    if error.violations:
        bad = _message((1, _message([(1, v.field), (2, v.description)])) for v in error.violations)
        details.append((3, _message([(1, _BAD_REQUEST), (2, bad)])))
    return _message([(1, code), (2, error.message), *details])


def grpc_code(error: A2AError, mapping: ErrorMapping) -> int:
    """The gRPC status of ``error`` under the chosen version of the spec's mapping table."""
    codes = error.codes
    return GRPC_CODES[codes.grpc_v1_0_0 if mapping is ErrorMapping.V1_0_0 else codes.grpc]


# --- the front ------------------------------------------------------------------------------------


_HEADERS = (("content-type", GRPC_CONTENT_TYPE), ("grpc-accept-encoding", ACCEPT_ENCODING))
_OK = (("grpc-status", "0"),)


class GrpcFront:
    """Routes gRPC calls into calls, and writes their replies, events and errors."""

    def __init__(
        self, config: CoreConfig, codec: V1Codec, payloads: PayloadCodec, decoder: Decoder
    ) -> None:
        self._config = config
        self._codec = codec
        self._payloads = payloads
        self._decoder = decoder

    def serves(self, path: str) -> bool:
        return path.startswith(GRPC_PREFIX)

    def route(self, request: HttpRequest, caller: Caller) -> HttpResponse | Dispatch:
        """The call ``request`` makes, or the trailers that refuse it."""
        try:
            return self._decode(request, caller)
        except GrpcFailure as failure:
            return self.error(failure.error, failure.status)
        except A2AError as error:
            return self.error(error)

    def _decode(self, request: HttpRequest, caller: Caller) -> Dispatch:
        if request.method != "POST":
            raise GrpcFailure(InvalidRequestError("gRPC calls are POST requests"), 405)
        media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media_type not in (GRPC_CONTENT_TYPE, GRPC_CONTENT_TYPE + "+proto"):
            problem = ContentTypeNotSupportedError(
                f"Incompatible content types: the request's Content-Type is {media_type!r}; "
                "gRPC calls here must be application/grpc (protobuf)"
            )
            # gRPC: a media type that is not gRPC's at all is HTTP's to refuse.
            raise GrpcFailure(problem, 200 if media_type.startswith(GRPC_CONTENT_TYPE) else 415)
        method = request.path[len(GRPC_PREFIX) :]
        found = V1_METHODS.get(method)
        if found is None:
            raise MethodNotFoundError(
                f"Method not found: {SERVICE} has no method {method[:80]!r}",
                metadata={"method": method[:80]},
            )
        version = requested_version(request)
        # No a2a-version is taken as 1.0 here, unlike over JSON-RPC (where it means 0.3): this
        # service, lf.a2a.v1, exists in 1.0 only (0.3's was a2a.v1.A2AService).
        if version and not _is_1_0(version):
            raise self._decoder.version_error(version)
        timeout = grpc_timeout(request.headers.get("grpc-timeout", ""))
        limit = self._config.max_body_bytes
        if len(request.body) > limit + 5:
            raise PayloadTooLargeError(f"Request body too large: the limit is {limit} bytes")
        payload = unframe(request.body, request.headers.get("grpc-encoding", "").strip(), limit)
        operation, request_type = found
        try:
            params = self._payloads.decode(method, payload)
        except PayloadError as error:
            if error.field:
                raise InvalidParamsError(
                    f"Invalid parameters: {error.field}: {error.problem}",
                    violations=(FieldViolation(error.field, error.problem),),
                ) from None
            raise InvalidParamsError(
                f"Invalid parameters: the message is not a {request_type.__name__}: {error}"
            ) from None
        decoded = self._codec.decode(request_type, params, "")
        # a2a-extensions metadata is the A2A-Extensions header: the same service parameter.
        extensions = self._decoder.extensions(request, operation, decoded)
        call = Call(operation, decoded, caller, extensions=extensions)
        return Dispatch(call, None, Binding.GRPC, timeout=timeout)

    def render(self, dispatch: Dispatch, reply: Respond | Fail) -> HttpResponse:
        """The response for a unary call's reply: its message, then OK; or the error."""
        if isinstance(reply, Fail):
            return self.error(reply.error)
        operation = dispatch.call.operation
        value = reply.value
        if value is None:
            encoded: Any = {}  # google.protobuf.Empty
        elif operation is Operation.SEND_MESSAGE:
            assert isinstance(value, Task | Message)
            encoded = self._codec.encode_event(value)  # the SendMessageResponse oneof
        else:
            encoded = self._codec.encode(value)
        body = frame(self._payloads.encode(operation.value, encoded))
        return HttpResponse(200, _HEADERS, body, _OK)

    def stream_headers(self) -> tuple[tuple[str, str], ...]:
        return _HEADERS

    def event(self, dispatch: Dispatch, logged: LoggedEvent) -> bytes:
        """One ``StreamResponse`` message of a stream (the same event SSE numbers ``seq``)."""
        encoded = self._codec.encode_event(logged.event)
        return frame(self._payloads.encode(dispatch.call.operation.value, encoded))

    def trailers(self, error: A2AError | None) -> tuple[tuple[str, str], ...]:
        """How a call ended: OK, or ``error`` with its status and details."""
        if error is None:
            return _OK
        code = grpc_code(error, self._config.error_mapping)
        details = base64.b64encode(status_details(code, error)).decode("ascii")
        return (
            ("grpc-status", str(code)),
            ("grpc-message", percent_encode(error.message)),
            ("grpc-status-details-bin", details),
        )

    def error(self, error: A2AError, status: int = 200) -> HttpResponse:
        """A call that failed before any message: the head, no message, the error's trailers."""
        return HttpResponse(status, _HEADERS, b"", self.trailers(error))


def _is_1_0(version: str) -> bool:
    parts = version.split(".")
    return len(parts) in (2, 3) and parts[0] == "1" and parts[1] == "0"
