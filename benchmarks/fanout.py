"""SSE fan-out: events per second delivered to 1, 10 and 100 subscribers of one task.

A task's agent works, waits (so every subscriber can connect), then streams ``EVENTS`` artifact
chunks. Each subscriber counts the artifact events it receives; the rate is all events delivered
to all subscribers, divided by the time from the first one's arrival to the last one's.
"""

import time
import uuid
from typing import Any

import anyio
import httpx

from benchmarks.harness import HEADERS, message, rpc_body

EVENTS = 500
NEEDLE = b"artifactUpdate"


async def _subscriber(
    client: httpx.AsyncClient, url: str, task_id: str, arrivals: list[float], counts: list[int]
) -> None:
    body = rpc_body("SubscribeToTask", {"id": task_id}, rpc_id=str(uuid.uuid4()))
    tail = b""
    count = 0
    async with client.stream("POST", url + "/", json=body, headers=HEADERS) as response:
        async for chunk in response.aiter_raw():
            window = tail + chunk
            found = window.count(NEEDLE)
            if found:
                count += found
                arrivals.append(time.perf_counter())
            # Keep a tail short enough never to hold a whole needle already counted.
            tail = window[-(len(NEEDLE) - 1) :]
    counts.append(count)


async def fanout(url: str, subscribers: int, events: int = EVENTS) -> dict[str, Any]:
    """Measure one fan-out run against the server at ``url``."""
    limits = httpx.Limits(max_connections=subscribers + 4, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        params = {
            "message": message("fan out", f"fanout-{events}-{uuid.uuid4()}"),
            "configuration": {"returnImmediately": True},
        }
        sent = await client.post(url + "/", json=rpc_body("SendMessage", params), headers=HEADERS)
        task_id = sent.json()["result"]["task"]["id"]
        arrivals: list[float] = []
        counts: list[int] = []
        async with anyio.create_task_group() as group:
            for _ in range(subscribers):
                group.start_soon(_subscriber, client, url, task_id, arrivals, counts)
    delivered = sum(counts)
    elapsed = max(arrivals) - min(arrivals) if len(arrivals) > 1 else float("nan")
    return {
        "subscribers": subscribers,
        "events": events,
        "delivered": delivered,
        "complete": delivered == subscribers * events,
        "seconds": elapsed,
        "events_per_second": delivered / elapsed if elapsed else float("nan"),
    }
