"""The Quart glue both adapters share (Quart on asyncio, QuartTrio on trio): request in,
engine answer out, nothing else."""

from urllib.parse import unquote

from quart import Blueprint, Response, request
from werkzeug.datastructures import Headers
from werkzeug.exceptions import RequestEntityTooLarge

from a2a_adapters._auth import authenticate
from a2a_adapters._engine import Engine
from a2a_adapters._streaming import HttpStream
from a2a_core import HttpRequest, HttpResponse

__all__ = ["a2a_blueprint"]

_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def a2a_blueprint(engine: Engine, *, name: str = "a2a") -> Blueprint:
    """A blueprint serving A2A; register it with ``url_prefix`` to mount it anywhere.

    The application must run the engine while it serves (``run_engine`` of its adapter).
    """
    blueprint = Blueprint(name, __name__)

    # strict_slashes off: a client may POST to the mount point with or without its final "/".
    @blueprint.route("/", defaults={"subpath": ""}, methods=_METHODS, strict_slashes=False)
    @blueprint.route("/<path:subpath>", methods=_METHODS)
    async def a2a(subpath: str) -> Response:
        path = "/" + subpath
        base_url = request.base_url[: len(request.base_url) - len(path)]
        path = _undecoded(path)
        headers = {name.lower(): value for name, value in request.headers.items()}
        query = request.query_string.decode("latin-1")
        # Credentials are checked on the head, before the body is read (see _asgi.FastPath).
        head = HttpRequest(request.method, path, headers, b"", query)
        caller = authenticate(engine.core, engine.auth, head)
        if isinstance(caller, HttpResponse):
            return _closing(_to_quart(caller), headers)
        try:
            body = await request.get_data(cache=False, as_text=False, parse_form_data=False)
        except RequestEntityTooLarge:
            return _closing(_to_quart(engine.core.too_large(path)), headers)
        core_request = HttpRequest(request.method, path, headers, body, query)
        return _to_quart(await engine.handle(core_request, base_url, caller))

    return blueprint


def _closing(response: Response, headers: dict[str, str]) -> Response:
    """``response`` to a request whose body was left unread: it closes the connection, unless
    the request had no body at all."""
    if headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers:
        response.headers["connection"] = "close"
    return response


def _to_quart(response: HttpResponse | HttpStream) -> Response:
    headers = Headers(list(response.headers))
    if isinstance(response, HttpStream):
        streamed = Response(response.body, status=response.status, headers=headers)
        streamed.timeout = None  # a stream lasts as long as its task, not Quart's 60 s default
        return streamed
    declared = headers.get("content-length")  # read first: Response() rewrites it
    quart_response = Response(response.body, status=response.status, headers=headers)
    if declared is not None:
        # A HEAD answer declares the length GET would send; Quart would count the empty body.
        quart_response.headers["content-length"] = declared
    return quart_response


def _undecoded(path: str) -> str:
    """``path`` as the client wrote it, percent-escapes kept: the core decodes each path
    parameter itself, after splitting, so that an id holding ``/`` or ``%`` survives."""
    raw = request.scope.get("raw_path")
    if not isinstance(raw, bytes):
        return path
    raw_path = raw.decode("latin-1").split("?", 1)[0]
    if "%" not in raw_path:
        return path
    prefix = request.path[: len(request.path) - len(path)]
    tail = raw_path[len(prefix) :]
    # When the mount prefix itself was escaped the two do not line up: keep the decoded path.
    return tail if raw_path.startswith(prefix) and unquote(tail) == path else path
