"""Serving the QuartTrio application on trio: the listeners, the shutdown, and a process's whole
run (:func:`run_server`, what ``serve()`` and the command line do).

Each connection is read first by HTTP/1.1 (:mod:`._http1`, our own server on httptools); one
that opens with HTTP/2's preface (h2c with prior knowledge), or that chose ``h2`` by ALPN over
TLS, is handed to hypercorn's HTTP/2 (:mod:`._http2`) with what was read of it. hypercorn parsed
HTTP/1.1 with h11 (pure Python) and ran each request through its own tasks and events: it took
most of the time of a blocking send on trio.

hypercorn's ``serve`` is replaced by the short accept loop below, built from its parts (its
``Lifespan``, ``WorkerContext`` and ``ASGIWrapper``; hypercorn 0.17 and 0.18), because its own
loop listens on the socket again with its ``backlog`` (100, where ours asks for 1,024) and
builds its listener itself, so nothing could stand between it and the connections it accepts to
cap them. :class:`~a2a_adapters.ConnectionLimits` holds on both protocols: the cap here, the
rest in :mod:`._http1` and :mod:`._http2`.

Errors of the application go to the ``a2a_adapters.trio`` logger on HTTP/1.1 and to
``hypercorn.error`` on HTTP/2 (which hypercorn would otherwise give a handler of its own, or
none), so they reach Python logging with their tracebacks.
"""

import logging
import signal
import socket
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, cast

import trio
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import ConnectionState
from quart_trio import QuartTrio

from a2a_adapters._asgi import asgi_entry
from a2a_adapters._engine import Engine
from a2a_adapters._hypercorn import hypercorn_config
from a2a_adapters._lifecycle import begin_shutdown, engine_failure, until_failed
from a2a_adapters._limits import (
    DEFAULT_LIMITS,
    REFUSAL_LINGER,
    ConnectionLimits,
    Gate,
    refusal,
)
from a2a_adapters._proxy import TrustedProxies, trusted_networks
from a2a_adapters._tls import TlsFiles, check

from ._app import create_app
from ._http1 import Http1Server
from ._http2 import Connection, Replay, RequestLimits, Watched

__all__ = ["run_server", "serve_app"]

log = logging.getLogger("a2a_adapters.trio")


