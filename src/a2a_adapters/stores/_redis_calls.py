"""The Redis store's calls: one request and its reply at a time per connection, from a pool.

Each call takes an idle connection (or opens one, up to a limit), sends its request, reads its
one reply and gives the connection back; a call that fails or is cancelled on the way closes
its connection instead, because a reply it did not read would be the next call's. So a
connection in the pool is always between replies, and nothing runs behind the calls: no
reader task, no queue (what coredis's connections have, and what this module exists to save:
see ``_redis_resp``).

An idle connection may have been closed by Redis meanwhile (a restart, its ``timeout`` for
idle clients): each is looked at before it is used, without waiting, and one that ended is
dropped for another, so a store whose Redis came back is not failed once per connection it
held before.
"""

from typing import Any

import anyio

from ._redis_resp import Address, RespStream, connect

__all__ = ["CallPool"]


class CallPool:
    """Connections to one Redis for one event loop, each carrying one call at a time.

    ``connect_timeout`` bounds opening a connection (and logging in), ``timeout`` each call's
    round trip and the wait for a connection when ``limit`` of them are busy. Failures are the
    connection's own exceptions (``OSError``, ``TimeoutError``, anyio's stream errors, or a
    :class:`~._redis_resp.RespError` for a login Redis refused or what is not RESP2); an error
    *reply* is returned, as a ``RespError`` value, for the caller to read.
    """

    def __init__(
        self, address: Address, *, connect_timeout: float, timeout: float, limit: int = 64
    ) -> None:
        self.address = address
        self._connect_timeout = connect_timeout
        self._timeout = timeout
        self._limit = limit
        self._idle: list[RespStream] = []
        self._open = 0  # idle and busy alike
        self._freed: anyio.Event | None = None
        self._closed = False

    @property
    def connections(self) -> int:
        """How many connections are open (idle or carrying a call)."""
        return self._open

    async def call(self, request: bytes) -> Any:
        """``request``'s reply (see :func:`~._redis_resp.command`)."""
        connection = await self._take()
        try:
            with anyio.fail_after(self._timeout):
                await connection.send(request)
                reply = await connection.read()
        except BaseException as error:
            await self._drop(connection)
            told = _told(error, f"Redis did not answer within {self._timeout:g} s")
            if told is None:
                raise
            raise told from error.__cause__
        if self._closed:  # (closed while this call ran: its connection is not kept)
            await self._drop(connection)
        else:
            self._idle.append(connection)
            self._wake()
        return reply

    async def aclose(self) -> None:
        """Close the idle connections, and each busy one as its call ends."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            await self._drop(connection)

    async def _take(self) -> RespStream:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            while self._idle:
                connection = self._idle.pop()
                if connection.sound():
                    return connection
                await self._drop(connection)
            if self._open < self._limit:
                break
            with anyio.fail_after(self._timeout):
                if self._freed is None:
                    self._freed = anyio.Event()
                await self._freed.wait()
        self._open += 1
        try:
            with anyio.fail_after(self._connect_timeout):
                return await connect(self.address)
        except BaseException as error:
            self._released()
            told = _told(error, f"no connection to Redis within {self._connect_timeout:g} s")
            if told is None:
                raise
            raise told from error.__cause__

    async def _drop(self, connection: RespStream) -> None:
        self._released()
        await connection.aclose()

    def _released(self) -> None:
        self._open -= 1
        self._wake()

    def _wake(self) -> None:
        freed, self._freed = self._freed, None
        if freed is not None:
            freed.set()


def _told(error: BaseException, late: str) -> BaseException | None:
    """An error of ``error``'s kind that says what happened, where ``error`` says nothing (a
    timeout, a connection Redis closed): the store's failures show it, and a bare class name
    leaves whoever reads them guessing. ``None`` for any other."""
    if str(error):
        return None
    if isinstance(error, TimeoutError):
        return TimeoutError(late)
    if isinstance(error, anyio.EndOfStream | anyio.BrokenResourceError):
        return type(error)("Redis closed the connection")
    return None
