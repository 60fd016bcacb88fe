"""Run the benchmarks against our server and the official a2a-sdk, side by side.

    python -m benchmarks.run [--scenarios send,get,...] [--quick] [--out FILE]

Each server runs in its own process on 127.0.0.1 and is measured in the same run by the same
client (``benchmarks.load``). Prints every figure with the ratio ours/theirs (the ``sqlite``
scenario in a table of its own: our server on its memory store and on SQLite at
``synchronous=FULL`` and ``NORMAL``, the SDK on its SQL store; the ``replicas`` scenario,
``benchmarks.replicas``, in another: our replicas on one Redis beside the SDK's cluster mode),
then the targets of issues 7, 14 and 15 with what this run measured, and writes it all to a
JSON file (``benchmarks/results/latest.json`` unless ``--out`` says otherwise). ``--quick``
shrinks every count so that the whole run takes seconds (the smoke test uses it; its figures
mean little).
"""

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio

from benchmarks import calls, replicas
from benchmarks.fanout import fanout
from benchmarks.harness import (
    SERVERS,
    SQLITE_SERVERS,
    figure,
    run_seconds,
    server,
    serving,
    stored_bytes,
    target_report,
    write_results,
)
from benchmarks.inprocess import run_in_subprocess
from benchmarks.load import LoadResult

T = TypeVar("T")
THEIRS = "a2a-sdk"
#: The columns of the table: our two adapters, then the SDK.
COLUMNS = ("ours", "ours-trio", THEIRS)
#: The columns of the SQLite table (its rows have ``"table": "sqlite"``): our asyncio server on
#: each store, then the SDK on its SQL store, each named with its ``synchronous`` setting.
SQLITE_COLUMNS = tuple(SQLITE_SERVERS)
SDK_SQLITE = "sdk sqlite FULL"
#: Our SQLite columns, each judged against the SDK's.
OURS_SQLITE = ("ours sqlite FULL", "ours sqlite NORMAL")
#: Each column of the SQLite table -> its store in ``benchmarks.inprocess`` (benchmark, name).
SQLITE_STORES = {
    "ours memory": ("store", "ours"),
    "ours sqlite FULL": ("sqlite", "ours-full"),
    "ours sqlite NORMAL": ("sqlite", "ours-normal"),
    SDK_SQLITE: ("sqlite", "a2a-sdk"),
}


class Sizes:
    """Counts and time limits of one run (``quick`` shrinks them all)."""

    def __init__(self, quick: bool) -> None:
        self.quick = quick
        self.concurrency = (1, 16, 64)
        self.requests = 100 if quick else 3000
        self.seconds = 1.0 if quick else 10.0
        # Blocking sends (the ``send`` scenario) run for the same time on every server, as many
        # as each serves: a fixed 3,000 took ours under a second, where one hiccup of the
        # shared machine moved the p99 of its 30 slowest sends by half (0.10x to 0.17x of the
        # SDK's at c=64 in runs an hour apart), while the SDK's ran for six.
        self.send_requests = 100 if quick else 1_000_000
        self.send_seconds = 1.0 if quick else 5.0
        self.stored = 100 if quick else 10_000
        self.memory_tasks = 500 if quick else 100_000
        # The durable stores' figure of the same tasks (the SDK's SQL store fills slowly).
        self.settled_tasks = 200 if quick else 10_000
        self.store_sizes = (200, 1_000) if quick else (1_000, 100_000)
        self.core_sends = 300 if quick else 5_000
        self.fanout = (1, 10) if quick else (1, 10, 100)
        self.fanout_events = 20 if quick else 500
        # The SQLite scenario measures four servers at two levels and fills each store over
        # HTTP (the SDK's at about 70 sends/s): quick keeps each to a fraction of a second.
        self.sqlite_levels = (16, 64)
        self.sqlite_seconds = 0.3 if quick else self.seconds
        self.sqlite_stored = 50 if quick else 10_000
        self.sqlite_store_sizes = (100, 300) if quick else (1_000, 100_000)
        self.sqlite_ops = 30 if quick else 2_000
        # Replicas on one Redis, and the SDK's cluster mode (``benchmarks.replicas``).
        self.replicas = replicas.Sizes(quick)


Row = dict[str, Any]


def row(benchmark: str, unit: str, better: str, **values: Any) -> Row:
    """One line of the table: ``values`` maps a column (server) to its figure."""
    return {"benchmark": benchmark, "unit": unit, "better": better, **values}


