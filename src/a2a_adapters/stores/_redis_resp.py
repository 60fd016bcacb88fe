"""RESP2 on a bare anyio socket: how the Redis store talks to Redis on its hot paths.

A general client puts a pipeline of its own between each call and the socket (coredis: a
writer task fed by a memory stream, a reader task per connection, a response object, the
pool's bookkeeping). The store's calls are few and fixed (``EVALSHA`` of its four scripts,
``SCRIPT LOAD``, ``EXISTS``, ``PING``) and each is one request and one reply, so that pipeline
buys nothing here, and measured on this machine it was the largest single part of an event's
way from one replica to another (a commit's round trip through coredis 3.0-3.9 ms, written
here 1.55 ms, of which Redis ran the script 0.23 ms). So the store writes its requests and
reads its replies itself, as the event bus's subscriber does.

What is here: :func:`command` (a request's bytes), :func:`parse` (one reply out of what was
read) and :class:`Replies` (replies out of what is read a piece at a time), :class:`Address`
(where a Redis is and how to log in) and :func:`connect`, which opens a :class:`RespStream` to
it, logged in (``AUTH``) and on its database (``SELECT``).
"""

import select
from contextlib import suppress
from ssl import SSLContext
from typing import Any

import anyio
import anyio.abc
import attrs
from anyio.abc import SocketAttribute

__all__ = [
    "READ_SIZE",
    "Address",
    "Replies",
    "RespError",
    "RespStream",
    "command",
    "connect",
    "parse",
]

#: Bytes read from the socket at a time.
READ_SIZE = 65536
#: The first byte of each kind of RESP2 value, and a line's end.
_BULK, _ARRAY, _INTEGER, _SIMPLE, _ERROR = b"$*:+-"
_CR, _LF = b"\r\n"


class RespError(Exception):
    """Redis answered an error (``-ERR ...``), or sent what RESP2 is not."""


def command(*words: bytes | str | int) -> bytes:
    """The request of ``words`` (text as UTF-8, numbers in decimal), as Redis reads it."""
    parts = [b"*%d\r\n" % len(words)]
    for word in words:
        if isinstance(word, str):
            word = word.encode()
        elif isinstance(word, int):
            word = b"%d" % word
        parts.append(b"$%d\r\n%s\r\n" % (len(word), word))
    return b"".join(parts)


def parse(buffer: bytes | bytearray, start: int = 0) -> tuple[Any, int] | None:
    """One RESP2 value from ``buffer`` at ``start`` and where it ends, or ``None`` if it is not
    all there yet. Arrays are lists, bulk strings bytes, integers ints; an error reply is a
    :class:`RespError` value (returned, not raised: the caller decides)."""
    done, value, end = _fold(buffer, start, [])
    return (value, end) if done else None


