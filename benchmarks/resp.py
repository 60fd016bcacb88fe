"""The Redis store's calls: ours (RESP2 on bare anyio sockets, ``_redis_calls``) against
coredis, the well-kept anyio client, in one run on one Redis.

    python -m benchmarks.resp [--quick] [--loop asyncio|trio|both] [--ops N] [--rounds R]
                              [--out FILE]

Starts its own ``redis-server`` (a free port of 127.0.0.1, no persistence) and sends the same
requests through each client: the store's **commit** (``EVALSHA`` of its commit script, each
call a new task with its first event, message id and indexes: what a send commits), its
**read** of a task (``EVALSHA`` of its read script), a plain **GET** of a small value, and a
list of 20,000 items read whole (**LRANGE**: a reply of many reads, where parsing shows),
one call at a time and 16 at once (16 tasks of the loop, each calling after its last reply).
The arguments are built before the clock starts, so what is timed is the client alone: the
request written, Redis's work, the reply read and parsed. One row more times the store's own
``commit()`` end to end (its arguments built, a token, the answer checked per call) against
the same steps around coredis's ``evalsha``: what the store would cost on coredis.

Each client is used as it is meant to be: ours opens up to one connection per call under way;
coredis multiplexes its calls over one connection. redis-py's asyncio client joins when it is
installed (asyncio only: it does not run on trio); it is not a dependency. On asyncio the loop is
uvloop where installed, as our servers run.

Per client and setting: calls per second (the best of ``rounds`` rounds, the clients taking
turns within each) and the median and 99th percentile of one call's latency (over every
round). Prints a table with ratios and writes ``benchmarks/results/resp.json`` unless ``--out``
says otherwise. ``--quick`` shrinks every count so that a run takes seconds (its figures mean
little).
"""

import argparse
import importlib
import importlib.util
import statistics
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import attrs
import coredis
from coredis.retry import NoRetryPolicy

from a2a_adapters.stores import RedisStore
from a2a_adapters.stores._redis import _SCRIPTS, _commit_arguments, _read_arguments
from a2a_adapters.stores._redis_calls import CallPool
from a2a_adapters.stores._redis_resp import Address, RespError, command
from a2a_core import Message, Part, Role, Task, TaskState, TaskStatus
from a2a_core.store import LoggedEvent, Owner, Put, Reads, TaskRecord
from benchmarks.harness import figure, write_results
from tests.a2a_adapters.redis_server import REDIS_SERVER, RedisServer

OURS, COREDIS, REDIS_PY = "ours", "coredis", "redis-py"
COMMAND = "python -m benchmarks.resp"
CONCURRENCY = (1, 16)
OPS = ("commit", "read", "get", "many", "store commit")
#: The items of the list the ``many`` operation reads whole (some 300 KB): a reply that takes
#: many reads, whose parsing a small reply's round trip hides.
MANY = 20_000
T0 = datetime(2026, 1, 1, tzinfo=UTC)
OWNER = Owner("alice")

Row = dict[str, Any]
#: One call of a client, on its prepared request.
Call = Callable[[Any], Awaitable[Any]]


@attrs.frozen
class Sizes:
    """How much each round does (``quick``: a smoke run)."""

    ops: int
    rounds: int
    warmup: int

    @classmethod
    def of(cls, quick: bool, ops: int, rounds: int) -> "Sizes":
        return cls(32, 1, 8) if quick else cls(ops, rounds, 200)


def redis_py() -> Any:
    """redis-py's asyncio module, if it is installed (it is not a dependency)."""
    if importlib.util.find_spec("redis") is None:
        return None
    return importlib.import_module("redis.asyncio")


def task_record(task_id: str) -> TaskRecord:
    """A task as a send creates it: its user's message, working, its first run under way."""
    message = Message(
        message_id=f"m-{task_id}",
        role=Role.USER,
        parts=(Part(text="Plan three days in Lisbon in May, with museums and food."),),
        context_id="ctx",
        task_id=task_id,
    )
    task = Task(
        id=task_id,
        context_id="ctx",
        status=TaskStatus(TaskState.WORKING, timestamp=T0),
        history=(message,),
    )
    return TaskRecord(
        task=task,
        owner=OWNER,
        version=1,
        created_at=T0,
        run=1,
        running=True,
        seq=1,
        messages=((message.message_id, "0" * 64),),
    )


def commit_writes(task_id: str) -> list[Put]:
    record = task_record(task_id)
    return [Put(record, 0, (LoggedEvent(1, record.task),))]


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def run_cell(
    call: Call, requests: Sequence[Any], concurrency: int
) -> tuple[float, list[float]]:
    """Calls per second and each call's latency (ms) of ``requests`` sent ``concurrency`` at
    a time (each of that many tasks sending its share one after another)."""
    latencies: list[float] = []

    async def worker(share: Sequence[Any]) -> None:
        for request in share:
            started = time.perf_counter()
            await call(request)
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for n in range(concurrency):
            group.start_soon(worker, requests[n::concurrency])
    return len(requests) / (time.perf_counter() - started), latencies


