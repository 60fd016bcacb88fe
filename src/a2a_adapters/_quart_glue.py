"""The Quart glue both adapters share (Quart on asyncio, QuartTrio on trio): request in,
engine answer out, through the same door as the fast path (``a2a_adapters._door``); and what
``create_app`` of either adapter does to its application, which differs only by its class and
how it runs the engine (the ``_app`` module of each)."""

from quart import Blueprint, Quart, Response, request
from werkzeug.datastructures import Headers
from werkzeug.exceptions import RequestEntityTooLarge

from a2a_adapters._access import visit_of
from a2a_adapters._door import enter, path_as_written, with_length
from a2a_adapters._engine import Engine
from a2a_adapters._fastpath import serving_chain
from a2a_adapters._streaming import HttpStream
from a2a_core.transport import HttpRequest, HttpResponse

__all__ = ["a2a_blueprint", "serve_a2a"]

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
        prefix = request.path[: len(request.path) - len(path)]
        path = path_as_written(request.scope.get("raw_path"), path, prefix)
        headers = {name.lower(): value for name, value in request.headers.items()}
        head = HttpRequest(
            request.method, path, headers, b"", request.query_string.decode("latin-1")
        )

        async def read_body(limit: int) -> bytes | None:
            # Quart stops at MAX_CONTENT_LENGTH, which the adapters set to the same limit.
            try:
                body: bytes = await request.get_data(
                    cache=False, as_text=False, parse_form_data=False
                )
            except RequestEntityTooLarge:
                return None
            return body if len(body) <= limit else None

        # A client that leaves cancels this handler (Quart's way), which stops its wait too.
        visit = visit_of(request.scope)
        return _to_quart(await enter(engine, head, base_url, read_body, visit=visit))

    return blueprint


def serve_a2a(app: Quart, engine: Engine, root_path: str = "") -> None:
    """Make ``app`` (Quart's or QuartTrio's, new) serve A2A at its root, through A2A's short way
    (``a2a_adapters._fastpath``), below ``root_path``. The engine's run is the adapter's part."""
    # Quart stops buffering a body past this size, so a huge body is never read into memory.
    app.config["MAX_CONTENT_LENGTH"] = engine.core.config.max_body_bytes
    app.register_blueprint(a2a_blueprint(engine))
    # A2A's endpoints skip Quart's request machinery; the rest of the app is Quart's as usual.
    # Every request, A2A's or Quart's, gets its line in the access log, and CORS if it is on.
    app.asgi_app = serving_chain(app.asgi_app, engine, root_path)  # type: ignore[method-assign,assignment]


def _to_quart(response: HttpResponse | HttpStream) -> Response:
    headers = Headers(list(response.headers))
    if isinstance(response, HttpStream):
        streamed = Response(response.body, status=response.status, headers=headers)
        streamed.timeout = None  # a stream lasts as long as its task, not Quart's 60 s default
        return streamed
    sized = with_length(response)
    quart_response = Response(response.body, status=response.status, headers=Headers(sized))
    # Quart counts the body itself; a HEAD answer declares the length GET would send.
    quart_response.headers["content-length"] = dict(sized)["content-length"]
    return quart_response
