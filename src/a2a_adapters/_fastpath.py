"""A2A's short way through the application: from ASGI straight to the engine.

Quart's request machinery (request and application contexts, the URL map, request and response
objects, hooks) cost more per request than our core and store together: measured with
``python -m benchmarks.run``, about half of a blocking send's CPU time. A2A uses none of it,
since the core routes and renders for itself. So the applications ``create_app`` builds hand
each request for an A2A endpoint to the engine here, and everything else (the lifespan, routes a
user adds to the application, paths A2A does not serve) to Quart as before. The blueprint that
mounts A2A into a user's own application still goes through Quart.

What happens on the way in and out (credentials before the body, the body limit, the path as
written, lengths) is the one door both entries share (``a2a_adapters._door``).

Only ASGI (``a2a_adapters._asgi``) and anyio are used, so the same code serves Quart on asyncio
and QuartTrio on trio.
"""

from collections.abc import Awaitable
from contextlib import aclosing
from functools import partial

import anyio

from a2a_core.transport import HttpRequest, HttpResponse, Probe

from ._access import VISIT, AccessLog, Visit, visit_of
from ._asgi import WHOLE, ASGIApp, Receive, Scope, Send, encoded, root_path_of
from ._cors import Cors
from ._door import ClientLeft, enter, path_as_written, with_length
from ._engine import Engine
from ._streaming import HttpStream

__all__ = ["FastPath", "serving_chain"]

_DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def serving_chain(app: ASGIApp, engine: Engine, root_path: str = "") -> ASGIApp:
    """What ``create_app`` of either adapter serves: the access log, CORS (if origins are
    configured), then A2A's short way in front of the application ``app``, below
    ``root_path`` (see :class:`FastPath`)."""
    served: ASGIApp = FastPath(app, engine, root_path)
    if engine.core.config.cors_origins:
        served = Cors(served, engine.core)
    return AccessLog(served)


class FastPath:
    """ASGI middleware: requests for A2A endpoints and the health probes (``/healthz``,
    ``/readyz``) go to ``engine``, the rest to ``app``.

    ``root_path`` is where a proxy in front serves the application (``/agents``): the card's
    URLs include it, and requests are served with it (a proxy that passes the prefix on) or
    without it (one that strips it).
    """

    def __init__(self, app: ASGIApp, engine: Engine, root_path: str = "") -> None:
        self._app = app
        self._engine = engine
        self._root = root_path_of(root_path)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # Not a coroutine itself: what it gives is the coroutine that serves the request (its
        # own or the application's), so that a request's waits pass through one fewer.
        # A mounted application (root_path set) keeps Quart's way, which knows its prefix.
        if scope["type"] != "http" or scope.get("root_path"):
            return self._app(scope, receive, send)
        method: str = scope["method"]
        path: str = scope["path"]
        raw = scope.get("raw_path")
        if isinstance(raw, bytes) and b"%" in raw:
            path = path_as_written(raw, path)
        root = self._root
        if root and (path == root or path.startswith(root + "/")):
            path = path[len(root) :] or "/"
        core = self._engine.core
        probe = core.health_probe(method, path)
        if probe is not None:  # before A2A and its credentials: a probe carries none
            return self._probe(scope, send, probe, method == "HEAD")
        if not core.serves(method, path):
            return self._app(scope, receive, send)
        return self._serve(scope, receive, send, method, path)

    async def _probe(self, scope: Scope, send: Send, probe: Probe, head: bool) -> None:
        visit = visit_of(scope)
        if visit is not None:
            visit.probe = True
        answer = await self._engine.health(probe, head=head)
        await _send_response(answer, send, takes_trailers=False)

    async def _serve(
        self, scope: Scope, receive: Receive, send: Send, method: str, path: str
    ) -> None:
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        query: bytes = scope.get("query_string", b"")
        head = HttpRequest(method, path, headers, b"", query.decode("latin-1") if query else "")
        visit = scope.get(VISIT)
        try:
            response = await enter(
                self._engine,
                head,
                _base_url(scope, headers) + self._root,
                partial(_read_body, receive, headers),
                disconnected=partial(_disconnect, receive),
                visit=visit if isinstance(visit, Visit) else None,
            )
        except ClientLeft:
            return  # half a request is not a request: nothing is decided on it
        later = scope.get("http_version") in ("2", "3")
        trailers = later and headers.get("te") == "trailers"
        if isinstance(response, HttpStream):
            await _send_stream(response, receive, send, trailers)
        else:
            if later:
                response = _without_connection(response)
            await _send_response(response, send, trailers)


