"""Run the benchmarks against our server and the official a2a-sdk, side by side.

    python -m benchmarks.run [--scenarios fanout] [--out benchmarks/results/latest.json]

Prints each figure with the ratio ours/theirs, and writes every figure to a JSON file.
"""

import argparse
import json
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from benchmarks.fanout import fanout
from benchmarks.harness import SERVERS, server

FANOUT_SUBSCRIBERS = (1, 10, 100)


def machine() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def run_fanout() -> list[dict[str, Any]]:
    rows = []
    for subscribers in FANOUT_SUBSCRIBERS:
        row: dict[str, Any] = {"benchmark": f"SSE fan-out to {subscribers}", "unit": "events/s"}
        for name in SERVERS:
            with server(name) as url:
                result = anyio.run(fanout, url, subscribers)
            row[name] = result["events_per_second"]
            row[f"{name} detail"] = result
        rows.append(row)
    return rows


SCENARIOS = {"fanout": run_fanout}


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"| {'benchmark':<30} | {'ours':>12} | {'a2a-sdk':>12} | {'ours/sdk':>8} |",
        f"|{'-' * 32}|{'-' * 14}|{'-' * 14}|{'-' * 10}|",
    ]
    for row in rows:
        ours, theirs = row["ours"], row["a2a-sdk"]
        ratio = ours / theirs if theirs else float("nan")
        name = f"{row['benchmark']} ({row['unit']})"
        lines.append(f"| {name:<30} | {ours:>12.1f} | {theirs:>12.1f} | {ratio:>7.2f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/latest.json"))
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for name in args.scenarios.split(","):
        rows.extend(SCENARIOS[name]())
    table = report(rows)
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
