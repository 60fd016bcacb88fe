"""Typed protocol errors, and the one table that gives each its codes on every binding.

A client mistake (bad JSON, an unknown task, a cancel of a finished task) is an :class:`A2AError`
subclass. The reducer returns it as the reply; the renderers turn it into a JSON-RPC error object,
an HTTP status with a ``google.rpc.Status`` body, or an SSE error event, all from the same row of
:data:`ERROR_CODES`. Keeping the codes in one table (not scattered over the renderers) is what
keeps the bindings consistent, which the spec requires (v1.0 §5.4).

A mistake by the *caller of the core* (an adapter feeding a record of another task, say) is not a
protocol error: it raises :class:`UsageError`, because answering a client about it would hide a
bug in our own code.
"""

from collections.abc import Mapping

import attrs

__all__ = [
    "ERROR_CODES",
    "A2AError",
    "BusyError",
    "CompressionNotSupportedError",
    "ContentTypeNotSupportedError",
    "DeadlineExceededError",
    "ErrorCodes",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "FieldViolation",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "MethodNotFoundError",
    "ParseError",
    "PayloadTooLargeError",
    "PushNotificationNotSupportedError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnsupportedOperationError",
    "UsageError",
    "VersionNotSupportedError",
]

#: ``google.rpc.ErrorInfo.domain`` for every A2A error.
ERROR_DOMAIN = "a2a-protocol.org"


@attrs.frozen
class ErrorCodes:
    """How one error appears on each binding.

    ``http`` and ``grpc`` are the v1.0.1 mapping (what current clients expect);
    ``http_v1_0_0`` and ``grpc_v1_0_0`` the v1.0.0 one, which the v1.0 conformance kit still
    asserts. ``grpc`` is a ``google.rpc.Code`` name (the REST binding's ``status`` too).
    """

    jsonrpc: int
    reason: str
    http: int
    http_v1_0_0: int
    grpc: str
    message: str
    grpc_v1_0_0: str


@attrs.frozen
class FieldViolation:
    """One bad field of a request (``google.rpc.BadRequest.FieldViolation``), by wire path."""

    field: str
    description: str


class UsageError(RuntimeError):
    """The core was called wrongly by its adapter: a bug, never a client's fault."""


class A2AError(Exception):
    """A protocol error, carried back to the client as an error reply."""

    def __init__(
        self,
        message: str | None = None,
        *,
        metadata: Mapping[str, str] | None = None,
        violations: tuple[FieldViolation, ...] = (),
    ) -> None:
        self.message = message or self.codes.message
        self.metadata: Mapping[str, str] = metadata or {}
        self.violations = violations
        super().__init__(self.message)

    @property
    def codes(self) -> ErrorCodes:
        """This error's row of :data:`ERROR_CODES` (inherited by subclasses without a row)."""
        for cls in type(self).__mro__:
            row = ERROR_CODES.get(cls)
            if row is not None:
                return row
        raise UsageError(f"{type(self).__name__} has no row in ERROR_CODES")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, A2AError)
            and (other.message, dict(other.metadata), other.violations)
            == (self.message, dict(self.metadata), self.violations)
        )

    def __hash__(self) -> int:
        return hash((type(self), self.message))


class ParseError(A2AError):
    """The body is not valid JSON (or not UTF-8)."""


class InvalidRequestError(A2AError):
    """The body is JSON but not a valid JSON-RPC 2.0 request."""


class PayloadTooLargeError(InvalidRequestError):
    """The body exceeds the configured size limit; it was not parsed."""


class MethodNotFoundError(A2AError):
    """No such method in this dialect."""


class InvalidParamsError(A2AError):
    """The parameters do not decode, or break a rule of the operation."""


class InternalError(A2AError):
    """The server failed; nothing about the request was wrong."""


class UnavailableError(A2AError):
    """The server cannot answer now (its task store is unreachable); the client may retry.

    Not a fault of the request, and not a bug either: the spec's "system" category, which
    HTTP says with 503 and gRPC with UNAVAILABLE so that clients and load balancers retry."""


class BusyError(A2AError):
    """The server is at one of its capacity limits (agent runs, a caller's runs, streams) and
    refuses new work rather than queue it without bound; the client may retry shortly.

    The spec has no error for this: it is answered as the spec's retryable "system" errors
    are (as :class:`UnavailableError`: -32603, HTTP 503, gRPC UNAVAILABLE), with a reason of
    its own and ``Retry-After``, the seconds of :attr:`retry_after`."""

    retry_after = 1


class TaskNotFoundError(A2AError):
    """No such task, or not one the caller may see (the two are indistinguishable by design)."""


class TaskNotCancelableError(A2AError):
    """The task is in a state that cannot be canceled (it is terminal)."""


class PushNotificationNotSupportedError(A2AError):
    """The card does not declare push notifications."""


class UnsupportedOperationError(A2AError):
    """The operation is not supported here or not in the task's current state."""


class ContentTypeNotSupportedError(A2AError):
    """A part's media type (or the request's Content-Type) is not accepted."""


