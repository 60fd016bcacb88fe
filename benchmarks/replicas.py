"""Replicas of our server on one Redis (issue 15), beside the a2a-sdk's cluster mode.

    python -m benchmarks.replicas [--quick] [--only latency,throughput,memory] [--out FILE]

Starts its own ``redis-server`` (a free port of 127.0.0.1, ``--save "" --appendonly no``, never
the machine's own Redis), three replicas of our asyncio server on it
(``python -m benchmarks.servers.ours PORT asyncio redis://127.0.0.1:PORT/0``, each a process of
its own), our server alone on SQLite and on memory, and two or three a2a-sdk servers in its
cluster mode sharing one SQLite file (``python -m benchmarks.servers.sdk PORT cluster:FILE``),
and measures:

1. **cross-replica latency**: a task runs on replica A, whose agent sends artifact updates a few
   milliseconds apart, each stamped with the ``time.monotonic_ns()`` it was made at (Linux's
   ``CLOCK_MONOTONIC`` is the machine's, the same in every process); a client holds an SSE
   stream (SubscribeToTask) on replica B and takes each update's arrival minus its stamp. The
   same for two SDK servers, A running the task and B streaming it, with the SDK's default
   poll (0.5 s) and polling every 10 ms. Beside them, the floor under ours: a bare PUBLISH from
   one process to a subscriber in another on the same Redis, as many messages as far apart,
   with coredis at both ends (what our replicas use) and with raw RESP on plain sockets
   (``benchmarks.doorbell``);
2. **throughput of blocking sends** (the echo agent completes at once) at a fixed concurrency,
   round-robin over 1, 2 and 3 replicas (request ``n`` to replica ``n mod R``), and our single
   server on SQLite (``synchronous=FULL``) and on memory, each store holding the tasks of part 3
   first; with the CPU each process used during each run (from ``/proc/PID/stat``), and the whole
   machine's (from ``/proc/stat``: what other processes took);
3. **memory per task in Redis**: Redis's ``used_memory`` before and after ``N`` echo tasks (a
   user message, an artifact, three events) sent through the replicas, per task, and
   ``MEMORY USAGE`` of one task's own keys; beside it, the SQLite file per task of the same
   tasks.

Prints a table, each figure with the command that measures it, then the CPU each process used,
and writes it all to ``benchmarks/results/replicas.json`` unless ``--out`` says otherwise.
``--quick`` shrinks every count so that a run takes seconds (``benchmarks.run``'s smoke test
uses it; its figures mean little). ``benchmarks.run`` runs it as its ``replicas`` scenario.
"""

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import coredis
import httpx

from benchmarks import calls, doorbell
from benchmarks.harness import (
    Launch,
    Served,
    cpu_seconds,
    figure,
    free_port,
    machine_busy_seconds,
    processes,
    rpc_body,
    stored_bytes,
    target_report,
    write_results,
)
from benchmarks.load import http_request
from tests.a2a_adapters.redis_server import RedisServer

THEIRS = "a2a-sdk"
#: The key prefix our replicas use (``RedisStore``'s default).
PREFIX = "a2a"
COMMAND = "python -m benchmarks.replicas --only {part}"
PARTS = ("latency", "throughput", "memory")
#: Poll intervals of the SDK's event stream measured: its default, and a short one.
SDK_POLLS: dict[str, float | None] = {"default": None, "10ms": 0.01}
TICK = re.compile(rb"tick:(\d+):(\d+);")


class Sizes:
    """Counts and time limits of one run (``quick`` shrinks them all)."""

    def __init__(self, quick: bool) -> None:
        self.quick = quick
        #: Updates of the latency task, how far apart, after how long a wait (for the stream
        #: on B to be open), in ms.
        self.ticks = 20 if quick else 500
        self.spacing_ms = 5 if quick else 10
        self.delay_ms = 300 if quick else 500
        self.concurrency = 32
        self.requests = 200 if quick else 200_000
        self.seconds = 0.3 if quick else 10.0
        # Quick starts two replicas (a start is about a second of CPU each).
        self.replicas = (1, 2) if quick else (1, 2, 3)
        #: Tasks stored for the memory figures (and in every store before its throughput run).
        self.stored = 100 if quick else 10_000


Row = dict[str, Any]


