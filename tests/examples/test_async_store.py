"""The async-store transport example, served by uvicorn and spoken to by the official a2a-sdk.

The store runs on a worker thread, so that every read and commit suspends and completes in
whatever order the thread gets to them, as a database's would.
"""

import asyncio
import contextlib
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb

from a2a_core import Agent, ArtifactChunk, completed, input_required, text_artifact, working
from a2a_core.card import AgentCard
from a2a_core.store import AsyncStore, MemoryTasks, Reads, Snapshot, Write
from examples import async_store, echo, multi_turn
from tests.a2a_adapters.support import sdk_client, sdk_message, sdk_send


class ThreadStore:
    """Tasks in memory, read and written on a worker thread; ``fail_reads`` reads raise."""

    def __init__(self) -> None:
        self.tasks, self.thread = MemoryTasks(), ThreadPoolExecutor(1)
        self.fail_reads = 0
        self.commits = 0

    def read(self, reads: Reads) -> Awaitable[Snapshot]:
        if self.fail_reads:
            self.fail_reads -= 1
            return asyncio.wrap_future(self.thread.submit(self._broken))
        return asyncio.wrap_future(self.thread.submit(self.tasks.read, reads))

    def commit(self, writes: Sequence[Write]) -> Awaitable[bool]:
        self.commits += 1
        return asyncio.wrap_future(self.thread.submit(self.tasks.commit, writes))

    async def aclose(self) -> None:
        self.thread.shutdown()

    @staticmethod
    def _broken() -> Snapshot:
        raise OSError("the disk is gone")


@contextmanager
def served(agent: Agent, card: AgentCard, store: AsyncStore | None = None) -> Iterator[str]:
    """The example on a free port of 127.0.0.1, on an asyncio loop in a thread of its own."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []
    up = threading.Event()

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        running.append((asyncio.get_running_loop(), task))
        up.set()
        with contextlib.suppress(asyncio.CancelledError):  # how the test stops it
            await async_store.serve(agent, card, listener, store)

    # asyncio.run, so that whatever the server leaves running is cancelled and awaited.
    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert up.wait(10)
    try:
        for _ in range(200):  # the listener is bound: wait until uvicorn answers on it
            try:
                httpx.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=1)
                break
            except httpx.TransportError:
                threading.Event().wait(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        loop, task = running[0]
        loop.call_soon_threadsafe(task.cancel)
        thread.join(10)
        assert not thread.is_alive()


async def steps(ctx: Any) -> AsyncIterator[Any]:
    yield working("thinking")
    await asyncio.sleep(0.01)
    yield ArtifactChunk(text_artifact(f"about {ctx.text}", artifact_id="a"), last_chunk=True)
    yield completed()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_sdk_client_sends_and_reads_back_through_the_store() -> None:
    store = ThreadStore()
    with served(echo.agent, echo.card, store) as url:
        async with sdk_client(url) as client:
            sent = await sdk_send(client, sdk_message("hi"))
            assert sent.task.status.state == pb.TASK_STATE_COMPLETED
            assert sent.task.status.message.parts[0].text == "Echo: hi"
            again = await client.get_task(pb.GetTaskRequest(id=sent.task.id))
            assert again.status.state == pb.TASK_STATE_COMPLETED
    # What the client read came from the store: the machine kept nothing of its own.
    assert store.tasks.read(Reads(task_id=sent.task.id)).task is not None
    # Ids nobody can guess (a task's id is all a caller needs to ask for it).
    assert uuid.UUID(sent.task.id).version == 4
    assert uuid.UUID(sent.task.context_id).version == 4
    assert store.commits >= 2  # the task made, then its run's output


@pytest.mark.anyio
async def test_the_sdk_client_streams_every_event_in_order() -> None:
    with served(steps, echo.card, ThreadStore()) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            factory = ClientFactory(ClientConfig(httpx_client=http, streaming=True))
            client = await factory.create_from_url(url)
            request = pb.SendMessageRequest(message=sdk_message("rain"))
            events = [event async for event in client.send_message(request)]
            await client.close()
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds == ["task", "status_update", "artifact_update", "status_update"]
    assert events[2].artifact_update.artifact.parts[0].text == "about rain"
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED


@pytest.mark.anyio
async def test_concurrent_requests_are_each_answered_once_and_right() -> None:
    """Sends and streams race through one worker thread; each gets its own task's answer."""
    store = ThreadStore()
    with served(steps, echo.card, store) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            v1 = {"A2A-Version": "1.0"}

            async def blocking(n: int) -> str:
                message = {"messageId": f"b{n}", "role": "ROLE_USER", "parts": [{"text": f"{n}"}]}
                answer = await http.post(
                    f"{url}/message:send", json={"message": message}, headers=v1
                )
                task = answer.json()["task"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED"
                return str(task["artifacts"][0]["parts"][0]["text"])

            async def streamed(n: int) -> list[str]:
                message = {"messageId": f"s{n}", "role": "ROLE_USER", "parts": [{"text": f"{n}"}]}
                body = {"message": message}
                async with http.stream("POST", f"{url}/message:stream", json=body, headers=v1) as r:
                    return [line async for line in r.aiter_lines() if line.startswith("data:")]

            results = await asyncio.gather(*[blocking(n) for n in range(8)])
            streams = await asyncio.gather(*[streamed(n) for n in range(8)])
    assert results == [f"about {n}" for n in range(8)]
    assert all(len(lines) == 4 for lines in streams)
    assert len(store.tasks) == 16


def test_a_failed_store_read_is_an_internal_error_for_that_request_only() -> None:
    store = ThreadStore()
    with served(echo.agent, echo.card, store) as url, httpx.Client(timeout=10) as http:
        store.fail_reads = 1
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}}
        failed = http.post(url + "/", json=rpc, headers={"A2A-Version": "1.0"}).json()
        assert failed["error"]["code"] == -32603
        again = http.post(url + "/", json=rpc, headers={"A2A-Version": "1.0"}).json()
        assert again["error"]["code"] == -32001  # the store is back: no such task


def test_a_conversation_and_the_card_over_rest() -> None:
    with (
        served(multi_turn.agent, multi_turn.card, ThreadStore()) as url,
        httpx.Client(timeout=10) as http,
    ):
        assert http.get(url + "/.well-known/agent-card.json").json()["name"] == multi_turn.card.name
        v1 = {"A2A-Version": "1.0"}
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        first = http.post(url + "/message:send", json={"message": message}, headers=v1).json()
        task_id = first["task"]["id"]
        assert first["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        answer = {"messageId": "m-2", "role": "ROLE_USER", "parts": [{"text": "Ada"}]}
        answer["taskId"] = task_id
        second = http.post(url + "/message:send", json={"message": answer}, headers=v1).json()
        assert "Hello, Ada!" in second["task"]["status"]["message"]["parts"][0]["text"]
        assert http.get(url + "/no/such/path").status_code == 404


def test_the_default_store_serves_too() -> None:
    async def asks(ctx: Any) -> AsyncIterator[Any]:
        yield input_required("which?")

    with served(asks, echo.card) as url, httpx.Client(timeout=10) as http:
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        sent = http.post(
            url + "/message:send", json={"message": message}, headers={"A2A-Version": "1.0"}
        )
        assert sent.json()["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
