"""The Redis store's own promises: its layout (event ids that are event numbers, one hash tag per
task, doorbells), races decided in Redis, run and notification ownership across replicas by
lease, what a Redis that goes away does to a call, durability with an append-only file, both
event loops, and the URLs that name it.

The contract every store keeps is ``test_conformance.py`` (which runs this store too); this is
what only a store shared by replicas over a network can get wrong. Every test runs against a
real ``redis-server`` (the session's, each under a prefix of its own, or one of its own when it
kills or restarts it).
"""

import hashlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import attrs
import coredis
import pytest

from a2a_adapters.stores import RedisStore, StoreUnavailable, open_store
from a2a_adapters.stores._redis_lua import COMMIT
from a2a_core import TaskPushNotificationConfig, TaskState
from a2a_core.errors import UsageError
from a2a_core.store import (
    Delete,
    ListQuery,
    LoggedEvent,
    LogQuery,
    MessageKey,
    OutboxQuery,
    Put,
    Reads,
    RunningQuery,
    Sent,
    TaskRecord,
)
from tests.a2a_adapters.conftest import unique_prefix
from tests.a2a_adapters.redis_server import RedisServer

from .test_conformance import ALICE, bump, record

LOOPS = ("asyncio", "trio")
#: A lease short enough to let lapse in a test, long enough that no pause of a busy machine
#: between a renewal and the next call lets it lapse by accident.
LEASE = 0.3


async def alive(seconds: float, *stores: RedisStore) -> None:
    """``seconds`` pass with ``stores`` renewing their leases as a live replica does."""
    deadline = anyio.current_time() + seconds
    while anyio.current_time() < deadline:
        for store in stores:
            await store.renew_lease()
        await anyio.sleep(LEASE / 3)
    for store in stores:
        await store.renew_lease()


def on(loop: str, scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario, backend=loop)


@asynccontextmanager
async def raw(url: str) -> AsyncIterator[coredis.Redis[bytes]]:
    """A plain client, to look at what the store wrote."""
    async with coredis.Redis.from_url(url, decode_responses=False) as client:
        yield client


def running(task_id: str, run: int = 1) -> TaskRecord:
    return attrs.evolve(record(task_id), run=run, running=True)


async def runner_of(store: RedisStore, task_key: str) -> bytes | None:
    async with raw(store.url) as client:
        return await client.hget(store.key(task_key), "runner")


async def claimed_runs(store: RedisStore) -> list[str]:
    found = await store.read(Reads(running=RunningQuery(limit=10)))
    return [r.id for r in found.running]


async def claimed_notifications(store: RedisStore) -> list[tuple[str, str, int, int]]:
    found = await store.read(Reads(outbox=OutboxQuery(limit=10)))
    return [(p.record.id, p.config_id, p.event.seq, p.attempts) for p in found.outbox]


# --- the layout ---------------------------------------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
def test_stream_ids_are_event_numbers_and_a_tasks_keys_share_a_hash_tag(
    loop: str, redis_url: str
) -> None:
    async def scenario() -> None:
        store = RedisStore(redis_url, prefix=unique_prefix())
        try:
            first = attrs.evolve(record("t1"), seq=2, messages=(("m1", "f"),))
            events = (LoggedEvent(1, first.task), LoggedEvent(2, first.task))
            assert await store.commit([Put(first, 0, events, (("c", 2),))])
            second = attrs.evolve(bump(first, at=1), seq=3)
            assert await store.commit([Put(second, 1, (LoggedEvent(3, second.task),))])
            async with raw(redis_url) as client:
                stream = await client.xrange(store.events_key("t1"))
                assert [entry.identifier for entry in stream] == [b"0-1", b"0-2", b"0-3"]
                # A replay after N is a range from (0-N: the stream position is the number.
                after = await client.xrange(store.events_key("t1"), start="(0-1")
                assert [entry.identifier for entry in after] == [b"0-2", b"0-3"]
                keys = [k.decode() async for k in client.scan_iter(match=f"{store.prefix}:*")]
            own = sorted(k for k in keys if "{" in k)
            assert own == [
                f"{store.prefix}:{{t1}}{suffix}" for suffix in ("", ":ev", ":msg", ":out")
            ]
            # The hash tag, the part Redis Cluster hashes: the same for every key of the task.
            assert {k[k.index("{") + 1 : k.index("}")] for k in own} == {"t1"}
        finally:
            await store.aclose()

    on(loop, scenario)