def row(benchmark: str, unit: str, part: str, **values: Any) -> Row:
    """One line of the table: ``values`` maps a column to its figure."""
    command = COMMAND.format(part=part)
    return {"benchmark": benchmark, "unit": unit, "table": "replicas", "command": command, **values}


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which ``fraction`` of the sorted ``values`` fall."""
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(fraction * len(values)))]


# --- 1. cross-replica latency -----------------------------------------------------------------


async def _send_ticks(url: str, sizes: Sizes) -> str:
    """Start a ticks task on the server at ``url`` (returnImmediately); return its id."""
    message_id = f"ticks-{sizes.ticks}-{sizes.delay_ms}-{sizes.spacing_ms}-{uuid.uuid4()}"
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "tick"}]}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    async with httpx.AsyncClient(timeout=30) as client:
        sent = await client.post(
            url + "/", json=rpc_body("SendMessage", params), headers=calls.A2A_HEADERS
        )
    task_id: str = sent.json()["result"]["task"]["id"]
    return task_id


class _NotStreaming(Exception):
    """The server answered the subscription with something other than an event stream."""


async def _stream_ticks(port: int, task_id: str) -> dict[int, tuple[int, int]]:
    """Hold a SubscribeToTask stream on the server at ``port`` until it ends; return each tick's
    number -> (its stamp, when it arrived), both ``time.monotonic_ns()``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        body = json.dumps(rpc_body("SubscribeToTask", {"id": task_id}, str(uuid.uuid4())))
        headers = {**calls.A2A_HEADERS, "Accept": "text/event-stream"}
        writer.write(http_request("POST", "/", body.encode(), headers))
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200") or b"chunked" not in head.lower():
            raise _NotStreaming(head[:200].decode(errors="replace"))
        ticks: dict[int, tuple[int, int]] = {}
        pending = b""
        first = True
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                return ticks
            data = await reader.readexactly(size)
            arrived = time.monotonic_ns()
            await reader.readexactly(2)
            if first and b'"error"' in data:
                raise _NotStreaming(data[:200].decode(errors="replace"))
            first = False
            pending += data
            end = 0
            for match in TICK.finditer(pending):
                # The task a stream starts with may hold the latest tick again: the first
                # arrival of each counts.
                ticks.setdefault(int(match[1]), (int(match[2]), arrived))
                end = match.end()
            pending = pending[end:][-256:]
    finally:
        writer.close()


async def cross_replica(a: Served, b: Served, sizes: Sizes) -> dict[str, Any]:
    """One ticks task run on ``a`` and streamed on ``b``: the latency of each update, from
    the agent making it on A to its arrival on B's stream."""
    task_id = await _send_ticks(a.url, sizes)
    # The stream must be open before the first tick (the agent waits delay_ms): a server that
    # does not know the task yet (the SDK's B before A saved it) is asked again.
    deadline = time.monotonic() + sizes.delay_ms / 2000
    while True:
        try:
            with anyio.fail_after(60):
                ticks = await _stream_ticks(b.port, task_id)
            break
        except _NotStreaming as refused:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{b.name} would not stream {task_id}: {refused}") from None
            await asyncio.sleep(0.01)
    latencies = sorted((arrived - made) / 1e6 for made, arrived in ticks.values())
    stamps = sorted(made for made, _ in ticks.values())
    return {
        "from": a.name,
        "to": b.name,
        "updates": sizes.ticks,
        "received": len(ticks),
        "complete": len(ticks) == sizes.ticks,
        "spacing_ms": sizes.spacing_ms,
        # How long the agent took to make them all: more than updates x spacing means it
        # waited on its own server.
        "produced_over_s": (stamps[-1] - stamps[0]) / 1e9 if len(stamps) > 1 else 0.0,
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "max_ms": latencies[-1] if latencies else float("nan"),
        "min_ms": latencies[0] if latencies else float("nan"),
    }


def _latency(a: Served, b: Served, sizes: Sizes) -> dict[str, Any]:
    result = asyncio.run(cross_replica(a, b, sizes))
    if not result["complete"]:
        raise RuntimeError(f"{a.name} -> {b.name} lost updates: {result}")
    return result


# --- 2. throughput ----------------------------------------------------------------------------


