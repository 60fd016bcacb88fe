"""Serving the QuartTrio application on trio: HTTP/1.1 by our own server (:mod:`._http1`, on
httptools), HTTP/2 (gRPC) by hypercorn's trio worker, on the same listeners.

Each connection is read first by HTTP/1.1; one that opens with HTTP/2's preface (h2c with prior
knowledge), or that chose ``h2`` by ALPN over TLS, is handed to hypercorn's ``TCPServer`` with
what was read of it. hypercorn parsed HTTP/1.1 with h11 (pure Python) and ran each request
through its own tasks and events: it took most of the time of a blocking send on trio.

hypercorn's ``serve`` is replaced by the short accept loop below, built from its parts (its
``Lifespan``, ``WorkerContext``, ``TCPServer`` and ``ASGIWrapper``; hypercorn 0.17 and 0.18),
because its own loop listens on the socket again with its ``backlog`` (100, where ours asks for
1,024) and builds its listener itself, so nothing could stand between it and the connections it
accepts to cap them. :class:`~a2a_adapters.ConnectionLimits` holds on both protocols: on
HTTP/1.1 :mod:`._http1` keeps every limit; on HTTP/2

- a complete head over ``max_header_bytes`` or ``max_header_count``, and the body deadline:
  :class:`_RequestLimits`, in ASGI, in front of the application;
- the idle and header timeouts: hypercorn runs ``TCPServer._idle_timeout`` while a connection
  has no request under way, with one timer for the lot; :class:`_Connection` splits it into the
  keep-alive timeout until a request's first byte and the header deadline from there, and ends
  it when the client closes (and :class:`_IdleTask` restarts it without hypercorn's trips
  through the scheduler).

Errors of the application go to the ``a2a_adapters.trio`` logger on HTTP/1.1 and to
``hypercorn.error`` on HTTP/2 (which hypercorn would otherwise give a handler of its own, or
none), so they reach Python logging with their tracebacks.
"""

import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, cast

import trio
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.config import Config
from hypercorn.events import Closed, Event, Updated
from hypercorn.trio.lifespan import Lifespan
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, ConnectionState
from quart_trio import QuartTrio

from a2a_adapters._asgi import ASGIApp, Message, Receive, Scope, Send, asgi_entry
from a2a_adapters._hypercorn import HeadLimits, hypercorn_config
from a2a_adapters._lifecycle import begin_shutdown, engine_failure, until_failed
from a2a_adapters._limits import (
    DEFAULT_LIMITS,
    REFUSAL_LINGER,
    ConnectionLimits,
    Gate,
    refusal,
    send_refusal,
)
from a2a_adapters._proxy import TrustedProxies, trusted_networks
from a2a_adapters._tls import TlsFiles, check

from ._http1 import Http1Server

__all__ = ["serve_app"]

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
    asgi = ASGIWrapper(cast(Any, _RequestLimits(served, limits)))
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

        live: set[_Watched] = set()

        async def http2(stream: trio.abc.Stream, watched: _Watched) -> None:
            """hypercorn's HTTP/2 on a connection (already read from: ``stream`` replays)."""
            live.add(watched)
            try:
                if http1.stopping:
                    watched.stop()
                await _Connection(asgi, config, context, state, stream, watched, limits).run()
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
                        watched = _Watched(stream, read)
                        await http2(watched, watched)
                    return
                watched = _Watched(stream)
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
                    await http2(cast(trio.abc.Stream, _Replay(secure, read)), watched)
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


class _Watched(trio.abc.HalfCloseableStream):
    """A connection's stream (for hypercorn's HTTP/2) that tells its idle timer what happens to
    the connection: the first byte of a request arriving, the client closing its side, the
    server stopping. What HTTP/1.1 read of it before handing it over (``read``) comes first."""

    def __init__(self, stream: trio.SocketStream, read: bytes = b"") -> None:
        self._stream = stream
        self._read = read
        #: What hypercorn reads the peer's and its own address from.
        self.socket = stream.socket
        self.arrived = False
        self.ended = False
        self.stopping = False
        self._wake = trio.Event()
        self._wake_on_data = False

    def watch(self, *, for_data: bool) -> trio.Event:
        """An event set when the client closes its side or the server stops (and, with
        ``for_data``, when data arrives)."""
        self._wake = trio.Event()
        self._wake_on_data = for_data
        self.arrived = False
        if self.ended or self.stopping:
            self._wake.set()
        return self._wake

    def stop(self) -> None:
        self.stopping = True
        self._wake.set()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        if self._read:
            data, self._read = self._read, b""
        else:
            try:
                data = await self._stream.receive_some(max_bytes)
            except trio.BrokenResourceError:
                self.ended = True
                self._wake.set()
                raise
        if not data:
            self.ended = True
            self._wake.set()
        elif self._wake_on_data:
            self.arrived = True
            self._wake.set()
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self._stream.send_eof()

    async def aclose(self) -> None:
        await self._stream.aclose()