def test_a_deleted_task_leaves_no_key_behind(redis_url: str) -> None:
    """A task's record, log, message ids, index entries and notifications all go with it."""

    async def scenario() -> None:
        store = RedisStore(redis_url, prefix=unique_prefix())
        try:
            async with raw(redis_url) as client:
                before = {k async for k in client.scan_iter(match=f"{store.prefix}:*")}
                assert before == set()
                done = attrs.evolve(
                    record("t1", state=TaskState.COMPLETED), seq=1, messages=(("m1", "f"),)
                )
                assert await store.commit(
                    [Put(attrs.evolve(done, running=True, run=1), 0, (LoggedEvent(1, done.task),))]
                )
                assert await store.commit([Put(bump(done), 1, (), (("c", 1),))])
                assert await store.commit([Delete("t1", 2)])
                left = {k.decode() async for k in client.scan_iter(match=f"{store.prefix}:*")}
            # Only the set of replicas that have held work remains (it is settled by claims),
            # and the commits' tokens, which expire in ten seconds.
            tokens = {k for k in left if k.startswith(f"{store.prefix}:done:")}
            assert len(tokens) == 3
            assert left - tokens == {f"{store.prefix}:holders"}
            assert (await store.read(Reads(message=MessageKey(ALICE, "m1")))).by_message is None
        finally:
            await store.aclose()

    anyio.run(scenario)


@pytest.mark.parametrize("loop", LOOPS)
def test_each_commit_rings_the_doorbell_of_every_task_it_changed(loop: str, redis_url: str) -> None:
    async def scenario() -> None:
        store = RedisStore(redis_url, prefix=unique_prefix())
        try:
            async with await store.pubsub() as bus:
                await bus.subscribe(store.ring_channel("t1"), store.ring_channel("t2"))

                async def rings(count: int) -> list[tuple[bytes, bytes]]:
                    found: list[tuple[bytes, bytes]] = []
                    with anyio.fail_after(5):
                        while len(found) < count:
                            message = await bus.get_message(timeout=5)
                            if message is not None and message["type"] == "message":
                                channel, data = message["channel"], message["data"]
                                assert isinstance(channel, bytes)
                                assert isinstance(data, bytes)
                                found.append((channel, data))
                    return found

                assert await store.commit([Put(record("t1"), 0), Put(record("t2"), 0)])
                ring1, ring2 = store.ring_channel("t1").encode(), store.ring_channel("t2").encode()
                me = store.replica.encode()  # each ring names the replica that committed
                assert sorted(await rings(2)) == [(ring1, me), (ring2, me)]
                assert not await store.commit([Put(record("t1"), 0)])  # refused: no ring
                assert await store.commit([Delete("t2", 1)])
                assert await rings(1) == [(ring2, me)]
        finally:
            await store.aclose()

    on(loop, scenario)


# --- races --------------------------------------------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
def test_eight_writers_racing_on_one_version_one_wins(loop: str, redis_url: str) -> None:
    """Eight stores (each its own connection, as eight replicas would be) move one task from
    version 1 at once: Redis decides, and exactly one commit is applied."""
    prefix = unique_prefix()

    async def scenario() -> None:
        stores = [RedisStore(redis_url, prefix=prefix, replica=f"r{n}") for n in range(8)]
        try:
            assert await stores[0].commit([Put(record("t1"), 0)])
            for store in stores:  # connected before the race, so that all start together
                assert (await store.read(Reads(task_id="t1"))).task is not None
            results: list[bool] = []
            go = anyio.Event()

            async def write(n: int) -> None:
                await go.wait()
                results.append(await stores[n].commit([Put(bump(record("t1"), at=n), 1)]))

            async with anyio.create_task_group() as group:
                for n in range(8):
                    group.start_soon(write, n)
                await anyio.wait_all_tasks_blocked()
                go.set()
            assert sorted(results) == [False] * 7 + [True]
            found = (await stores[0].read(Reads(task_id="t1"))).task
            assert found is not None
            assert found.version == 2
        finally:
            for store in stores:
                await store.aclose()

    on(loop, scenario)


