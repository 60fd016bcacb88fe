"""HTTP/2 (gRPC) on asyncio: the same application on hypercorn's asyncio worker, on a second
listening socket.

uvicorn speaks HTTP/1.1 only, and gRPC needs HTTP/2 with response trailers: hypercorn serves
them, in the same loop, beside uvicorn. It keeps the limits of its own configuration
(``a2a_adapters._hypercorn``) and, in front of the application, the head limits
(:class:`~a2a_adapters._hypercorn.HeadLimits`). (On trio, HTTP/2 shares the HTTP/1.1 listeners,
which hand it over connection by connection: ``a2a_adapters.trio._http2``.)
"""

import socket
from collections.abc import Awaitable, Callable
from typing import Any, cast

from quart import Quart

from a2a_adapters._asgi import asgi_entry
from a2a_adapters._extras import needs
from a2a_adapters._lifecycle import until_ready
from a2a_adapters._limits import ConnectionLimits
from a2a_adapters._tls import TlsFiles

__all__ = ["serve_h2"]


async def serve_h2(
    app: Quart,
    sock: socket.socket,
    stopped: Callable[[], Awaitable[Any]],
    limits: ConnectionLimits,
    graceful_timeout: float,
    tls: TlsFiles | None,
) -> None:
    """The same application on hypercorn (HTTP/2, for gRPC), on ``sock``, until ``stopped``."""
    with needs("grpc", "gRPC on the asyncio adapter"):  # the asyncio extra has no hypercorn
        from hypercorn.app_wrappers import ASGIWrapper
        from hypercorn.asyncio.run import worker_serve
        from hypercorn.config import Sockets

        from a2a_adapters._hypercorn import HeadLimits, hypercorn_config, without_lifespan

    await until_ready(app)  # a call before the engine runs could not be answered
    config = hypercorn_config(limits, graceful_timeout, tls)
    # hypercorn closes the sockets it serves: give it a duplicate, ``sock`` stays the caller's.
    served = [sock.dup()]
    secure, insecure = (served, []) if tls else ([], served)
    sockets = Sockets(secure_sockets=secure, insecure_sockets=insecure, quic_sockets=[])
    limited = HeadLimits(without_lifespan(cast(Any, asgi_entry(app))), limits)
    asgi = ASGIWrapper(cast(Any, limited))
    await worker_serve(asgi, config, sockets=sockets, shutdown_trigger=stopped)
