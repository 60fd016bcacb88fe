"""HTTP/1.1 for the trio adapter: our own small server on httptools (llhttp, in C).

hypercorn's trio worker parsed with h11 (pure Python) and passed every request through its own
tasks, events and locks; a profile of blocking sends put most of the trio server's time there.
This serves an ASGI application over HTTP/1.1 with one task per connection, in which the
application runs too (no task per request): the request is read and parsed, the application
called, its response written, and the next request read.

Its counterpart on asyncio (``a2a_adapters.asyncio._http1``) is uvicorn's httptools protocol,
with the same limits kept in its callbacks: uvicorn does not run on trio, and an asyncio protocol
already has what this builds (callbacks per chunk read, timers per connection). This one is
written on trio's streams and cancel scopes throughout, so it is trio's, not a loop-neutral
module's.

- Keep-alive and pipelining: requests on a connection are answered one after the other, in
  order; a pipelined request is parsed while the one before it is served, and read no further
  ahead than the next head (and :data:`READ_AHEAD` bytes).
- The request body is read when the application asks for it (``receive``), and only then
  (``Expect: 100-continue`` is answered on that first read); a body not whole within the body
  timeout of that read is answered 408. ``chunked`` is the one transfer coding undone. Trailer
  fields are read and dropped (ASGI has no request trailers, and merged into the head they would
  be headers nobody sent there); they, and a chunk's size line with its extensions, are bounded
  as a head is.
- Responses are written as the application sends them: a head when it is started (unless its
  whole body follows at once, ``a2a_adapters._asgi.WHOLE``: then head and body in one write),
  then each body message, chunked when the application gave no ``content-length`` (so a stream,
  SSE, is flushed per message).
- Once the body is read, ``receive`` waits for the client to leave: reading on, it notices the
  end of the connection and answers ``http.disconnect`` (as it does after a failed write), so a
  stream to a client that has gone ends.
- The limits of :class:`~a2a_adapters.ConnectionLimits`: the keep-alive timeout until a
  request's first byte, the header deadline from there until its head is whole, heads and
  trailers bounded in bytes and fields (431), the body deadline (408).
- Malformed requests are answered 400, HTTP versions other than 1.0 and 1.1 505, a failing
  application 500 (if it had not started its response), all with a JSON body, and the
  connection closed; the application's exception goes to the log with its traceback. Framing
  two readers could read two ways is malformed (llhttp, strict, refuses most of it: a
  Content-Length with a Transfer-Encoding, one that is not a single number, line folding, bare
  LF; this adds a transfer coding other than chunked, and a second Host). A request whose body is
  found malformed before the application is called is refused without calling it; found so while
  the application reads it, ``receive`` says the client left and the client gets the 400.
- An HTTP/2 connection with prior knowledge (its preface) is handed back to the caller with the
  bytes read, for hypercorn's HTTP/2 (gRPC). ``Upgrade`` is not followed (no WebSocket, no
  h2c upgrade): such a request is served as plain HTTP/1.1 and its connection closed after; one
  with a body is refused (400), as httptools would have that body skipped, taken for the other
  protocol's bytes.
"""

import logging
import os
import time
from collections import deque
from contextlib import suppress
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import unquote

import httptools
import trio

from a2a_adapters._asgi import WHOLE, ASGIApp, Message, Scope
from a2a_adapters._limits import ConnectionLimits, refusal

__all__ = ["PREFACE", "Http1Server"]

log = logging.getLogger("a2a_adapters.trio")

#: Bytes asked of the socket at a time.
READ_SIZE = 65536
#: Bytes of later (pipelined) requests read while one is served, at most (and one head).
READ_AHEAD = 65536
#: Seconds a connection closed with a request unread is read on (half-closed) before it is
#: closed: closing with input unread resets it, and a reset can destroy the answer in flight.
LINGER = 1.0
#: Bytes read on at most in that time.
LINGER_BYTES = 1024 * 1024

