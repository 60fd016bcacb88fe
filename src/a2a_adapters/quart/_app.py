"""The Quart glue: an HTTP request in, the engine's answer out. Nothing else.

:func:`a2a_blueprint` mounts A2A into any Quart application at any path; :func:`create_app` is a
ready application with just that blueprint.
"""

from quart import Blueprint, Quart, Response, request
from werkzeug.datastructures import Headers
from werkzeug.exceptions import RequestEntityTooLarge

from a2a_adapters._streaming import HttpStream
from a2a_core import HttpRequest, HttpResponse

from ._engine import Engine

__all__ = ["a2a_blueprint", "create_app"]

_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def a2a_blueprint(engine: Engine, *, name: str = "a2a") -> Blueprint:
    """A blueprint serving A2A; register it with ``url_prefix`` to mount it anywhere.

    The application must call ``await engine.start()`` before serving and
    ``await engine.aclose()`` after (:func:`create_app` does both).
    """
    blueprint = Blueprint(name, __name__)

    # strict_slashes off: a client may POST to the mount point with or without its final "/".
    @blueprint.route("/", defaults={"subpath": ""}, methods=_METHODS, strict_slashes=False)
    @blueprint.route("/<path:subpath>", methods=_METHODS)
    async def a2a(subpath: str) -> Response:
        path = "/" + subpath
        base_url = request.base_url[: len(request.base_url) - len(path)]
        headers = {name.lower(): value for name, value in request.headers.items()}
        try:
            body = await request.get_data(cache=False, as_text=False, parse_form_data=False)
        except RequestEntityTooLarge:
            return _to_quart(engine.core.too_large())
        query = request.query_string.decode("latin-1")
        core_request = HttpRequest(request.method, path, headers, body, query)
        return _to_quart(await engine.handle(core_request, base_url))

    return blueprint


def create_app(engine: Engine) -> Quart:
    """A Quart application serving A2A at its root."""
    app = Quart("a2a_adapters")
    # Quart stops buffering a body past this size, so a huge body is never read into memory.
    app.config["MAX_CONTENT_LENGTH"] = engine.core.config.max_body_bytes
    app.register_blueprint(a2a_blueprint(engine))
    app.before_serving(engine.start)
    app.after_serving(engine.aclose)
    return app


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
