"""How our stores' latencies grow with the tasks they hold (issue 18's scaling table).

    python -m benchmarks.scaling [--sizes 1000,100000,1000000] [--stores memory,sqlite]
                                 [--repeat N] [--quick] [--out FILE]
    python -m benchmarks.scaling --gets [--sizes …]

For each store and size, a fresh process fills the store with that many settled tasks, then
times a read of one task (get), a status change that moves a task in the listing order (save),
the first page of the owner's listing (list, 50 tasks with their count) and a blocking
SendMessage through the engine's whole request path short of HTTP (``Engine.handle``, the echo
agent run, its answer rendered). The memory store's get and save are timed twice: on random
tasks, and on settled tasks outside its young window (the latest settled tasks, kept as
objects, which a quarter of random picks find at a thousand tasks and almost none at a
million), so that the growth of a compacted task's read shows apart from the young window's
share. ``memory`` is the in-memory store (``MemoryStore``), ``sqlite``
a ``SqliteStore`` file at ``synchronous=NORMAL`` in the temporary directory. Each process's
figure is the median of five rounds' means, and each figure of the table the median of
``--repeat`` such processes (3 unless told), the sizes taken in turn, smallest first and then
largest first: on a machine whose speed drifts over minutes (a shared one), a drift weighs on
every size alike instead of on the size measured last. A row is flat when its largest size
costs at most 1.2 times its smallest (issue 18's target); the table says which rows are.
``--gets`` isolates the memory store's get: in one process, for each size, with the store's
young tasks (``MemoryTasks.YOUNG``) and with none, the best of three passes over the same
random gets (it prints one JSON line a size). ``--quick`` measures small sizes in seconds,
once each (the smoke test uses it: its figures mean little). Writes the JSON to
``benchmarks/results/scaling.json`` unless ``--out`` says otherwise.
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.inprocess import (
    BUDGET,
    ROUNDS,
    _ours_figures,
    _ours_records,
    _Records,
    _send_body,
    fill_in_batches,
)

SIZES = (1_000, 100_000, 1_000_000)
#: (Larger than the memory store's young window, so that each holds settled tasks.)
QUICK_SIZES = (300, 2_000)
STORES = ("memory", "sqlite")
#: The largest size may cost this much more than the smallest, per operation.
FLAT = 1.2
#: Blocking sends timed per size (in rounds), and the calls of each store operation.
SENDS = 1_000
OPS = 2_000
#: Message ids of the timed sends start here, past those of the stored tasks (a send with a
#: stored task's id and text would be a re-send of it, which runs nothing).
FIRST_SEND = 10**9
DEFAULT_OUT = Path(__file__).parent / "results" / "scaling.json"
#: Processes measured per store and size (their figures' median is the table's).
REPEAT = 3


async def _send_latency(store: Any, sends: int) -> float:
    """Microseconds per blocking send through ``Engine.handle`` on ``store``."""
    import anyio

    from a2a_core.transport import HttpRequest
    from benchmarks.servers.ours import engine

    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    server = engine(store)
    means: list[float] = []
    async with anyio.create_task_group() as group:
        await group.start(server.run)
        per_round = max(1, sends // ROUNDS)
        n = FIRST_SEND
        for _ in range(ROUNDS):
            started = time.perf_counter()
            for _ in range(per_round):
                request = HttpRequest("POST", "/", headers, _send_body(n))
                response = await server.handle(request, "http://bench")
                assert b"TASK_STATE_COMPLETED" in getattr(response, "body", b""), response
                n += 1
            means.append((time.perf_counter() - started) / per_round)
        await server.aclose()
    return statistics.median(means) * 1e6


def measure(store_name: str, count: int, sends: int, ops: int) -> dict[str, Any]:
    """One store holding ``count`` settled tasks: its figures (run in a process of its own)."""
    from a2a_adapters.stores import MemoryStore, SqliteStore

    records = _ours_records(count)
    with tempfile.TemporaryDirectory(prefix="a2a-scaling-") as folder:
        store: Any = (
            MemoryStore()
            if store_name == "memory"
            else SqliteStore(Path(folder) / "tasks.db", synchronous="NORMAL")
        )
        filled: dict[str, float] = {}

        async def fill() -> None:
            await fill_in_batches(store, records, filled)

        async def run() -> dict[str, Any]:
            figures = await _ours_figures(store, records, fill, ops)
            if store_name == "memory":
                figures |= await _settled_figures(store, records, ops)
            figures["send_us"] = await _send_latency(store, sends)
            return figures

        try:
            result = asyncio.run(run())
        finally:
            if store_name == "sqlite":
                store.close()
    if store_name == "memory":
        result["dict_ns"] = _dict_read_ns(count, ops)
    return {"store": store_name, **result, **filled}


async def _settled_figures(store: Any, records: _Records, ops: int) -> dict[str, float]:
    """The memory store's get and save of settled tasks alone: tasks outside its young window
    (``MemoryTasks.YOUNG``, the latest settled tasks, kept as objects) and not saved by the
    figures before. At a thousand tasks a quarter of random picks are young, which a get reads
    without decoding; at a million one in four thousand. These figures compare like with like
    across sizes: what a read of a compacted task costs as the store grows."""
    import random
    from datetime import timedelta

    from a2a_core.store import MemoryTasks, Reads
    from benchmarks.inprocess import EPOCH, _timed

    count = len(records)
    old = [n for n in range(count - MemoryTasks.YOUNG) if not records.changed(n)]
    if not old:
        return {}  # a store smaller than its young window (--quick's smallest)
    picks = random.sample(old, min(ops, len(old)))
    reads = [Reads(task_id=f"t-{n}") for n in picks]
    # (A day after the figures before: every save moves its task to the newest.)
    puts = records.status_changes(picks, EPOCH + timedelta(days=2))

    async def get(i: int) -> None:
        await store.read(reads[i])

    async def save(i: int) -> None:
        assert await store.commit(puts[i])

    return {
        "get_settled_us": await _timed(get, len(picks), BUDGET) * 1e6,
        "save_settled_us": await _timed(save, len(picks), BUDGET) * 1e6,
    }


def memory_gets(count: int, young: int, gets: int = 30_000, passes: int = 3) -> float:
    """Microseconds per get of a random task from a ``MemoryTasks`` holding ``count`` settled
    tasks, ``young`` of them kept as objects: the best of ``passes`` over the same gets."""
    import random

    from a2a_core.store import MemoryTasks, Put, Reads

    tasks = MemoryTasks()
    tasks.YOUNG = young
    records = _ours_records(count)
    for first in range(0, count, 10_000):
        for record in records.batch(first, min(10_000, count - first)):
            assert tasks.commit([Put(record, 0)])
    reads = [Reads(task_id=f"t-{random.randrange(count)}") for _ in range(gets)]
    best = float("inf")
    for _ in range(passes):
        started = time.perf_counter()
        for read in reads:
            tasks.read(read)
        best = min(best, (time.perf_counter() - started) / gets)
    return best * 1e6


def _dict_read_ns(count: int, ops: int) -> float:
    """Nanoseconds per read of a random key of a plain dict holding ``count`` small entries:
    the floor of any lookup by id, which grows with the size too (past the CPU's caches, a read
    of a random entry misses them), so that the memory store's growth has a reference."""
    import random

    table = {f"t-{n}": n for n in range(count)}
    keys = [f"t-{random.randrange(count)}" for _ in range(ops * 50)]
    means = []
    for round_ in range(ROUNDS):
        chunk = keys[round_::ROUNDS]
        started = time.perf_counter()
        for key in chunk:
            table[key]
        means.append((time.perf_counter() - started) / len(chunk))
    return statistics.median(means) * 1e9


