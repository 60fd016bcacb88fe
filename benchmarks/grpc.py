"""gRPC (issue 16): our server against the official a2a-sdk's ``grpc.aio`` server, in one run.

    python -m benchmarks.grpc [--quick] [--out FILE]

Starts, each a process of its own on 127.0.0.1: our asyncio server with gRPC on hypercorn beside
uvicorn (``python -m benchmarks.servers.ours PORT asyncio memory GRPC_PORT``), our trio server
with gRPC on its HTTP port (``… PORT trio memory PORT``), and the SDK's ``GrpcHandler`` on a
``grpc.aio`` server (``python -m benchmarks.servers.sdk_grpc PORT GRPC_PORT``), all with the
same agent (``benchmarks.servers.behaviour``), and measures over one grpcio channel each:

1. **unary SendMessage**, blocking, the echo agent (the task completes at once): one call after
   another (calls per second, p50 and p99 latency), then ``concurrency`` calls in flight;
2. **streamed events**: ``SendStreamingMessage`` of a ``fanout-N`` task, N artifact chunks, from
   its first chunk to its last (events per second, the best of a few streams);

with the CPU time each server process used per call (from ``/proc/PID/stat``). Prints a table
and writes it to ``benchmarks/results/grpc.json`` unless ``--out`` says otherwise. ``--quick``
shrinks every count so that a run takes seconds (its figures mean little).
"""

import argparse
import os
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import grpc
import httpx
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc

from benchmarks.harness import (
    Launch,
    Served,
    cpu_seconds,
    figure,
    free_port,
    processes,
    write_results,
)

THEIRS = "a2a-sdk"
COMMAND = "python -m benchmarks.grpc"
METADATA = (("a2a-version", "1.0"),)
#: Seconds a fan-out task waits before it streams (for nobody, here: the client is there).
FANOUT_DELAY = "0.2"

Row = dict[str, Any]


@attrs.frozen
class Sizes:
    """How much each part does (``quick``: a smoke run)."""

    quick: bool

    @property
    def calls(self) -> int:
        return 100 if self.quick else 3000

    @property
    def concurrency(self) -> int:
        return 16

    @property
    def events(self) -> int:
        return 200 if self.quick else 5000

    @property
    def streams(self) -> int:
        return 1 if self.quick else 3


def _servers(python: str) -> dict[str, tuple[list[str], int, int]]:
    """Each server: its command, its HTTP port, its gRPC port."""
    ours, trio, sdk = free_port(), free_port(), free_port()
    ours_grpc, sdk_grpc = free_port(), free_port()
    module = [python, "-m", "benchmarks.servers.ours"]
    return {
        "ours": ([*module, str(ours), "asyncio", "memory", str(ours_grpc)], ours, ours_grpc),
        "ours-trio": ([*module, str(trio), "trio", "memory", str(trio)], trio, trio),
        THEIRS: (
            [python, "-m", "benchmarks.servers.sdk_grpc", str(sdk), str(sdk_grpc)],
            sdk,
            sdk_grpc,
        ),
    }


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _request(text: str, message_id: str | None = None) -> Any:
    message = pb.Message(
        message_id=message_id or str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)]
    )
    return pb.SendMessageRequest(message=message)


def _grpc_target(served: Served) -> str:
    """The gRPC interface the server's card lists (its url is ``host:port``)."""
    card = httpx.get(served.url + "/.well-known/agent-card.json", timeout=5).json()
    (target,) = [i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    return str(target)


@contextmanager
def _stub(target: str) -> Iterator[Any]:
    with grpc.insecure_channel(target) as channel:
        yield a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]


def unary(stub: Any, sizes: Sizes, pid: int) -> dict[str, Any]:
    """Blocking sends one after another, then ``concurrency`` in flight."""
    for _ in range(min(200, sizes.calls)):  # warm up: connections, caches, the JIT of nothing
        stub.SendMessage(_request("warm"), metadata=METADATA, timeout=10)
    latencies: list[float] = []
    cpu = cpu_seconds(pid)
    started = time.perf_counter()
    for _ in range(sizes.calls):
        begun = time.perf_counter()
        answer = stub.SendMessage(_request("hello"), metadata=METADATA, timeout=10)
        latencies.append((time.perf_counter() - begun) * 1000)
        assert answer.task.status.state == pb.TASK_STATE_COMPLETED
    sequential = time.perf_counter() - started
    sequential_cpu = cpu_seconds(pid) - cpu

    cpu = cpu_seconds(pid)
    started = time.perf_counter()
    in_flight: list[Future[Any]] = []
    done = 0
    while done < sizes.calls:
        while len(in_flight) < sizes.concurrency and done + len(in_flight) < sizes.calls:
            in_flight.append(
                stub.SendMessage.future(_request("hello"), metadata=METADATA, timeout=30)
            )
        first = in_flight.pop(0)
        assert first.result().task.status.state == pb.TASK_STATE_COMPLETED
        done += 1
    concurrent = time.perf_counter() - started
    concurrent_cpu = cpu_seconds(pid) - cpu
    return {
        "sequential_cps": sizes.calls / sequential,
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "sequential_cpu_ms_per_call": sequential_cpu / sizes.calls * 1000,
        "concurrent_cps": sizes.calls / concurrent,
        "concurrent_cpu_ms_per_call": concurrent_cpu / sizes.calls * 1000,
    }


