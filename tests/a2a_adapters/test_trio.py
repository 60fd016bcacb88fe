"""The trio adapter in trio's own terms: cancel scopes, bounded shutdown, trio's (mock) clock.

The black-box suites already run every behaviour on trio (the ``adapter`` fixture); these tests
check what only trio can show.
"""

import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest
import trio
import trio.testing

from a2a_adapters import HttpStream, build_engine
from a2a_adapters.stores import MemoryStore
from a2a_core import AgentContext, TaskState, Update, working
from a2a_core.store import Reads
from a2a_core.transport import HttpRequest, HttpResponse
from examples import echo
from tests import servers
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    CANCELED,
    WORKING,
    cancel_task,
    endpoint,
    result_of,
    rpc,
    send_params,
    state_of,
    wait_for_state,
)
from tests.servers import running_server, serving

#: How long shutdown may take: the server's graceful period plus the engine's grace for runs.
SHUTDOWN_BOUND = 12.0


@pytest.fixture
def on_trio() -> Iterator[None]:
    servers.ADAPTER = "trio"
    try:
        yield
    finally:
        servers.ADAPTER = "asyncio"


async def endless(ctx: AgentContext) -> AsyncIterator[Update]:
    """Says it works, then works forever (until its scope is cancelled)."""
    yield working(f"on it: {ctx.text}")
    await anyio.sleep_forever()


def test_cancel_task_cancels_the_agents_cancel_scope(on_trio: None) -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def agent(ctx: AgentContext) -> str:
        started.set()
        try:
            await trio.sleep(30)
        except trio.Cancelled:
            cancelled.set()
            raise
        return "too late"

    with running_server(agent) as url:
        task = result_of(rpc(url, "SendMessage", send_params("go", return_immediately=True)))
        assert started.wait(5)
        assert state_of(cancel_task(url, task["task"]["id"])) == CANCELED
        assert cancelled.wait(5), "the agent's scope was never cancelled"
        assert state_of(wait_for_state(url, task["task"]["id"], {CANCELED})) == CANCELED


def _read_stream(url: str, task_id: str, outcome: list[str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    try:
        with httpx.stream(
            "POST", endpoint(url), json=body, headers=A2A_HEADERS, timeout=SHUTDOWN_BOUND
        ) as response:
            for _ in response.iter_lines():
                pass
        outcome.append("ended")
    except httpx.HTTPError as error:
        outcome.append(f"broken: {type(error).__name__}")


def test_shutdown_is_bounded_ends_streams_and_leaves_a_record_for_every_task(
    adapter: servers.Adapter,
) -> None:
    """On trio as the issue asks, and on asyncio too: the engine is the same."""
    engine = build_engine(endless, streaming=True, shutdown_grace=1.0)
    outcomes: list[str] = []
    with serving(engine) as url:
        task_ids = [
            result_of(rpc(url, "SendMessage", send_params(f"job {n}", return_immediately=True)))[
                "task"
            ]["id"]
            for n in range(3)
        ]
        for task_id in task_ids:
            wait_for_state(url, task_id, {WORKING})
        readers = [
            threading.Thread(target=_read_stream, args=(url, task_ids[n], outcomes))
            for n in range(2)
        ]
        for reader in readers:
            reader.start()
        time.sleep(0.3)  # the streams are open
        stopping = time.monotonic()
    took = time.monotonic() - stopping
    for reader in readers:
        reader.join(SHUTDOWN_BOUND)
    assert took < SHUTDOWN_BOUND, f"shutdown took {took:.1f} s"
    assert outcomes == ["ended", "ended"], outcomes

    async def records() -> list[Any]:
        return [(await engine.store.read(Reads(task_id=t))).task for t in task_ids]

    for record in trio.run(records):
        # No task is left working with no agent behind it: each says what happened.
        assert record is not None
        assert record.state is TaskState.FAILED
        assert record.task.status.message is not None
        assert "server stopped" in record.task.status.message.text


def _json(response: HttpResponse | HttpStream) -> Any:
    assert isinstance(response, HttpResponse)
    return json.loads(response.body)


def _post(method: str, params: dict[str, Any]) -> HttpRequest:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    return HttpRequest("POST", "/", headers, body)


@pytest.mark.trio
async def test_expiry_runs_on_trios_clock(autojump_clock: trio.testing.MockClock) -> None:
    """A 60-second TTL passes in no real time: the engine's timer sleeps on trio's clock."""
    # In memory: the autojump clock jumps whenever every task waits, and a SQLite store's calls
    # wait on worker threads, which would let the TTL pass in the middle of a read.
    engine = build_engine(echo.agent, card=echo.card, task_ttl=60, store=MemoryStore())
    async with trio.open_nursery() as nursery:
        await nursery.start(engine.run)
        sent = await engine.handle(_post("SendMessage", send_params("hi")), "http://test")
        task_id = _json(sent)["result"]["task"]["id"]
        real_start = time.monotonic()

        await trio.sleep(59)
        kept = await engine.handle(_post("GetTask", {"id": task_id}), "http://test")
        assert _json(kept)["result"]["id"] == task_id

        await trio.sleep(2)
        gone = await engine.handle(_post("GetTask", {"id": task_id}), "http://test")
        assert _json(gone)["error"]["code"] == -32001
        # Swept by the timer, not just hidden: the record itself is gone.
        assert (await engine.store.read(Reads(task_id=task_id))).task is None
        assert time.monotonic() - real_start < 5, "the test slept for real"
        await engine.aclose()