def test_a_callers_mistake_is_a_usage_error_and_writes_nothing(redis_url: str) -> None:
    async def scenario() -> None:
        store = RedisStore(redis_url, prefix=unique_prefix())
        try:
            v1 = attrs.evolve(record("t1"), seq=1)
            assert await store.commit([Put(v1, 0, (LoggedEvent(1, v1.task),))])
            gap = attrs.evolve(bump(v1), seq=3)
            with pytest.raises(UsageError, match="without a gap"):
                await store.commit([Put(gap, 1, (LoggedEvent(3, gap.task),))])
            with pytest.raises(UsageError, match="advance the version"):
                await store.commit([Put(attrs.evolve(v1, version=5), 1)])
            held = attrs.evolve(bump(v1), messages=(("m1", "f"),))
            assert await store.commit([Put(held, 1)])
            forgetting = attrs.evolve(bump(held), messages=())
            with pytest.raises(UsageError, match="message ids"):
                await store.commit([Put(forgetting, 2)])
            # Checked before anything is written: the task is as the last good commit left it.
            found = await store.read(Reads(task_id="t1", log=LogQuery("t1", 0)))
            assert found.task is not None
            assert found.task.version == 2
            assert [e.seq for e in found.log] == [1]
        finally:
            await store.aclose()

    anyio.run(scenario)


@pytest.mark.parametrize("loop", LOOPS)
def test_calls_load_their_scripts_again_when_redis_forgot_them(loop: str) -> None:
    """A Redis restarted without its script cache (or told ``SCRIPT FLUSH``) answers NOSCRIPT:
    the store loads the script and sends the call again (the script did not run), and the
    commit is applied once."""

    async def scenario(url: str) -> None:
        store = RedisStore(url, prefix=unique_prefix())
        try:
            first = record("t1")
            assert await store.commit([Put(first, 0)])
            async with raw(url) as client:
                await client.script_flush()
                assert await client.script_exists([_commit_sha()]) == (False,)
            assert await store.commit([Put(bump(first), 1)])
            found = await store.read(Reads(task_id="t1"))
            assert found.task is not None
            assert found.task.version == 2
            async with raw(url) as client:
                assert await client.script_exists([_commit_sha()]) == (True,)
        finally:
            await store.aclose()

    with RedisServer() as redis:
        anyio.run(scenario, redis.url, backend=loop)


def _commit_sha() -> str:
    # Redis names a script by the SHA-1 of its source (no security rests on it).
    return hashlib.sha1(COMMIT.encode()).hexdigest()  # noqa: S324


# --- replicas: runs and notifications are taken over only from a replica whose lease lapsed ----


@pytest.mark.parametrize("loop", LOOPS)
def test_a_run_is_taken_over_once_and_only_after_its_replicas_lease_lapsed(
    loop: str, redis_url: str
) -> None:
    prefix = unique_prefix()

    async def scenario() -> None:
        a, b, c = (RedisStore(redis_url, prefix=prefix, replica=n, lease=LEASE) for n in "abc")
        try:
            await a.renew_lease()
            await b.renew_lease()
            assert await a.commit([Put(running("t1"), 0)])  # a run started on A is A's
            assert await runner_of(a, "t1") == b"a"
            assert await claimed_runs(b) == []  # A is alive
            # B writes to A's run (a push config set through B): the run stays A's.
            config = TaskPushNotificationConfig(id="p", task_id="t1", url="https://example.com/")
            with_push = attrs.evolve(bump(running("t1")), push_configs=(config,))
            assert await b.commit([Put(with_push, 1)])
            assert await runner_of(a, "t1") == b"a"
            await c.renew_lease()
            await alive(LEASE + 0.1, b, c)  # A stops renewing: it died
            # B and C ask at once: exactly one of them takes the run over.
            taken: dict[str, list[str]] = {}

            async def claim(store: RedisStore) -> None:
                taken[store.replica] = await claimed_runs(store)

            async with anyio.create_task_group() as group:
                group.start_soon(claim, b)
                group.start_soon(claim, c)
            assert sorted(taken.values()) == [[], ["t1"]]
            winner = b if taken["b"] else c
            assert await runner_of(a, "t1") == winner.replica.encode()
            assert await claimed_runs(a) == []  # the winner is alive: nothing to take
            # The winner settles it (the run stops): it is nobody's.
            settled = attrs.evolve(bump(with_push), running=False)
            assert await winner.commit([Put(settled, 2)])
            assert await runner_of(a, "t1") == b""
            # A new run started through C is C's.
            assert await c.commit([Put(attrs.evolve(bump(settled), run=2, running=True), 3)])
            assert await runner_of(a, "t1") == b"c"
        finally:
            for store in (a, b, c):
                await store.aclose()

    on(loop, scenario)


