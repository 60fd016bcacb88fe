"""Replies as the store reads them (``_redis_resp``): every kind RESP2 has, split across reads
at every byte, large, nested, nil; what is not RESP2 told apart; and the same from a real
``redis-server``, including replies of megabytes and of hundreds of thousands of items, which
must be read in the time Redis takes to send them (not in the square of their size)."""

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_adapters.stores._redis_calls import CallPool
from a2a_adapters.stores._redis_resp import (
    READ_SIZE,
    Address,
    Replies,
    RespError,
    command,
    connect,
    parse,
)
from tests.a2a_adapters.redis_server import RedisServer

LOOPS = ("asyncio", "trio")

# --- every kind of reply, split anywhere ------------------------------------------------------


class Error(str):
    """An error reply's text, as a generated reply holds it."""


class Simple(bytes):
    """A simple string's bytes (no CR or LF), as a generated reply holds it."""


NIL_ARRAY = ("nil array",)

_line = st.binary(max_size=20).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
_scalars = (
    st.binary(max_size=40)  # bulk strings: any bytes, \r\n included
    | st.integers(-(2**63), 2**63 - 1)
    | st.none()  # a nil bulk string
    | st.just(NIL_ARRAY)
    | _line.map(Simple)
    | _line.map(lambda b: Error(b.decode("ascii", "replace").replace("\ufffd", "?")))
)
REPLIES = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=5), max_leaves=20)


def encode(value: Any) -> bytes:
    if value is None:
        return b"$-1\r\n"
    if value == NIL_ARRAY:
        return b"*-1\r\n"
    if isinstance(value, Error):
        return b"-%s\r\n" % value.encode()
    if isinstance(value, Simple):
        return b"+%s\r\n" % value
    if isinstance(value, bytes):
        return b"$%d\r\n%s\r\n" % (len(value), value)
    if isinstance(value, int):
        return b":%d\r\n" % value
    return b"*%d\r\n" % len(value) + b"".join(encode(v) for v in value)


def expected(value: Any) -> Any:
    """What the parser gives for a generated reply."""
    if value == NIL_ARRAY:
        return None
    if isinstance(value, Error):
        return ("error", str(value))
    if isinstance(value, Simple):
        return bytes(value)
    if isinstance(value, list):
        return [expected(v) for v in value]
    return value


def seen(value: Any) -> Any:
    """A parsed reply with its errors made comparable."""
    if isinstance(value, RespError):
        return ("error", str(value))
    if isinstance(value, list):
        return [seen(v) for v in value]
    return value


def fed(pieces: Iterator[bytes]) -> list[Any]:
    """Every reply in ``pieces``, fed one after another."""
    replies = Replies()
    found = []
    for piece in pieces:
        replies.feed(piece)
        while (reply := replies.next()) is not None:
            found.append(seen(reply[0]))
    assert not replies.pending
    return found


@given(REPLIES, REPLIES)
def test_replies_split_at_every_byte_come_out_whole_and_in_order(first: Any, second: Any) -> None:
    data = encode(first) + encode(second)
    want = [expected(first), expected(second)]
    for cut in range(len(data) + 1):
        assert fed(iter([data[:cut], data[cut:]])) == want, cut
    assert fed(data[n : n + 1] for n in range(len(data))) == want  # a byte a read
    whole = parse(data)  # (at once, and stateless)
    assert whole is not None
    assert seen(whole[0]) == want[0]


def test_a_reply_that_is_not_all_there_is_pending_and_nothing_yet() -> None:
    replies = Replies()
    assert not replies.pending
    replies.feed(b"*2\r\n$3\r\nfoo\r\n")
    assert replies.next() is None
    assert replies.pending
    replies.feed(b"$-1\r\n+OK")
    assert replies.next() == ([b"foo", None],)
    assert replies.pending  # "+OK" waits for its line's end
    replies.feed(b"\r\n")
    assert replies.next() == (b"OK",)
    assert not replies.pending


@pytest.mark.parametrize(
    "data",
    [
        b"_\r\n",  # RESP3's null
        b",3.14\r\n",  # double
        b"#t\r\n",  # boolean
        b"%1\r\n+a\r\n:1\r\n",  # map
        b"~1\r\n:1\r\n",  # set
        b">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n",  # push
        b"(12345678901234567890\r\n",  # big number
        b"=7\r\ntxt:abc\r\n",  # verbatim string
        b"!3\r\nERR\r\n",  # bulk error
        b"*2\r\n:1\r\n#f\r\n",  # one inside an array
        b"\r\n",
    ],
)
def test_what_resp2_does_not_have_is_refused(data: bytes) -> None:
    replies = Replies()
    replies.feed(data)
    with pytest.raises(RespError, match="not RESP2"):
        replies.next()