class _Replay:
    """A TLS stream whose first bytes (read by HTTP/1.1 before it found HTTP/2's preface) are
    given again; the rest is the stream's own (hypercorn asks it for its handshake, its ALPN
    choice and its transport)."""

    def __init__(self, stream: trio.SSLStream[Any], read: bytes) -> None:
        self._stream = stream
        self._read = read

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        if self._read:
            data, self._read = self._read, b""
            return data
        return await self._stream.receive_some(max_bytes)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Connection(TCPServer):
    """hypercorn's connection, with its idle timer split in two, and its own work shielded
    from the application's cancel scopes."""

    def __init__(
        self,
        app: AppWrapper,
        config: Config,
        context: WorkerContext,
        state: ConnectionState,
        stream: trio.abc.Stream,
        watched: _Watched,
        limits: ConnectionLimits,
    ) -> None:
        super().__init__(app, config, context, state, cast(Any, stream))
        self._watched = watched
        self._limits = limits
        self.idle_task = cast(Any, _IdleTask())

    async def _idle_timeout(self) -> None:
        # hypercorn starts this whenever no request is under way and cancels it once a
        # request's head is complete: until a first byte it is the keep-alive timeout, from
        # there the header deadline. Shutdown closes the connection at once either way, and so
        # does the client closing its side (hypercorn would wait for the timeout, holding the
        # descriptor, and a place under the connection cap, all that time).
        watched = self._watched
        with trio.move_on_after(self._limits.keep_alive_timeout):
            await watched.watch(for_data=True).wait()
        if watched.arrived and not (watched.ended or watched.stopping):
            with trio.move_on_after(self._limits.header_timeout):
                await watched.watch(for_data=False).wait()
        with trio.CancelScope(shield=True):
            await self._initiate_server_close()

    async def protocol_send(self, event: Event) -> None:
        # hypercorn does the connection's own work from within the application's ``send``:
        # when a response ends it closes the connection, or starts the idle timer, as part of
        # that last send. An application that cancels its own scope right then (on the
        # ``http.disconnect`` hypercorn hands it at that moment, as QuartTrio does) would cancel
        # that work half done: a connection neither closed nor timed, which holds its
        # descriptor until the client leaves, and shutdown waits the whole graceful period for
        # it. Shielded, it always completes (it only writes, closes or starts a timer).
        if isinstance(event, Closed) or (isinstance(event, Updated) and event.idle):
            with trio.CancelScope(shield=True):
                await super().protocol_send(event)
        else:  # writes hypercorn shields itself; the rest comes from its own read loop
            await super().protocol_send(event)


class _IdleTask:
    """hypercorn's ``TrioSingleTask`` (the one idle timer of a connection, restarted after each
    response and stopped once the next head is complete) without its costs per request: it
    started each timer with ``nursery.start`` (waiting for the task to report back) and took a
    ``trio.Lock`` for each restart and stop, every one a trip through trio's scheduler. Here a
    restart cancels the timer under way and spawns the next, and a stop cancels it, neither of
    them waiting for anything (so there is nothing for a lock to keep apart)."""

    def __init__(self) -> None:
        self._scope: trio.CancelScope | None = None

    async def restart(self, task_group: Any, action: Callable[[], Awaitable[None]]) -> None:
        self._cancel()
        scope = self._scope = trio.CancelScope()
        task_group._nursery.start_soon(_within, scope, action)

    async def stop(self) -> None:
        self._cancel()

    def _cancel(self) -> None:
        scope, self._scope = self._scope, None
        if scope is not None:
            scope.cancel()


async def _within(scope: trio.CancelScope, action: Callable[[], Awaitable[None]]) -> None:
    with scope:
        await action()


class _RequestLimits:
    """ASGI middleware for HTTP/2 (and the lifespan): the limits hypercorn does not keep on a
    request itself (HTTP/1.1 keeps them in :mod:`._http1`).

    A complete head over the limits is refused before the application sees it
    (:class:`~a2a_adapters._hypercorn.HeadLimits`); a body not whole within ``body_timeout``
    of the head is answered 408 (if no answer has started), and the application hears that
    the client left.
    """

    def __init__(self, app: ASGIApp, limits: ConnectionLimits) -> None:
        self._app = app
        self._limits = limits
        self._heads = HeadLimits(self._timed, limits)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if scope["type"] != "http":
            return self._app(scope, receive, send)
        return self._heads(scope, receive, send)

    async def _timed(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _has_body(scope["headers"]):
            return await self._app(scope, receive, send)
        deadline = trio.current_time() + self._limits.body_timeout
        request = _TimedBody(receive, send, deadline, self._limits.body_timeout)
        await self._app(scope, request.receive, request.send)


def _has_body(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request's head announces a body (h11 has read the head: a request without
    ``content-length`` or ``transfer-encoding`` has none)."""
    for name, value in headers:
        if name == b"content-length":
            return value != b"0"
        if name == b"transfer-encoding":
            return True
    return False


class _TimedBody:
    """One request's ``receive`` under the body deadline, and its ``send``."""

    def __init__(self, receive: Receive, send: Send, deadline: float, timeout: float) -> None:
        self._receive = receive
        self._send = send
        self._deadline = deadline
        self._timeout = timeout
        self._body_done = False
        self._timed_out = False
        self._started = False

    async def receive(self) -> Message:
        if self._body_done:
            return await self._receive()
        if self._timed_out:
            return {"type": "http.disconnect"}
        with trio.move_on_at(self._deadline):
            message = await self._receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                self._body_done = True
            return message
        self._timed_out = True
        if not self._started:
            self._started = True
            why = f"the request body did not arrive within {self._timeout:g} s"
            await send_refusal(self._send, 408, why)
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self._timed_out:
            return  # the connection is closing on the 408
        if message["type"] == "http.response.start":
            self._started = True
        await self._send(message)


_UNAVAILABLE = refusal(503, "The server has too many open connections; retry later", retry_after=1)
