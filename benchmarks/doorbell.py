"""The floor under cross-replica latency: a bare Redis doorbell from one process to another.

    python -m benchmarks.doorbell URL coredis|raw|PUB+SUB COUNT SPACING_MS

A publisher (this process) sends ``COUNT`` messages on one channel, ``SPACING_MS`` apart, each
holding the ``time.monotonic_ns()`` it was sent at; a subscriber (a process of its own, as a
replica is) takes each arrival minus its stamp. ``coredis``: both ends are coredis clients, as
our replicas' are (a PUBLISH, a PubSub's ``get_message``); ``raw``: both ends write and read
RESP on a plain anyio socket, which is what the machine and Redis cost alone; ``PUB+SUB`` names
each end's client apart (``coredis+raw``: a coredis publisher, a raw subscriber), which tells
which end the time goes to; ``bus`` is the subscriber our replicas' event bus reads with.
Both ends run on the loop our servers run on. Prints one JSON object (p50 and p99 in ms).
``benchmarks.replicas`` measures both beside our cross-replica latency: what lies between the
floors and ours is our own work on either side.
"""

import json
import statistics
import subprocess
import sys
import time
from typing import Any
from urllib.parse import urlsplit

import anyio
import coredis
from coredis.retry import NoRetryPolicy

from a2a_adapters.asyncio._server import fast_loop_factory
from a2a_adapters.stores import RedisStore

CHANNEL = "doorbell-floor"
#: The event loop our servers run on (uvloop where it is installed), at both ends.
_LOOP = {"loop_factory": fast_loop_factory()}
CLIENTS = ("coredis", "raw", "coredis+raw", "raw+coredis", "coredis+bus")


def _ends(client: str) -> tuple[str, str]:
    """The publisher's client and the subscriber's."""
    publisher, _, subscriber = client.partition("+")
    return publisher, subscriber or publisher


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 6379


async def _subscribe(url: str, client: str, count: int) -> list[float]:
    """Arrival minus stamp of ``count`` messages, in ms; says ``ready`` once subscribed."""
    latencies: list[float] = []
    if client == "coredis":
        redis = coredis.Redis.from_url(url, decode_responses=False)
        async with redis, redis.pubsub(channels=[CHANNEL], retry_policy=None) as pubsub:
            print("ready", flush=True)
            while len(latencies) < count:
                message = await pubsub.get_message(ignore_subscribe_messages=True)
                if message is not None and message["type"] == "message":
                    stamp = int(message["data"])
                    latencies.append((time.monotonic_ns() - stamp) / 1e6)
        return latencies
    if client == "bus":
        store = RedisStore(url, prefix="doorbell")
        async with await store.subscriber() as bus, anyio.create_task_group() as group:

            async def listen() -> None:
                while len(latencies) < count:
                    message = await bus.get_message()
                    latencies.append((time.monotonic_ns() - int(message["data"])) / 1e6)
                group.cancel_scope.cancel()

            group.start_soon(listen)
            await bus.subscribe(CHANNEL)
            print("ready", flush=True)
        return latencies
    stream = await anyio.connect_tcp(*_address(url))
    async with stream:
        await stream.send(b"SUBSCRIBE " + CHANNEL.encode() + b"\r\n")
        await stream.receive()  # the subscription's confirmation
        print("ready", flush=True)
        while len(latencies) < count:
            data = await stream.receive()
            arrived = time.monotonic_ns()
            # A message is *3 $7 message $N channel $M stamp: the stamp is its last line.
            for line in data.split(b"\r\n"):
                if line.isdigit():
                    latencies.append((arrived - int(line)) / 1e6)
    return latencies


async def _publish(url: str, client: str, count: int, spacing: float) -> None:
    if client == "coredis":
        async with coredis.Redis.from_url(
            url, decode_responses=False, retry_policy=NoRetryPolicy()
        ) as redis:
            for _ in range(count):
                await anyio.sleep(spacing)
                await redis.publish(CHANNEL, str(time.monotonic_ns()))
        return
    stream = await anyio.connect_tcp(*_address(url))
    async with stream:
        for _ in range(count):
            await anyio.sleep(spacing)
            stamp = str(time.monotonic_ns()).encode()
            await stream.send(b"PUBLISH " + CHANNEL.encode() + b" " + stamp + b"\r\n")
            await stream.receive()  # :1, the subscriber count


def floor(url: str, client: str, count: int, spacing_ms: int) -> dict[str, Any]:
    """A subscriber process and this process publishing: the doorbell's latency."""
    publisher, listener = _ends(client)
    command = [sys.executable, "-m", "benchmarks.doorbell", "--subscriber", url, listener]
    command.append(str(count))
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as subscriber:
        assert subscriber.stdout is not None
        if subscriber.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the {client} doorbell subscriber did not start")
        # A few more than counted, in case the first is sent before the subscription holds.
        anyio.run(_publish, url, publisher, count + 5, spacing_ms / 1000, backend_options=_LOOP)
        try:
            out, _ = subscriber.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            subscriber.kill()
            raise RuntimeError(f"the {client} doorbell subscriber missed messages") from None
    found: dict[str, Any] = json.loads(out)
    return {"client": client, "messages": count, "spacing_ms": spacing_ms, **found}


def _subscriber(url: str, client: str, count: int) -> None:
    latencies = sorted(anyio.run(_subscribe, url, client, count, backend_options=_LOOP))
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    figures = {"p50_ms": statistics.median(latencies), "p99_ms": p99, "complete": True}
    print(json.dumps(figures), flush=True)


def main(argv: list[str]) -> None:
    if argv[0] == "--subscriber":
        _subscriber(argv[1], argv[2], int(argv[3]))
    else:
        print(json.dumps(floor(argv[0], argv[1], int(argv[2]), int(argv[3]))))


if __name__ == "__main__":
    main(sys.argv[1:])
