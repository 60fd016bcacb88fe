"""Serving the Quart application with hypercorn on asyncio."""

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config
from quart import Quart

__all__ = ["bind_socket", "serve_app"]


def bind_socket(host: str, port: int, *, backlog: int = 1024) -> socket.socket:
    """A bound, listening TCP socket (port 0 picks a free port: read it back from the socket).

    It listens at once, so a client may connect as soon as this returns; connections queue
    until the server starts accepting them.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    return sock


async def serve_app(
    app: Quart,
    sock: socket.socket,
    *,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    graceful_timeout: float = 5.0,
) -> None:
    """Serve ``app`` on ``sock`` until ``shutdown_trigger`` returns (or forever)."""
    config = Config()
    # Hypercorn closes the socket it serves; give it a duplicate so ``sock`` stays the caller's.
    config.bind = [f"fd://{os.dup(sock.fileno())}"]
    config.graceful_timeout = graceful_timeout
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    trigger = shutdown_trigger or asyncio.Event().wait
    await hypercorn_serve(app, config, shutdown_trigger=trigger)