def test_a_bulk_string_whose_length_lies_is_refused() -> None:
    # Taken on trust, it would shift every reply after it onto the wrong bytes.
    replies = Replies()
    replies.feed(b"$3\r\nabcd\r\n")
    with pytest.raises(RespError, match="runs on"):
        replies.next()


# --- a real Redis -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with RedisServer() as running:
        yield running


def pool_for(server: RedisServer, timeout: float = 5.0) -> CallPool:
    return CallPool(Address(port=server.port), connect_timeout=1.0, timeout=timeout)


@pytest.mark.parametrize("loop", LOOPS)
def test_every_kind_of_reply_from_redis(server: RedisServer, loop: str) -> None:
    nested = (
        "return {1, 'two', {3, {'four', {}}, -5}, {}, redis.error_reply('INNER trouble'),"
        " redis.status_reply('FINE')}"
    )

    async def scenario() -> None:
        pool = pool_for(server)
        try:
            assert await pool.call(command("SET", "kinds:s", b"a\r\nb")) == b"OK"
            assert await pool.call(command("GET", "kinds:s")) == b"a\r\nb"
            assert await pool.call(command("GET", "kinds:missing")) is None  # nil bulk
            assert await pool.call(command("BLPOP", "kinds:missing", "0.01")) is None  # nil array
            assert await pool.call(command("LRANGE", "kinds:missing", 0, -1)) == []
            await pool.call(command("DEL", "kinds:n"))
            assert await pool.call(command("DECRBY", "kinds:n", 7)) == -7
            assert await pool.call(command("SET", "kinds:e", b"")) == b"OK"
            assert await pool.call(command("GET", "kinds:e")) == b""
            reply = await pool.call(command("EVAL", nested, 0))
            assert seen(reply) == [
                1,
                b"two",
                [3, [b"four", []], -5],
                [],
                ("error", "INNER trouble"),
                b"FINE",
            ]
            assert pool.connections == 1  # one connection, every reply read to its end
        finally:
            await pool.aclose()

    anyio.run(scenario, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_bulk_string_of_megabytes_comes_whole(server: RedisServer, loop: str) -> None:
    big = (bytes(range(256)) + b"\r\n") * (8 * 1024 * 1024 // 258)  # ~8 MB, CRLFs inside

    async def scenario() -> None:
        pool = pool_for(server)
        try:
            assert len(big) > 100 * READ_SIZE
            assert await pool.call(command("SET", "big", big)) == b"OK"
            assert await pool.call(command("GET", "big")) == big
            assert await pool.call(command("STRLEN", "big")) == len(big)  # the next reply's own
        finally:
            await pool.aclose()

    anyio.run(scenario, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_reply_of_many_items_is_read_within_the_calls_timeout(
    server: RedisServer, loop: str
) -> None:
    # 200,000 items, 3 MB in some fifty reads: parsing the reply afresh after each read took
    # seconds (the square of its size), and the call timed out on a reply Redis sent in time.
    script = "for i = 1, 200000 do redis.call('RPUSH', KEYS[1], 'item:' .. i) end"

    async def scenario() -> None:
        pool = pool_for(server, timeout=4.0)
        try:
            await pool.call(command("DEL", "many"))
            await pool.call(command("EVAL", script, 1, "many"))
            items = await pool.call(command("LRANGE", "many", 0, -1))
            assert len(items) == 200_000
            assert items[0] == b"item:1"
            assert items[-1] == b"item:200000"
            assert await pool.call(command("DEL", "many")) == 1
        finally:
            await pool.aclose()

    anyio.run(scenario, backend=loop)


def test_a_reply_sent_a_byte_at_a_time_is_read_as_it_comes() -> None:
    reply = encode([b"a\r\nb", 12, None, NIL_ARRAY, [Simple(b"OK"), Error("ERR no")], b""])
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def dribble() -> None:
            accepted, _ = listener.accept()
            with accepted:
                accepted.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                accepted.recv(100)
                for n in range(len(reply)):
                    accepted.sendall(reply[n : n + 1])
                    time.sleep(0.0005)
                accepted.recv(100)  # until the client closes

        thread = threading.Thread(target=dribble, daemon=True)
        thread.start()

        async def scenario() -> None:
            connection = await connect(Address(port=port))
            try:
                await connection.send(command("PING"))
                with anyio.fail_after(5):
                    got = await connection.read()
                assert seen(got) == expected(
                    [b"a\r\nb", 12, None, NIL_ARRAY, [Simple(b"OK"), Error("ERR no")], b""]
                )
                assert connection.sound()  # all of it read: nothing left over
            finally:
                await connection.aclose()

        anyio.run(scenario)
        thread.join(5)