#: How an HTTP/2 connection with prior knowledge begins (RFC 9113, 3.4).
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
#: llhttp's reasons for a version it does not know (505); its others are malformed input (400).
_VERSION_ERRORS = frozenset(
    {"Invalid HTTP version", "Invalid major version", "Invalid minor version"}
)
_DISCONNECT: Message = {"type": "http.disconnect"}
_NO_BODY_STATUSES = frozenset({204, 304})
_ASGI = {"version": "3.0", "spec_version": "2.3"}


def _status_line(status: int) -> bytes:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    return f"HTTP/1.1 {status} {phrase}\r\n".encode("latin-1")


_STATUS_LINES = {int(status): _status_line(int(status)) for status in HTTPStatus}


class _Refusal(Exception):
    """Raised in a parser callback: the input is refused with this answer, from this point."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)
        self.answer = (status, message)


class _Date:
    """The ``date`` header, made once a second."""

    second = -1
    header = b""

    @classmethod
    def now(cls) -> bytes:
        second = int(time.time())
        if second != cls.second:
            cls.second = second
            cls.header = b"date: " + formatdate(second, usegmt=True).encode("ascii") + b"\r\n"
        return cls.header


class Http1Server:
    """HTTP/1.1 for one server: what all its connections share, and how to stop them."""

    def __init__(
        self, app: ASGIApp, limits: ConnectionLimits, state: dict[str, Any], *, secure: bool
    ) -> None:
        self.app = app
        self.limits = limits
        self.state = state
        self.scheme = "https" if secure else "http"
        self.stopping = False
        self._connections: set[_Connection] = set()

    async def serve(
        self,
        stream: trio.abc.Stream,
        client: tuple[str, int] | None,
        server: tuple[str, int] | None,
    ) -> bytes | None:
        """Serve one connection until it closes (and close it); or, if it proves to be
        HTTP/2 with prior knowledge, return what was read of it, for HTTP/2 to take over."""
        connection = _Connection(self, stream, client, server)
        self._connections.add(connection)
        try:
            return await connection.run()
        finally:
            self._connections.discard(connection)

    def stop(self) -> None:
        """Close the connections with no request under way at once; the others after their
        response (or when the caller's graceful period ends)."""
        self.stopping = True
        for connection in list(self._connections):
            connection.stop()


class _Request:
    """One request's head as parsed, and its body as it arrives."""

    __slots__ = (
        "body",
        "complete",
        "expect_continue",
        "headers",
        "keep_alive",
        "method",
        "refusal",
        "upgrade",
        "url",
        "version",
    )

    def __init__(
        self, method: str, url: bytes, headers: list[tuple[bytes, bytes]], version: str
    ) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.version = version
        self.keep_alive = True
        self.expect_continue = False
        self.upgrade = False
        #: A status and why, if the request is to be refused rather than served.
        self.refusal: tuple[int, str] | None = None
        self.body: list[bytes] = []
        self.complete = False


class _Connection:
    """One connection: httptools' parser (this object takes its callbacks), and the loop that
    serves its requests in turn."""

    def __init__(
        self,
        server: Http1Server,
        stream: trio.abc.Stream,
        client: tuple[str, int] | None,
        sockname: tuple[str, int] | None,
    ) -> None:
        self.server = server
        self.stream = stream
        #: A plain socket (no TLS) on POSIX, where a response's end may be written at once.
        self.plain = type(stream) is trio.SocketStream and os.name == "posix"
        self.client = client
        self.sockname = sockname
        self.limits = server.limits
        self.parser = httptools.HttpRequestParser(self)
        #: Requests whose head is whole, in order; the first is the one being served.
        self.requests: deque[_Request] = deque()
        #: The request the parser is at (the last of :attr:`requests` once its head is whole).
        self._parsing: _Request | None = None
        #: Whether the parser is within a head, and what it has of it.
        self._in_head = False
        self._head_started: float | None = None
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._head_size = 0
        self._unreported = 0
        self._reported = False
        #: Whether a chunk's size line was the last thing parsed (no data after it yet): the
        #: last chunk's trailer section may be under way.
        self._trailing = False
        self._trailer_size = 0
        self._trailer_count = 0
        #: Bytes parsed beyond the request being served (pipelined ones).
        self.ahead = 0
        #: Why the input cannot be parsed further: a status and a message, answered once the
        #: requests before it have been.
        self.error: tuple[int, str] | None = None
        self.eof = False
        #: A write was cut short (cancelled): the connection can carry nothing more.
        self.broken = False
        self._idle: trio.CancelScope | None = None

    # --- httptools' callbacks ------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._in_head = True
        self._url = b""
        self._headers = []
        self._head_size = 0
        self._unreported = 0
        self._reported = True
        self._trailing = False
        self._trailer_size = 0
        self._trailer_count = 0

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._head_size += len(url)
        self._reported = True

    def on_header(self, name: bytes, value: bytes) -> None:
        self._reported = True
        if not self._in_head:
            # A trailer field (after a chunked body). ASGI has no request trailers; merged into
            # the head it would be a header nobody sent there, past whatever checked the head.
            self._trailer_size += len(name) + len(value) + 4
            self._trailer_count += 1
            limits = self.limits
            if (
                self._trailer_size > limits.max_header_bytes
                or self._trailer_count > limits.max_header_count
            ):
                # Raised, to stop the parser here: the message must not be complete.
                raise _Refusal(431, self._trailers_too_large())
            return
        # llhttp strips the spaces before a value, not those after it (RFC 9110, 5.5: neither
        # is part of it): "Bearer token " is not the token.
        self._headers.append((name.lower(), value.rstrip(b" \t")))
        self._head_size += len(name) + len(value) + 4

    def on_headers_complete(self) -> None:
        parser = self.parser
        request = _Request(
            parser.get_method().decode("ascii"),
            self._url,
            self._headers,
            parser.get_http_version(),
        )
        self._in_head = False
        self._head_started = None
        limits = self.limits
        if request.version not in ("1.1", "1.0"):
            request.refusal = (505, f"HTTP/{request.version} is not supported; use HTTP/1.1")
        elif len(self._headers) > limits.max_header_count:
            request.refusal = (
                431,
                f"the request has {len(self._headers)} header fields, over the limit of "
                f"{limits.max_header_count}",
            )
        elif self._head_size > limits.max_header_bytes:
            request.refusal = (
                431,
                f"the request head is {self._head_size} bytes, over the limit of "
                f"{limits.max_header_bytes}",
            )
        else:
            request.keep_alive = request.version == "1.1" and parser.should_keep_alive()
            request.upgrade = parser.should_upgrade()
            hosts = 0
            coded = False
            body = False
            for name, value in self._headers:
                if name == b"host":
                    hosts += 1
                elif name == b"expect" and value.lower() == b"100-continue":
                    request.expect_continue = request.version == "1.1"
                elif name == b"transfer-encoding":
                    body = True
                    # llhttp takes any codings that end in chunked, and hands over the body
                    # still coded (gzip...): only chunked is undone here.
                    coded |= any(c.strip().lower() != b"chunked" for c in value.split(b","))
                elif name == b"content-length":
                    body |= bool(value.strip(b" \t0"))
            if coded:
                request.refusal = (400, "the only transfer coding supported is chunked")
            elif request.upgrade and body:
                # httptools has llhttp skip the body of a request that asks for an upgrade (as
                # the other protocol's bytes): not following it, the body would be lost.
                request.refusal = (400, "a request with a body cannot ask for an upgrade here")
            elif hosts > 1:
                request.refusal = (400, "a request has one Host header at most")
            elif not hosts and request.version == "1.1":
                request.refusal = (400, "an HTTP/1.1 request needs a Host header")
        if self.requests:
            self.ahead += self._head_size
        self._parsing = request
        self.requests.append(request)

    def on_body(self, body: bytes) -> None:
        self._reported = True
        self._trailing = False
        request = self._parsing
        if request is not None:
            request.body.append(body)
            if self.requests and request is not self.requests[0]:
                self.ahead += len(body)

    def on_message_complete(self) -> None:
        request = self._parsing
        if request is not None:
            request.complete = True

    def on_chunk_header(self) -> None:
        self._reported = True
        self._trailing = True

    def on_chunk_complete(self) -> None:
        self._reported = True
        self._trailing = False

    # --- reading --------------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray) -> None:
        """Parse ``data``; a request that cannot be parsed sets :attr:`error`."""
        if self.error is not None:
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # Upgrades are not followed: this request is served as HTTP/1.1, and nothing after
            # it (the other protocol's bytes) is read.
            if self.requests:
                self.requests[-1].upgrade = True
            self.error = (400, "the connection was upgraded")
            return
        except httptools.HttpParserError as error:
            reason = str(error) or "the request is malformed"
            if isinstance(error.__context__, _Refusal):  # (raised by a callback of ours)
                self.error = error.__context__.answer
            elif reason in _VERSION_ERRORS:
                self.error = (505, "this HTTP version is not supported; use HTTP/1.1")
            else:  # ("Expected CRLF after version" is a bare LF, not a version)
                self.error = (400, f"malformed request: {reason}")
            return
        if self._in_head:
            # httptools keeps a header field to itself until the next begins: count what it
            # has not reported yet as well, so an endless field is cut off too. That is at most
            # the last two lines of these bytes (a field it has, one it is reading), or all of
            # them if it reported nothing from them.
            if self._reported:
                end = data.rfind(b"\n")
                start = data.rfind(b"\n", 0, end) if end > 0 else -1
                self._unreported = len(data) - (start + 1)
                self._reported = False
            else:
                self._unreported += len(data)
            if self._head_started is None:
                self._head_started = trio.current_time()
            size = self._head_size + self._unreported
            if size > self.limits.max_header_bytes:
                self.error = (
                    431,
                    f"the request head exceeds the limit of {self.limits.max_header_bytes} bytes",
                )
        elif self._parsing is not None and not self._parsing.complete:
            self._check_body_framing(len(data))

    def _check_body_framing(self, size: int) -> None:
        """Bound what the parser takes of a body without reporting it: a chunk's size line
        (extensions, which llhttp drops) and the trailer section (which httptools keeps a field
        of whole until it ends). Data is reported as it comes, and a size line once it ends, so
        bytes with nothing reported are one of those; they are bounded as a head is."""
        if self._reported:
            self._unreported = 0
            self._reported = False
        else:
            self._unreported += size
        limit = self.limits.max_header_bytes
        if self._unreported <= limit:
            return
        if self._trailing:
            self.error = (431, self._trailers_too_large())
        else:
            self.error = (400, f"malformed request: a chunk size line is over {limit} bytes")

    def _trailers_too_large(self) -> str:
        limits = self.limits
        return (
            f"the request's trailer fields exceed the limit of {limits.max_header_bytes} bytes "
            f"or {limits.max_header_count} fields"
        )

    async def read(self) -> bytes | bytearray:
        """The next bytes from the client; empty once it has closed (or reset) its side."""
        try:
            data = await self.stream.receive_some(READ_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            data = b""
        if not data:
            self.eof = True
        return data

    def may_read_ahead(self) -> bool:
        """Whether to read on while a request is served (to notice its client leave)."""
        return (
            self.error is None
            and not self.eof
            and len(self.requests) < 2
            and self.ahead < READ_AHEAD
        )

    # --- serving --------------------------------------------------------------------------------

    def stop(self) -> None:
        if self._idle is not None:
            self._idle.cancel()

    async def run(self) -> bytes | None:
        try:
            first = await self._first()
        except BaseException:
            await self._close()
            raise
        if first is not None:
            return first  # (not closed: HTTP/2 carries on with it)
        try:
            while True:
                request = await self._next()
                if request is None:
                    break
                if not await self._serve(request):
                    if not request.complete:  # its body is (partly) unread
                        await self._linger()
                    break
                self.requests.popleft()
                self.ahead = 0
        except Exception:  # a bug of ours (or the application's misuse): this connection only
            log.exception("HTTP/1.1 connection failed")
        finally:
            await self._close()
        return None

    async def _first(self) -> bytes | None:
        """Read the first bytes: HTTP/2's preface (returned, for HTTP/2), or HTTP/1 (parsed)."""
        data = b""
        with trio.move_on_after(self.limits.keep_alive_timeout) as scope:
            self._idle = scope
            if self.server.stopping:
                return None
            data = bytes(await self.read())
        self._idle = None
        if scope.cancelled_caught:
            # Silent for the keep-alive timeout: closed now, as asyncio's server closes it
            # (not given a second timeout by the wait for its first request).
            self.eof = True
        if not data:
            return None
        if PREFACE.startswith(data[: len(PREFACE)]):  # the preface, or the start of it
            deadline = trio.current_time() + self.limits.header_timeout
            with trio.move_on_at(deadline):
                while len(data) < len(PREFACE) and PREFACE.startswith(data):
                    more = await self.read()
                    if not more:
                        break
                    data += more
            if data.startswith(PREFACE):
                return data
        self.feed(data)
        return None

    async def _next(self) -> _Request | None:
        """The next request whose head is whole; ``None`` to close the connection."""
        keep_alive_until: float | None = None
        while not self.requests:
            if self.error is not None:
                await self._refuse(*self.error)
                return None
            if self.eof or self.server.stopping:
                return None
            if self._head_started is not None:
                deadline = self._head_started + self.limits.header_timeout
            else:
                if keep_alive_until is None:
                    keep_alive_until = trio.current_time() + self.limits.keep_alive_timeout
                deadline = keep_alive_until
            with trio.move_on_at(deadline) as scope:
                self._idle = scope
                data = await self.read()
            self._idle = None
            if scope.cancelled_caught:
                return None
            if not data:
                return None
            self.feed(data)
        return self.requests[0]

    async def _serve(self, request: _Request) -> bool:
        """Serve ``request``; whether the connection may carry another."""
        if request.refusal is not None:
            await self._refuse(*request.refusal)
            return False
        if self.error is not None and not request.complete:
            # Its body cannot be parsed (or its transfer coding, which llhttp refuses only
            # after the head): it is not served, even by a handler that would not read it.
            await self._refuse(*self.error)
            return False
        try:
            scope = self._scope(request)
        except UnicodeDecodeError:
            await self._refuse(400, "malformed request: the target is not ASCII")
            return False
        cycle = _Cycle(self, request)
        try:
            await self.server.app(scope, cycle.receive, cycle.send)
        except Exception:
            log.exception("Exception in ASGI application")
            if not cycle.started and not cycle.disconnected:
                await cycle.write(refusal(500, "The server failed to answer"))
            return False
        if self.broken or not cycle.complete:
            if not cycle.started and not cycle.disconnected:
                log.error("The ASGI application returned without a response")
                await cycle.write(refusal(500, "The server failed to answer"))
            return False
        return cycle.keep_alive and not self.server.stopping and not cycle.disconnected

    def _scope(self, request: _Request) -> Scope:
        url = request.url
        if url[:1] != b"/" and url != b"*":  # absolute form (a proxy's), or malformed
            parsed = httptools.parse_url(url)
            url = parsed.path or b"/"
            if parsed.query:
                url += b"?" + parsed.query
        raw_path, _, query = url.partition(b"?")
        path = raw_path.decode("ascii")
        if "%" in path:
            path = unquote(path)
        return {
            "type": "http",
            "asgi": _ASGI,
            "http_version": request.version,
            "method": request.method,
            "scheme": self.server.scheme,
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "root_path": "",
            "headers": request.headers,
            "client": self.client,
            "server": self.sockname,
            "state": self.server.state.copy(),
            "extensions": {},
        }

    async def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` and close (reading on a moment first: see :data:`LINGER`)."""
        try:
            await self.stream.send_all(refusal(status, message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        await self._linger()

    async def _linger(self) -> None:
        if self.eof:
            return
        with trio.move_on_after(LINGER):
            if isinstance(self.stream, trio.abc.HalfCloseableStream):  # TLS is not
                try:
                    await self.stream.send_eof()
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
            drained = 0
            while drained < LINGER_BYTES and (data := await self.read()):
                drained += len(data)

    async def _close(self) -> None:
        with (
            trio.CancelScope(shield=True),
            trio.move_on_after(LINGER),
            suppress(trio.BrokenResourceError, trio.ClosedResourceError),
        ):
            await self.stream.aclose()
        await trio.aclose_forcefully(self.stream)


class _Cycle:
    """One request and its response: the application's ``receive`` and ``send``."""

    __slots__ = (
        "_body_deadline",
        "_body_sent",
        "_chunked",
        "_connection",
        "_continued",
        "_head",
        "_left",
        "_no_body",
        "_request",
        "_waiting",
        "complete",
        "disconnected",
        "keep_alive",
        "started",
    )

    def __init__(self, connection: _Connection, request: _Request) -> None:
        self._connection = connection
        self._request = request
        self._body_sent = False
        self._continued = False
        self._body_deadline: float | None = None
        self._head: bytes | None = None
        #: Body bytes the response's ``content-length`` still promises (``None``: no length).
        self._left: int | None = None
        self._chunked = False
        self._no_body = False
        self._waiting: trio.CancelScope | None = None
        self.started = False
        self.complete = False
        self.disconnected = False
        self.keep_alive = request.keep_alive

    # --- receive --------------------------------------------------------------------------------

    async def receive(self) -> Message:
        connection = self._connection
        request = self._request
        while True:
            if self.disconnected or self.complete:
                return _DISCONNECT
            if request.body:
                chunks = request.body
                body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                chunks.clear()
                more = not request.complete
                self._body_sent = not more
                return {"type": "http.request", "body": body, "more_body": more}
            if request.complete:
                if not self._body_sent:
                    self._body_sent = True
                    return {"type": "http.request", "body": b"", "more_body": False}
                await self._until_disconnect()
                return _DISCONNECT
            if connection.error is not None:
                # The body can never be whole: the client is told why, the application that
                # it has gone (ASGI has nothing else to say it with).
                await self._refuse_body(*connection.error)
                return _DISCONNECT
            if connection.eof:  # the body can never be whole: the client left
                self.disconnected = True
                return _DISCONNECT
            if request.expect_continue and not self._continued and not self.started:
                self._continued = True
                await self.write(_CONTINUE)
                continue
            if self._body_deadline is None:
                self._body_deadline = trio.current_time() + connection.limits.body_timeout
            with trio.move_on_at(self._body_deadline) as scope:
                data = await connection.read()
            if scope.cancelled_caught:
                timeout = connection.limits.body_timeout
                await self._refuse_body(
                    408, f"the request body did not arrive within {timeout:g} s"
                )
                return _DISCONNECT
            if data:
                connection.feed(data)

    async def _refuse_body(self, status: int, message: str) -> None:
        """The body will never be whole: ``status`` (unless a response has started), and
        close."""
        self.keep_alive = False
        if not self.started:
            self.started = True
            await self.write(refusal(status, message))
        self.complete = True  # whatever the application sends now goes nowhere
        self._connection.broken = True

    async def _until_disconnect(self) -> None:
        """Return when the client leaves, or the response is complete."""
        connection = self._connection
        with trio.CancelScope() as scope:
            self._waiting = scope
            while connection.may_read_ahead():
                data = await connection.read()
                if not data:
                    self.disconnected = True
                    return
                connection.feed(data)
            await trio.sleep_forever()
        self._waiting = None

    # --- send -----------------------------------------------------------------------------------

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.body":
            if not self.started:
                raise RuntimeError("http.response.body before http.response.start")
            if self.complete:
                return
            if self.disconnected:  # nobody to write to: the application hears it in receive
                if not message.get("more_body", False):
                    self.complete = True
                return
            body = message.get("body", b"")
            more = message.get("more_body", False)
            if self._no_body:
                data = b""
            elif self._chunked:
                data = b"%x\r\n%b\r\n" % (len(body), body) if body else b""
                if not more:
                    data += b"0\r\n\r\n"
            else:
                data = body
                left = self._left
                if left is not None:
                    over = len(body) > left
                    if over:
                        data = data[:left]
                    self._left = left = max(0, left - len(body))
                    if over or (not more and left):
                        # Not the length it said: the client could not tell where it ends.
                        log.error("The response's body is not its content-length")
                        self.keep_alive = False
                        self._connection.broken = True
            if self._head is not None:
                data = self._head + data
                self._head = None
            if not more:
                self.complete = True
                if self._waiting is not None:
                    self._waiting.cancel()
            if not more and self._connection.plain:
                data = self._write_at_once(data)
            if data:
                await self.write(data)
        elif kind == "http.response.start":
            if self.started:
                if self.complete:
                    return  # (after a 408 the server sent)
                raise RuntimeError("http.response.start sent twice")
            head = self._response_head(message["status"], message.get("headers", ()))
            self.started = True
            if message.get(WHOLE):
                self._head = head  # written with the body, in one write
            else:
                await self.write(head)
        elif kind == "http.response.trailers":
            pass  # HTTP/1.1 responses carry none here (trailers are gRPC's, on HTTP/2)
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r}")

    def _response_head(self, status: int, headers: Any) -> bytes:
        request = self._request
        connection = self._connection
        parts = [_STATUS_LINES.get(status) or _status_line(status)]
        length = False
        chunked = False
        close = False
        dated = False
        for name, value in headers:
            if b"\n" in value or b"\r" in value or b"\n" in name or b"\r" in name:
                raise RuntimeError(f"a response header has a line break: {name!r}")
            lowered = name.lower()
            if lowered == b"content-length":
                length = True
                self._left = int(value)
            elif lowered == b"transfer-encoding":
                chunked = True
                continue  # framing is the server's: written below
            elif lowered == b"connection":
                if b"close" in value.lower():
                    close = True
                continue
            elif lowered == b"date":
                dated = True
            parts.append(b"%b: %b\r\n" % (name, value))
        if not dated:
            parts.append(_Date.now())
        if status < 200 or status in _NO_BODY_STATUSES or request.method == "HEAD":
            self._no_body = True
            self._left = None
        elif chunked or not length:
            self._left = None
            if request.version == "1.1":
                self._chunked = True
                parts.append(b"transfer-encoding: chunked\r\n")
            else:
                close = True  # the body ends where the connection does
        if (
            close
            or not self.keep_alive
            or not request.complete  # a body left unread: the connection cannot go on
            or request.upgrade
            or connection.server.stopping
        ):
            self.keep_alive = False
            parts.append(b"connection: close\r\n")
        parts.append(b"\r\n")
        return b"".join(parts)

    def _write_at_once(self, data: bytes) -> bytes:
        """Write the end of a response straight to the socket, as much as it takes now; what
        is left (all of it if nothing went) is for :meth:`write`. A trio write is a trip
        through the scheduler even when the socket has room; after the last write of a response
        the connection reads, which is a checkpoint of its own, so nothing waits any longer."""
        stream = cast(trio.SocketStream, self._connection.stream)  # (``plain``)
        fileno = stream.socket.fileno()
        if fileno < 0 or not data:
            return data
        try:
            sent = os.write(fileno, data)
        except OSError:  # no room (EAGAIN), or gone (EPIPE...): trio's write will say which
            return data
        return data[sent:]

    async def write(self, data: bytes) -> None:
        """Write ``data``; a client that has gone is noted (and ``receive`` says so)."""
        connection = self._connection
        try:
            await connection.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.disconnected = True
            if self._waiting is not None:
                self._waiting.cancel()
        except BaseException:
            connection.broken = True  # cut short: what was written of it cannot be taken back
            raise