def throughput(
    label: str, servers: Sequence[Served], redis: int | None, sizes: Sizes
) -> dict[str, Any]:
    """Blocking sends round-robin over ``servers``; the cores each process used meanwhile."""
    pids = {s.name: s.process.pid for s in servers}
    if redis is not None:
        pids["redis"] = redis
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    client_before, busy_before = cpu_seconds(), machine_busy_seconds()
    started = time.monotonic()
    result = calls.sends(
        [s.url for s in servers],
        concurrency=sizes.concurrency,
        count=sizes.requests,
        max_seconds=sizes.seconds,
    )
    wall = time.monotonic() - started
    cores = {name: (cpu_seconds(pid) - before[name]) / wall for name, pid in pids.items()}
    client = (cpu_seconds() - client_before) / wall
    busy = (machine_busy_seconds() - busy_before) / wall
    if result.errors:
        raise RuntimeError(f"{label}: {result.errors} failed sends: {result.first_error}")
    replicas = sum(cores[s.name] for s in servers)
    return {
        "label": label,
        "servers": len(servers),
        "load": result.summary(),
        "rps": result.rps,
        "p50_ms": result.percentile(0.5),
        "p99_ms": result.percentile(0.99),
        "cores": {
            "servers": replicas,
            "each_server": [cores[s.name] for s in servers],
            "redis": cores.get("redis", 0.0),
            "load_client": client,
            "others": busy - replicas - cores.get("redis", 0.0) - client,
            "machine": busy,
        },
    }


# --- 3. memory --------------------------------------------------------------------------------


async def _redis_figures(url: str, task_id: str | None = None) -> dict[str, Any]:
    """``used_memory`` (and its dataset part) of the Redis at ``url``; with ``task_id``, also
    ``MEMORY USAGE`` of each of that task's own keys and the length of its event stream."""
    async with coredis.Redis.from_url(url, decode_responses=True) as client:
        info = await client.info("memory")
        figures: dict[str, Any] = {
            "used_memory": int(str(info["used_memory"])),
            "used_memory_dataset": int(str(info["used_memory_dataset"])),
            "keys": await client.dbsize(),
        }
        if task_id is not None:
            base = f"{PREFIX}:{{{task_id}}}"
            usage = {}
            for key in (base, base + ":ev", base + ":msg", base + ":out"):
                used = await client.memory_usage(key, samples=0)
                if used is not None:
                    usage[key.removeprefix(base) or "hash"] = used
            figures["task_keys"] = usage
            figures["task_events"] = await client.xlen(base + ":ev")
    return figures


