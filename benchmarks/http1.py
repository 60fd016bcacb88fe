"""HTTP/1.1 on trio: our own server (``a2a_adapters.trio._http1``) against hypercorn's trio
worker, serving the same A2A application, side by side in one run.

    python -m benchmarks.http1 [--quick] [--rounds N] [--seconds S] [--out FILE]

Starts two processes on 127.0.0.1, each the trio adapter's application (``create_app``) of the
benchmark agent (``benchmarks.servers.ours``, the echo agent on the memory store):

* ``ours``: ``a2a_adapters.trio.serve_app``, HTTP/1.1 by ``Http1Server`` on httptools
  (``python -m benchmarks.servers.ours PORT trio``);
* ``hypercorn``: ``hypercorn.trio.serve`` over HTTP/1.1 (h11) with the configuration
  ``serve_app`` gives hypercorn (``_hypercorn.hypercorn_config``) and the same limits kept by
  the middleware ``serve_app`` puts before its HTTP/2 (``trio._http2.RequestLimits``: head
  limits, body timeout), so that both do the same work
  (``python -m benchmarks.http1 --serve PORT``).

Then, with the same client (``benchmarks.load``), in rounds that alternate between the two so
that a neighbour's load weighs on both alike: blocking ``SendMessage`` and ``GET`` of the agent
card, each at concurrency 1 and 16 for the same time, giving requests per second, p50 and p99
latency (over every round's requests) and the server's CPU time per request (its threads' run
time from ``/proc``: apart from the client's share of the machine). Rates are the median of
the rounds. Prints a table with the ratio ours/hypercorn and writes it to
``benchmarks/results/http1.json`` unless ``--out`` says otherwise. ``--quick`` shrinks
everything so that a run takes seconds (its figures mean little).
"""

import argparse
import heapq
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from benchmarks import calls
from benchmarks.harness import (
    Launch,
    Served,
    figure,
    free_port,
    processes,
    run_seconds,
    write_results,
)
from benchmarks.load import LoadResult, http_request

OURS = "ours"
THEIRS = "hypercorn"
SERVERS = (OURS, THEIRS)
COMMAND = "python -m benchmarks.http1"
CARD = "/.well-known/agent-card.json"

Row = dict[str, Any]


@attrs.frozen
class Sizes:
    """How long each measurement runs (``quick``: a smoke run)."""

    quick: bool
    rounds: int
    seconds: float

    @classmethod
    def of(cls, quick: bool, rounds: int | None, seconds: float | None) -> "Sizes":
        return cls(quick, rounds or (1 if quick else 3), seconds or (0.3 if quick else 4.0))

    @property
    def concurrency(self) -> tuple[int, ...]:
        return (1, 16)

    @property
    def warm_up(self) -> int:
        return 30 if self.quick else 500


def commands(python: str) -> dict[str, tuple[list[str], int]]:
    """Each server: its command and its port."""
    ours, theirs = free_port(), free_port()
    return {
        OURS: ([python, "-m", "benchmarks.servers.ours", str(ours), "trio"], ours),
        THEIRS: ([python, "-m", "benchmarks.http1", "--serve", str(theirs)], theirs),
    }


@contextmanager
def both(launched: dict[str, tuple[list[str], int]]) -> Iterator[dict[str, Served]]:
    """Both servers, started together, until the block ends."""
    launches = [Launch(name, command, port) for name, (command, port) in launched.items()]
    with processes(launches) as started:
        yield {served.name: served for served in started}


#: A measurement: the server's URL, the concurrency, the seconds -> what the client saw.
Measure = Callable[[str, int, float], LoadResult]


def sends(url: str, concurrency: int, seconds: float) -> LoadResult:
    """Blocking SendMessage of the echo agent, each with a message id of its own."""
    return calls.sends(url, concurrency=concurrency, count=10_000_000, max_seconds=seconds)


def card_reads(url: str, concurrency: int, seconds: float) -> LoadResult:
    request = http_request("GET", CARD)
    return calls.load(
        url,
        lambda _: request,
        concurrency=concurrency,
        count=10_000_000,
        max_seconds=seconds,
        check=lambda status, _: status == 200,
    )


MEASURES: dict[str, Measure] = {"blocking SendMessage": sends, "GET agent card": card_reads}


@attrs.define
class Tally:
    """One (measure, concurrency, server) over the rounds."""

    rates: list[float] = attrs.field(factory=list)
    latencies: list[list[float]] = attrs.field(factory=list)
    requests: int = 0
    cpu_seconds: float = 0.0

    def add(self, result: LoadResult, cpu: float) -> None:
        if result.errors:
            raise RuntimeError(f"{result.errors} failed requests: {result.first_error}")
        self.rates.append(result.rps)
        self.latencies.append(result.latencies)
        self.requests += result.requests
        self.cpu_seconds += cpu

    def percentile(self, fraction: float) -> float:
        """Over every round's requests, in ms."""
        merged = list(heapq.merge(*self.latencies))
        return merged[min(len(merged) - 1, int(fraction * len(merged)))] * 1000

    def cpu_us(self) -> float:
        return self.cpu_seconds / self.requests * 1e6