def _load_rows(label: str, results: dict[str, LoadResult], *, latency: bool = True) -> list[Row]:
    rows = [row(f"{label}", "req/s", "higher", **{k: r.rps for k, r in results.items()})]
    if latency:
        for name, fraction in (("p50", 0.5), ("p99", 0.99)):
            figures = {k: r.percentile(fraction) for k, r in results.items()}
            rows.append(row(f"{label} {name}", "ms", "lower", **figures))
    details = {k: r.summary() for k, r in results.items()}
    rows[0]["detail"] = details
    for result in results.values():
        if result.errors:
            raise RuntimeError(f"{label}: {result.errors} failed requests: {result.first_error}")
    return rows


def run_send(sizes: Sizes) -> list[Row]:
    """Blocking sends at each concurrency, each server driven for the same time
    (``Sizes.send_seconds``), and the server's CPU time a send: what a request costs the server
    itself, apart from the load generator's share of the machine (a server that uses a whole
    core serves one send per that many microseconds)."""
    rows: list[Row] = []
    for level in sizes.concurrency:
        results = {}
        cpu = {}
        for name in SERVERS:
            with serving(name) as served:
                before = run_seconds(served.process.pid)
                result = calls.sends(
                    served.url,
                    concurrency=level,
                    count=sizes.send_requests,
                    max_seconds=sizes.send_seconds,
                )
                used = run_seconds(served.process.pid) - before
            results[name] = result
            cpu[name] = used / result.requests * 1e6 if result.requests else None
        rows += _load_rows(f"blocking send c={level}", results)
        rows.append(row(f"blocking send c={level}, server CPU a send", "µs", "lower", **cpu))
    return rows


def run_nonblocking(sizes: Sizes) -> list[Row]:
    results = {}
    for name in SERVERS:
        with server(name) as url:
            results[name] = calls.sends(
                url, concurrency=16, count=sizes.requests, max_seconds=sizes.seconds, blocking=False
            )
    return _load_rows("non-blocking send c=16", results, latency=False)


def run_get(sizes: Sizes) -> list[Row]:
    results = {}
    for name in SERVERS:
        with server(name) as url:
            ids = calls.fill(url, sizes.stored)
            results[name] = calls.task_reads(
                url, ids, concurrency=16, count=sizes.requests, max_seconds=sizes.seconds
            )
    return _load_rows(f"GetTask c=16, {sizes.stored:,} stored", results)


BARE_ROWS = {"server": "bare server, raw ASGI c=16", "framework": "bare framework route c=16"}


def run_bare(sizes: Sizes) -> list[Row]:
    rows = []
    for stack, label in BARE_ROWS.items():
        results = {}
        for name in SERVERS:
            with server(name, bare=stack) as url:
                results[name] = calls.bare(
                    url, concurrency=16, count=sizes.requests, max_seconds=sizes.seconds
                )
        rows += _load_rows(label, results, latency=False)
    return rows


def run_fanout(sizes: Sizes) -> list[Row]:
    rows = []
    for subscribers in sizes.fanout:
        figures: dict[str, Any] = {}
        details = {}
        for name in SERVERS:
            with server(name) as url:
                result = anyio.run(fanout, url, subscribers, sizes.fanout_events)
            if not result["complete"]:
                raise RuntimeError(f"{name} lost fan-out events: {result}")
            figures[name] = result["events_per_second"]
            details[name] = result
        rows.append(row(f"SSE fan-out to {subscribers}", "events/s", "higher", **figures))
        rows[-1]["detail"] = details
    return rows


def run_memory(sizes: Sizes) -> list[Row]:
    """What a stored, settled echo task costs: in memory (resident bytes), and on the durable
    stores the same tasks, sent the same way (the SQLite file's bytes, Redis's memory)."""
    results = {
        name: run_in_subprocess("memory", name, sizes.memory_tasks) for name in ("ours", THEIRS)
    }
    figures = {name: r["bytes_per_task"] for name, r in results.items()}
    label = f"memory per stored task ({sizes.memory_tasks:,})"
    rows = [row(label, "bytes", "lower", **figures, detail=results)]
    count = sizes.settled_tasks
    disk = {name: run_in_subprocess("settled-sqlite", name, count) for name in ("ours", THEIRS)}
    figures = {name: r["bytes_per_task"] for name, r in disk.items()}
    label = f"SQLite file per settled task ({count:,})"
    rows.append(row(label, "bytes", "lower", **figures, detail=disk))
    redis = run_in_subprocess("settled-redis", "ours", count)
    label = f"Redis memory per settled task ({count:,})"  # the SDK has no Redis store
    rows.append(row(label, "bytes", "lower", ours=redis["bytes_per_task"], detail=redis))
    return rows