def redis_memory(redis_url: str, replicas: Sequence[Served], sizes: Sizes) -> dict[str, Any]:
    """``sizes.stored`` echo tasks sent round-robin through the replicas: Redis's memory per
    task, and one task's own keys."""
    before = anyio.run(_redis_figures, redis_url)
    ids = calls.fill([r.url for r in replicas], sizes.stored, max_seconds=600)
    if len(ids) != sizes.stored:
        raise RuntimeError(f"stored {len(ids)} of {sizes.stored} tasks")
    after = anyio.run(_redis_figures, redis_url, ids[len(ids) // 2])
    used = after["used_memory"] - before["used_memory"]
    dataset = after["used_memory_dataset"] - before["used_memory_dataset"]
    return {
        "tasks": sizes.stored,
        "before": before,
        "after": after,
        "bytes_per_task": used / sizes.stored,
        "dataset_bytes_per_task": dataset / sizes.stored,
        "keys_per_task": (after["keys"] - before["keys"]) / sizes.stored,
        "one_task_keys": sum(after["task_keys"].values()),
    }


# --- the run ----------------------------------------------------------------------------------


def _ours(name: str, store: str) -> Launch:
    port = free_port()
    command = [sys.executable, "-m", "benchmarks.servers.ours", str(port), "asyncio", store]
    return Launch(name, command, port)


def _sdk(name: str, store: str) -> Launch:
    port = free_port()
    return Launch(name, [sys.executable, "-m", "benchmarks.servers.sdk", str(port), store], port)


def measure(sizes: Sizes, parts: Sequence[str] = PARTS) -> dict[str, Any]:
    """Run the chosen parts; return what each measured."""
    measured: dict[str, Any] = {}
    stores = "memory" in parts or "throughput" in parts
    with RedisServer() as redis, tempfile.TemporaryDirectory(prefix="a2a-bench-") as folder:
        assert redis.process is not None
        measured["redis"] = " ".join(redis._command())
        sqlite_file = Path(folder) / "tasks.db"
        launches = [_ours(f"replica {n}", redis.url) for n in sizes.replicas]
        if stores:
            launches.append(_ours("ours sqlite", f"sqlite:{sqlite_file}?synchronous=full"))
            launches.append(_ours("ours memory", "memory"))
        if "latency" in parts:
            # The SDK's first server creates the tables; the others start once it is up.
            launches.append(_sdk("sdk A", f"cluster:{Path(folder) / 'sdk.db'}"))
        measured["commands"] = _commands(launches)
        with processes(launches) as started:
            servers = {s.name: s for s in started}
            replicas = [servers[f"replica {n}"] for n in sizes.replicas]
            references = [s for s in started if s.name in ("ours sqlite", "ours memory")]
            if stores:
                # First, on the fresh Redis: its memory per task. Every store then holds as
                # many tasks before its throughput run.
                measured["memory"] = redis_memory(redis.url, replicas, sizes)
                for reference in references:
                    calls.fill(reference.url, sizes.stored, max_seconds=600)
            if "latency" in parts:
                measured["latency"] = _latencies(
                    replicas, servers["sdk A"], folder, sizes, redis.url
                )
                measured["commands"].update(measured["latency"].pop("commands"))
            if "throughput" in parts:
                measured["throughput"] = runs = []
                for count in sizes.replicas:
                    label = f"{count} replica{'s' if count > 1 else ''} on Redis"
                    runs.append(throughput(label, replicas[:count], redis.process.pid, sizes))
                for reference in references:
                    runs.append(throughput(reference.name, [reference], None, sizes))
        if stores:
            # The servers have stopped: the SQLite file is whole.
            sent = sum(
                r["load"]["requests"]
                for r in measured.get("throughput", ())
                if r["label"] == "ours sqlite"
            )
            tasks = sizes.stored + sent
            size = stored_bytes(sqlite_file)
            measured["sqlite_file"] = {
                "tasks": tasks,
                "bytes": size,
                "bytes_per_task": size / tasks if size else None,
            }
    return measured


def _latencies(
    replicas: Sequence[Served], sdk_a: Served, folder: str, sizes: Sizes, redis_url: str
) -> dict[str, Any]:
    """Ours from the first replica to the second; the SDK's from A to a B of each poll; the
    bare doorbell on the same Redis, through coredis and through raw sockets."""
    found: dict[str, Any] = {"ours": _latency(replicas[0], replicas[1], sizes)}
    for client in doorbell.CLIENTS:
        found[f"doorbell {client}"] = doorbell.floor(
            redis_url, client, sizes.ticks, sizes.spacing_ms
        )
    launches = [
        _sdk(f"sdk B ({poll})", f"cluster:{Path(folder) / 'sdk.db'}" + _poll(value))
        for poll, value in SDK_POLLS.items()
    ]
    with processes(launches) as sdk_b:
        for poll, b in zip(SDK_POLLS, sdk_b, strict=True):
            found[f"{THEIRS} {poll}"] = _latency(sdk_a, b, sizes)
    found["commands"] = _commands(launches)
    return found


def _commands(launches: list[Launch]) -> dict[str, str]:
    return {launch.name: " ".join(["python", *launch.command[1:]]) for launch in launches}


def _poll(value: float | None) -> str:
    return "" if value is None else f"?poll={value}"


def rows(measured: dict[str, Any], sizes: Sizes) -> list[Row]:
    """The table's lines from what :func:`measure` found."""
    found: list[Row] = []
    latency = measured.get("latency")
    if latency:
        ours, sdk = latency["ours"], latency[f"{THEIRS} default"]
        label = f"cross-replica latency ({sizes.ticks} updates, {sizes.spacing_ms} ms apart)"
        for name in ("p50", "p99"):
            figures = {"ours": ours[f"{name}_ms"], THEIRS: sdk[f"{name}_ms"]}
            found.append(row(f"{label} {name}", "ms", "latency", **figures))
        found[-2]["detail"] = latency
        fast = latency[f"{THEIRS} 10ms"]
        for name in ("p50", "p99"):
            label = f"… {name}, the SDK polling every 10 ms"
            found.append(row(label, "ms", "latency", **{THEIRS: fast[f"{name}_ms"]}))
        for client, what in (
            ("coredis", "coredis"),
            ("raw", "raw sockets"),
            ("coredis+raw", "coredis publishing, a raw socket subscribed"),
            ("raw+coredis", "a raw socket publishing, coredis subscribed"),
            ("coredis+bus", "coredis publishing, our bus's subscriber"),
        ):
            bare = latency[f"doorbell {client}"]
            label = f"… p50, a bare PUBLISH to a subscriber: {what}"
            found.append(row(label, "ms", "latency", ours=bare["p50_ms"], detail=bare))
    for run in measured.get("throughput", []):
        label = f"blocking send c={sizes.concurrency}, {run['label']}"
        found.append(row(label, "req/s", "throughput", ours=run["rps"], detail=run))
        for name in ("p50", "p99"):
            found.append(row(f"… {name}", "ms", "throughput", ours=run[f"{name}_ms"]))
    memory = measured.get("memory")
    if memory:
        label = f"Redis used_memory per settled task ({memory['tasks']:,})"
        found.append(row(label, "bytes", "memory", ours=memory["bytes_per_task"], detail=memory))
        label = "MEMORY USAGE of one task's own keys"
        found.append(row(label, "bytes", "memory", ours=memory["one_task_keys"]))
    sqlite = measured.get("sqlite_file")
    if sqlite:
        label = f"SQLite file per task, the same tasks ({sqlite['tasks']:,})"
        found.append(row(label, "bytes", "memory", ours=sqlite["bytes_per_task"], detail=sqlite))
    return found


def targets(found: list[Row]) -> list[dict[str, Any]]:
    """Issue 15's goal: a cross-replica p50 under 2 ms."""
    p50 = next((r for r in found if r["benchmark"].startswith("cross-replica latency")), None)
    if p50 is None:
        return []
    value = p50["ours"]
    return [
        {
            "target": "cross-replica latency p50, ms",
            "measured": value,
            "goal": "< 2",
            "met": value < 2,
        }
    ]


def report(found: list[Row]) -> str:
    """The table: each figure, ours/sdk where both were measured, and its command."""
    head = f"| {'benchmark':<58} | {'unit':<5} | {'ours':>8} | {THEIRS:>8} | ours/sdk | command"
    lines = [head, "|" + "|".join("-" * len(p) for p in head.split("|")[1:]) + "|"]
    for r in found:
        ours, theirs = r.get("ours"), r.get(THEIRS)
        ratio = f"{ours / theirs:.3f}x" if ours is not None and theirs else "-"
        lines.append(
            f"| {r['benchmark']:<58} | {r['unit']:<5} | {figure(ours):>8} | "
            f"{figure(theirs):>8} | {ratio:>8} | `{r['command']}`"
        )
    return "\n".join(lines)


def cpu_report(found: list[Row]) -> str:
    """The cores each process used during each throughput run (CPU seconds per second), and the
    servers' CPU time per send."""
    head = (
        "| setup | req/s | servers (each) | server CPU per send, ms | redis | load client "
        "| other processes | machine |"
    )
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in found:
        run = r.get("detail")
        if r["unit"] != "req/s" or not run:
            continue
        c = run["cores"]
        each = " + ".join(f"{v:.2f}" for v in c["each_server"])
        servers = f"{c['servers']:.2f}" + (f" ({each})" if len(c["each_server"]) > 1 else "")
        per_send = c["servers"] / run["rps"] * 1000 if run["rps"] else float("nan")
        lines.append(
            f"| {run['label']} | {run['rps']:,.0f} | {servers} | {per_send:.2f} | "
            f"{c['redis']:.2f} | {c['load_client']:.2f} | {c['others']:.2f} | {c['machine']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke run")
    parser.add_argument("--only", default=",".join(PARTS), help="latency, throughput, memory")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/replicas.json"))
    args = parser.parse_args(argv)
    parts = args.only.split(",")
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown part {sorted(unknown)[0]!r}: expected {', '.join(PARTS)}")
    sizes = Sizes(args.quick)
    started = time.monotonic()
    found = run(sizes, parts)
    print(report(found))
    print()
    print(cpu_report(found))
    judged = targets(found)
    print(target_report(judged))
    return write_results(args.out, started=started, quick=args.quick, rows=found, targets=judged)


def run(sizes: Sizes, parts: Sequence[str] = PARTS) -> list[Row]:
    """Measure the chosen parts; the table's lines (their details hold everything measured)."""
    measured = measure(sizes, parts)
    found = rows(measured, sizes)
    if found:
        found[0]["setup"] = {"commands": measured["commands"], "redis": measured["redis"]}
    return found


if __name__ == "__main__":
    main()