def test_a_replica_that_drops_its_lease_has_its_runs_taken_at_once(redis_url: str) -> None:
    prefix = unique_prefix()

    async def scenario() -> None:
        a, b = (RedisStore(redis_url, prefix=prefix, replica=n, lease=60) for n in "ab")
        try:
            await a.renew_lease()
            await b.renew_lease()
            assert await a.commit([Put(running("t1"), 0), Put(running("t2"), 0)])
            assert await claimed_runs(b) == []
            await a.drop_lease()  # a clean shutdown that left runs behind
            first = await b.read(Reads(running=RunningQuery(limit=1)))
            assert [r.id for r in first.running] == ["t1"]
            rest = await b.read(Reads(running=RunningQuery(limit=5, after="t1")))
            assert [r.id for r in rest.running] == ["t2"]
            assert await claimed_runs(a) == []  # B holds them, and B is alive
        finally:
            await a.aclose()
            await b.aclose()

    anyio.run(scenario)


def test_a_lease_given_up_is_claimed_at_once_even_by_a_replica_whose_lease_is_newer(
    redis_url: str,
) -> None:
    # B's tenure begins after A gave its lease up: a lapsed lease would make B wait a whole
    # lease (60 s here) before taking A for dead; a lease given up does not.
    prefix = unique_prefix()

    async def scenario() -> None:
        a, b = (RedisStore(redis_url, prefix=prefix, replica=n, lease=60) for n in "ab")
        try:
            await a.renew_lease()
            assert await a.commit([Put(running("t1"), 0)])
            await a.drop_lease()
            await anyio.sleep(0.01)  # (a millisecond or more between the drop and B's tenure)
            await b.renew_lease()
            assert await claimed_runs(b) == ["t1"]
        finally:
            await a.aclose()
            await b.aclose()

    anyio.run(scenario)


@pytest.mark.parametrize("loop", LOOPS)
def test_notifications_are_taken_over_once_and_only_after_the_lease_lapsed(
    loop: str, redis_url: str
) -> None:
    prefix = unique_prefix()

    async def scenario() -> None:
        a, b, c = (RedisStore(redis_url, prefix=prefix, replica=n, lease=LEASE) for n in "abc")
        try:
            await a.renew_lease()
            await b.renew_lease()
            first = attrs.evolve(record("t1"), seq=2)
            events = (LoggedEvent(1, first.task), LoggedEvent(2, first.task))
            assert await a.commit([Put(first, 0, events, (("x", 1), ("x", 2)))])
            assert await a.commit([Sent("t1", "x", 1, attempts=2)])
            assert await claimed_notifications(b) == []  # A is alive: they are A's to send
            await c.renew_lease()
            await alive(LEASE + 0.1, b, c)
            assert await claimed_notifications(b) == [("t1", "x", 1, 2), ("t1", "x", 2, 0)]
            assert await claimed_notifications(c) == []  # taken once
            # B delivers one; the other is still B's after a failed attempt.
            assert await b.commit([Sent("t1", "x", 1), Sent("t1", "x", 2, attempts=1)])
            await alive(LEASE + 0.1, c)  # now B dies too
            assert await claimed_notifications(c) == [("t1", "x", 2, 1)]
        finally:
            for store in (a, b, c):
                await store.aclose()

    on(loop, scenario)


