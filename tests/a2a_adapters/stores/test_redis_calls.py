"""The Redis store's pool of calls (``_redis_calls``) against a real ``redis-server``: one
connection carries call after call, no more than the limit are opened, and a connection whose
reply was not read (a call cancelled or timed out) or that Redis closed is never used again."""

import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from a2a_adapters.stores import RedisStore
from a2a_adapters.stores._redis_calls import CallPool
from a2a_adapters.stores._redis_resp import Address, RespStream, command, connect
from a2a_core.store import Put, Reads
from tests.a2a_adapters.redis_server import RedisServer
from tests.a2a_adapters.stores.test_conformance import record
from tests.a2a_adapters.tls import self_signed

LOOPS = ("asyncio", "trio")


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with RedisServer() as running:
        yield running


def pool_for(server: RedisServer, **options: float) -> CallPool:
    settings = {"connect_timeout": 1.0, "timeout": 5.0} | options
    limit = int(settings.pop("limit", 64))
    return CallPool(Address(port=server.port), limit=limit, **settings)


@asynccontextmanager
async def pool_and_observer(server: RedisServer) -> AsyncIterator[tuple[CallPool, RespStream]]:
    """A pool, and a connection of the test's own to watch and prod Redis with."""
    pool = pool_for(server)
    other = await connect(Address(port=server.port))
    try:
        yield pool, other
    finally:
        await other.aclose()
        await pool.aclose()


async def ask(connection: RespStream, *words: str | bytes | int) -> object:
    await connection.send(command(*words))
    return await connection.read()


@pytest.mark.parametrize("loop", LOOPS)
def test_calls_one_after_another_share_one_connection(server: RedisServer, loop: str) -> None:
    async def scenario() -> None:
        pool = pool_for(server)
        try:
            ids = [await pool.call(command("CLIENT", "ID")) for _ in range(3)]
            assert len(set(ids)) == 1
            assert pool.connections == 1
        finally:
            await pool.aclose()
        assert pool.connections == 0
        with pytest.raises(anyio.ClosedResourceError):
            await pool.call(command("PING"))

    anyio.run(scenario, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_calls_at_once_open_no_more_connections_than_the_limit(
    server: RedisServer, loop: str
) -> None:
    async def scenario() -> None:
        pool = pool_for(server, limit=2)
        most = 0
        replies: list[object] = []

        async def call() -> None:
            replies.append(await pool.call(command("BLPOP", "calls:nothing", "0.2")))

        async def watch() -> None:
            nonlocal most
            while True:
                most = max(most, pool.connections)
                await anyio.sleep(0.01)

        try:
            started = time.monotonic()
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                async with anyio.create_task_group() as calls:
                    for _ in range(5):
                        calls.start_soon(call)
                group.cancel_scope.cancel()
            assert replies == [None] * 5  # every call answered (nothing came: nil)
            assert most == 2
            assert time.monotonic() - started >= 0.55  # two at a time: three rounds of 0.2 s
        finally:
            await pool.aclose()

    anyio.run(scenario, backend=loop)


async def until_blocked(other: RespStream, blocked: bool) -> None:
    """Until a client of Redis is (or is no longer) blocked in a BLPOP."""
    with anyio.fail_after(5):
        while True:
            listing = await ask(other, "CLIENT", "LIST")
            assert isinstance(listing, bytes)
            if (b"cmd=blpop" in listing) == blocked:
                return
            await anyio.sleep(0.005)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_cancelled_call_closes_its_connection_so_no_call_reads_its_reply(
    server: RedisServer, loop: str
) -> None:
    async def scenario() -> None:
        async with pool_and_observer(server) as (pool, other):
            await ask(other, "DEL", "calls:queue")
            async with anyio.create_task_group() as group:
                group.start_soon(pool.call, command("BLPOP", "calls:queue", "5"))
                await until_blocked(other, True)
                group.cancel_scope.cancel()
            assert pool.connections == 0
            await until_blocked(other, False)  # Redis let the BLPOP go with its connection...
            await ask(other, "RPUSH", "calls:queue", "x")
            assert await pool.call(command("GET", "calls:missing")) is None  # its own reply
            assert await ask(other, "LLEN", "calls:queue") == 1  # ...so it took nothing

    anyio.run(scenario, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_an_idle_connection_redis_closed_is_replaced_without_a_failed_call(
    server: RedisServer, loop: str
) -> None:
    async def scenario() -> None:
        async with pool_and_observer(server) as (pool, other):
            first = await pool.call(command("CLIENT", "ID"))
            assert await ask(other, "CLIENT", "KILL", "ID", first) == 1
            await anyio.sleep(0.05)  # (the kernel has the news by then)
            second = await pool.call(command("CLIENT", "ID"))
            assert second != first
            assert pool.connections == 1

    anyio.run(scenario, backend=loop)


def test_a_redis_that_never_answers_times_the_call_out_and_its_connection_is_closed() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        pool = CallPool(Address(port=port), connect_timeout=1.0, timeout=0.3)

        async def scenario() -> None:
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                await pool.call(command("PING"))
            assert time.monotonic() - started < 2
            assert pool.connections == 0

        anyio.run(scenario)
        accepted, _ = silent.accept()
        with accepted:
            accepted.settimeout(2)
            assert accepted.recv(100) == command("PING")
            assert accepted.recv(100) == b""  # closed by the pool


@pytest.mark.parametrize("loop", LOOPS)
def test_the_stores_calls_over_tls_with_a_password_keep_to_one_connection(
    loop: str, tmp_path: Path
) -> None:
    # Over TLS the socket may hold the protocol's own bytes (session tickets) that a look at
    # an idle connection must not take for Redis closing it: each call would reconnect.
    async def scenario(server: RedisServer) -> None:
        store = RedisStore(server.tls_url, prefix="tls-calls")
        try:
            for n in range(10):
                assert await store.commit([Put(record(f"t{n}"), 0)])
                assert (await store.read(Reads(task_id=f"t{n}"))).task is not None
            await store.ping()
        finally:
            await store.aclose()

    with RedisServer(password="s3cret", tls=self_signed(tmp_path)) as server:
        before = connections_received(server)
        anyio.run(scenario, server, backend=loop)
        # The store's one connection for its 21 calls, and the one asking.
        assert connections_received(server) == before + 2


def connections_received(server: RedisServer) -> int:
    """How many connections Redis has taken since it started (this one included)."""
    with socket.create_connection(("127.0.0.1", server.port)) as plain:
        plain.sendall(command("AUTH", "s3cret") + command("INFO", "stats"))
        info = b""
        while b"total_connections_received:" not in info or not info.endswith(b"\r\n"):
            info += plain.recv(65536)
    return int(info.split(b"total_connections_received:")[1].split(b"\r\n")[0])
