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
read), :class:`Address` (where a Redis is and how to log in) and :func:`connect`, which opens a
:class:`RespStream` to it, logged in (``AUTH``) and on its database (``SELECT``).
"""

import select
from contextlib import suppress
from ssl import SSLContext
from typing import Any

import anyio
import anyio.abc
import attrs
from anyio.abc import SocketAttribute

__all__ = ["READ_SIZE", "Address", "RespError", "RespStream", "command", "connect", "parse"]

#: Bytes read from the socket at a time.
READ_SIZE = 65536


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
    end = buffer.find(b"\r\n", start)
    if end < 0:
        return None
    kind, line, after = buffer[start : start + 1], bytes(buffer[start + 1 : end]), end + 2
    if kind == b"$":
        size = int(line)
        if size < 0:
            return None if after > len(buffer) else (None, after)
        if len(buffer) < after + size + 2:
            return None
        return bytes(buffer[after : after + size]), after + size + 2
    if kind == b"*":
        count = int(line)
        items = []
        for _ in range(max(count, 0)):
            found = parse(buffer, after)
            if found is None:
                return None
            item, after = found
            items.append(item)
        return (items if count >= 0 else None), after
    if kind == b":":
        return int(line), after
    if kind == b"+":
        return line, after
    if kind == b"-":
        return RespError(line.decode(errors="replace")), after
    raise RespError(f"not RESP2: {bytes(buffer[start : start + 16])!r}")


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
        self._buffer = bytearray()

    async def send(self, request: bytes) -> None:
        await self._stream.send(request)

    async def read(self) -> Any:
        """The next reply (an error reply is a :class:`RespError` value); a connection that
        ends first raises ``anyio.EndOfStream``, one that sends what RESP2 is not raises
        :class:`RespError`."""
        buffer = self._buffer
        while True:
            try:
                found = parse(buffer) if buffer else None
            except ValueError:  # a length or a number that is none: not Redis speaking
                raise RespError(f"not RESP2: {bytes(buffer[:16])!r}") from None
            if found is not None:
                value, end = found
                del buffer[:end]
                return value
            buffer += await self._stream.receive(READ_SIZE)

    def sound(self) -> bool:
        """Whether an idle connection may still carry a request, told without waiting: one
        with anything to read has not (Redis closed it, when it restarted or dropped an idle
        client, or sent what nobody asked for). So that a store whose Redis came back does not
        fail a call on each connection it held before."""
        if self._buffer:
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
        if address.password:
            login = [*([address.username] if address.username else []), address.password]
            await _expect_ok(connection, command("AUTH", *login))
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