def test_a_replica_is_told_when_another_owes_an_earlier_notification_of_a_webhook(
    redis_url: str,
) -> None:
    prefix = unique_prefix()

    async def scenario() -> None:
        a, b = (RedisStore(redis_url, prefix=prefix, replica=n, lease=LEASE) for n in "ab")
        try:
            await a.renew_lease()
            await b.renew_lease()
            # A's commit owes webhook "x" events 1 and 2, and "x\x000" (an id that starts with
            # the other's, and sorts among its numbers) event 1; then B's commit owes "x" event 3.
            first = attrs.evolve(record("t1"), seq=2)
            events = (LoggedEvent(1, first.task), LoggedEvent(2, first.task))
            owed = (("x", 1), ("x", 2), ("x\x000", 1))
            assert await a.commit([Put(first, 0, events, owed)])
            later = attrs.evolve(bump(first), seq=3)
            assert await b.commit([Put(later, 1, (LoggedEvent(3, later.task),), (("x", 3),))])
            assert await b.owed_elsewhere("t1", "x", 3)  # A owes 1 and 2
            assert await b.owed_elsewhere("t1", "x", 2)  # A owes 1
            assert not await b.owed_elsewhere("t1", "x", 1)
            assert not await a.owed_elsewhere("t1", "x", 2)  # its own: its queue keeps order
            assert not await a.owed_elsewhere("t1", "x", 3)  # B's 3 is not earlier than 3...
            assert await a.owed_elsewhere("t1", "x", 4)  # ...but it is earlier than 4
            assert not await b.owed_elsewhere("t1", "y", 9)  # another webhook
            assert not await b.owed_elsewhere("t2", "x", 9)  # another task
            # A delivers 1: 2 still holds 3 back; once 2 is sent too, nothing does.
            assert await a.commit([Sent("t1", "x", 1)])
            assert await b.owed_elsewhere("t1", "x", 3)
            assert await a.commit([Sent("t1", "x", 2, attempts=1)])  # a failed attempt: owed
            assert await b.owed_elsewhere("t1", "x", 3)
            assert await a.commit([Sent("t1", "x", 2)])
            assert not await b.owed_elsewhere("t1", "x", 3)  # what A owes "x\x000" is not x's
            # A replica that died still owes what it owed, until another claims it.
            last = attrs.evolve(bump(later), seq=4)
            assert await a.commit([Put(last, 2, (LoggedEvent(4, last.task),), (("x", 4),))])
            await alive(LEASE + 0.1, b)
            assert await b.owed_elsewhere("t1", "x", 5)
            assert [n[2] for n in await claimed_notifications(b) if n[1] == "x"] == [4]
            assert not await b.owed_elsewhere("t1", "x", 5)
            # But 4 is B's now, and its sender may not have it yet: asked with the latest event
            # the sender took off the queue, B's own owed notifications after it count too.
            assert await b.owed_elsewhere("t1", "x", 5, mine_after=0)  # 3 and 4
            assert await b.owed_elsewhere("t1", "x", 5, mine_after=3)  # 4
            assert not await b.owed_elsewhere("t1", "x", 5, mine_after=4)  # sent, or being sent
            assert not await b.owed_elsewhere("t1", "x", 4, mine_after=3)  # none before 4
            assert not await b.owed_elsewhere("t1", "y", 5, mine_after=0)  # another webhook
        finally:
            await a.aclose()
            await b.aclose()

    anyio.run(scenario)


@pytest.mark.parametrize("loop", LOOPS)
def test_after_redis_was_away_past_the_lease_no_live_replica_is_taken_for_dead(
    loop: str, redis_url: str
) -> None:
    prefix = unique_prefix()

    async def scenario() -> None:
        a, b, c = (RedisStore(redis_url, prefix=prefix, replica=n, lease=LEASE) for n in "abc")
        try:
            for store in (a, b, c):
                await store.renew_lease()
            assert await a.commit([Put(running("t1"), 0)])
            assert await c.commit([Put(running("t3"), 0)])
            await anyio.sleep(LEASE + 0.1)  # Redis away: nobody renews, every lease lapses
            await b.renew_lease()  # B is back first...
            assert await claimed_runs(b) == []  # ...and takes nobody's runs: they may be alive
            await a.renew_lease()  # A is alive; C died while Redis was away
            await alive(LEASE + 0.1, a, b)  # B has held its lease for a whole one since
            assert await claimed_runs(b) == ["t3"]  # so C, still lapsed, is dead; A is not
            assert await runner_of(a, "t1") == b"a"
        finally:
            for store in (a, b, c):
                await store.aclose()

    on(loop, scenario)


