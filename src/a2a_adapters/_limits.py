"""How much a client may make the server hold, and for how long: the limits both servers keep.

Nothing a client sends before it is authenticated should cost the server more than a little
memory and a few seconds, and no number of clients should lock others out. So both servers
(uvicorn on asyncio; on trio our own HTTP/1.1 and hypercorn's HTTP/2) enforce one
:class:`ConnectionLimits`:

- a cap on open connections, below the process's file-descriptor limit; a connection over the
  cap is answered ``503`` with ``Retry-After`` and closed at once, so the accept loop never
  stalls on ``EMFILE`` and the connections already open keep working;
- a bound on the request head (the request line and header fields, in bytes and in fields);
  a larger head is refused with ``431`` before the server buffers more of it;
- a deadline for the whole head once its first byte has arrived, so a client that trickles a
  byte every few seconds is cut off; a deadline for the whole body once the head is in
  (``408``); and an idle timeout for a connection with no request under way, including one
  that was opened and never used.

Authentication happens on the head, before the body is read (``a2a_adapters._door``), so an
unauthenticated client cannot make the server buffer a body either. The bound on the body
itself is ``max_body_bytes`` (``413``), which the core answers.

This module holds what the two servers share: the limits, the connection gate that counts
connections against the cap, and the canned answers, written straight to the socket or sent
through ASGI. Each
server's module hooks them into its own machinery.
"""

import contextlib
import json
import logging
import time

import attrs

from ._asgi import Send

__all__ = [
    "DEFAULT_LIMITS",
    "ConnectionLimits",
    "Gate",
    "default_max_connections",
    "raise_fd_limit",
    "refusal",
    "refusal_parts",
    "send_refusal",
]

log = logging.getLogger("a2a_adapters")

#: File descriptors kept free of connections: the push sender's pool (100 by default), the
#: store, logs, the refusals under way, the interpreter's own.
FD_RESERVE = 256
#: The default cap never exceeds this, whatever the descriptor limit: each open connection also
#: costs memory (buffers, parser state), and this many is plenty for one process.
MAX_DEFAULT_CONNECTIONS = 10_000
#: Refusals under way at once (each holds its descriptor for up to :data:`REFUSAL_LINGER`);
#: past this a connection over the cap is closed without an answer.
MAX_REFUSING = 64
#: Seconds a refused connection is kept open after its 503, reading what the client still
#: sends: closing a socket with unread input resets it, and the reset can destroy the 503 before
#: the client reads it.
REFUSAL_LINGER = 1.0
#: Seconds between two warnings that the cap turned connections away.
WARN_EVERY = 60.0


def _seconds(default: float) -> float:
    """A field of seconds: positive, and a float even when given as an int."""
    return attrs.field(default=default, converter=float, validator=attrs.validators.gt(0.0))


@attrs.frozen
class ConnectionLimits:
    """What a client may make the server hold, and for how long. Pass it to ``serve`` or to
    the ``serve_app`` of either adapter; every limit holds on both.

    The defaults suit a server reachable from the internet: they refuse nothing a well-behaved
    client sends (a 32 KiB head fits the largest bearer tokens), and they bound what one that
    misbehaves can hold.
    """

    #: Open connections at most; a connection over the cap is answered 503 (``Retry-After``)
    #: and closed. ``None``: derived from the process's file-descriptor limit
    #: (:func:`default_max_connections`).
    max_connections: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.gt(0))
    )
    #: The request head (request line and header fields) in bytes at most; 431 past it.
    max_header_bytes: int = attrs.field(default=32 * 1024, validator=attrs.validators.gt(0))
    #: Header fields in a request at most; 431 past it.
    max_header_count: int = attrs.field(default=100, validator=attrs.validators.gt(0))
    #: Seconds from a request's first byte until its head must be complete; then the
    #: connection is closed.
    header_timeout: float = _seconds(10.0)
    #: Seconds from the end of the head until the body must be complete; then 408 and close.
    body_timeout: float = _seconds(60.0)
    #: Seconds a connection with no request under way (a new one, or one between requests)
    #: stays open; then it is closed.
    keep_alive_timeout: float = _seconds(5.0)

    def connection_cap(self) -> int:
        """:attr:`max_connections`, or the default for this process's descriptor limit."""
        return self.max_connections or default_max_connections()


#: The limits ``serve`` and the servers use unless given others.
DEFAULT_LIMITS = ConnectionLimits()


