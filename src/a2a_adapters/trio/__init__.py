"""The trio adapter: the engine served by QuartTrio, HTTP/1.1 by our own server on httptools
and HTTP/2 (gRPC) by hypercorn's trio worker."""

from a2a_adapters._extras import needs

with needs("trio", "the trio adapter"):
    from a2a_adapters._engine import Engine
    from a2a_adapters._sockets import bind_socket

    from ._app import a2a_blueprint, create_app, run_engine
    from ._server import run_server, serve_app

__all__ = [
    "Engine",
    "a2a_blueprint",
    "bind_socket",
    "create_app",
    "run_engine",
    "run_server",
    "serve_app",
]