class InvalidAgentResponseError(A2AError):
    """The agent produced something that is not a valid A2A update."""


class ExtendedAgentCardNotConfiguredError(A2AError):
    """The extended card is declared but none is configured."""


class ExtensionSupportRequiredError(A2AError):
    """The agent requires an extension the client did not declare."""


class UnauthenticatedError(A2AError):
    """The request carried no credentials, or wrong ones (answered 401 with the challenges)."""


class VersionNotSupportedError(A2AError):
    """The requested ``A2A-Version`` is not served here."""


class CompressionNotSupportedError(A2AError):
    """(gRPC) A message compressed with an algorithm the server does not decompress: gRPC
    answers UNIMPLEMENTED and lists what it accepts in ``grpc-accept-encoding``."""


class DeadlineExceededError(A2AError):
    """(gRPC) The client's ``grpc-timeout`` passed before the call was answered."""


def _row(
    jsonrpc: int,
    reason: str,
    http: int,
    http_v1_0_0: int,
    grpc: str,
    message: str,
    grpc_v1_0_0: str = "",
) -> ErrorCodes:
    return ErrorCodes(jsonrpc, reason, http, http_v1_0_0, grpc, message, grpc_v1_0_0 or grpc)


#: The single source of every error code. Columns: JSON-RPC code, ErrorInfo reason, HTTP status
#: (v1.0.1), HTTP status (v1.0.0), gRPC status (v1.0.1), default message, and the gRPC status of
#: v1.0.0 where it differs (§5.4 of v1.0.0 said UNIMPLEMENTED for three errors).
# fmt: off
ERROR_CODES: Mapping[type[A2AError], ErrorCodes] = {
    ParseError:                          _row(-32700, "INVALID_JSON", 400, 400, "INVALID_ARGUMENT", "Invalid JSON payload"),
    InvalidRequestError:                 _row(-32600, "INVALID_REQUEST", 400, 400, "INVALID_ARGUMENT", "Request payload validation error"),
    PayloadTooLargeError:                _row(-32600, "PAYLOAD_TOO_LARGE", 413, 413, "RESOURCE_EXHAUSTED", "Request body too large"),
    MethodNotFoundError:                 _row(-32601, "METHOD_NOT_FOUND", 404, 404, "UNIMPLEMENTED", "Method not found"),
    InvalidParamsError:                  _row(-32602, "INVALID_PARAMS", 400, 400, "INVALID_ARGUMENT", "Invalid parameters"),
    InternalError:                       _row(-32603, "INTERNAL", 500, 500, "INTERNAL", "Internal error"),
    UnavailableError:                    _row(-32603, "UNAVAILABLE", 503, 503, "UNAVAILABLE", "Service unavailable; retry later"),
    BusyError:                           _row(-32603, "SERVER_BUSY", 503, 503, "UNAVAILABLE", "The server is busy; retry later"),
    TaskNotFoundError:                   _row(-32001, "TASK_NOT_FOUND", 404, 404, "NOT_FOUND", "Task not found"),
    TaskNotCancelableError:              _row(-32002, "TASK_NOT_CANCELABLE", 400, 409, "FAILED_PRECONDITION", "Task cannot be canceled"),
    PushNotificationNotSupportedError:   _row(-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", 400, 400, "FAILED_PRECONDITION", "Push Notification is not supported", "UNIMPLEMENTED"),
    UnsupportedOperationError:           _row(-32004, "UNSUPPORTED_OPERATION", 400, 400, "FAILED_PRECONDITION", "This operation is not supported", "UNIMPLEMENTED"),
    ContentTypeNotSupportedError:        _row(-32005, "CONTENT_TYPE_NOT_SUPPORTED", 400, 415, "INVALID_ARGUMENT", "Incompatible content types"),
    InvalidAgentResponseError:           _row(-32006, "INVALID_AGENT_RESPONSE", 500, 502, "INTERNAL", "Invalid agent response"),
    ExtendedAgentCardNotConfiguredError: _row(-32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", 400, 400, "FAILED_PRECONDITION", "Extended agent card is not configured"),
    ExtensionSupportRequiredError:       _row(-32008, "EXTENSION_SUPPORT_REQUIRED", 400, 400, "FAILED_PRECONDITION", "A required extension is not supported by the client"),
    UnauthenticatedError:                _row(-32600, "UNAUTHENTICATED", 401, 401, "UNAUTHENTICATED", "Missing or invalid credentials"),
    VersionNotSupportedError:            _row(-32009, "VERSION_NOT_SUPPORTED", 400, 400, "FAILED_PRECONDITION", "Protocol version is not supported", "UNIMPLEMENTED"),
    CompressionNotSupportedError:        _row(-32600, "COMPRESSION_NOT_SUPPORTED", 415, 415, "UNIMPLEMENTED", "Message compression is not supported"),
    DeadlineExceededError:               _row(-32603, "DEADLINE_EXCEEDED", 504, 504, "DEADLINE_EXCEEDED", "Deadline exceeded"),
}
# fmt: on
