"""Error replies, from a real ``redis-server`` provoked into each: ``-ERR`` and ``-WRONGTYPE``
(a reply like any other, on a connection that goes on), ``-NOSCRIPT`` (the scripts are loaded
again and the calls succeed), ``-BUSY`` (a script that will not end), ``-LOADING`` (a restart
still reading its data), ``-READONLY`` (a replica, not the primary) and ``-MASTERDOWN`` (a
replica that lost its primary): each is the store's :class:`StoreUnavailable` at once, saying
what it means in Redis's own words, and the store works again once Redis does. A peer that
answers what RESP2 does not have ends its connection."""

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from a2a_adapters.stores import RedisStore, StoreUnavailable
from a2a_adapters.stores._redis_calls import CallPool
from a2a_adapters.stores._redis_resp import Address, RespError, command, parse
from a2a_core.store import Put, Reads
from tests.a2a_adapters.conftest import unique_prefix
from tests.a2a_adapters.redis_server import RedisServer
from tests.a2a_adapters.stores.test_conformance import bump, record

LOOPS = ("asyncio", "trio")


def admin(server: RedisServer, *words: str | bytes | int) -> Any:
    """One command on a connection of the test's own (a refused one answers the error)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as plain:
        plain.sendall(command(*words))
        data = b""
        while (found := parse(data)) is None:
            data += plain.recv(65536)
    return found[0]


def answer_to_ping(server: RedisServer) -> object:
    try:
        return admin(server, "PING")
    except OSError:  # not listening yet
        return None


def connections_received(server: RedisServer) -> int:
    info = admin(server, "INFO", "stats")
    assert isinstance(info, bytes)
    return int(info.split(b"total_connections_received:")[1].split(b"\r\n")[0])


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with RedisServer() as running:
        yield running


# --- replies that are errors -------------------------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
def test_an_error_reply_is_a_value_and_its_connection_carries_the_next_call(
    server: RedisServer, loop: str
) -> None:
    async def scenario() -> None:
        pool = CallPool(Address(port=server.port), connect_timeout=1.0, timeout=5.0)
        try:
            first = await pool.call(command("CLIENT", "ID"))
            for request, said in [
                (command("NOSUCHCOMMAND", "x"), "ERR unknown command"),
                (command("GET"), "ERR wrong number of arguments"),
                (command("EVAL", "error('boom')", 0), "ERR user_script:1: boom"),
                (command("EVALSHA", "0" * 40, 0), "NOSCRIPT"),
                (command("INCR", "errors:text"), "ERR value is not an integer"),
            ]:
                if said.startswith("ERR value"):
                    await pool.call(command("SET", "errors:text", "text"))
                reply = await pool.call(request)
                assert isinstance(reply, RespError)
                assert str(reply).startswith(said), reply
            assert await pool.call(command("CLIENT", "ID")) == first  # the same connection
        finally:
            await pool.aclose()

    anyio.run(scenario, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_key_of_the_wrong_type_fails_its_calls_by_name_and_no_others(
    server: RedisServer, loop: str
) -> None:
    store = RedisStore(server.url, prefix=unique_prefix())

    async def scenario() -> None:
        try:
            assert await store.commit([Put(record("fine"), 0)])
            before = connections_received(server)
            assert admin(server, "SET", store.key("odd"), "a string, not a hash") == b"OK"
            with pytest.raises(StoreUnavailable, match="WRONGTYPE"):
                await store.read(Reads(task_id="odd"))
            with pytest.raises(StoreUnavailable, match="WRONGTYPE"):
                await store.commit([Put(record("odd"), 0)])
            found = await store.read(Reads(task_id="fine"))  # other tasks: as before
            assert found.task is not None
            assert await store.commit([Put(bump(found.task), 1)])
            # Every reply read, no connection given up: the only new ones are the test's own
            # (its SET, and this question).
            assert connections_received(server) - before == 2
        finally:
            await store.aclose()

    anyio.run(scenario, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_calls_under_way_when_redis_forgot_the_scripts_load_them_and_succeed(
    server: RedisServer, loop: str
) -> None:
    store = RedisStore(server.url, prefix=unique_prefix())

    async def scenario() -> None:
        try:
            assert await store.commit([Put(record("t0"), 0)])  # (scripts loaded, connections open)
            assert admin(server, "SCRIPT", "FLUSH") == b"OK"
            results: dict[int, bool] = {}

            async def commit(n: int) -> None:
                results[n] = await store.commit([Put(record(f"t{n}"), 0)])

            async with anyio.create_task_group() as group:
                for n in range(1, 17):
                    group.start_soon(commit, n)
            assert results == dict.fromkeys(range(1, 17), True)
            for n in range(1, 17):
                found = await store.read(Reads(task_id=f"t{n}"))
                assert found.task is not None
                assert found.task.version == 1  # applied once each
        finally:
            await store.aclose()

    anyio.run(scenario, backend=loop)


# --- transient refusals -----------------------------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
def test_a_busy_redis_is_unavailable_at_once_and_available_again_after_script_kill(
    loop: str,
) -> None:
    async def scenario(server: RedisServer) -> None:
        store = RedisStore(server.url, prefix="busy", connect_timeout=0.3, timeout=2)
        try:
            assert await store.commit([Put(record("t1"), 0)])
            # A script that never ends, on a connection of the test's: past the threshold Redis
            # answers every other command BUSY.
            busy = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            with busy:
                busy.sendall(command("EVAL", "while true do end", 0))
                with anyio.fail_after(5):
                    while not str(admin(server, "PING")).startswith("BUSY"):  # noqa: ASYNC110
                        await anyio.sleep(0.01)  # (what it waits for is Redis's)
                for call in (store.ping, lambda: store.read(Reads(task_id="t1"))):
                    started = time.monotonic()
                    with pytest.raises(StoreUnavailable, match="BUSY Redis is busy"):
                        await call()
                    assert time.monotonic() - started < 0.5
                started = time.monotonic()
                with pytest.raises(StoreUnavailable, match=r"running a script.*BUSY Redis is busy"):
                    await store.commit([Put(record("t2"), 0)])
                # An answer, if an error: the script did not run, so nothing is asked of Redis
                # about whether it was applied.
                assert time.monotonic() - started < 0.5
                assert admin(server, "SCRIPT", "KILL") == b"OK"
                assert b"Script killed" in busy.recv(1000)
            found = await store.read(Reads(task_id="t1"))
            assert found.task is not None
            assert (await store.read(Reads(task_id="t2"))).task is None
            assert await store.commit([Put(record("t2"), 0)])
        finally:
            await store.aclose()

    with RedisServer(options=["--busy-reply-threshold", "50"]) as server:
        anyio.run(scenario, server, backend=loop)


def test_a_redis_loading_its_data_is_unavailable_until_it_has_loaded() -> None:
    # Three thousand keys loaded at 200 µs each (test-only settings of Redis's): over half a
    # second of LOADING after the restart, which the store's next calls run into. (Redis
    # answers while loading every so many bytes it loaded: every kilobyte here.)
    server: RedisServer  # (this test's own, made below)

    def persistence() -> bytes:
        info = admin(server, "INFO", "persistence")
        assert isinstance(info, bytes)
        return info

    async def fill(store: RedisStore) -> None:
        assert await store.commit([Put(record("t1"), 0)])
        script = "for i = 1, 3000 do redis.call('SET', 'filler:' .. i, i) end"
        assert admin(server, "EVAL", script, 0) is None
        assert admin(server, "BGREWRITEAOF") is not None  # (loaded key by key: an RDB preamble)
        with anyio.fail_after(10):
            while b"aof_rewrite_in_progress:0" not in persistence():  # noqa: ASYNC110
                await anyio.sleep(0.02)

    async def while_loading(store: RedisStore) -> None:
        with anyio.fail_after(10):
            while not str(answer_to_ping(server)).startswith("LOADING"):  # noqa: ASYNC110
                await anyio.sleep(0.005)
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="LOADING"):
            await store.read(Reads(task_id="t1"))
        assert time.monotonic() - started < 0.5
        server.wait()
        found = await store.read(Reads(task_id="t1"))  # loaded, scripts loaded anew
        assert found.task is not None
        assert await store.commit([Put(bump(found.task), 1)])

    slow = ["--key-load-delay", "200", "--loading-process-events-interval-bytes", "1024"]
    server = RedisServer(durable=True, options=slow)
    try:
        server.start()
        store = RedisStore(server.url, prefix="loading", connect_timeout=0.5, timeout=2)
        anyio.run(fill, store)
        server.kill()
        server.launch()
        anyio.run(while_loading, store)
        store.close()
    finally:
        server.remove()


@pytest.mark.parametrize("loop", LOOPS)
def test_a_read_only_replica_is_unavailable_for_commits_until_it_is_the_primary(
    server: RedisServer, loop: str
) -> None:
    async def scenario(replica: RedisServer) -> None:
        store = RedisStore(replica.url, prefix=f"replica-{loop}", connect_timeout=0.3, timeout=2)
        try:
            with anyio.fail_after(10):
                while b"master_link_status:up" not in admin(replica, "INFO", "replication"):  # noqa: ASYNC110
                    await anyio.sleep(0.02)  # (what it waits for is Redis's)
            assert (await store.read(Reads(task_id="t1"))).task is None  # reads are served
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match=r"a read-only replica.*READONLY") as failure:
                await store.commit([Put(record("t1"), 0)])
            assert time.monotonic() - started < 0.5
            assert replica.url in str(failure.value)  # which Redis it is
            assert (await store.read(Reads(task_id="t1"))).task is None  # nothing written
            assert admin(server, "KEYS", f"replica-{loop}:*") == []
            assert admin(replica, "REPLICAOF", "NO", "ONE") == b"OK"  # a failover
            assert await store.commit([Put(record("t1"), 0)])
            assert (await store.read(Reads(task_id="t1"))).task is not None
        finally:
            await store.aclose()

    with RedisServer(options=["--replicaof", "127.0.0.1", str(server.port)]) as replica:
        anyio.run(scenario, replica, backend=loop)


def test_a_replica_that_lost_its_primary_and_serves_no_stale_data_is_unavailable() -> None:
    async def scenario(replica: RedisServer) -> None:
        store = RedisStore(replica.url, prefix="masterdown", connect_timeout=0.3, timeout=2)
        try:
            for call in (
                store.ping,
                lambda: store.read(Reads(task_id="t1")),
                lambda: store.commit([Put(record("t1"), 0)]),
            ):
                started = time.monotonic()
                with pytest.raises(StoreUnavailable, match=r"lost its primary.*MASTERDOWN"):
                    await call()
                assert time.monotonic() - started < 0.5
            assert admin(replica, "REPLICAOF", "NO", "ONE") == b"OK"
            assert await store.commit([Put(record("t1"), 0)])
        finally:
            await store.aclose()

    # Its primary is a port nobody listens on (one of the test's own servers', stopped).
    with RedisServer() as gone:
        pass
    stale = ["--replicaof", "127.0.0.1", str(gone.port), "--replica-serve-stale-data", "no"]
    replica = RedisServer(options=stale)
    try:
        replica.launch()  # (start() waits for a PONG, which this one does not answer)
        deadline = time.monotonic() + 10
        while not str(answer_to_ping(replica)).startswith("MASTERDOWN"):
            assert time.monotonic() < deadline, replica.log
            time.sleep(0.01)
        anyio.run(scenario, replica)
    finally:
        replica.remove()


# --- what is not RESP2 ------------------------------------------------------------------------


def test_a_peer_answering_what_resp2_has_not_ends_the_connection() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def answer() -> None:
            accepted, _ = listener.accept()
            with accepted:
                accepted.recv(100)
                accepted.sendall(b"_\r\n")  # RESP3's null
                accepted.recv(100)  # until the client closes

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        pool = CallPool(Address(port=port), connect_timeout=1.0, timeout=2.0)

        async def scenario() -> None:
            with pytest.raises(RespError, match="not RESP2"):
                await pool.call(command("PING"))
            assert pool.connections == 0

        anyio.run(scenario)
        thread.join(5)