def run_store(sizes: Sizes) -> list[Row]:
    measured = {
        (name, size): run_in_subprocess("store", name, size)
        for size in sizes.store_sizes
        for name in ("ours", THEIRS)
    }
    rows = []
    small, large = sizes.store_sizes
    for op in ("get", "save", "list"):
        for size in sizes.store_sizes:
            figures = {name: measured[name, size][f"{op}_us"] for name in ("ours", THEIRS)}
            rows.append(row(f"store {op} at {size:,} tasks", "µs", "lower", **figures))
        growth = {
            name: measured[name, large][f"{op}_us"] / measured[name, small][f"{op}_us"]
            for name in ("ours", THEIRS)
        }
        rows.append(row(f"store {op} {large:,} vs {small:,}", "x", "lower", **growth))
    return rows


def _sqlite_server(name: str, measure: Callable[[str], T]) -> tuple[T, int | None]:
    """Run ``measure`` against the named server on a fresh file; return what it measured and
    the file's bytes once the server has stopped."""
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as folder:
        path = Path(folder) / "tasks.db"
        with server(name, database=path) as url:
            measured = measure(url)
        return measured, stored_bytes(path)


def run_sqlite(sizes: Sizes) -> list[Row]:
    """Our server on SQLite (FULL, NORMAL) and on memory against the SDK on its SQL store: sends,
    reads, store latency at two sizes, bytes on disk per task."""
    rows: list[Row] = []
    for level in sizes.sqlite_levels:
        results = {}
        for name in SQLITE_COLUMNS:
            send = partial(
                calls.sends,
                concurrency=level,
                count=sizes.requests,
                max_seconds=sizes.sqlite_seconds,
            )
            results[name], _ = _sqlite_server(name, send)
        rows += _load_rows(f"blocking send c={level}", results)
    stored = sizes.sqlite_stored
    reads, disk = {}, {}

    def fill_and_read(url: str) -> LoadResult:
        ids = calls.fill(url, stored, max_seconds=900)  # the SDK fills at ~70 sends/s
        if len(ids) != stored:
            raise RuntimeError(f"filled {len(ids)} of {stored} tasks")
        return calls.task_reads(
            url, ids, concurrency=16, count=sizes.requests, max_seconds=sizes.sqlite_seconds
        )

    for name in SQLITE_COLUMNS:
        reads[name], size = _sqlite_server(name, fill_and_read)
        disk[name] = None if size is None else size / stored
    rows += _load_rows(f"GetTask c=16, {stored:,} stored", reads)
    label = f"disk per task, server after {stored:,} sends"
    rows.append(row(label, "bytes", "lower", **disk))
    rows += _sqlite_store_rows(sizes)
    for r in rows:
        r["table"] = "sqlite"
    return rows


def _sqlite_store_rows(sizes: Sizes) -> list[Row]:
    small, large = sizes.sqlite_store_sizes
    measured = {}
    for size in (small, large):
        for column, (benchmark, name) in SQLITE_STORES.items():
            extra = () if benchmark == "store" else (sizes.sqlite_ops,)
            measured[column, size] = run_in_subprocess(benchmark, name, size, *extra)
    rows = []
    for op in ("get", "save", "list"):
        for size in (small, large):
            figures = {c: measured[c, size][f"{op}_us"] for c in SQLITE_STORES}
            rows.append(row(f"store {op} at {size:,} tasks", "µs", "lower", **figures))
        growth = {
            c: measured[c, large][f"{op}_us"] / measured[c, small][f"{op}_us"]
            for c in SQLITE_STORES
        }
        rows.append(row(f"store {op} {large:,} vs {small:,}", "x", "lower", **growth))
    disk = {c: measured[c, large].get("bytes_per_task") for c in SQLITE_STORES}
    details = {c: measured[c, large] for c in SQLITE_STORES}
    rows.append(row(f"disk per task, store alone ({large:,})", "bytes", "lower", **disk))
    rows[-1]["detail"] = details
    return rows