def measure(sizes: Sizes) -> tuple[dict[tuple[str, int], dict[str, Tally]], dict[str, str]]:
    """Every measurement of every round, on both servers in turn (one at a time)."""
    tallies = {
        (label, level): {name: Tally() for name in SERVERS}
        for label in MEASURES
        for level in sizes.concurrency
    }
    launched = commands(sys.executable)
    setup = {name: " ".join(command[1:]) for name, (command, _) in launched.items()}
    with both(launched) as servers:
        for served in servers.values():  # connections, caches, the first tasks
            calls.sends(served.url, concurrency=16, count=sizes.warm_up, max_seconds=30)
        for round_number in range(sizes.rounds):
            # Who goes first alternates, as a machine's load may drift within a round.
            order = SERVERS if round_number % 2 == 0 else SERVERS[::-1]
            for (label, level), tally in tallies.items():
                for name in order:
                    served = servers[name]
                    before = run_seconds(served.process.pid)
                    result = MEASURES[label](served.url, level, sizes.seconds)
                    tally[name].add(result, run_seconds(served.process.pid) - before)
    return tallies, setup


def row(benchmark: str, unit: str, better: str, **values: Any) -> Row:
    return {
        "benchmark": benchmark,
        "unit": unit,
        "better": better,
        "table": "http1",
        "command": COMMAND,
        **values,
    }


def rows(tallies: dict[tuple[str, int], dict[str, Tally]], setup: dict[str, str]) -> list[Row]:
    found: list[Row] = []
    for (label, level), tally in tallies.items():
        name = f"{label} c={level}"
        rate = row(
            name, "req/s", "higher", **{k: statistics.median(t.rates) for k, t in tally.items()}
        )
        rate["rounds"] = {k: t.rates for k, t in tally.items()}
        rate["requests"] = {k: t.requests for k, t in tally.items()}
        found.append(rate)
        found.append(
            row("… p50", "ms", "lower", **{k: t.percentile(0.5) for k, t in tally.items()})
        )
        found.append(
            row("… p99", "ms", "lower", **{k: t.percentile(0.99) for k, t in tally.items()})
        )
        found.append(
            row(
                "… server CPU a request", "µs", "lower", **{k: t.cpu_us() for k, t in tally.items()}
            )
        )
    found[0]["setup"] = {"commands": setup}
    return found


def report(found: list[Row]) -> str:
    head = f"| {'benchmark':<30} | {'unit':<5} | {OURS:>8} | {THEIRS:>9} | ours/hypercorn |"
    lines = [head, "|" + "|".join("-" * len(p) for p in head.split("|")[1:-1]) + "|"]
    for r in found:
        ours, theirs = r[OURS], r[THEIRS]
        ratio = f"{ours / theirs:.2f}x" if theirs else "-"
        lines.append(
            f"| {r['benchmark']:<30} | {r['unit']:<5} | {figure(ours):>8} | {figure(theirs):>9} "
            f"| {ratio:>14} |"
        )
    return "\n".join(lines)


def serve(port: int) -> None:
    """The hypercorn side: the same application and agent as ``benchmarks.servers.ours``."""
    import os

    import trio
    from hypercorn.trio import serve as hypercorn_serve

    from a2a_adapters import trio as adapter
    from a2a_adapters._asgi import asgi_entry
    from a2a_adapters._hypercorn import hypercorn_config
    from a2a_adapters._limits import DEFAULT_LIMITS
    from a2a_adapters._serve import tune_gc
    from a2a_adapters._sockets import bind_socket
    from a2a_adapters.trio._http2 import RequestLimits
    from benchmarks.servers.ours import engine, served_store

    sock = bind_socket("127.0.0.1", port)
    tune_gc()  # as serve() does, and the other side
    app = adapter.create_app(engine(served_store("memory")))
    config = hypercorn_config(DEFAULT_LIMITS, graceful_timeout=5.0)
    config.bind = [f"fd://{os.dup(sock.fileno())}"]
    served = RequestLimits(asgi_entry(app), DEFAULT_LIMITS)
    trio.run(lambda: hypercorn_serve(served, config, mode="asgi"))  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke run")
    parser.add_argument("--rounds", type=int, help="rounds (3; quick: 1)")
    parser.add_argument("--seconds", type=float, help="seconds a measurement (4; quick: 0.3)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/http1.json"))
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve(args.serve)
        return {}
    sizes = Sizes.of(args.quick, args.rounds, args.seconds)
    started = time.monotonic()
    found = rows(*measure(sizes))
    print(report(found), flush=True)
    return write_results(args.out, started=started, quick=args.quick, rows=found, targets=[])


if __name__ == "__main__":
    main()
