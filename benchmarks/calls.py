"""Request/response benchmarks over real HTTP: sends, task reads and the bare stack.

Every figure comes from :func:`benchmarks.load.run_load` driving one server process on
127.0.0.1 with keep-alive connections, so each server is measured by the same client in the same
way. Each message has its own id (idempotent re-sends would be cheaper, and unfair).
"""

import asyncio
import json
import random
import sys
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from benchmarks.load import LoadResult, http_request, run_load

#: What every A2A request carries.
A2A_HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _rpc(method: str, params: dict[str, Any], rpc_id: int) -> bytes:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    return http_request("POST", "/", json.dumps(body).encode(), A2A_HEADERS)


def send_request(tag: str, *, blocking: bool = True) -> Any:
    """A factory of SendMessage requests, each with a new message id."""

    def make(n: int) -> bytes:
        message = {"messageId": f"{tag}-{n}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
        params: dict[str, Any] = {"message": message}
        if not blocking:
            params["configuration"] = {"returnImmediately": True}
        return _rpc("SendMessage", params, n)

    return make


def load(
    url: str | Sequence[str],
    make: Any,
    *,
    concurrency: int,
    count: int,
    max_seconds: float,
    **options: Any,
) -> LoadResult:
    """Run ``make``'s requests against the server at ``url``, or round-robin over several
    (replicas)."""
    ports = _port(url) if isinstance(url, str) else [_port(u) for u in url]
    return asyncio.run(
        run_load(
            "127.0.0.1",
            ports,
            make,
            concurrency=concurrency,
            count=count,
            max_seconds=max_seconds,
            **options,
        )
    )


def sends(
    url: str | Sequence[str],
    *,
    concurrency: int,
    count: int,
    max_seconds: float,
    blocking: bool = True,
) -> LoadResult:
    """Blocking (or ``returnImmediately``) SendMessage calls, the echo agent answering."""
    tag = f"{'b' if blocking else 'nb'}{concurrency}-{random.randrange(1 << 30)}"
    make = send_request(tag, blocking=blocking)
    return load(url, make, concurrency=concurrency, count=count, max_seconds=max_seconds)


#: Rounds of sends :func:`fill` makes at most: a server that refuses some (the SDK's SQL store
#: answers "database is locked" now and then under concurrent sends) is sent the rest again.
FILL_ROUNDS = 3


def fill(
    url: str | Sequence[str], tasks: int, *, concurrency: int = 32, max_seconds: float = 300
) -> list[str]:
    """Create ``tasks`` completed tasks; return their ids. Sends a server refused are made
    again (up to :data:`FILL_ROUNDS` rounds in all, the refusals reported on stderr): what is
    measured afterwards is the reads, on a store holding all ``tasks``."""
    ids: list[str] = []

    def keep(status: int, body: bytes) -> bool:
        if status != 200 or b'"error"' in body:
            return False
        ids.append(json.loads(body)["result"]["task"]["id"])
        return True

    for round_number in range(FILL_ROUNDS):
        make = send_request(f"fill-{random.randrange(1 << 30)}")
        result = load(
            url,
            make,
            concurrency=concurrency,
            count=tasks - len(ids),
            max_seconds=max_seconds,
            check=keep,
        )
        if not result.errors:
            break
        print(
            f"filling: round {round_number + 1}: {result.errors} of {result.requests} sends "
            f"refused ({result.first_error!r:.200})",
            file=sys.stderr,
        )
    if len(ids) < tasks:
        raise RuntimeError(f"filling the store failed: {result.first_error}")
    return ids


def task_reads(
    url: str, task_ids: list[str], *, concurrency: int, count: int, max_seconds: float
) -> LoadResult:
    """GetTask of stored tasks, in a shuffled order."""
    order = random.sample(task_ids, len(task_ids))

    def make(n: int) -> bytes:
        return _rpc("GetTask", {"id": order[n % len(order)]}, n)

    return load(url, make, concurrency=concurrency, count=count, max_seconds=max_seconds)


def bare(url: str, *, concurrency: int, count: int, max_seconds: float) -> LoadResult:
    """The trivial endpoint of a bare stack, with a body the size of a small A2A call."""
    request = _rpc("GetTask", {"id": "0" * 36}, 1)
    return load(
        url, lambda _: request, concurrency=concurrency, count=count, max_seconds=max_seconds
    )
