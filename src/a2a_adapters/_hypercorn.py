"""hypercorn's settings, shared by the servers that run on it: the trio adapter's, and the gRPC
listener of the asyncio adapter (uvicorn has no HTTP/2, which gRPC needs)."""

import logging
import sys

from hypercorn.config import Config

from a2a_core.grpc import percent_encode

from ._asgi import ASGIApp, Receive, Scope, Send
from ._limits import ConnectionLimits, send_refusal
from ._tls import TlsFiles

__all__ = ["HeadLimits", "TlsFiles", "head_refusal", "hypercorn_config", "without_lifespan"]

#: How much larger than ``max_header_bytes`` a header block HTTP/2 itself takes: a head over the
#: limit must reach :class:`HeadLimits` to be answered clearly (h2 refuses a larger block by
#: closing the whole connection, which a gRPC client reports only as UNAVAILABLE); one over
#: this much more is abuse of the protocol, and closes it still.
H2_HEAD_ROOM = 4
#: gRPC's RESOURCE_EXHAUSTED: what a gRPC client is told of a head over the limit.
_GRPC_RESOURCE_EXHAUSTED = b"8"


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
    config.h2_max_header_list_size = max(H2_HEAD_ROOM * limits.max_header_bytes, 2**16)
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


def head_refusal(scope: Scope, limits: ConnectionLimits) -> str | None:
    """Why the head of request ``scope`` is over ``limits`` (fields, bytes), or ``None``."""
    headers = scope["headers"]
    if len(headers) > limits.max_header_count:
        return (
            f"the request has {len(headers)} header fields, over the limit of "
            f"{limits.max_header_count}"
        )
    size = len(scope.get("raw_path") or b"") + len(scope.get("query_string", b""))
    size += sum(len(name) + len(value) + 4 for name, value in headers)
    if size > limits.max_header_bytes:
        return f"the request head is {size} bytes, over the limit of {limits.max_header_bytes}"
    return None


class HeadLimits:
    """ASGI middleware for the requests hypercorn serves (HTTP/2): a head over the limits that
    HTTP/1.1 keeps on the wire is refused before the application sees it, with 431, or for a
    gRPC call with RESOURCE_EXHAUSTED (a gRPC client reads an HTTP status it does not know as
    UNKNOWN)."""

    def __init__(self, app: ASGIApp, limits: ConnectionLimits) -> None:
        self._app = app
        self._limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self._app(scope, receive, send)
        why = head_refusal(scope, self._limits)
        if why is None:
            return await self._app(scope, receive, send)
        content_type = next((v for n, v in scope["headers"] if n == b"content-type"), b"")
        if content_type.startswith(b"application/grpc"):
            message = percent_encode(f"Request metadata too large: {why}").encode()
            trailers = [(b"grpc-status", _GRPC_RESOURCE_EXHAUSTED), (b"grpc-message", message)]
            headers = [(b"content-type", b"application/grpc")]
            await send(
                {"type": "http.response.start", "status": 200, "headers": headers, "trailers": True}
            )
            await send({"type": "http.response.body", "body": b""})
            await send({"type": "http.response.trailers", "headers": trailers})
            return None
        await send_refusal(send, 431, why)
        return None