def _without_connection(response: HttpResponse) -> HttpResponse:
    """HTTP/2 and 3 forbid ``connection`` (the door's "close" after a body left unread): a
    stream ends by itself, and the connection carries others."""
    if not any(name == "connection" for name, _ in response.headers):
        return response
    kept = tuple((name, value) for name, value in response.headers if name != "connection")
    return HttpResponse(response.status, kept, response.body, response.trailers)


def _base_url(scope: Scope, headers: dict[str, str]) -> str:
    """Where the client reached the A2A root, as it addressed the server."""
    scheme = scope.get("scheme", "http")
    host = headers.get("host")
    if not host:
        server = scope.get("server")
        host = f"{server[0]}:{server[1]}" if server else "localhost"
    default = _DEFAULT_PORTS.get(scheme)
    if default and host.endswith(default):
        host = host[: -len(default)]
    return f"{scheme}://{host}"


async def _read_body(receive: Receive, headers: dict[str, str], limit: int) -> bytes | None:
    """The request body, or ``None`` once it proves longer than ``limit`` (never read past).
    Raises :class:`ClientLeft` if the client leaves before the body is whole."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientLeft
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _send_response(response: HttpResponse, send: Send, takes_trailers: bool) -> None:
    if not response.trailers:
        headers = encoded(with_length(response))
        start = {"type": "http.response.start", "status": response.status, "headers": headers}
        await send({**start, WHOLE: True})
        await send({"type": "http.response.body", "body": response.body})
        return
    trailers = encoded(response.trailers)
    if not takes_trailers:
        # Where trailers cannot go, they go with the head (gRPC's "trailers-only" form).
        headers = encoded(with_length(response)) + trailers
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        await send({"type": "http.response.body", "body": response.body})
        return
    start = {"type": "http.response.start", "status": response.status, "trailers": True}
    await send({**start, "headers": encoded(response.headers)})
    await send({"type": "http.response.body", "body": response.body})
    await send({"type": "http.response.trailers", "headers": trailers, "more_trailers": False})


#: The end of a gRPC stream that stopped without saying how (its engine went away).
_CUT = (("grpc-status", "14"), ("grpc-message", "The stream ended early; subscribe again"))


async def _send_stream(
    stream: HttpStream, receive: Receive, send: Send, takes_trailers: bool
) -> None:
    """Send the stream's chunks until it ends or the client leaves (which stops it at once),
    then its trailers (gRPC's status) if it has any."""
    grpc = dict(stream.headers).get("content-type", "").startswith("application/grpc")
    trailing = takes_trailers and grpc
    start = {"type": "http.response.start", "status": stream.status, "trailers": trailing}
    await send({**start, "headers": encoded(stream.headers)})
    async with anyio.create_task_group() as group, aclosing(stream.body) as chunks:
        group.start_soon(_cancel_on_disconnect, receive, group.cancel_scope)
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        if trailing:
            trailers = encoded(tuple(stream.trailers) or _CUT)
            await send({"type": "http.response.trailers", "headers": trailers})
        group.cancel_scope.cancel()


async def _disconnect(receive: Receive) -> None:
    """Return once the client has gone (the body was read: nothing else can come)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    await _disconnect(receive)
    scope.cancel()
