"""RESP2 on a bare socket (``_redis_resp``): requests as Redis reads them, replies parsed only
once they are all there, and connections to a real ``redis-server`` that log in, pick their
database and tell when Redis closed them."""

import socket
import threading
from contextlib import suppress
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_adapters.stores._redis_resp import Address, RespError, command, connect, parse
from tests.a2a_adapters.redis_server import RedisServer

LOOPS = ("asyncio", "trio")

# --- RESP2 ------------------------------------------------------------------------------------

_values = st.recursive(
    st.binary(max_size=40) | st.integers(-(2**40), 2**40),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=12,
)


def _encode(value: Any) -> bytes:
    if isinstance(value, bytes):
        return b"$%d\r\n%s\r\n" % (len(value), value)
    if isinstance(value, int):
        return b":%d\r\n" % value
    return b"*%d\r\n" % len(value) + b"".join(_encode(v) for v in value)


@given(_values, st.binary(max_size=8))
def test_a_value_is_parsed_only_once_it_is_all_there(value: Any, after: bytes) -> None:
    data = _encode(value)
    for cut in range(len(data)):
        assert parse(data[:cut]) is None, cut  # a value split across reads waits for the rest
    assert parse(data + after) == (value, len(data))  # what follows is the next value's


def test_replies_that_are_not_bulk_strings_or_arrays() -> None:
    assert parse(b"+OK\r\n") == (b"OK", 5)
    assert parse(b"$-1\r\n") == (None, 5)
    assert parse(b"*-1\r\n") == (None, 5)
    error, end = parse(b"-WRONGPASS invalid username-password pair\r\n") or (None, 0)
    assert isinstance(error, RespError)
    assert str(error) == "WRONGPASS invalid username-password pair"
    assert end == 43
    with pytest.raises(RespError, match="not RESP2"):
        parse(b"?what\r\n")


def test_a_request_is_an_array_of_bulk_strings_of_its_words() -> None:
    assert command("SET", b"k\r\n", 12) == b"*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$2\r\n12\r\n"
    assert command("GET", "é") == b"*2\r\n$3\r\nGET\r\n$2\r\n\xc3\xa9\r\n"


# --- against a real Redis ---------------------------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
def test_a_connection_logs_in_picks_its_database_and_tells_when_redis_closed_it(
    loop: str,
) -> None:
    async def scenario(server: RedisServer) -> None:
        address = Address(port=server.port, password="s3cret", db=5)
        first, second = await connect(address), await connect(address)
        try:
            await first.send(command("SET", "k", "v"))
            assert await first.read() == b"OK"
            await first.send(command("CLIENT", "INFO"))
            assert b" db=5 " in await first.read()
            await second.send(command("CLIENT", "ID"))
            second_id = await second.read()
            assert first.sound()
            assert second.sound()
            await first.send(command("CLIENT", "KILL", "ID", second_id))
            assert await first.read() == 1
            with anyio.fail_after(5):
                while second.sound():  # noqa: ASYNC110  the kernel's news, not a task's
                    await anyio.sleep(0.005)
            assert first.sound()
            with suppress(OSError, anyio.BrokenResourceError):
                await second.send(command("PING"))  # (the kernel may still take it)
            with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError, OSError)):
                await second.read()
            await first.send(command("NOSUCHCOMMAND"))
            error = await first.read()  # an error reply is a value, and the connection goes on
            assert isinstance(error, RespError)
            assert str(error).startswith("ERR unknown command")
            await first.send(command("GET", "k"))
            assert await first.read() == b"v"
        finally:
            await first.aclose()
            await second.aclose()

    with RedisServer(password="s3cret") as server:
        anyio.run(scenario, server, backend=loop)


def test_a_refused_login_and_an_unreachable_redis_say_why() -> None:
    async def scenario(server: RedisServer) -> None:
        with pytest.raises(RespError, match=r"WRONGPASS|invalid password"):
            await connect(Address(port=server.port, password="wrong"))
        with pytest.raises(ConnectionRefusedError):
            await connect(Address(port=RedisServer().port))  # nobody listening there

    with RedisServer(password="s3cret") as server:
        anyio.run(scenario, server)


@pytest.mark.parametrize("reply", [b"$abc\r\n", b"?what\r\n", b"*x\r\n"])
def test_a_server_that_is_not_redis_is_told_apart(reply: bytes) -> None:
    with socket.create_server(("127.0.0.1", 0)) as other:
        port = other.getsockname()[1]

        def answer() -> None:
            accepted, _ = other.accept()
            with accepted:
                accepted.recv(100)
                accepted.sendall(reply)
                accepted.recv(100)  # until the client closes

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()

        async def scenario() -> None:
            connection = await connect(Address(port=port))
            try:
                await connection.send(command("PING"))
                with pytest.raises(RespError, match="not RESP2"):
                    await connection.read()
            finally:
                await connection.aclose()

        anyio.run(scenario)
        thread.join(5)
