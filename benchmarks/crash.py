"""The crash campaign at full size: a server on a SQLite file under load, killed with SIGKILL at
random moments, restarted on the same file and checked after every kill.

    python -m benchmarks.crash [--rounds N] [--seed S] [--keep DIR] [--redis]     (make crash)

``--redis``: the server is a replica on a Redis this starts (its own redis-server, on a free
port of 127.0.0.1, with a one-second lease): each restart is a new replica, which takes over the
killed one's runs and notifications once its lease lapses.

The campaign itself, and what it checks, is ``tests/a2a_adapters/crash.py`` (CI runs a few
rounds of it in ``tests/a2a_adapters/test_crash.py``). Prints the counts, then every problem
found; the exit status is 1 if there was any.
"""

import argparse
import contextlib
import random
import sys
import tempfile
from pathlib import Path

from tests.a2a_adapters import crash
from tests.a2a_adapters.redis_server import RedisServer


def say(line: str) -> None:
    print(line, flush=True)  # progress as it comes, through a pipe too


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=12, help="kills (default: 12)")
    parser.add_argument("--seed", type=int, help="the workload's seed (default: drawn)")
    parser.add_argument(
        "--keep", type=Path, help="a directory to keep the task file and run log in"
    )
    parser.add_argument("--redis", action="store_true", help="serve replicas on Redis instead")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    with contextlib.ExitStack() as stack:
        store = None
        if args.redis:
            redis = stack.enter_context(RedisServer())
            store = f"{redis.url}?prefix=crash&lease=1"
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            workdir = args.keep
        else:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="a2a-crash-")))
        report = crash.run(args.rounds, workdir, seed=seed, store=store, say=say)
    print(crash.summary(report))
    return 1 if report.problem_count else 0


if __name__ == "__main__":
    sys.exit(main())
