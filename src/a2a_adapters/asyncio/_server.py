"""Serving the Quart application on asyncio, with uvicorn.

uvicorn rather than hypercorn here because it notices a client that hangs up in the middle of a
response: its protocol hears ``connection_lost`` from the event loop and tells the application
(``http.disconnect``), so a stream whose reader left is cancelled at once. Hypercorn's asyncio
HTTP/1.1 protocol stops reading once a request is complete and writes to a dead connection
without error, so such a stream would run on, writing keep-alives to nobody, until its task
ended. (The trio adapter serves HTTP/1.1 with its own server, :mod:`a2a_adapters.trio._http1`,
which reads on after a request to notice its client leaving.)

uvicorn keeps none of :class:`~a2a_adapters.ConnectionLimits` by itself: httptools buffers a
request head of any size, a connection that never sends a request is never timed out, nor is
one that trickles its head or its body, and nothing caps connections. So the protocol here is
uvicorn's httptools protocol with the limits kept in its callbacks, where a timer costs a
``call_later`` and nothing is paid by a request that arrives whole. It relies on these parts of
``uvicorn.protocols.http.httptools_impl.HttpToolsProtocol`` (0.30 to 0.54): the parser
callbacks, ``cycle`` (``response_started``, ``response_complete``, ``disconnected``,
``message_event``), ``pipeline``, ``url``, ``headers``, ``timeout_keep_alive`` and
``timeout_keep_alive_task`` / ``timeout_keep_alive_handler``.

uvicorn's own ``limit_concurrency`` is not the cap: it is checked only once a request's head is
complete, so idle and silent connections hold their descriptors unchecked, and it counts every
connection, so once the cap is reached the clients already connected get 503 too. The cap here
is checked when a connection is accepted, and never refuses a connection it has admitted.

Websocket upgrades are off (``ws="none"``): an upgraded connection would pass to uvicorn's
websocket protocol, beyond the cap and the timeouts.
"""

import asyncio
import socket
from asyncio import TimerHandle
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, cast

import uvicorn
from quart import Quart
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from a2a_adapters._asgi import asgi_entry
from a2a_adapters._extras import needs
from a2a_adapters._lifecycle import begin_shutdown, engine_failure, until_failed, until_ready
from a2a_adapters._limits import DEFAULT_LIMITS, REFUSAL_LINGER, ConnectionLimits, Gate, refusal
from a2a_adapters._proxy import TrustedProxies, trusted_networks
from a2a_adapters._tls import TlsFiles, check

__all__ = ["serve_app"]


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
        http=_protocol_for(limits),
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
            _serve_h2(app, grpc_sock, stopped.wait, limits, graceful_timeout, tls)
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


