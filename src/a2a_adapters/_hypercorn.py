"""hypercorn's settings, shared by the servers that run on it: the trio adapter's, and the gRPC
listener of the asyncio adapter (uvicorn has no HTTP/2, which gRPC needs)."""

import logging
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from hypercorn.config import Config

from ._limits import ConnectionLimits
from ._tls import TlsFiles

__all__ = ["TlsFiles", "hypercorn_config", "without_lifespan"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def hypercorn_config(
    limits: ConnectionLimits, graceful_timeout: float, tls: TlsFiles | None = None
) -> Config:
    """hypercorn's configuration for ``limits`` (the parts it keeps itself), and ``tls``."""
    config = Config()
    if tls is not None:
        # hypercorn's TLS context offers ALPN h2 and http/1.1: gRPC clients pick h2.
        config.certfile, config.keyfile = tls.certfile, tls.keyfile
    config.graceful_timeout = graceful_timeout
    config.h11_max_incomplete_size = limits.max_header_bytes
    # hypercorn closes a connection after this many requests (1,000 by default), and an HTTP/2
    # connection is a gRPC channel: its 1,001st call would fail with UNAVAILABLE. A channel
    # carries calls for as long as its client keeps it.
    config.keep_alive_max_requests = sys.maxsize
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    return config


def without_lifespan(app: ASGIApp) -> ASGIApp:
    """``app`` for a second server of the same application: its lifespan (which runs the engine)
    belongs to the first one, so this one's lifespan events are answered here."""

    async def second(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            return await app(scope, receive, send)
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return None

    return second
