"""A Redis PubSub subscriber on a bare anyio socket: the event bus's one connection.

The bus only subscribes, unsubscribes and reads what is published, which in RESP2 is a handful
of arrays of bulk strings. A general client puts a pipeline of its own between the socket and
the reader (coredis: a connection task, a queue, a response object per message); measured with
``benchmarks.doorbell`` here, that is most of what a doorbell costs on its way (a coredis
subscriber 0.6-0.9 ms from PUBLISH to arrival, a bare socket 0.25-0.35 ms), and the doorbell is
on the path of every event a replica streams for another. So the bus reads the socket itself;
every other call of the store (its scripts, leases, claims) stays with coredis.

It speaks what the bus needs and nothing more: ``AUTH`` (a password, or a user and password)
once connected, ``SUBSCRIBE`` that returns once Redis confirmed every channel (a change that came
before must not be missed: the bus rings each new channel's task after it), ``UNSUBSCRIBE``, and
the messages in order. Over TCP (with TLS for ``rediss://``) or a Unix socket. Any error of the
connection ends it with an exception, and the bus connects afresh.
"""

from collections.abc import Iterable
from contextlib import suppress
from ssl import SSLContext
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

__all__ = ["PubSubConnection", "RespError", "parse"]

#: Bytes read from the socket at a time.
READ_SIZE = 65536


class RespError(Exception):
    """Redis answered an error (``-ERR ...``), or sent what RESP2 is not."""


def _command(*words: bytes) -> bytes:
    parts = [b"*%d\r\n" % len(words)]
    for word in words:
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


class PubSubConnection:
    """One subscribing connection (``async with`` it): :meth:`subscribe`, :meth:`unsubscribe`,
    :meth:`get_message`. Messages come as ``{"type", "channel", "data"}``, as coredis gives them,
    with bytes for the channel and the data."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 6379,
        unix_path: str = "",
        username: str = "",
        password: str = "",
        ssl: SSLContext | None = None,
        timeout: float = 5.0,
    ) -> None:
        self._host, self._port, self._unix_path = host, port, unix_path
        self._login = (username, password)
        self._ssl = ssl
        self._timeout = timeout
        self._stream: anyio.abc.ByteStream | None = None
        self._buffer = bytearray()
        self._confirmed: dict[bytes, anyio.Event] = {}

    async def __aenter__(self) -> "PubSubConnection":
        with anyio.fail_after(self._timeout):
            stream: anyio.abc.ByteStream
            if self._unix_path:
                stream = await anyio.connect_unix(self._unix_path)
            elif self._ssl is not None:
                stream = await anyio.connect_tcp(
                    self._host,
                    self._port,
                    ssl_context=self._ssl,
                    tls=True,
                    # Redis may close without TLS's close_notify: the stream ends there anyway.
                    tls_standard_compatible=False,
                )
            else:
                stream = await anyio.connect_tcp(self._host, self._port)
            self._stream = stream
            try:
                await self._log_in()
            except BaseException:
                await self.__aexit__(None, None, None)  # refused or silent: not left open
                raise
        return self

    async def _log_in(self) -> None:
        username, password = self._login
        if password:
            words = [b"AUTH", *([username.encode()] if username else []), password.encode()]
            await self._connected().send(_command(*words))
            reply = await self._read()
            if isinstance(reply, RespError):
                raise reply

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            # (Gone already, it cannot be closed: closing it was only a courtesy.)
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(1.0),
                suppress(OSError, anyio.BrokenResourceError),
            ):
                await stream.aclose()

    async def subscribe(self, *channels: str) -> None:
        """Subscribe, and return once Redis confirmed each channel (read by :meth:`get_message`,
        which must be running in another task)."""
        await self._ask(b"SUBSCRIBE", channels, confirm=True)

    async def unsubscribe(self, *channels: str) -> None:
        await self._ask(b"UNSUBSCRIBE", channels, confirm=False)

    async def _ask(self, verb: bytes, channels: Iterable[str], *, confirm: bool) -> None:
        names = [c.encode() for c in channels]
        if not names:
            return
        waits = [self._confirmed.setdefault(n, anyio.Event()) for n in names] if confirm else []
        await self._connected().send(_command(verb, *names))
        with anyio.fail_after(self._timeout):
            for wait in waits:
                await wait.wait()

    async def get_message(self) -> dict[str, Any]:
        """The next message published on a subscribed channel (the confirmations of
        subscriptions it reads on the way are noted, not returned)."""
        while True:
            reply = await self._read()
            if isinstance(reply, RespError):
                raise reply
            if not isinstance(reply, list) or len(reply) != 3:
                raise RespError(f"not a PubSub message: {reply!r}")
            kind, channel, data = reply
            if kind == b"message":
                return {"type": "message", "channel": channel, "data": data}
            if kind == b"subscribe":
                confirmed = self._confirmed.pop(channel, None)
                if confirmed is not None:
                    confirmed.set()

    def _connected(self) -> anyio.abc.ByteStream:
        if self._stream is None:
            raise anyio.ClosedResourceError
        return self._stream

    async def _read(self) -> Any:
        stream = self._connected()
        while True:
            found = parse(self._buffer) if self._buffer else None
            if found is not None:
                value, end = found
                del self._buffer[:end]
                return value
            chunk = await stream.receive(READ_SIZE)
            self._buffer += chunk
