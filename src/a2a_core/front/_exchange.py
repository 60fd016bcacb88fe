"""HTTP as the core sees it: requests and responses as plain values, and what routing makes
of a request (a :class:`Dispatch`: the decoded call, and how its reply is to be written)."""

import enum
from collections.abc import Mapping
from datetime import timedelta

import attrs

from a2a_core._errors import ErrorCodes
from a2a_core.decide._inputs import Call
from a2a_core.wire._jsonrpc import RpcId

__all__ = [
    "JSON",
    "Binding",
    "Dispatch",
    "HttpRequest",
    "HttpResponse",
    "Served",
    "json_response",
]

JSON = "application/json"


def _lower_keys(headers: Mapping[str, str]) -> Mapping[str, str]:
    if all(name.islower() for name in headers):
        return headers
    return {name.lower(): value for name, value in headers.items()}


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
class Served:
    """What an answered request was, as the core understood it: for a transport's traces,
    metrics and logs, which would otherwise have to parse the request and the reply again.

    ``operation`` is the v1.0 method name ("" when the request was not understood far enough
    to tell); ``binding`` and ``version`` (the dialect: "1.0", "0.3", "0.1") how it came in;
    ``error`` the codes of the protocol error it was answered with (``None``: it succeeded);
    ``rpc_id`` the JSON-RPC request id; ``context_id`` the conversation, when known.
    """

    operation: str
    binding: "Binding"
    version: str = ""
    error: ErrorCodes | None = None
    rpc_id: RpcId = None
    context_id: str = ""


@attrs.frozen
class HttpResponse:
    """An HTTP response to send as is (``trailers`` after the body: gRPC's status).

    ``task_id`` and ``served`` are not sent: ``task_id`` names the task the request concerned
    (the one it named, or created), when there is one, and ``served`` says what the request
    was (:class:`Served`), so that a transport's access log and traces can say so without
    parsing bodies again. Equality ignores both: two responses are equal when they send the
    same bytes.
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    trailers: tuple[tuple[str, str], ...] = ()
    task_id: str = attrs.field(default="", eq=False)
    served: Served | None = attrs.field(default=None, eq=False)


class Binding(enum.Enum):
    """How a request reached us, and so how its reply is written."""

    JSONRPC = "JSONRPC"
    REST = "HTTP+JSON"
    GRPC = "GRPC"


@attrs.frozen
class Dispatch:
    """A call to run through the store and the reducer; render its reply with ``Core.render``.

    ``timeout`` is how long the client waits for the reply (gRPC's ``grpc-timeout``), if it said.
    """

    call: Call
    rpc_id: RpcId = None
    binding: Binding = Binding.JSONRPC
    timeout: timedelta | None = None


def json_response(body: bytes, status: int = 200) -> HttpResponse:
    return HttpResponse(status, (("content-type", JSON),), body)
