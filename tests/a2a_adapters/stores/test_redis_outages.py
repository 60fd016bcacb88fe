"""A Redis that goes away and comes back, under the store's pool of calls and its event bus:
SIGKILLed and restarted on the same port with its append-only file, hung (SIGSTOP), killed
with a call on the way. During the outage every call fails with :class:`StoreUnavailable`
within its bounds, never hangs; once Redis is back the very next calls succeed (no connection
held from before fails one), what was acknowledged is there, and the bus has subscribed again
and rung every task it watches.
"""

import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import anyio
import attrs
import pytest

from a2a_adapters.stores import RedisStore, StoreUnavailable
from a2a_core.store import LoggedEvent, Put, Reads
from tests.a2a_adapters.redis_server import RedisServer
from tests.a2a_adapters.stores.test_conformance import bump, record

LOOPS = ("asyncio", "trio")
#: The store's bounds in these tests, and what a failed call may take at most with them: a
#: call's timeout, and for a commit the two reconnections that ask whether it was applied.
CONNECT_TIMEOUT, TIMEOUT = 0.3, 0.6
WORST = TIMEOUT + 2 * (CONNECT_TIMEOUT + TIMEOUT) + 0.5


def store_of(server: RedisServer, prefix: str = "outage") -> RedisStore:
    return RedisStore(
        server.url, prefix=prefix, connect_timeout=CONNECT_TIMEOUT, timeout=TIMEOUT, lease=30
    )


async def fails_within(seconds: float, call: Callable[[], Awaitable[object]]) -> str:
    """``call``'s :class:`StoreUnavailable` message, which came within ``seconds``."""
    started = time.monotonic()
    with anyio.fail_after(seconds + 5):  # (a hang fails the test, rather than stalling it)
        with pytest.raises(StoreUnavailable) as failure:
            await call()
    assert time.monotonic() - started < seconds, str(failure.value)
    return str(failure.value)


@contextmanager
def stopped(server: RedisServer) -> Iterator[None]:
    """Redis hung: it takes connections (the kernel does) and answers nothing."""
    assert server.process is not None
    server.process.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        server.process.send_signal(signal.SIGCONT)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_killed_redis_restarted_with_its_aof_serves_the_very_next_calls(loop: str) -> None:
    async def scenario(server: RedisServer) -> None:
        store = store_of(server)
        found: dict[int, object] = {}

        async def read_all() -> None:
            found.clear()

            async def read(n: int) -> None:
                found[n] = (await store.read(Reads(task_id=f"t{n}"))).task

            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(read, n)
            assert all(found[n] is not None for n in range(8))  # acknowledged: kept

        try:
            # Eight calls at once: eight connections in the pool, all idle when Redis dies.
            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(store.commit, [Put(record(f"t{n}"), 0)])
            server.kill()
            server.start()  # the same port, the same append-only file
            await read_all()  # eight at once again: none fails on a connection from before

            server.kill()
            for call in (
                lambda: store.read(Reads(task_id="t0")),
                lambda: store.commit([Put(record("during"), 0)]),
                store.ping,
                store.renew_lease,
            ):
                message = await fails_within(WORST, call)
                assert server.url in message
            server.start()
            await read_all()
            assert (await store.read(Reads(task_id="during"))).task is None  # refused: not
            assert await store.commit([Put(bump(record("t0")), 1)])  # scripts loaded anew
        finally:
            await store.aclose()

    with RedisServer(durable=True) as server:
        anyio.run(scenario, server, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_hung_redis_fails_calls_within_their_timeout_and_serves_them_once_it_goes_on(
    loop: str,
) -> None:
    async def scenario(server: RedisServer) -> None:
        store = store_of(server)
        try:
            assert await store.commit([Put(record("t1"), 0)])
            with stopped(server):
                message = await fails_within(TIMEOUT + 0.5, lambda: store.read(Reads(task_id="t1")))
                assert f"Redis did not answer within {TIMEOUT:g} s" in message
                await fails_within(TIMEOUT + 0.5, store.ping)
                # The commit was sent: had Redis run it? It cannot say, so nor can the store.
                message = await fails_within(WORST, lambda: store.commit([Put(record("t2"), 0)]))
                assert "whether that commit was applied is not known" in message
            with anyio.fail_after(5):
                found = await store.read(Reads(task_id="t1"))
            assert found.task is not None
            await store.ping()
        finally:
            await store.aclose()

    with RedisServer() as server:
        anyio.run(scenario, server, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_call_on_its_way_when_redis_dies_fails_cleanly(loop: str) -> None:
    # Sent to a hung Redis, which is then killed: the connection ends under the call, which
    # fails at once, and Redis (which never read it) applied nothing.
    async def scenario(server: RedisServer) -> None:
        store = RedisStore(server.url, prefix="on-its-way", connect_timeout=0.3, timeout=30)
        failures: list[str] = []
        try:
            assert await store.commit([Put(record("t1"), 0)])

            async def commit() -> None:
                try:
                    await store.commit([Put(record("t2"), 0)])
                except StoreUnavailable as failure:
                    failures.append(str(failure))

            async with anyio.create_task_group() as group:
                with stopped(server):
                    group.start_soon(commit)
                    await anyio.sleep(0.2)  # (sent, unanswered)
                    started = time.monotonic()
                    server.kill()
            assert time.monotonic() - started < 2 * 0.3 + 1  # not the call's 30 s
            (failure,) = failures
            assert "Redis closed the connection" in failure
            assert "whether that commit was applied is not known" in failure
            server.start()
            assert (await store.read(Reads(task_id="t2"))).task is None
            assert (await store.read(Reads(task_id="t1"))).task is not None
        finally:
            await store.aclose()

    with RedisServer(durable=True) as server:
        anyio.run(scenario, server, backend=loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_the_bus_subscribes_again_after_a_restart_and_rings_every_task_it_watches(
    loop: str,
) -> None:
    async def scenario(server: RedisServer) -> None:
        mine, other = store_of(server, "bus"), store_of(server, "bus")
        rings: list[tuple[str, tuple[LoggedEvent, ...]]] = []

        async def ring(task_key: str, events: tuple[LoggedEvent, ...]) -> None:
            rings.append((task_key, events))

        async def rung(task_key: str, *, with_events: bool) -> None:
            with anyio.fail_after(10):
                wanted = (task_key, with_events)
                while wanted not in {(k, bool(e)) for k, e in rings}:  # noqa: ASYNC110
                    await anyio.sleep(0.01)  # (what it waits for is the bus's list)

        try:
            async with anyio.create_task_group() as group:
                mine.bus.watch("t1")
                mine.bus.watch("t2")
                await group.start(mine.bus.run, ring)
                await rung("t1", with_events=False)  # subscribed: each task rung once
                await rung("t2", with_events=False)
                first = attrs.evolve(record("t1"), seq=1)
                assert await other.commit([Put(first, 0, (LoggedEvent(1, first.task),))])
                await rung("t1", with_events=True)  # another replica's commit, with its event

                server.kill()
                rings.clear()
                await anyio.sleep(0.2)  # (the bus finds its connection gone, and retries)
                server.start()
                await rung("t1", with_events=False)  # subscribed again: rung, nothing missed
                await rung("t2", with_events=False)
                assert mine.bus.connections == 2
                second = attrs.evolve(record("t2"), seq=1)
                assert await other.commit([Put(second, 0, (LoggedEvent(1, second.task),))])
                await rung("t2", with_events=True)
                group.cancel_scope.cancel()
        finally:
            await mine.aclose()
            await other.aclose()

    with RedisServer(durable=True) as server:
        anyio.run(scenario, server, backend=loop)
