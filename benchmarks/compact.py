"""The compact form of a settled task: microseconds to encode and decode it, bytes it takes.

    python -m benchmarks.compact [ROUNDS]

The task is an echo as the memory store keeps it (a blocking send, an artifact, completed), its
ids UUIDs as the adapters draw them. Each figure is the best of ``ROUNDS`` rounds of many calls:
on a shared machine the best is the one least disturbed.
"""

import itertools
import json
import sys
import timeit
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.inprocess import _send_body
from benchmarks.servers.ours import CARD

CALLS = 500


def echo() -> tuple[Any, tuple[Any, ...], Any]:
    """The record and log of a settled echo task, and the store's marker for its creation."""
    from a2a_core import ArtifactChunk, Core, CoreConfig, completed, text_artifact
    from a2a_core.store import MemoryTasks
    from a2a_core.store._memory import _CREATED
    from a2a_core.transport import HttpRequest, Server, StartRun

    store = MemoryTasks()
    server = Server(Core(CoreConfig(card=CARD)), store=store, new_id=lambda: str(uuid.uuid4()))
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    now = datetime(2026, 3, 7, 13, 24, 51, 123456, tzinfo=UTC)
    server.receive(HttpRequest("POST", "/", headers, _send_body(1)), now, base_url="http://b")
    start = next(a for a in server.take_actions() if isinstance(a, StartRun))
    later = now + timedelta(microseconds=350)
    chunk = ArtifactChunk(text_artifact("hello", artifact_id="echo"), last_chunk=True)
    server.agent_output(start.task_id, start.run, chunk, later)
    server.agent_output(start.task_id, start.run, completed(), later)
    server.take_actions()
    (key,) = store._records
    return store._records[key], tuple(store._logs[key]), _CREATED


def _micros(call: Callable[[], object]) -> float:
    return timeit.timeit(call, number=CALLS) / CALLS * 1e6


def run(rounds: int) -> dict[str, Any]:
    from a2a_core.store import _compact

    record, log, marker = echo()
    blob = _compact.encode(record, log, marker)
    assert blob is not None
    assert _compact.decode(blob, marker) == (record, log)
    best = {"encode_us": float("inf"), "decode_us": float("inf"), "decode_record_us": float("inf")}
    calls: dict[str, Callable[[], object]] = {
        "encode_us": lambda: _compact.encode(record, log, marker),
        "decode_us": lambda: _compact.decode(blob, marker),
        "decode_record_us": lambda: _compact.decode_record(blob),
    }
    for _, (name, call) in itertools.product(range(rounds), calls.items()):
        best[name] = min(best[name], _micros(call))
    return {**best, "blob_bytes": len(blob)}


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 20)))