def _applied(reply: Any) -> bool:
    if isinstance(reply, RespError):
        raise reply
    return bool(reply)


class Contenders:
    """Each client's call for each operation, and the requests it is fed."""

    def __init__(
        self, store: RedisStore, pool: CallPool, clients: dict[str, Any], read_id: str
    ) -> None:
        self.store = store
        self.read_id = read_id
        self.pool = pool
        self.clients = clients
        self.commit_sha = _SCRIPTS["commit"][0]
        self.read_sha = _SCRIPTS["read"][0]

    def names(self) -> list[str]:
        return [OURS, *self.clients]

    def call(self, name: str, op: str) -> Call:
        pool, store = self.pool, self.store
        client: Any = self.clients.get(name)
        commit, read = self.commit_sha, self.read_sha

        async def ours_evalsha(sha: str, arguments: list[Any]) -> Any:
            return await pool.call(command("EVALSHA", sha, 0, *arguments))

        async def theirs_evalsha(sha: str, arguments: list[Any]) -> Any:
            if name == REDIS_PY:
                return await client.evalsha(sha, 0, *arguments)
            return await client.evalsha(sha, args=arguments)

        evalsha = ours_evalsha if name == OURS else theirs_evalsha

        async def commit_call(arguments: list[Any]) -> None:
            assert _applied(await evalsha(commit, arguments))  # a new task: always applied

        async def read_call(arguments: list[Any]) -> None:
            assert not isinstance(await evalsha(read, arguments), RespError)

        async def get_call(key: str) -> None:
            reply = await (pool.call(command("GET", key)) if name == OURS else client.get(key))
            assert reply == b"v" * 100

        async def store_commit(task_id: str) -> None:
            writes = commit_writes(task_id)
            if name == OURS:
                assert await store.commit(writes)
            else:  # the store's own steps, around the other client's EVALSHA
                arguments = _commit_arguments(store, writes, uuid.uuid4().hex)
                assert _applied(await evalsha(commit, arguments))

        async def many_call(key: str) -> None:
            if name == OURS:
                reply = await pool.call(command("LRANGE", key, 0, -1))
            else:
                reply = await client.lrange(key, 0, -1)
            assert len(reply) == MANY

        calls: dict[str, Call] = {
            "commit": commit_call,
            "read": read_call,
            "get": get_call,
            "many": many_call,
            "store commit": store_commit,
        }
        return calls[op]

    def requests(self, op: str, count: int, tag: str) -> list[Any]:
        """``count`` requests for ``op``, each commit's a task of its own (``tag`` apart)."""
        if op == "commit":
            return [
                _commit_arguments(self.store, commit_writes(f"{tag}-{n}"), uuid.uuid4().hex)
                for n in range(count)
            ]
        if op == "read":
            return [_read_arguments(self.store, Reads(task_id=self.read_id))] * count
        if op == "get":
            return ["bench:value"] * count
        if op == "many":
            return ["bench:many"] * max(2, count // 100)  # (each call reads 20,000 items)
        return [f"{tag}-{n}" for n in range(count)]


async def measure_loop(port: int, sizes: Sizes, loop: str) -> dict[str, Any]:
    """Every cell on this loop: per operation and concurrency, each client's figures."""
    host = "127.0.0.1"
    store = RedisStore(f"redis://{host}:{port}/0", prefix="bench", connect_timeout=5, timeout=30)
    pool = CallPool(Address(host, port), connect_timeout=5, timeout=30)
    module = redis_py() if loop == "asyncio" else None
    client = coredis.Redis(host, port, decode_responses=False, retry_policy=NoRetryPolicy())
    others: dict[str, Any] = {COREDIS: client}
    try:
        async with client:
            if module is not None:
                others[REDIS_PY] = module.Redis(host=host, port=port)
            read_id = f"read-me-{loop}"
            contenders = Contenders(store, pool, others, read_id)
            # The task every read reads, and both scripts loaded (Redis keeps them for all).
            assert await store.commit(commit_writes(read_id))
            assert (await store.read(Reads(task_id=read_id))).task is not None
            assert await pool.call(command("SET", "bench:value", b"v" * 100)) == b"OK"
            fill = "for i = 1, ARGV[1] do redis.call('RPUSH', KEYS[1], 'item:' .. i) end"
            await pool.call(command("DEL", "bench:many"))
            await pool.call(command("EVAL", fill, 1, "bench:many", MANY))
            rates: dict[tuple[str, int, str], list[float]] = {}
            latencies: dict[tuple[str, int, str], list[float]] = {}
            for round_ in range(sizes.rounds):
                for op in OPS:
                    for concurrency in CONCURRENCY:
                        names = contenders.names()
                        if round_ % 2:
                            names.reverse()  # neither always first
                        for name in names:
                            call = contenders.call(name, op)
                            tag = f"{loop}-{round_}-{op}-{concurrency}-{name}"
                            warm = contenders.requests(op, sizes.warmup, f"{tag}-warm")
                            await run_cell(call, warm, concurrency)
                            requests = contenders.requests(op, sizes.ops, tag)
                            rate, took = await run_cell(call, requests, concurrency)
                            key = (op, concurrency, name)
                            rates.setdefault(key, []).append(rate)
                            latencies.setdefault(key, []).extend(took)
            if REDIS_PY in others:
                await others[REDIS_PY].aclose()
    finally:
        await pool.aclose()
        await store.aclose()
    return {
        "names": contenders.names(),
        "cells": {
            key: {
                "ops_per_s": round(max(rates[key]), 1),
                "p50_ms": round(statistics.median(latencies[key]), 3),
                "p99_ms": round(percentile(latencies[key], 0.99), 3),
            }
            for key in rates
        },
    }


def run_loop(port: int, sizes: Sizes, loop: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if loop == "asyncio" and importlib.util.find_spec("uvloop") is not None:
        options = {"use_uvloop": True}
    result: dict[str, Any] = anyio.run(
        measure_loop, port, sizes, loop, backend=loop, backend_options=options
    )
    result["event_loop"] = "uvloop" if options else loop
    return result


LABELS = {
    "commit": "commit (EVALSHA, a new task)",
    "read": "read a task (EVALSHA)",
    "get": "GET 100 bytes",
    "many": f"LRANGE of {MANY:,} items",
    "store commit": "store.commit() end to end",
}


def rows(measured: dict[str, dict[str, Any]], setup: dict[str, Any]) -> list[Row]:
    found: list[Row] = []
    for loop, result in measured.items():
        for op in OPS:
            for concurrency in CONCURRENCY:
                at_once = "one at a time" if concurrency == 1 else f"{concurrency} at once"
                row: Row = {
                    "benchmark": f"{LABELS[op]}, {at_once}",
                    "loop": loop,
                    "event_loop": result["event_loop"],
                    "op": op,
                    "concurrency": concurrency,
                    "table": "resp",
                    "command": COMMAND,
                }
                for name in result["names"]:
                    row[name] = result["cells"][(op, concurrency, name)]
                found.append(row)
    if found:
        found[0]["setup"] = setup
    return found


def report(found: list[Row]) -> str:
    theirs = [n for n in (COREDIS, REDIS_PY) if any(n in r for r in found)]
    head = f"| {'benchmark':<44} | {'loop':<7} | {'ours ops/s':>10} |"
    for name in theirs:
        head += f" {name + ' ops/s':>13} | {'ratio':>6} |"
    head += f" {'p50 ms ours/' + '/'.join(theirs):>22} | {'p99 ms ours/' + '/'.join(theirs):>22} |"
    lines = [head, "|" + "|".join("-" * len(p) for p in head.split("|")[1:-1]) + "|"]
    for r in found:
        ours = r[OURS]
        line = f"| {r['benchmark']:<44} | {r['loop']:<7} | {figure(ours['ops_per_s']):>10} |"
        for name in theirs:
            other = r.get(name)
            rate = other["ops_per_s"] if other else None
            ratio = f"{ours['ops_per_s'] / rate:.2f}x" if rate else "-"
            line += f" {figure(rate):>13} | {ratio:>6} |"
        for part in ("p50_ms", "p99_ms"):
            each = [ours[part], *(r[n][part] if n in r else None for n in theirs)]
            text = " / ".join("-" if v is None else f"{v:.3f}" for v in each)
            line += f" {text:>22} |"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke run")
    parser.add_argument("--loop", choices=("asyncio", "trio", "both"), default="both")
    parser.add_argument("--ops", type=int, default=2000, help="calls per client and setting")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the best rate counts)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/resp.json"))
    args = parser.parse_args(argv)
    sizes = Sizes.of(args.quick, args.ops, args.rounds)
    loops = ("asyncio", "trio") if args.loop == "both" else (args.loop,)
    started = time.monotonic()
    version = subprocess.run(
        [REDIS_SERVER, "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout.split()[2]
    with RedisServer() as redis:
        measured = {loop: run_loop(redis.port, sizes, loop) for loop in loops}
    setup = {
        "redis": version.removeprefix("v="),
        "coredis": coredis.__version__,
        "redis-py": importlib.import_module("redis").__version__ if redis_py() else None,
        "ops": sizes.ops,
        "rounds": sizes.rounds,
        "concurrency": list(CONCURRENCY),
    }
    found = rows(measured, setup)
    print(report(found))
    return write_results(args.out, started=started, quick=args.quick, rows=found, targets=[])


if __name__ == "__main__":
    main()
