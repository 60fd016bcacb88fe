"""A Redis PubSub subscriber on a bare anyio socket: the event bus's one connection.

The bus only subscribes, unsubscribes and reads what is published, which in RESP2 is a handful
of arrays of bulk strings. A general client puts a pipeline of its own between the socket and
the reader (coredis: a connection task, a queue, a response object per message); measured with
``benchmarks.doorbell`` here, that is most of what a doorbell costs on its way (a coredis
subscriber 0.6-0.9 ms from PUBLISH to arrival, a bare socket 0.25-0.35 ms), and the doorbell is
on the path of every event a replica streams for another. So the bus reads the socket itself
(``_redis_resp``, as the store's own calls do).

It speaks what the bus needs and nothing more: ``AUTH`` (a password, a user, or both)
once connected, ``SUBSCRIBE`` that returns once Redis confirmed every channel (a change that came
before must not be missed: the bus rings each new channel's task after it), ``UNSUBSCRIBE``, and
the messages in order. Over TCP (with TLS for ``rediss://``) or a Unix socket. Any error of the
connection ends it with an exception, and the bus connects afresh.
"""

from collections.abc import Iterable
from types import TracebackType
from typing import Any

import anyio

from ._redis_resp import Address, RespError, RespStream, command, connect

__all__ = ["PubSubConnection"]


class PubSubConnection:
    """One subscribing connection (``async with`` it): :meth:`subscribe`, :meth:`unsubscribe`,
    :meth:`get_message`. Messages come as ``{"type", "channel", "data"}``, as coredis gives them,
    with bytes for the channel and the data."""

    def __init__(self, address: Address, *, timeout: float = 5.0) -> None:
        self._address = address
        self._timeout = timeout
        self._connection: RespStream | None = None
        self._confirmed: dict[bytes, anyio.Event] = {}

    async def __aenter__(self) -> "PubSubConnection":
        with anyio.fail_after(self._timeout):
            self._connection = await connect(self._address)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()

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
        await self._connected().send(command(verb, *names))
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

    def _connected(self) -> RespStream:
        if self._connection is None:
            raise anyio.ClosedResourceError
        return self._connection

    async def _read(self) -> Any:
        return await self._connected().read()