def test_claims_come_in_key_order_across_replicas(redis_url: str) -> None:
    """Runs left by two dead replicas are taken in one order of keys, page by page."""
    prefix = unique_prefix()

    async def scenario() -> None:
        stores = [RedisStore(redis_url, prefix=prefix, replica=n) for n in ("a", "b", "c")]
        a, b, c = stores
        try:
            assert await a.commit([Put(running(k), 0) for k in ("k1", "k4", "k5")])
            assert await b.commit([Put(running(k), 0) for k in ("k2", "k3", "k6")])
            await c.renew_lease()
            pages = []
            after = ""
            while True:
                found = await c.read(Reads(running=RunningQuery(limit=2, after=after)))
                if not found.running:
                    break
                pages.append([r.id for r in found.running])
                after = found.running[-1].id
            assert pages == [["k1", "k2"], ["k3", "k4"], ["k5", "k6"]]
        finally:
            for store in stores:
                await store.aclose()

    anyio.run(scenario)


# --- a Redis that goes away -----------------------------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
def test_an_unreachable_redis_fails_calls_promptly_and_they_work_again_once_it_is_back(
    loop: str,
) -> None:
    async def scenario(server: RedisServer) -> None:
        store = RedisStore(server.url, prefix="p", connect_timeout=0.5, timeout=2)
        try:
            assert await store.commit([Put(record("t1"), 0)])
            server.kill()
            for call in (
                lambda: store.read(Reads(task_id="t1")),
                lambda: store.commit([Put(record("t2"), 0)]),
                store.renew_lease,
            ):
                started = time.monotonic()
                with pytest.raises(StoreUnavailable, match=f"task store {server.url} failed"):
                    await call()
                assert time.monotonic() - started < 2
            server.start()  # on the same port: the next call reconnects by itself
            assert await store.commit([Put(record("t2"), 0)])  # its scripts are loaded anew
            assert (await store.read(Reads(task_id="t2"))).task is not None
        finally:
            await store.aclose()

    with RedisServer() as server:
        anyio.run(scenario, server, backend=loop)


def test_a_commit_leaves_a_token_by_which_a_broken_connection_learns_its_outcome() -> None:
    async def scenario(server: RedisServer) -> None:
        store = RedisStore(server.url, prefix="p", connect_timeout=0.3, timeout=2)
        try:
            assert await store.commit([Put(record("t1"), 0)])
            async with coredis.Redis.from_url(server.url) as redis:
                (token_key,) = [k async for k in redis.scan_iter(match="p:done:*")]
                assert 0 < await redis.pttl(token_key) <= 10_000
            token = token_key.decode().removeprefix("p:done:")
            broke = StoreUnavailable("the connection broke")
            assert await store._applied(token, broke)  # it was: the commit counts as made
            assert not await store._applied("0" * 32, broke)  # never ran: nothing written
            server.kill()
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="whether that commit was applied"):
                await store._applied(token, broke)
            assert time.monotonic() - started < 2  # twice the connect timeout, and a little
        finally:
            await store.aclose()

    with RedisServer() as server:
        anyio.run(scenario, server)


def test_an_unreachable_redis_is_named_without_its_password() -> None:
    async def scenario() -> None:
        server = RedisServer()  # a free port, nobody listening on it
        store = RedisStore(f"redis://:sekrit@127.0.0.1:{server.port}/0", connect_timeout=0.5)
        try:
            with pytest.raises(StoreUnavailable) as failure:
                await store.read(Reads(task_id="t1"))
            message = str(failure.value)
            assert f"redis://:***@127.0.0.1:{server.port}/0" in message
            assert "sekrit" not in message
            assert isinstance(failure.value.__cause__, ConnectionRefusedError)
        finally:
            await store.aclose()
            server.remove()

    anyio.run(scenario)


