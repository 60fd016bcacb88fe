"""Serving the Quart application on asyncio, with uvicorn.

uvicorn rather than hypercorn here because it notices a client that hangs up in the middle of a
response: its protocol hears ``connection_lost`` from the event loop and tells the application
(``http.disconnect``), so a stream whose reader left is cancelled at once. Hypercorn's asyncio
HTTP/1.1 protocol stops reading once a request is complete and writes to a dead connection
without error, so such a stream would run on, writing keep-alives to nobody, until its task
ended. (The trio adapter serves with hypercorn's trio worker, where writing to a dead connection
does fail.)
"""

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn
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
    """Serve ``app`` on ``sock`` until ``shutdown_trigger`` returns (or a signal stops it).

    Open connections (streams included) get ``graceful_timeout`` seconds to finish.
    """
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=max(1, round(graceful_timeout)),
    )
    server = uvicorn.Server(config)

    async def stop_when_triggered() -> None:
        if shutdown_trigger is not None:
            await shutdown_trigger()
            server.should_exit = True

    watcher = asyncio.create_task(stop_when_triggered())
    try:
        await server.serve(sockets=[sock])
    finally:
        watcher.cancel()