def run_replicas(sizes: Sizes) -> list[Row]:
    """Our replicas on one Redis against the SDK's cluster mode (its rows have
    ``"table": "replicas"``): cross-replica latency, sends over 1-3 replicas, memory per task."""
    return replicas.run(sizes.replicas)


def run_core(sizes: Sizes) -> list[Row]:
    names = ("ours", THEIRS, "floor")
    results = {name: run_in_subprocess("core", name, sizes.core_sends) for name in names}
    floor = results.pop("floor")
    figures = {name: r["per_second"] for name, r in results.items()}
    calls = {name: r["calls_per_send"] for name, r in results.items()}
    return [
        row("SendMessage in process, no HTTP", "calls/s", "higher", **figures, detail=results),
        row("function calls per SendMessage, in process", "calls", "lower", **calls),
        # What any server must do for the same send, on our codec: no column of the SDK's.
        row(FLOOR_ROW, "calls/s", "higher", ours=floor["per_second"], detail=floor),
    ]


#: The floor under the core's rate (``benchmarks.inprocess.core_floor``).
FLOOR_ROW = "SendMessage in process, the floor (codec and records only)"


SCENARIOS: dict[str, Callable[[Sizes], list[Row]]] = {
    "send": run_send,
    "nonblocking": run_nonblocking,
    "get": run_get,
    "bare": run_bare,
    "fanout": run_fanout,
    "memory": run_memory,
    "store": run_store,
    "core": run_core,
    "sqlite": run_sqlite,
    "replicas": run_replicas,
}


# --- the report -------------------------------------------------------------------------------


Ratios = dict[str, tuple[str, str]]


def report(
    rows: list[Row],
    columns: tuple[str, ...] = COLUMNS,
    ratios: Ratios | None = None,
) -> str:
    """The table: each figure, and each ratio (heading -> (ours, theirs); for "lower is better"
    rows, smaller wins); ours/sdk unless told."""
    ratios = ratios if ratios is not None else {"ours/sdk": ("ours", THEIRS)}
    widths = [max(10, len(c)) for c in columns]
    ratio_widths = [max(8, len(h)) for h in ratios]
    head = f"| {'benchmark':<42} | {'unit':<8} |"
    head += "".join(f" {c:>{w}} |" for c, w in zip(columns, widths, strict=True))
    head += "".join(f" {h:>{w}} |" for h, w in zip(ratios, ratio_widths, strict=True))
    lines = [head, "|" + "|".join("-" * len(p) for p in head.split("|")[1:-1]) + "|"]
    for r in rows:
        cells = "".join(f" {figure(r.get(c)):>{w}} |" for c, w in zip(columns, widths, strict=True))
        for (ours_column, theirs_column), w in zip(ratios.values(), ratio_widths, strict=True):
            ours, theirs = r.get(ours_column), r.get(theirs_column)
            ratio = f"{ours / theirs:.2f}x" if ours is not None and theirs else "-"
            cells += f" {ratio:>{w}} |"
        lines.append(f"| {r['benchmark']:<42} | {r['unit']:<8} |{cells}")
    return "\n".join(lines)


def _issue_18(rows: list[Row], check: Callable[[str, float, str, bool], None]) -> None:
    """Issue 18's targets: ten times the SDK over HTTP with a tenth of its p99, thirty times
    (and 20,000 sends a second) in process, the trio adapter within 2x of the asyncio one."""
    for level in (16, 64):
        r = _find(rows, f"blocking send c={level}")
        if r:
            ratio = r["ours"] / r[THEIRS]
            check(f"issue 18: blocking send c={level}, ours/sdk", ratio, ">= 10", ratio >= 10)
            if r.get("ours-trio"):
                slower = r["ours"] / r["ours-trio"]
                name = f"issue 18: blocking send c={level}, asyncio/trio"
                check(name, slower, "<= 2", slower <= 2)
        p99 = _find(rows, f"blocking send c={level} p99")
        if p99:
            ratio = p99["ours"] / p99[THEIRS]
            check(f"issue 18: p99 at c={level}, ours/sdk", ratio, "<= 0.1", ratio <= 0.1)
    core = _find(rows, "SendMessage in process, no HTTP")
    if core:
        ratio = core["ours"] / core[THEIRS]
        check("issue 18: SendMessage in process, ours/sdk", ratio, ">= 30", ratio >= 30)
        rate = core["ours"]
        check("issue 18: SendMessage in process, sends/s", rate, ">= 20000", rate >= 20_000)


