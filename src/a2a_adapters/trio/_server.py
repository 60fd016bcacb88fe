"""Serving the QuartTrio application on trio, with hypercorn's trio worker.

On trio a write to a connection whose client has gone fails, so hypercorn tells the application
(``http.disconnect``) and an abandoned stream is cancelled at its next write (a keep-alive at
the latest).
"""

import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve
from quart_trio import QuartTrio

from a2a_adapters._engine import begin_shutdown, engine_failure, until_failed

__all__ = ["serve_app"]


async def serve_app(
    app: QuartTrio,
    sock: socket.socket,
    *,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    graceful_timeout: float = 5.0,
) -> None:
    """Serve ``app`` on ``sock`` until ``shutdown_trigger`` returns (or forever).

    Open connections (streams included) get ``graceful_timeout`` seconds to finish. If an
    engine of the app fails, the server stops and this raises
    :class:`~a2a_adapters.EngineFailed` (the process should exit non-zero and be restarted).
    """
    config = Config()
    # Hypercorn closes the socket it serves; give it a duplicate so ``sock`` stays the caller's.
    config.bind = [f"fd://{os.dup(sock.fileno())}"]
    config.graceful_timeout = graceful_timeout
    config.accesslog = None
    config.errorlog = None

    async def trigger() -> None:
        async with trio.open_nursery() as nursery:

            async def then_stop(wait: Callable[[], Awaitable[Any]]) -> None:
                await wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(then_stop, shutdown_trigger or trio.sleep_forever)
            nursery.start_soon(then_stop, lambda: until_failed(app))
        begin_shutdown(app)  # streams end now; runs get the graceful period

    await hypercorn_serve(app, config, shutdown_trigger=trigger)
    failure = engine_failure(app)
    if failure is not None:
        raise failure