async def _serve_h2(
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


class _Server(uvicorn.Server):
    """uvicorn, which also tells the engines as soon as a signal starts its shutdown."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], object]) -> None:
        super().__init__(config)
        self._on_exit = on_exit

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        self._on_exit()


def _protocol_for(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """The protocol class of one server: its limits, and one gate for all its connections."""

    class Protocol(_LimitedProtocol):
        pass

    Protocol.limits = limits
    Protocol.gate = Gate(limits.connection_cap())
    return Protocol


class _OneWritePerTurn:
    """A connection's transport whose writes of one turn of the event loop go out as one.

    uvicorn writes a response's head when the application starts it and its body when the
    application sends it: two system calls (on loopback, each also runs the receiver's side of
    TCP) where one would do, since the core's answers are whole and sent in one turn. Held to
    the end of the turn (``call_soon``), a stream's events go out as promptly as before, and
    a close or an end of writing sends what is held first. Everything else is the transport's.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []
        # What uvicorn and the protocol ask of every request: the transport's own, found here
        # without a call of __getattr__ each time.
        self.is_closing = transport.is_closing
        self.get_extra_info = transport.get_extra_info
        self.pause_reading = transport.pause_reading
        self.resume_reading = transport.resume_reading

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._held:
            self._loop.call_soon(self._flush)
        self._held.append(bytes(data))

    def _flush(self) -> None:
        held, self._held = self._held, []
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(b) for b in self._held)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class _LimitedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, keeping a connection within :class:`ConnectionLimits`.

    A connection is always in one of two phases. *Head*: no request is under way, or one's head
    is arriving; the bytes of an unfinished head are counted as they come, its first byte arms
    the header deadline, and with no byte at all uvicorn's keep-alive timer runs (armed here on
    a new connection too, which uvicorn leaves to wait forever). *Body*: from a complete head
    until the request's last body byte, under the body deadline.
    """

    limits: ClassVar[ConnectionLimits]
    gate: ClassVar[Gate]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout_keep_alive = self.limits.keep_alive_timeout  # type: ignore[assignment]
        self._admitted = False
        self._refusing = False
        #: Set once the connection is refused (over the cap, or a head too large or too
        #: slow): its input is discarded while it closes.
        self._refused = False
        self._in_head = True
        self._head_bytes = 0
        #: The size of the chunk being parsed.
        self._chunk_bytes = 0
        self._head_timer: TimerHandle | None = None
        self._body_deadline = 0.0
        self._body_timer: TimerHandle | None = None
        self._linger: TimerHandle | None = None

    # --- the connection -----------------------------------------------------------------------

    def connection_made(  # type: ignore[override]
        self, transport: asyncio.Transport
    ) -> None:
        if not self.gate.admit():
            self._refuse_connection(transport)
            return
        self._admitted = True
        super().connection_made(cast(asyncio.Transport, _OneWritePerTurn(transport, self.loop)))
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def _refuse_connection(self, transport: asyncio.Transport) -> None:
        """503 and close, keeping the connection out of uvicorn's accounting (it is not in
        ``connections``, and no request of it reaches the application)."""
        self.transport = transport
        self._refused = True
        if not self.gate.begin_refusal():
            transport.close()
            return
        self._refusing = True
        transport.write(_UNAVAILABLE)
        # Half-close and read on for a moment: closing with the client's request unread would
        # reset the connection, and a reset can destroy the 503 before the client reads it.
        if transport.can_write_eof():
            transport.write_eof()
        self._linger = self.loop.call_later(REFUSAL_LINGER, transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._head_timer, self._body_timer, self._linger):
            if timer is not None:
                timer.cancel()
        if self._refusing:
            self.gate.end_refusal()
        if self._admitted:
            self.gate.release()
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._chunk_bytes = size = len(data)
        if self._in_head:
            self._head_bytes += size
        super().data_received(data)
        if self._refused or self.transport.is_closing():
            return
        if self._in_head:
            # Still no complete head: it is all the bytes counted (a chunk that finished a head
            # is measured exactly in on_headers_complete instead).
            if self._head_bytes > self.limits.max_header_bytes:
                self._refuse_head(f"the request head is over {self.limits.max_header_bytes} bytes")
            elif self._head_bytes and self._head_timer is None:
                # A head begun and not complete: its deadline runs from its first byte, now. (A
                # request that arrives whole, most do, never arms it.)
                self._head_timer = self.loop.call_later(
                    self.limits.header_timeout, self._head_timed_out
                )
        elif self._body_timer is None:
            self._body_timer = self.loop.call_at(self._body_deadline, self._body_timed_out)

    # --- parser callbacks ---------------------------------------------------------------------

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        self._in_head = False
        self._head_bytes = 0
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        limits = self.limits
        if len(self.headers) > limits.max_header_count:
            self._refuse_head(
                f"the request has {len(self.headers)} header fields, over the limit of "
                f"{limits.max_header_count}"
            )
            return
        # The head is within the bytes counted since the last one (the chunk being parsed
        # included), or within this chunk if the last one ended in it: measured exactly only
        # if that many bytes could be over the limit.
        if self._head_bytes + self._chunk_bytes > limits.max_header_bytes:
            size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
            if size > limits.max_header_bytes:
                self._refuse_head(
                    f"the request head is {size} bytes, over the limit of {limits.max_header_bytes}"
                )
                return
        self._body_deadline = self.loop.time() + limits.body_timeout
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._in_head = True
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        super().on_message_complete()

    # --- refusals and deadlines ---------------------------------------------------------------

    def _may_answer(self) -> bool:
        """Whether a refusal may be written now: not in the middle of an earlier response."""
        return (self.cycle is None or self.cycle.response_complete) and not self.pipeline

    def _refuse_head(self, message: str) -> None:
        self._refused = True
        if self._may_answer():
            self.transport.write(refusal(431, message))
        self.transport.close()

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._in_head and not self.transport.is_closing():
            self._refused = True
            self.transport.close()

    def _body_timed_out(self) -> None:
        self._body_timer = None
        if self._in_head or self.transport.is_closing():
            return
        cycle = self.cycle
        if not cycle.response_started and not self.pipeline:
            message = f"the request body did not arrive within {self.limits.body_timeout:g} s"
            self.transport.write(refusal(408, message))
        # The application now hears that the client left, and anything it sends is dropped.
        cycle.disconnected = True
        cycle.message_event.set()
        self._refused = True
        self.transport.close()


_UNAVAILABLE = refusal(503, "The server has too many open connections; retry later", retry_after=1)
