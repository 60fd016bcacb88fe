"""Two versions of our server, side by side in one run: did a change make it faster or slower?

    python -m benchmarks.ab OLD_CHECKOUT [NEW_CHECKOUT] [--rounds N] [--loop asyncio|trio]

Each checkout (a directory holding ``src/`` and ``benchmarks/``, such as a ``git worktree add``
of an older commit; the new one defaults to this one) serves from its own process on the same
machine, and the rounds alternate between them, so that a machine that is busier at one moment
than another weighs on both alike. Prints blocking sends and GetTask (c=16) per round.
"""

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks import calls
from benchmarks.harness import free_port, run_server

HERE = Path(__file__).resolve().parents[1]


@contextmanager
def serving(checkout: Path, loop: str) -> Iterator[str]:
    """The checkout's benchmark server (its own code, on its own path), until the block ends."""
    port = free_port()
    env = dict(os.environ, PYTHONPATH=f"{checkout / 'src'}{os.pathsep}{checkout}")
    command = [sys.executable, "-m", "benchmarks.servers.ours", str(port), loop]
    yield from run_server(str(checkout), command, port, 20.0, cwd=checkout, env=env)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=HERE)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--loop", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args(argv)
    checkouts = {"old": args.old.resolve(), "new": args.new.resolve()}
    with serving(checkouts["old"], args.loop) as old, serving(checkouts["new"], args.loop) as new:
        urls = {"old": old, "new": new}
        stored = {name: calls.fill(url, 2000) for name, url in urls.items()}
        for round_number in range(args.rounds):
            for name, url in urls.items():
                sends = calls.sends(url, concurrency=16, count=3000, max_seconds=10)
                reads = calls.task_reads(
                    url, stored[name], concurrency=16, count=6000, max_seconds=10
                )
                print(
                    f"round {round_number + 1} {name}: blocking send c=16 {sends.rps:,.0f} "
                    f"req/s, GetTask c=16 {reads.rps:,.0f} req/s",
                    flush=True,
                )


if __name__ == "__main__":
    main()
