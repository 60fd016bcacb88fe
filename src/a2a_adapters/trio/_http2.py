"""HTTP/2 (gRPC) on trio: hypercorn's HTTP/2, on connections the listeners of
:mod:`._server` hand over (HTTP/2 with prior knowledge, found by :mod:`._http1`, or ALPN ``h2``
over TLS), under :class:`~a2a_adapters.ConnectionLimits`:

- a complete head over ``max_header_bytes`` or ``max_header_count``, and the body deadline:
  :class:`RequestLimits`, in ASGI, in front of the application;
- the idle and header timeouts: hypercorn runs ``TCPServer._idle_timeout`` while a connection
  has no request under way, with one timer for the lot; :class:`Connection` splits it into the
  keep-alive timeout until a request's first byte and the header deadline from there, and ends
  it when the client closes (and :class:`_IdleTask` restarts it without hypercorn's trips
  through the scheduler).

It is built from hypercorn's parts (``TCPServer``, ``WorkerContext``; hypercorn 0.17 and 0.18)
rather than its ``serve``, whose accept loop would leave no place to cap connections or to share
a listener with HTTP/1.1. (On asyncio, hypercorn serves HTTP/2 on a socket of its own, with its
own accept loop: ``a2a_adapters.asyncio._http2``.)
"""

from collections.abc import Awaitable, Callable
from typing import Any, cast

import trio
from hypercorn.config import Config
from hypercorn.events import Closed, Event, Updated
from hypercorn.trio.tcp_server import TCPServer
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.typing import AppWrapper, ConnectionState

from a2a_adapters._asgi import ASGIApp, Message, Receive, Scope, Send
from a2a_adapters._hypercorn import HeadLimits
from a2a_adapters._limits import ConnectionLimits, send_refusal

__all__ = ["Connection", "Replay", "RequestLimits", "Watched"]


class Watched(trio.abc.HalfCloseableStream):
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


class Replay(trio.abc.Stream):
    """A TLS stream whose first bytes (read by HTTP/1.1 before it found HTTP/2's preface) are
    given again; the rest is the stream's own.

    hypercorn tells a TLS stream by what it has (``TCPServer.run``): its handshake, its ALPN
    choice and its transport, which are the TLS stream's here; and no ``send_eof``, which a TLS
    stream lacks too (hypercorn then just closes it).
    """

    def __init__(self, stream: trio.SSLStream[Any], read: bytes) -> None:
        self._stream = stream
        self._read = read
        self.transport_stream = stream.transport_stream

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        if self._read:
            data, self._read = self._read, b""
            return data
        return await self._stream.receive_some(max_bytes)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def do_handshake(self) -> None:
        await self._stream.do_handshake()

    def selected_alpn_protocol(self) -> str | None:
        chosen: str | None = self._stream.selected_alpn_protocol()
        return chosen


class Connection(TCPServer):
    """hypercorn's connection, with its idle timer split in two, and its own work shielded
    from the application's cancel scopes."""

    def __init__(
        self,
        app: AppWrapper,
        config: Config,
        context: WorkerContext,
        state: ConnectionState,
        stream: trio.abc.Stream,
        watched: Watched,
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


class RequestLimits:
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