SQLITE_RATIOS: Ratios = {f"{c.split()[-1]}/sdk": (c, SDK_SQLITE) for c in OURS_SQLITE}


def _find(rows: list[Row], benchmark: str) -> Row | None:
    return next((r for r in rows if r["benchmark"] == benchmark), None)


def targets(rows: list[Row]) -> list[dict[str, Any]]:
    """Issue 7's targets, then issue 14's for SQLite and issue 15's for replicas, each with the
    figure this run measured (when it ran)."""
    found: list[dict[str, Any]] = []

    def check(name: str, value: float | None, goal: str, met: bool | None) -> None:
        found.append({"target": name, "measured": value, "goal": goal, "met": met})

    sqlite_rows = [r for r in rows if r.get("table") == "sqlite"]
    replica_rows = [r for r in rows if r.get("table") == "replicas"]
    rows = [r for r in rows if "table" not in r]

    # Throughput under load; at concurrency 1 a send waits on the client's round trip too.
    for level in (16, 64):
        r = _find(rows, f"blocking send c={level}")
        if r:
            ratio = r["ours"] / r[THEIRS]
            check(f"blocking send c={level}, ours/sdk", ratio, ">= 5", ratio >= 5)
    send = _find(rows, "blocking send c=16")
    get = next(
        (r for r in rows if r["benchmark"].startswith("GetTask c=16,") and r["unit"] == "req/s"),
        None,
    )
    for stack, bare_label in BARE_ROWS.items():
        bare = _find(rows, bare_label)
        for label, measured in (("blocking send", send), ("GetTask", get)):
            if bare and measured:
                # Cost per request is 1/rps: what our code adds to the bare stack's cost.
                added = bare["ours"] / measured["ours"] - 1
                name = f"{label} c=16, our cost over the bare {stack}"
                check(name, added, "<= 0.25", added <= 0.25)
    p99 = _find(rows, "blocking send c=64 p99")
    if p99:
        ratio = p99["ours"] / p99[THEIRS]
        check("p99 at c=64, ours/sdk", ratio, "<= 0.2", ratio <= 0.2)
    _issue_18(rows, check)
    memory = next((r for r in rows if r["benchmark"].startswith("memory per stored task")), None)
    if memory:
        ratio = memory["ours"] / memory[THEIRS]
        check("memory per stored task, ours/sdk", ratio, "<= 0.5", ratio <= 0.5)
    for r in rows:
        if r["benchmark"].startswith("store ") and r["unit"] == "x":
            op = r["benchmark"].split()[1]
            check(
                f"store {op}: latency at the large size / the small",
                r["ours"],
                "<= 1.2",
                r["ours"] <= 1.2,
            )
    for column in OURS_SQLITE:
        mode = column.split()[-1]
        for level in (16, 64):
            r = _find(sqlite_rows, f"blocking send c={level}")
            if r:
                ratio = r[column] / r[SDK_SQLITE]
                check(
                    f"sqlite {mode}: blocking send c={level}, ours/sdk", ratio, ">= 5", ratio >= 5
                )
        for r in sqlite_rows:
            if r["benchmark"].startswith("store ") and r["unit"] == "x":
                op = r["benchmark"].split()[1]
                name = f"sqlite {mode}: store {op} at the large size / the small"
                check(name, r[column], "<= 1.2", r[column] <= 1.2)
    found += replicas.targets(replica_rows)
    return found


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke run")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/latest.json"))
    args = parser.parse_args(argv)
    sizes = Sizes(args.quick)
    rows: list[Row] = []
    started = time.monotonic()
    for name in args.scenarios.split(","):
        print(f"running {name}…", file=sys.stderr, flush=True)
        rows.extend(SCENARIOS[name](sizes))
    found = targets(rows)
    main_rows = [r for r in rows if "table" not in r]
    sqlite_rows = [r for r in rows if r.get("table") == "sqlite"]
    if main_rows:
        print(report(main_rows))
        print()
    if sqlite_rows:
        print(report(sqlite_rows, SQLITE_COLUMNS, SQLITE_RATIOS))
        print()
    replica_rows = [r for r in rows if r.get("table") == "replicas"]
    if replica_rows:
        print(replicas.report(replica_rows))
        print()
        print(replicas.cpu_report(replica_rows))
        print()
    print(target_report(found))
    return write_results(args.out, started=started, quick=args.quick, rows=rows, targets=found)


if __name__ == "__main__":
    main()
