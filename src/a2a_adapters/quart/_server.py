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

from a2a_adapters._engine import begin_shutdown, engine_failure, until_failed

__all__ = ["serve_app"]


async def serve_app(
    app: Quart,
    sock: socket.socket,
    *,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    graceful_timeout: float = 5.0,
) -> None:
    """Serve ``app`` on ``sock`` until ``shutdown_trigger`` returns (or a signal stops it).

    Open connections (streams included) get ``graceful_timeout`` seconds to finish. If an
    engine of the app fails, the server stops and this raises
    :class:`~a2a_adapters.EngineFailed` (the process should exit non-zero and be restarted).
    """
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=max(1, round(graceful_timeout)),
    )
    loop = asyncio.get_running_loop()
    server = _Server(config, on_exit=lambda: loop.call_soon_threadsafe(begin_shutdown, app))

    async def stop_when_triggered() -> None:
        if shutdown_trigger is not None:
            await shutdown_trigger()
            begin_shutdown(app)
            server.should_exit = True

    async def stop_when_an_engine_fails() -> None:
        await until_failed(app)
        server.should_exit = True

    watchers = [
        asyncio.create_task(stop_when_triggered()),
        asyncio.create_task(stop_when_an_engine_fails()),
    ]
    try:
        await server.serve(sockets=[sock])
    finally:
        for watcher in watchers:
            watcher.cancel()
    failure = engine_failure(app)
    if failure is not None:
        raise failure


class _Server(uvicorn.Server):
    """uvicorn, which also tells the engines as soon as a signal starts its shutdown."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], object]) -> None:
        super().__init__(config)
        self._on_exit = on_exit

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        self._on_exit()
