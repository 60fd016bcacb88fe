"""The one way in: what every HTTP entry (the fast ASGI path, the mounted blueprint) does before
and after the engine, written once.

* The path as the client wrote it, percent-escapes kept (the core decodes each path parameter
  itself, after splitting, so an id holding ``/`` or ``%`` survives).
* Credentials checked on the head, before the body is read: a client without them is answered
  (by the core, in the request's binding) having made the server buffer nothing.
* The body read within ``max_body_bytes``, never past it (413).
* A response to a request whose body was left unread closes the connection: what the client
  still sends is no next request.
* A response's ``content-length`` is the one the core gave, if any (a HEAD answer declares the
  length GET would send), else the body's.
* The request's span (``a2a_adapters._telemetry``), when telemetry is on: begun on the head,
  so that it continues the caller's trace and covers refusals too, ended with the answer (a
  stream's end).
"""

from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import unquote

from a2a_core.transport import ANONYMOUS, HttpRequest, HttpResponse

from ._access import Visit
from ._auth import authenticate
from ._engine import Engine
from ._streaming import HttpStream
from ._telemetry import Exchange

__all__ = ["ClientLeft", "enter", "path_as_written", "with_length"]


class ClientLeft(Exception):
    """The client went away before its request's body was complete."""


#: Reads the request body within a limit of bytes: the body, or ``None`` once it proves longer
#: (never reading past), or raises :class:`ClientLeft`.
BodyReader = Callable[[int], Awaitable[bytes | None]]


def enter(
    engine: Engine,
    head: HttpRequest,
    base_url: str,
    read_body: BodyReader,
    *,
    disconnected: Callable[[], Awaitable[object]] | None = None,
    visit: Visit | None = None,
) -> Awaitable[HttpResponse | HttpStream]:
    """Answer the request whose ``head`` (no body yet) reached the A2A root at ``base_url``.
    Raises :class:`ClientLeft` when the client leaves before its body is whole: half a request
    is not a request, and nothing is decided on it. ``visit``, if given, is told the principal
    and the task, for the access log.

    (Not a coroutine itself: with telemetry off, what it gives is :func:`_enter`'s, and the
    request's coroutines are one fewer to pass through at each of its waits.)"""
    traced = engine.telemetry.request(head)
    if traced is None:
        return _enter(engine, head, base_url, read_body, disconnected, visit)
    return _traced(traced, engine, head, base_url, read_body, disconnected, visit)


async def _traced(
    traced: Exchange,
    engine: Engine,
    head: HttpRequest,
    base_url: str,
    read_body: BodyReader,
    disconnected: Callable[[], Awaitable[object]] | None,
    visit: Visit | None,
) -> HttpResponse | HttpStream:
    with traced:
        try:
            response = await _enter(engine, head, base_url, read_body, disconnected, visit)
        except ClientLeft:
            traced.client_left()
            raise
    return traced.answered(response)


async def _enter(
    engine: Engine,
    head: HttpRequest,
    base_url: str,
    read_body: BodyReader,
    disconnected: Callable[[], Awaitable[object]] | None,
    visit: Visit | None,
) -> HttpResponse | HttpStream:
    core = engine.core
    caller = ANONYMOUS
    if engine.auth:
        verified = authenticate(core, engine.auth, head)
        if isinstance(verified, HttpResponse):
            return _unread(verified, head.headers)
        caller = verified
        if visit is not None:
            visit.principal = caller.principal
    body = await read_body(core.config.max_body_bytes)
    if body is None:
        return _unread(core.too_large(head.path), head.headers)
    request = HttpRequest(head.method, head.path, head.headers, body, head.query)
    response = await engine.handle(request, base_url, caller, disconnected=disconnected)
    if visit is not None:
        visit.task_id = response.task_id
    return response


def _unread(response: HttpResponse, headers: Mapping[str, str]) -> HttpResponse:
    declared = headers.get("content-length", "0")
    if declared in ("", "0") and "transfer-encoding" not in headers:
        return response  # no body at all: the connection may stay
    return HttpResponse(
        response.status,
        (*response.headers, ("connection", "close")),
        response.body,
        response.trailers,
    )


def with_length(response: HttpResponse) -> list[tuple[str, str]]:
    """The response's headers, with a ``content-length`` (the core's own, if it gave one)."""
    headers = list(response.headers)
    for name, _ in headers:  # (a loop, not any() over a generator: once a response)
        if name == "content-length" or name.lower() == "content-length":
            return headers
    headers.append(("content-length", str(len(response.body))))
    return headers


def path_as_written(raw_path: bytes | None, path: str, prefix: str = "") -> str:
    """``path`` (below a mount ``prefix``, decoded) as the client wrote it, from the request's
    ``raw_path``: escapes kept. When the prefix itself was escaped the two do not line up, and
    the decoded path is kept."""
    if not isinstance(raw_path, bytes):
        return path
    written = raw_path.decode("latin-1").split("?", 1)[0]
    if "%" not in written:
        return path
    if not prefix:
        return written
    tail = written[len(prefix) :]
    return tail if written.startswith(prefix) and unquote(tail) == path else path