class Replies:
    """The replies in bytes that come a piece at a time (:meth:`feed`, then :meth:`next`).

    What was parsed stays parsed: an array's items so far, and the bytes they came in are let
    go. Parsing a reply afresh from its start after each read would cost the square of its
    size, which for a reply of a few megabytes is seconds (enough for a call to time out on
    a reply Redis sent in time)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._open: list[tuple[list[Any], int]] = []  # arrays begun: their items, how many

    @property
    def pending(self) -> bool:
        """Whether anything was read that is not a whole reply yet."""
        return bool(self._buffer or self._open)

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next(self) -> tuple[Any] | None:
        """The next reply (in a 1-tuple: a nil reply is ``(None,)``), or ``None`` until more
        is fed. Raises :class:`RespError` (or ``ValueError``, for a length that is no number)
        on what RESP2 is not."""
        done, value, end = _fold(self._buffer, 0, self._open)
        del self._buffer[:end]
        return (value,) if done else None


def _fold(
    buffer: bytes | bytearray, at: int, open_arrays: list[tuple[list[Any], int]]
) -> tuple[bool, Any, int]:
    """Whether a whole value ends in ``buffer`` past ``at``, that value, and where parsing
    stopped: after it, or where what is there runs out (the arrays begun are in
    ``open_arrays``, for the next call to go on with). One loop, with each kind's parsing
    written in it: a reply of thousands of items is thousands of turns of it."""
    find, length = buffer.find, len(buffer)
    while True:
        end = find(b"\r\n", at)
        if end < 0:
            return False, None, at
        kind = buffer[at]
        value: Any
        if kind == _BULK:
            size = int(buffer[at + 1 : end])
            if size < 0:
                value, at = None, end + 2
            else:
                stop = end + 2 + size
                if stop + 2 > length:
                    return False, None, at  # (its header is read again with the rest)
                if buffer[stop] != _CR or buffer[stop + 1] != _LF:
                    # A length that lied: nothing after it would be framed right.
                    raise RespError(f"not RESP2: a bulk string of {size} bytes runs on")
                value, at = bytes(buffer[end + 2 : stop]), stop + 2
        elif kind == _ARRAY:
            count, at = int(buffer[at + 1 : end]), end + 2
            if count > 0:  # its items come next
                open_arrays.append(([], count))
                continue
            value = [] if count == 0 else None
        elif kind == _INTEGER:
            value, at = int(buffer[at + 1 : end]), end + 2
        elif kind == _SIMPLE:
            value, at = bytes(buffer[at + 1 : end]), end + 2
        elif kind == _ERROR:
            value, at = RespError(buffer[at + 1 : end].decode(errors="replace")), end + 2
        else:
            raise RespError(f"not RESP2: {bytes(buffer[at : at + 16])!r}")
        while open_arrays:
            items, size = open_arrays[-1]
            items.append(value)
            if len(items) < size:
                break
            open_arrays.pop()
            value = items
        else:
            return True, value, at


@attrs.frozen
class Address:
    """Where a Redis listens (a TCP host and port, or a Unix socket's path), how to log in to
    it, over TLS or not, and which of its databases to use."""

    host: str = "127.0.0.1"
    port: int = 6379
    unix_path: str = ""
    username: str = ""
    password: str = ""
    ssl: SSLContext | None = None
    db: int = 0


class RespStream:
    """One connection to Redis: requests sent, replies read in the order they come."""

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self._stream = stream
        raw = stream.extra(SocketAttribute.raw_socket, None)  # noqa: S610
        self._poll: select.poll | None = None
        if raw is not None:
            self._poll = select.poll()
            self._poll.register(raw.fileno(), select.POLLIN)
        self._replies = Replies()

    async def send(self, request: bytes) -> None:
        await self._stream.send(request)

    async def read(self) -> Any:
        """The next reply (an error reply is a :class:`RespError` value); a connection that
        ends first raises ``anyio.EndOfStream``, one that sends what RESP2 is not raises
        :class:`RespError`."""
        while True:
            try:
                found = self._replies.next()
            except ValueError as error:  # a length or a number that is none: not Redis
                raise RespError(f"not RESP2: {error}") from None
            if found is not None:
                return found[0]
            self._replies.feed(await self._stream.receive(READ_SIZE))

    def sound(self) -> bool:
        """Whether an idle connection may still carry a request, told without waiting: one
        with anything to read has not (Redis closed it, when it restarted or dropped an idle
        client, or sent what nobody asked for). So that a store whose Redis came back does not
        fail a call on each connection it held before."""
        if self._replies.pending:
            return False
        return self._poll is None or not self._poll.poll(0)

    async def aclose(self) -> None:
        """Close it, within a second and whatever the state of the peer (closing is only a
        courtesy to Redis: a connection given up is never used again)."""
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(1.0),
            suppress(OSError, anyio.BrokenResourceError),
        ):
            await self._stream.aclose()


async def connect(address: Address) -> RespStream:
    """A connection to ``address``, logged in and on its database (bound it with the caller's
    timeout: a Redis that takes the connection and says nothing is waited on). A refusal is
    the :class:`RespError` of Redis's own words."""
    try:
        stream = await _open(address)
    except OSError as error:
        # anyio's own words are "All connection attempts failed", and why is its cause.
        if isinstance(error.__cause__, OSError):
            raise error.__cause__ from None
        raise
    connection = RespStream(stream)
    try:
        if address.username:
            # A user alone is one with no password (``nopass``): logged in as that user all
            # the same, not left as Redis's default user.
            await _expect_ok(connection, command("AUTH", address.username, address.password))
        elif address.password:
            await _expect_ok(connection, command("AUTH", address.password))
        if address.db:
            await _expect_ok(connection, command("SELECT", address.db))
    except BaseException:
        await connection.aclose()  # refused or silent: not left open
        raise
    return connection


async def _expect_ok(connection: RespStream, request: bytes) -> None:
    await connection.send(request)
    reply = await connection.read()
    if isinstance(reply, RespError):
        raise reply


async def _open(address: Address) -> anyio.abc.ByteStream:
    if address.unix_path:
        return await anyio.connect_unix(address.unix_path)
    if address.ssl is not None:
        return await anyio.connect_tcp(
            address.host,
            address.port,
            ssl_context=address.ssl,
            tls=True,
            # Redis may close without TLS's close_notify: the stream ends there anyway.
            tls_standard_compatible=False,
        )
    return await anyio.connect_tcp(address.host, address.port)
