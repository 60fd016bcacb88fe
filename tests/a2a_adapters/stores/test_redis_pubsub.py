"""The event bus's own subscriber (``_redis_pubsub``): a real ``redis-server`` reached as the
store reaches it (TCP, a Unix socket, a password, TLS), on both loops, with coredis publishing
as the store's scripts do."""

import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import coredis
import pytest

from a2a_adapters.stores import RedisStore
from a2a_adapters.stores._redis_pubsub import PubSubConnection
from a2a_adapters.stores._redis_resp import Address, RespError
from tests.a2a_adapters.redis_server import RedisServer
from tests.a2a_adapters.tls import self_signed

LOOPS = ("asyncio", "trio")

# --- against a real Redis ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed(tmp_path_factory.mktemp("redis-tls"))


@pytest.fixture(scope="module")
def server(certificate: tuple[Path, Path]) -> Iterator[RedisServer]:
    """One Redis for this module, with a password and a TLS port beside its plain one."""
    with RedisServer(password="s3cret", tls=certificate) as running:
        yield running


@asynccontextmanager
async def listening(url: str) -> AsyncIterator[tuple[PubSubConnection, list[dict[str, Any]]]]:
    """The store's subscriber for ``url``, its messages gathered as they come."""
    store = RedisStore(url, prefix="pubsub-test")
    got: list[dict[str, Any]] = []
    async with await store.subscriber() as subscriber, anyio.create_task_group() as group:

        async def gather() -> None:
            while True:
                got.append(await subscriber.get_message())

        group.start_soon(gather)
        yield subscriber, got
        group.cancel_scope.cancel()


async def until(check: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not check():  # noqa: ASYNC110  what it waits for is another task's list
            await anyio.sleep(0.005)


async def publish(url: str, channel: str, data: bytes) -> int:
    async with coredis.Redis.from_url(url, decode_responses=False) as client:
        return await client.publish(channel, data)


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("link", ["tcp", "tls"])
def test_messages_arrive_once_subscribed_until_unsubscribed(
    server: RedisServer, loop: str, link: str
) -> None:
    url = server.url if link == "tcp" else server.tls_url
    large = bytes(range(256)) * 300  # 76,800 bytes: many reads, \r\n inside

    async def scenario() -> None:
        async with listening(url) as (subscriber, got):
            await subscriber.subscribe("ring:a", "ring:b")
            # Returned once Redis confirmed both: a publish now reaches this connection.
            assert await publish(url, "ring:a", b"one") == 1
            assert await publish(url, "ring:b", large) == 1
            await until(lambda: len(got) == 2)
            await subscriber.unsubscribe("ring:a")
            with anyio.fail_after(5):  # (in effect once Redis has read it)
                while await publish(url, "ring:a", b"late") != 0:  # noqa: ASYNC110
                    await anyio.sleep(0.005)
            assert await publish(url, "ring:b", b"two") == 1
            await until(lambda: len(got) == 3)
        assert [(m["type"], m["channel"], m["data"]) for m in got] == [
            ("message", b"ring:a", b"one"),
            ("message", b"ring:b", large),
            ("message", b"ring:b", b"two"),
        ]

    anyio.run(scenario, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_over_a_unix_socket(loop: str) -> None:
    async def scenario() -> None:
        async with listening(running.url) as (subscriber, got):
            await subscriber.subscribe("ring:u")
            assert await publish(running.url, "ring:u", b"here") == 1
            await until(lambda: len(got) == 1)
        assert got[0]["data"] == b"here"

    with RedisServer(unix_socket=True) as running:
        anyio.run(scenario, backend=loop)


def test_a_wrong_password_is_refused_with_redis_own_words(server: RedisServer) -> None:
    async def scenario() -> None:
        store = RedisStore(server.url.replace("s3cret", "wrong"), prefix="pubsub-test")
        with pytest.raises(RespError, match=r"WRONGPASS|invalid password"):
            async with await store.subscriber():
                pass

    anyio.run(scenario)


def test_a_redis_that_never_answers_the_login_is_let_go() -> None:
    # A server that takes the connection and says nothing: the subscriber gives up within its
    # timeout and closes its side (the bus then tries again), rather than keep the socket open.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        connection = PubSubConnection(Address(port=port, password="s3cret"), timeout=0.3)

        async def scenario() -> None:
            with pytest.raises(TimeoutError):
                async with connection:
                    pass

        anyio.run(scenario)
        accepted, _ = silent.accept()  # (the kernel took it; the test had not)
        with accepted:
            accepted.settimeout(2)
            assert accepted.recv(100).startswith(b"*2\r\n$4\r\nAUTH")
            assert accepted.recv(100) == b""  # closed, though the object is still held here
        assert connection is not None


@pytest.mark.parametrize("loop", LOOPS)
def test_a_redis_that_goes_away_ends_the_connection_with_an_error(loop: str) -> None:
    # The bus then connects afresh (and rings every task it watches): nothing may hang here.
    ended: list[BaseException] = []

    async def scenario() -> None:
        store = RedisStore(running.url, prefix="pubsub-test")
        async with await store.subscriber() as subscriber, anyio.create_task_group() as group:

            async def read() -> None:
                try:
                    while True:
                        await subscriber.get_message()
                except Exception as error:
                    ended.append(error)

            group.start_soon(read)
            await subscriber.subscribe("ring:k")
            running.kill()
            await until(lambda: bool(ended))

    running = RedisServer().start()
    try:
        anyio.run(scenario, backend=loop)
    finally:
        running.remove()
    (error,) = ended
    assert isinstance(error, anyio.EndOfStream | anyio.BrokenResourceError | OSError), error
