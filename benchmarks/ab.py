"""Two versions of our server, side by side in one run: did a change make it faster or slower?

    python -m benchmarks.ab OLD_CHECKOUT [NEW_CHECKOUT] [--rounds N] [--loop asyncio|trio]

Each checkout (a directory holding ``src/`` and ``benchmarks/``, such as a ``git worktree add``
of an older commit; the new one defaults to this one) serves from its own process on the same
machine, and the rounds alternate between them, so that a machine that is busier at one moment
than another weighs on both alike. Prints blocking sends and GetTask (c=16) per round, each with
the server process's CPU time per request (user and system, from ``/proc``): on a machine shared
with other work the rates move with the neighbours' load, the CPU a request costs much less.
"""

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from benchmarks import calls
from benchmarks.harness import Launch, Served, cpu_seconds, free_port, processes
from benchmarks.load import LoadResult

HERE = Path(__file__).resolve().parents[1]


@contextmanager
def serving(checkout: Path, loop: str) -> Iterator[Served]:
    """The checkout's benchmark server (its own code, on its own path), until the block ends."""
    port = free_port()
    env = dict(os.environ, PYTHONPATH=f"{checkout / 'src'}{os.pathsep}{checkout}")
    command = [sys.executable, "-m", "benchmarks.servers.ours", str(port), loop]
    with processes([Launch(str(checkout), command, port)], 20.0, cwd=checkout, env=env) as (
        served,
    ):
        yield served


def _measured(served: Served, run: Callable[[str], LoadResult]) -> tuple[LoadResult, float]:
    """``run``'s result against ``served``, and the server's CPU microseconds per request."""
    before = cpu_seconds(served.process.pid)
    result = run(served.url)
    used = cpu_seconds(served.process.pid) - before
    return result, used / max(result.requests, 1) * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=HERE)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--loop", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args(argv)
    checkouts = {"old": args.old.resolve(), "new": args.new.resolve()}
    with serving(checkouts["old"], args.loop) as old, serving(checkouts["new"], args.loop) as new:
        servers = {"old": old, "new": new}
        stored = {name: calls.fill(server.url, 2000) for name, server in servers.items()}
        for round_number in range(args.rounds):
            for name, server in servers.items():
                send = partial(calls.sends, concurrency=16, count=3000, max_seconds=10)
                read = partial(
                    calls.task_reads,
                    task_ids=stored[name],
                    concurrency=16,
                    count=6000,
                    max_seconds=10,
                )
                sends, send_us = _measured(server, send)
                reads, read_us = _measured(server, read)
                print(
                    f"round {round_number + 1} {name}: blocking send c=16 {sends.rps:,.0f} "
                    f"req/s ({send_us:,.0f} µs CPU each), GetTask c=16 {reads.rps:,.0f} req/s "
                    f"({read_us:,.0f} µs CPU each)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
