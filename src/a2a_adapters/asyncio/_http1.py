"""HTTP/1.1 on asyncio: uvicorn's httptools protocol, within the connection limits.

uvicorn keeps none of the limits by itself: httptools buffers a request head of any size, a
connection that never sends a request is never timed out, nor is one that trickles its head or
its body, and nothing caps connections. So the protocol here is uvicorn's httptools protocol
with the limits kept in its callbacks, where a timer costs a ``call_later`` and nothing is paid
by a request that arrives whole. It relies on these parts of
``uvicorn.protocols.http.httptools_impl.HttpToolsProtocol`` (0.30 to 0.54): the parser
callbacks, ``cycle`` (``response_started``, ``response_complete``, ``disconnected``,
``message_event``), ``pipeline``, ``url``, ``headers``, ``timeout_keep_alive`` and
``timeout_keep_alive_task`` / ``timeout_keep_alive_handler``.

uvicorn's own ``limit_concurrency`` is not the cap: it is checked only once a request's head is
complete, so idle and silent connections hold their descriptors unchecked, and it counts every
connection, so once the cap is reached the clients already connected get 503 too. The cap here
is checked when a connection is accepted, and never refuses a connection it has admitted.

The trio adapter's ``_http1`` is a whole server of its own instead: uvicorn runs on asyncio only.
"""

import asyncio
from asyncio import TimerHandle
from collections.abc import Iterable
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from a2a_adapters._limits import REFUSAL_LINGER, ConnectionLimits, Gate, refusal

__all__ = ["protocol_for"]


def protocol_for(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """The protocol class of one server: its limits, and one gate for all its connections."""

    class Protocol(_LimitedProtocol):
        pass

    Protocol.limits = limits
    Protocol.gate = Gate(limits.connection_cap())
    return Protocol


class _OneWritePerTurn(asyncio.Transport):
    """A connection's transport whose writes of one turn of the event loop go out as one.

    uvicorn writes a response's head when the application starts it and its body when the
    application sends it: two system calls (on loopback, each also runs the receiver's side of
    TCP) where one would do, since the core's answers are whole and sent in one turn. Held to
    the end of the turn (``call_soon``), a stream's events go out as promptly as before, and
    a close or an end of writing sends what is held first. Everything else is the transport's,
    method by method: it is an :class:`asyncio.Transport` in full, as uvicorn expects.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    # --- writing, held to the end of the turn ---------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._held:
            self._loop.call_soon(self._flush)
        self._held.append(bytes(data))

    def _flush(self) -> None:
        held, self._held = self._held, []
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        for data in list_of_data:
            self.write(data)

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(b) for b in self._held)

    # --- the transport's own --------------------------------------------------------------

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def abort(self) -> None:
        self._held = []  # (what is held is dropped, as the transport drops its buffer)
        self._transport.abort()


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
        super().connection_made(_OneWritePerTurn(transport, self.loop))
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
