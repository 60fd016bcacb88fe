"""The asyncio adapter: the core run by an asyncio engine, served through Quart."""

from ._app import a2a_blueprint, create_app
from ._engine import Engine
from ._server import bind_socket, serve_app

__all__ = ["Engine", "a2a_blueprint", "bind_socket", "create_app", "serve_app"]
