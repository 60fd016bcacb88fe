"""Serving the Quart application on asyncio, with uvicorn: the listeners, the shutdown, and a
process's whole run (:func:`run_server`, what ``serve()`` and the command line do).

uvicorn rather than hypercorn here because it notices a client that hangs up in the middle of a
response: its protocol hears ``connection_lost`` from the event loop and tells the application
(``http.disconnect``), so a stream whose reader left is cancelled at once. Hypercorn's asyncio
HTTP/1.1 protocol stops reading once a request is complete and writes to a dead connection
without error, so such a stream would run on, writing keep-alives to nobody, until its task
ended. (The trio adapter serves HTTP/1.1 with its own server, :mod:`a2a_adapters.trio._http1`,
which reads on after a request to notice its client leaving.)

HTTP/1.1 is uvicorn's protocol under the connection limits (:mod:`._http1`); gRPC, which needs
HTTP/2, is served by hypercorn on a second socket (:mod:`._http2`).

Websocket upgrades are off (``ws="none"``): an upgraded connection would pass to uvicorn's
websocket protocol, beyond the cap and the timeouts.
"""

import asyncio
import contextlib
import signal
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import uvicorn
from quart import Quart

from a2a_adapters._asgi import asgi_entry
from a2a_adapters._engine import Engine
from a2a_adapters._lifecycle import begin_shutdown, engine_failure, until_failed
from a2a_adapters._limits import DEFAULT_LIMITS, ConnectionLimits
from a2a_adapters._proxy import TrustedProxies, trusted_networks
from a2a_adapters._tls import TlsFiles, check

from ._app import create_app
from ._http1 import protocol_for
from ._http2 import serve_h2

__all__ = ["fast_loop_factory", "run_server", "serve_app"]


async def serve_app(
    app: Quart,
    sock: socket.socket,
    *,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    graceful_timeout: float = 5.0,
    limits: ConnectionLimits = DEFAULT_LIMITS,
    grpc_sock: socket.socket | None = None,
    tls: TlsFiles | None = None,
    forwarded_allow_ips: Sequence[str] = (),
) -> None:
    """Serve ``app`` on ``sock`` until ``shutdown_trigger`` returns (or a signal stops it).

    Open connections (streams included) get ``graceful_timeout`` seconds to finish; idle ones
    are closed at once. ``limits`` bounds what each client may make the server hold. The
    ``X-Forwarded-*`` headers of peers in ``forwarded_allow_ips`` (addresses, networks, or
    ``*``) are believed, and nobody else's (``a2a_adapters._proxy``). If an engine of the app
    fails, the server stops and this raises :class:`~a2a_adapters.EngineFailed` (the process
    should exit non-zero and be restarted).

    uvicorn speaks HTTP/1.1 only, and gRPC needs HTTP/2: ``grpc_sock``, a second listening
    socket, serves the same application on hypercorn's asyncio worker, in the same loop, from
    the moment its engines are ready until uvicorn stops. With ``tls`` (a certificate and its
    key) both listeners speak TLS only (HTTPS; gRPC with ALPN ``h2``).
    """
    networks = trusted_networks(forwarded_allow_ips)
    if tls is not None:
        check(tls)  # refused here, saying why, if it cannot load
    entry = asgi_entry(app)
    config = uvicorn.Config(
        TrustedProxies(entry, networks) if forwarded_allow_ips else entry,
        interface="asgi3",
        # Ours, above, on both adapters alike; uvicorn's own would believe 127.0.0.1.
        proxy_headers=False,
        http=protocol_for(limits),
        # An upgraded connection leaves this protocol for uvicorn's websocket one, out of reach
        # of the connection cap and the timeouts; A2A has no websocket binding.
        ws="none",
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=max(1, round(graceful_timeout)),
        ssl_certfile=tls.certfile if tls else None,
        ssl_keyfile=tls.keyfile if tls else None,
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
    stopped = asyncio.Event()
    second = None
    if grpc_sock is not None:
        second = asyncio.create_task(
            serve_h2(app, grpc_sock, stopped.wait, limits, graceful_timeout, tls)
        )
    try:
        await server.serve(sockets=[sock])
    finally:
        for watcher in watchers:
            watcher.cancel()
        stopped.set()
        if second is not None:
            await second
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


def run_server(
    engine: Engine,
    sock: socket.socket,
    *,
    limits: ConnectionLimits = DEFAULT_LIMITS,
    grpc_sock: socket.socket | None = None,
    tls: TlsFiles | None = None,
    root_path: str = "",
    forwarded_allow_ips: Sequence[str] = (),
) -> None:
    """Serve ``engine`` on ``sock`` in a loop of its own (uvloop's, where installed) until
    SIGINT or SIGTERM: the whole run of a serving process (``serve()``, the command line)."""
    # uvicorn handles SIGINT/SIGTERM once it serves (it stops gracefully, then re-raises the
    # signal). Until then (the loop and the app are still being made), a signal is remembered
    # here and stops the server as soon as it starts, instead of being lost: a SIGTERM that came
    # then used to leave the server running until it was killed. The re-raised signal lands
    # here too, which ends the process normally (exit status 0).
    asked: list[int] = []
    wake: list[Callable[[], object]] = []

    def remember(signum: int, frame: object) -> None:
        asked.append(signum)
        for wake_up in wake:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing to stop
                wake_up()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, remember)

    async def until_asked() -> None:
        loop, stop = asyncio.get_running_loop(), asyncio.Event()
        wake.append(lambda: loop.call_soon_threadsafe(stop.set))
        if not asked:
            await stop.wait()

    with asyncio.Runner(loop_factory=fast_loop_factory()) as runner:
        runner.run(
            serve_app(
                create_app(engine, root_path=root_path),
                sock,
                limits=limits,
                shutdown_trigger=until_asked,
                grpc_sock=grpc_sock,
                tls=tls,
                forwarded_allow_ips=forwarded_allow_ips,
            )
        )


def fast_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (a dependency on CPython off Windows).

    It is a drop-in asyncio loop written on libuv; measured with the benchmarks, it takes about
    a third off the asyncio adapter's cost per request. ``None`` means asyncio's own loop.
    """
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