def test_a_closed_store_refuses_calls_and_closes_twice(redis_url: str) -> None:
    async def scenario() -> None:
        store = RedisStore(redis_url, prefix=unique_prefix())
        assert await store.commit([Put(record("t1"), 0)])
        await store.aclose()
        await store.aclose()
        with pytest.raises(StoreUnavailable, match="is closed"):
            await store.read(Reads(task_id="t1"))

    anyio.run(scenario)
    never_used = RedisStore(redis_url)
    never_used.close()
    never_used.close()


def test_one_store_serves_one_loop_after_another(redis_url: str) -> None:
    """Each loop gets connections of its own: asyncio, then trio, then asyncio again."""
    store = RedisStore(redis_url, prefix=unique_prefix())

    async def write(n: int) -> None:
        assert await store.commit([Put(record(f"t{n}"), 0)])
        page = (await store.read(Reads(listing=ListQuery(ALICE, 10)))).page
        assert page is not None
        assert page.total == n + 1

    for n, loop in enumerate(("asyncio", "trio", "asyncio")):
        anyio.run(write, n, backend=loop)
    store.close()


# --- durability ----------------------------------------------------------------------------------


def test_acknowledged_writes_survive_a_killed_redis_with_its_append_only_file() -> None:
    async def write(store: RedisStore) -> None:
        first = attrs.evolve(record("t1"), seq=1, messages=(("m1", "f"),))
        assert await store.commit([Put(first, 0, (LoggedEvent(1, first.task),), (("c", 1),))])
        done = attrs.evolve(bump(first, at=1, state=TaskState.COMPLETED), seq=2)
        assert await store.commit([Put(done, 1, (LoggedEvent(2, done.task),))])

    async def check(store: RedisStore) -> None:
        found = await store.read(
            Reads(
                task_id="t1",
                message=MessageKey(ALICE, "m1"),
                log=LogQuery("t1", 0),
                listing=ListQuery(ALICE, 10, state=TaskState.COMPLETED),
            )
        )
        assert found.task is not None
        assert found.task.version == 2
        assert found.by_message == found.task
        assert [e.seq for e in found.log] == [1, 2]
        assert found.page is not None
        assert [r.id for r in found.page.records] == ["t1"]
        assert await claimed_notifications(store) == [("t1", "c", 1, 0)]

    with RedisServer(durable=True) as server:
        store = RedisStore(server.url, prefix="p")
        anyio.run(write, store)
        server.kill()  # SIGKILL: nothing flushed on the way out
        server.start()
        anyio.run(check, store)
        store.close()


# --- URLs ---------------------------------------------------------------------------------------


def test_the_url_forms_reach_their_redis(redis_url: str) -> None:
    """A TCP URL's database and options, and a Unix socket's (a server with no TCP port)."""

    async def use(url: str, database_url: str, other_database_url: str) -> None:
        store = open_store(url)
        assert isinstance(store, RedisStore)
        try:
            assert await store.commit([Put(record("t1"), 0)])
            assert (await store.read(Reads(task_id="t1"))).task is not None
            async with raw(database_url) as client:
                assert await client.exists([store.key("t1")]) == 1
            async with raw(other_database_url) as client:
                assert await client.exists([store.key("t1")]) == 0
        finally:
            await store.aclose()

    base = redis_url.rsplit("/", 1)[0]
    prefix = unique_prefix()
    tcp = open_store(f"{base}/3?prefix={prefix}&lease=2")
    assert isinstance(tcp, RedisStore)
    assert (tcp.prefix, tcp.lease) == (prefix, 2.0)
    anyio.run(use, f"{base}/3?prefix={prefix}&lease=2", f"{base}/3", f"{base}/0")
    with RedisServer(unix_socket=True) as server:
        assert server.port == 0
        socket = f"unix://{server.unix_socket}"
        anyio.run(use, f"{socket}?db=2&prefix=sock", f"{socket}?db=2", f"{socket}?db=0")
