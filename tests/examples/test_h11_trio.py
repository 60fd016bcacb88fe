"""The h11-on-trio transport example, served for real and spoken to by the official a2a-sdk."""

import queue
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import trio
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb

from a2a_core import Agent, ArtifactChunk, completed, text_artifact, working
from a2a_core.card import AgentCard
from examples import echo, h11_trio, multi_turn
from tests.a2a_adapters.support import sdk_client, sdk_message, sdk_send


@contextmanager
def h11_server(agent: Agent, card: AgentCard) -> Iterator[str]:
    """The example's server on a free port of 127.0.0.1, in a thread of its own."""
    started: queue.Queue[tuple[int, trio.CancelScope, trio.lowlevel.TrioToken]] = queue.Queue()

    async def main() -> None:
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                port = await nursery.start(h11_trio.serve, agent, card, 0)
                started.put((port, scope, trio.lowlevel.current_trio_token()))

    thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
    thread.start()
    port, scope, token = started.get(timeout=10)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        trio.from_thread.run_sync(scope.cancel, trio_token=token)
        thread.join(10)
        assert not thread.is_alive()


async def steps(ctx: Any) -> AsyncIterator[Any]:
    yield working("thinking")
    yield ArtifactChunk(text_artifact(f"about {ctx.text}", artifact_id="a"), last_chunk=True)
    yield completed()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_sdk_client_sends_and_reads_back() -> None:
    with h11_server(echo.agent, echo.card) as url:
        async with sdk_client(url) as client:
            sent = await sdk_send(client, sdk_message("hi"))
            task = sent.task
            assert task.status.state == pb.TASK_STATE_COMPLETED
            assert task.status.message.parts[0].text == "Echo: hi"
            again = await client.get_task(pb.GetTaskRequest(id=task.id))
            assert again.id == task.id
            assert uuid.UUID(task.id).version == 4  # not id-1, id-2, …
            assert again.status.state == pb.TASK_STATE_COMPLETED


@pytest.mark.anyio
async def test_the_sdk_client_streams_every_event() -> None:
    with h11_server(steps, echo.card) as url:
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


def test_multi_turn_rest_and_the_card_over_raw_http() -> None:
    with h11_server(multi_turn.agent, multi_turn.card) as url, httpx.Client(timeout=10) as http:
        card = http.get(url + "/.well-known/agent-card.json")
        assert card.json()["name"] == multi_turn.card.name
        head = http.head(url + "/.well-known/agent-card.json")
        assert int(head.headers["content-length"]) == len(card.content)
        v1 = {"A2A-Version": "1.0"}
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        first = http.post(url + "/message:send", json={"message": message}, headers=v1).json()
        task_id = first["task"]["id"]
        assert first["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        answer = {"messageId": "m-2", "role": "ROLE_USER", "parts": [{"text": "Ada"}]}
        answer["taskId"] = task_id
        second = http.post(url + "/message:send", json={"message": answer}, headers=v1).json()
        assert "Hello, Ada!" in second["task"]["status"]["message"]["parts"][0]["text"]
        got = http.get(f"{url}/tasks/{task_id}", headers=v1)
        assert got.json()["status"]["state"] == "TASK_STATE_COMPLETED"
        assert http.get(url + "/no/such/path").status_code == 404