def _nofile() -> tuple[int, int] | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def default_max_connections() -> int:
    """The connection cap for the current descriptor limit: all but :data:`FD_RESERVE`
    descriptors (at least half of them), and at most :data:`MAX_DEFAULT_CONNECTIONS`.

    With the usual soft limit of 1,024 that is 768; with 256 (macOS) it is 128.
    """
    limits = _nofile()
    if limits is None:  # pragma: no cover - not POSIX
        return 1000
    soft = limits[0]
    if soft < 0:  # RLIM_INFINITY
        return MAX_DEFAULT_CONNECTIONS
    return min(MAX_DEFAULT_CONNECTIONS, max(soft // 2, soft - FD_RESERVE))


def raise_fd_limit() -> None:
    """Raise this process's soft descriptor limit to its hard limit, where the system allows.

    The soft limit is commonly 1,024 while the hard one is far higher; a server that owns its
    process (``serve``, the CLI) takes what it may, so that the default connection cap is not
    needlessly low.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or (soft != resource.RLIM_INFINITY and soft >= hard):
        return  # an unlimited hard limit cannot be set as the soft one everywhere (macOS)
    with contextlib.suppress(ValueError, OSError):  # refused: keep the soft limit
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Gate:
    """Counts a server's open connections against its cap, and the refusals under way.

    Loop-neutral and synchronous: each server calls it from its own accept path (uvicorn's
    ``connection_made``, the trio server's connection handler) on its one thread.
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        #: Connections admitted and not yet closed.
        self.open = 0
        #: Connections over the cap being answered 503.
        self.refusing = 0
        self._refused_since_warning = 0
        self._warned_at: float | None = None

    def admit(self) -> bool:
        """Count a new connection in if there is room (then :meth:`release` it when it
        closes); ``False`` means it is over the cap and must be refused."""
        if self.open < self.cap:
            self.open += 1
            return True
        self._refused_since_warning += 1
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at >= WARN_EVERY:
            log.warning(
                "%d open connections, the cap (max_connections): refused %d new connection(s)",
                self.open,
                self._refused_since_warning,
            )
            self._warned_at = now
            self._refused_since_warning = 0
        return False

    def release(self) -> None:
        self.open -= 1

    def begin_refusal(self) -> bool:
        """Whether a connection over the cap may be answered 503 (then :meth:`end_refusal`);
        ``False``: too many refusals are under way, close it at once."""
        if self.refusing >= MAX_REFUSING:
            return False
        self.refusing += 1
        return True

    def end_refusal(self) -> None:
        self.refusing -= 1


_REASONS = {
    400: ("Bad Request", "INVALID_ARGUMENT"),
    408: ("Request Timeout", "DEADLINE_EXCEEDED"),
    431: ("Request Header Fields Too Large", "INVALID_ARGUMENT"),
    500: ("Internal Server Error", "INTERNAL"),
    503: ("Service Unavailable", "UNAVAILABLE"),
    505: ("HTTP Version Not Supported", "UNIMPLEMENTED"),
}


def refusal_parts(
    status: int, message: str, *, retry_after: int | None = None
) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body of a refusal: a ``google.rpc.Status``-shaped JSON error, like the
    server's 401, on a response that closes its connection."""
    body = json.dumps(
        {"error": {"code": status, "status": _REASONS[status][1], "message": message}},
        separators=(",", ":"),
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    return headers, body


def refusal(status: int, message: str, *, retry_after: int | None = None) -> bytes:
    """A whole HTTP/1.1 refusal (:func:`refusal_parts`), written straight to the socket by a
    server that refuses a request before any application sees it."""
    headers, body = refusal_parts(status, message, retry_after=retry_after)
    lines = [f"HTTP/1.1 {status} {_REASONS[status][0]}".encode()]
    lines += [name + b": " + value for name, value in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def send_refusal(send: Send, status: int, message: str) -> None:
    """A refusal (:func:`refusal_parts`) sent through ASGI, by middleware in front of the
    application on HTTP/2 (where hypercorn keeps no such limit itself).

    Without its ``connection`` field: HTTP/2 forbids connection-specific fields (RFC 9113,
    8.2.2), and a stream ends by itself.
    """
    headers, body = refusal_parts(status, message)
    kept = [(name, value) for name, value in headers if name != b"connection"]
    await send({"type": "http.response.start", "status": status, "headers": kept})
    await send({"type": "http.response.body", "body": body})