def streamed(stub: Any, sizes: Sizes, pid: int) -> dict[str, Any]:
    """Artifact events per second of a ``fanout-N`` stream, from its first chunk to its last."""
    rates: list[float] = []
    cpu_per_event: list[float] = []
    for _ in range(sizes.streams):
        request = _request("fan", f"fanout-{sizes.events}-{uuid.uuid4()}")
        first: float | None = None
        count = 0
        cpu = 0.0
        for event in stub.SendStreamingMessage(request, metadata=METADATA, timeout=120):
            if event.WhichOneof("payload") != "artifact_update":
                continue
            count += 1
            if first is None:
                first, cpu = time.perf_counter(), cpu_seconds(pid)
        assert first is not None
        elapsed = time.perf_counter() - first
        assert count == sizes.events, count
        rates.append((count - 1) / elapsed)
        cpu_per_event.append((cpu_seconds(pid) - cpu) / count * 1e6)
    best = max(range(len(rates)), key=rates.__getitem__)
    return {"events_per_s": rates[best], "cpu_us_per_event": cpu_per_event[best], "all": rates}


def measure(sizes: Sizes) -> dict[str, Any]:
    """Every server in turn (one at a time: none is measured while another is busy)."""
    env = {**os.environ, "A2A_BENCH_FANOUT_DELAY": FANOUT_DELAY}
    measured: dict[str, Any] = {"commands": {}}
    for name, (command, port, _) in _servers(sys.executable).items():
        measured["commands"][name] = " ".join(command[1:])
        with processes([Launch(name, command, port)], env=env) as (served,):
            pid = served.process.pid
            with _stub(_grpc_target(served)) as stub:
                measured[name] = {
                    "unary": unary(stub, sizes, pid),
                    "stream": streamed(stub, sizes, pid),
                }
    return measured


def row(benchmark: str, unit: str, **values: Any) -> Row:
    return {"benchmark": benchmark, "unit": unit, "table": "grpc", "command": COMMAND, **values}


def rows(measured: dict[str, Any], sizes: Sizes) -> list[Row]:
    names = ("ours", "ours-trio", THEIRS)

    def each(part: str, key: str) -> dict[str, Any]:
        return {name: measured[name][part][key] for name in names}

    found = [
        row("unary SendMessage, one at a time", "calls/s", **each("unary", "sequential_cps")),
        row("… p50", "ms", **each("unary", "p50_ms")),
        row("… p99", "ms", **each("unary", "p99_ms")),
        row("… server CPU per call", "ms", **each("unary", "sequential_cpu_ms_per_call")),
        row(
            f"unary SendMessage, {sizes.concurrency} in flight",
            "calls/s",
            **each("unary", "concurrent_cps"),
        ),
        row("… server CPU per call", "ms", **each("unary", "concurrent_cpu_ms_per_call")),
        row(
            f"streamed events (SendStreamingMessage, {sizes.events:,} chunks)",
            "events/s",
            **each("stream", "events_per_s"),
        ),
        row("… server CPU per event", "µs", **each("stream", "cpu_us_per_event")),
    ]
    found[0]["setup"] = {"commands": measured["commands"]}
    return found


def report(found: list[Row]) -> str:
    head = (
        f"| {'benchmark':<52} | {'unit':<8} | {'ours':>8} | {'ours-trio':>9} | {THEIRS:>8} "
        "| ours/sdk |"
    )
    lines = [head, "|" + "|".join("-" * len(p) for p in head.split("|")[1:-1]) + "|"]
    for r in found:
        ours, trio, theirs = r["ours"], r["ours-trio"], r[THEIRS]
        ratio = f"{ours / theirs:.2f}x" if theirs else "-"
        lines.append(
            f"| {r['benchmark']:<52} | {r['unit']:<8} | {figure(ours):>8} | {figure(trio):>9} "
            f"| {figure(theirs):>8} | {ratio:>8} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke run")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/grpc.json"))
    args = parser.parse_args(argv)
    sizes = Sizes(args.quick)
    started = time.monotonic()
    found = rows(measure(sizes), sizes)
    print(report(found))
    return write_results(args.out, started=started, quick=args.quick, rows=found, targets=[])


if __name__ == "__main__":
    main()