OPERATIONS = {
    "get_us": "get one task",
    "save_us": "save a status change",
    "list_us": "list a page (50, with the count)",
    "send_us": "blocking send, engine to answer",
}
#: The memory store's operations on settled tasks outside its young window, judged too.
SETTLED = {
    "get_settled_us": "get one task, settled (not young)",
    "save_settled_us": "save a status change, settled (not young)",
}
#: Figures shown beside a store's as a reference, not judged (the memory store's only).
REFERENCES = {"dict_ns": "reference: a dict's random read, ns (no store)"}


def medians(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per store and size, the median of each figure over the processes that measured it."""
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for run in runs:
        grouped.setdefault((run["store"], run["tasks"]), []).append(run)
    found = []
    for (store, tasks), measured in grouped.items():
        keys = [k for k, v in measured[0].items() if isinstance(v, float)]
        figures = {k: statistics.median(m[k] for m in measured) for k in keys}
        found.append({"store": store, "tasks": tasks, **figures})
    return found


def rows(found: list[dict[str, Any]], sizes: tuple[int, ...]) -> list[dict[str, Any]]:
    """One row per store and operation: its µs at each size, and largest/smallest."""
    table = []
    for store in STORES:
        by_size = {f["tasks"]: f for f in found if f["store"] == store}
        if not by_size:
            continue
        for key, label in (OPERATIONS | SETTLED | REFERENCES).items():
            figures = {size: by_size[size][key] for size in sizes if key in by_size.get(size, {})}
            if not figures:
                continue
            smallest, largest = figures[min(figures)], figures[max(figures)]
            growth = largest / smallest
            table.append(
                {
                    "store": store,
                    "operation": label,
                    "us": figures,
                    "growth": growth,
                    "flat": None if key in REFERENCES else growth <= FLAT,
                }
            )
    return table


def render(table: list[dict[str, Any]], sizes: tuple[int, ...]) -> str:
    heads = " | ".join(f"{s:,} tasks" for s in sizes)
    lines = [
        f"| store | operation, µs | {heads} | largest / smallest | flat (≤ {FLAT}x) |",
        "|---|---|" + "---:|" * len(sizes) + "---:|---|",
    ]
    for row in table:
        cells = " | ".join(f"{row['us'][s]:,.1f}" if s in row["us"] else "" for s in sizes)
        verdict = {True: "met", False: "missed", None: "not judged"}[row["flat"]]
        growth = f"{row['growth']:.2f}x"
        lines.append(f"| {row['store']} | {row['operation']} | {cells} | {growth} | {verdict} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="")
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--gets", action="store_true")
    args = parser.parse_args(argv)
    if args.gets:
        from a2a_core.store import MemoryTasks

        for size in tuple(int(s) for s in args.sizes.split(",")) if args.sizes else SIZES:
            figures = {
                f"young_{young}_us": memory_gets(size, young) for young in (MemoryTasks.YOUNG, 0)
            }
            print(json.dumps({"tasks": size, **figures}), flush=True)
        return {}
    if args.measure:
        store_name, count, sends, ops = args.measure
        print(json.dumps(measure(store_name, int(count), int(sends), int(ops))))
        return {}
    sizes = (
        tuple(int(s) for s in args.sizes.split(","))
        if args.sizes
        else (QUICK_SIZES if args.quick else SIZES)
    )
    sends, ops = (50, 100) if args.quick else (SENDS, OPS)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else REPEAT)
    runs: list[dict[str, Any]] = []
    for store in args.stores.split(","):
        for turn in range(repeat):
            for size in sizes if turn % 2 == 0 else sizes[::-1]:
                print(
                    f"{store}: {size:,} tasks ({turn + 1}/{repeat})…", file=sys.stderr, flush=True
                )
                command = [sys.executable, "-m", "benchmarks.scaling", "--measure"]
                command += [store, str(size), str(sends), str(ops)]
                out = subprocess.run(
                    command, check=True, capture_output=True, text=True, timeout=3600
                )
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    found = medians(runs)
    table = rows(found, sizes)
    print(render(table, sizes))
    results = {"sizes": sizes, "repeat": repeat, "measured": found, "runs": runs, "rows": table}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
