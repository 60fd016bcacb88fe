"""The asyncio adapter: the engine served by Quart on uvicorn."""

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