async def serve_app(
    app: QuartTrio,
    sock: socket.socket,
    *,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    graceful_timeout: float = 5.0,
    limits: ConnectionLimits = DEFAULT_LIMITS,
    grpc_sock: socket.socket | None = None,
    tls: TlsFiles | None = None,
    forwarded_allow_ips: Sequence[str] = (),
) -> None:
    """Serve ``app`` on ``sock`` until ``shutdown_trigger`` returns (or forever).

    Open connections (streams included) get ``graceful_timeout`` seconds to finish; idle ones
    are closed at once. ``limits`` bounds what each client may make the server hold. The
    ``X-Forwarded-*`` headers of peers in ``forwarded_allow_ips`` (addresses, networks, or
    ``*``) are believed, and nobody else's (``a2a_adapters._proxy``). If an engine of the app
    fails, the server stops and this raises :class:`~a2a_adapters.EngineFailed` (the process
    should exit non-zero and be restarted).

    HTTP/1.1 is served by :mod:`._http1`; a connection that speaks HTTP/2 (with prior knowledge,
    h2c, or ALPN ``h2`` over TLS) goes to hypercorn's HTTP/2, on the same port, so gRPC calls
    reach ``sock`` too; ``grpc_sock``, a second listening socket, serves the same application
    (gRPC on a port of its own), under the same limits. With ``tls`` (a certificate and its key)
    every listener speaks TLS only (HTTPS; gRPC with ALPN ``h2``).
    """
    networks = trusted_networks(forwarded_allow_ips)
    if tls is not None:
        check(tls)  # refused here, saying why, if it cannot load
    served = asgi_entry(app)
    if forwarded_allow_ips:
        served = TrustedProxies(served, networks)
    config = hypercorn_config(limits, graceful_timeout, tls)
    ssl_context = config.create_ssl_context() if tls is not None else None
    asgi = ASGIWrapper(cast(Any, RequestLimits(served, limits)))
    lifespan_state: dict[str, Any] = {}
    lifespan = Lifespan(asgi, config, lifespan_state)
    context = WorkerContext(None)
    gate = Gate(limits.connection_cap())
    # The listener closes its socket when it is done; give it a duplicate so ``sock`` (already
    # listening, with its own backlog) stays the caller's.
    listeners = [
        trio.SocketListener(trio.socket.from_stdlib_socket(each.dup()))
        for each in (sock, grpc_sock)
        if each is not None
    ]

    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        state = ConnectionState(lifespan_state.copy())
        http1 = Http1Server(served, limits, lifespan_state, secure=ssl_context is not None)

        live: set[Watched] = set()

        async def http2(stream: trio.abc.Stream, watched: Watched) -> None:
            """hypercorn's HTTP/2 on a connection (already read from: ``stream`` replays)."""
            live.add(watched)
            try:
                if http1.stopping:
                    watched.stop()
                await Connection(asgi, config, context, state, stream, watched, limits).run()
            finally:
                live.discard(watched)

        async def handle(stream: trio.SocketStream) -> None:
            if not gate.admit():
                await _refuse(stream, gate)
                return
            try:
                client, server = _addresses(stream.socket)
                if ssl_context is None:
                    read = await http1.serve(stream, client, server)
                    if read is not None:  # HTTP/2 with prior knowledge (h2c)
                        watched = Watched(stream, read)
                        await http2(watched, watched)
                    return
                watched = Watched(stream)
                secure = trio.SSLStream(watched, ssl_context, server_side=True)
                handshook = False
                with trio.move_on_after(config.ssl_handshake_timeout):
                    try:
                        await secure.do_handshake()
                        handshook = True
                    except trio.BrokenResourceError:
                        pass
                if not handshook:
                    await trio.aclose_forcefully(secure)
                    return
                if secure.selected_alpn_protocol() == "h2":
                    await http2(secure, watched)
                    return
                read = await http1.serve(secure, client, server)
                if read is not None:  # HTTP/2's preface without ALPN
                    await http2(Replay(secure, read), watched)
            except Exception:  # a bug: it costs this connection, never the server
                log.exception("The connection failed")
                await trio.aclose_forcefully(stream)
            finally:
                gate.release()

        async with trio.open_nursery() as connections:
            try:
                async with trio.open_nursery() as accepting:
                    serve = partial(trio.serve_listeners, handler_nursery=connections)
                    accepting.start_soon(serve, handle, listeners)
                    await _until_either(shutdown_trigger or trio.sleep_forever, app)
                    begin_shutdown(app)  # streams end now; runs get the graceful period
                    accepting.cancel_scope.cancel()
            finally:
                # Idle connections close at once on this; the others get the graceful period.
                http1.stop()
                await context.terminated.set()
                for watched in live:
                    watched.stop()
                connections.cancel_scope.deadline = trio.current_time() + graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()
    failure = engine_failure(app)
    if failure is not None:
        raise failure


def _addresses(
    sock: trio.socket.SocketType,
) -> tuple[tuple[str, int] | None, tuple[str, int] | None]:
    """The peer's address and ours, as ASGI gives them (none for a Unix socket)."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return None, None
    try:
        peer, here = sock.getpeername(), sock.getsockname()
    except OSError:  # (the client has gone already)
        return None, None
    return (peer[0], peer[1]), (here[0], here[1])


async def _until_either(trigger: Callable[[], Awaitable[Any]], app: QuartTrio) -> None:
    """Return when ``trigger`` does, or as soon as one of ``app``'s engines has failed."""
    async with trio.open_nursery() as nursery:

        async def then_stop(wait: Callable[[], Awaitable[Any]]) -> None:
            await wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(then_stop, trigger)
        nursery.start_soon(then_stop, lambda: until_failed(app))


async def _refuse(stream: trio.abc.Stream, gate: Gate) -> None:
    """503 to a connection over the cap, then close it."""
    if not gate.begin_refusal():
        await trio.aclose_forcefully(stream)
        return
    try:
        with trio.move_on_after(REFUSAL_LINGER):
            await stream.send_all(_UNAVAILABLE)
            # Half-close and read on for a moment: closing with the client's request unread
            # would reset the connection, and a reset can destroy the 503 before it is read.
            if isinstance(stream, trio.abc.HalfCloseableStream):  # TLS is not
                await stream.send_eof()
            while await stream.receive_some(65536):
                pass
    except trio.BrokenResourceError:
        pass
    finally:
        gate.end_refusal()
        await trio.aclose_forcefully(stream)


_UNAVAILABLE = refusal(503, "The server has too many open connections; retry later", retry_after=1)


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
    """Serve ``engine`` on ``sock`` in a trio run of its own until SIGINT or SIGTERM: the whole
    run of a serving process (``serve()``, the command line)."""

    async def until_signalled() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                return

    async def main() -> None:
        await serve_app(
            create_app(engine, root_path=root_path),
            sock,
            shutdown_trigger=until_signalled,
            limits=limits,
            grpc_sock=grpc_sock,
            tls=tls,
            forwarded_allow_ips=forwarded_allow_ips,
        )

    trio.run(main)
