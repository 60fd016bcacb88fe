"""The official a2a-sdk client (``a2a-sdk`` 1.x) as a real peer, over real HTTP.

Whatever the sdk accepts, the wire shapes are right for the reference implementation's parser;
whatever error class it raises, the codes and ErrorInfo details are right for it too.
"""

import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as sdk_errors

from examples import multi_turn, tck_agent
from tests.a2a_adapters.support import (
    CARD_PATH,
    HTTP_TIMEOUT,
    SLOW_SECONDS,
    new_id,
    sdk_client,
    sdk_message,
    sdk_send,
    slow_agent,
)
from tests.servers import running_server

#: Every test here runs against the asyncio and the trio adapter.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("adapter")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tck_url() -> Iterator[str]:
    with running_server(tck_agent.agent, card=tck_agent.card) as url:
        yield url


def tck_message(prefix: str, text: str = "tck", **ids: str) -> Any:
    """A message the TCK agent scripts by its ``messageId`` prefix."""
    return sdk_message(text, message_id=f"{prefix}-{new_id()}", **ids)


def text_of(message: Any) -> str:
    return "".join(part.text for part in message.parts)


async def test_card_resolution_and_first_call(tck_url: str) -> None:
    requests: list[str] = []
    async with sdk_client(tck_url, requests=requests) as client:
        event = await sdk_send(client, tck_message("tck-complete-task"))
    assert event.task.status.state == pb.TASK_STATE_COMPLETED
    # The sdk fetched the card, then posted to the interface the card advertises.
    assert requests == [f"GET {tck_url}{CARD_PATH}", f"POST {tck_url}/"]


async def test_card_as_the_sdk_parses_it(tck_url: str) -> None:
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        card = await A2ACardResolver(http, tck_url).get_agent_card()
    assert card.name == "a2a-sansio TCK agent"
    jsonrpc, rest, jsonrpc_v03 = card.supported_interfaces
    assert (jsonrpc.url, jsonrpc.protocol_binding, jsonrpc.protocol_version) == (
        tck_url + "/",
        "JSONRPC",
        "1.0",
    )
    assert (rest.url, rest.protocol_binding, rest.protocol_version) == (tck_url, "HTTP+JSON", "1.0")
    assert (jsonrpc_v03.protocol_binding, jsonrpc_v03.protocol_version) == ("JSONRPC", "0.3")
    assert [skill.id for skill in card.skills] == ["tck"]
    assert not card.capabilities.streaming
    assert not card.capabilities.push_notifications


async def test_blocking_send(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        event = await sdk_send(client, tck_message("tck-complete-task", "hello"))
    task = event.task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert text_of(task.status.message) == "Hello from TCK"
    assert task.status.message.role == pb.ROLE_AGENT
    assert [text_of(m) for m in task.history] == ["hello"]
    assert task.history[0].task_id == task.id
    assert task.history[0].context_id == task.context_id
    assert task.status.timestamp.seconds > 0


async def test_non_blocking_send_then_poll() -> None:
    with running_server(slow_agent) as url:
        async with sdk_client(url) as client:
            started = time.monotonic()
            event = await sdk_send(client, sdk_message("later"), return_immediately=True)
            elapsed = time.monotonic() - started
            task_id = event.task.id
            deadline = time.monotonic() + 5.0
            task = await client.get_task(pb.GetTaskRequest(id=task_id))
            while task.status.state != pb.TASK_STATE_COMPLETED and time.monotonic() < deadline:
                await anyio.sleep(0.01)
                task = await client.get_task(pb.GetTaskRequest(id=task_id))
    assert elapsed < SLOW_SECONDS / 2
    assert event.task.status.state == pb.TASK_STATE_SUBMITTED
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert text_of(task.status.message) == "slow: later"


async def test_direct_message_reply(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        event = await sdk_send(client, tck_message("tck-message-response"))
    assert event.WhichOneof("payload") == "message"
    assert text_of(event.message) == "Direct message response"
    assert event.message.role == pb.ROLE_AGENT


async def test_artifacts_of_every_part_kind(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        text = (await sdk_send(client, tck_message("tck-artifact-text"))).task
        raw = (await sdk_send(client, tck_message("tck-artifact-file"))).task
        url = (await sdk_send(client, tck_message("tck-artifact-file-url"))).task
        data = (await sdk_send(client, tck_message("tck-artifact-data"))).task
    for task in (text, raw, url, data):
        assert task.status.state == pb.TASK_STATE_COMPLETED
        assert len(task.artifacts) == 1
        assert task.artifacts[0].artifact_id
    assert text.artifacts[0].parts[0].text == "Generated text content"
    [file_part] = raw.artifacts[0].parts
    assert file_part.raw == b"tck"
    assert file_part.filename == "output.txt"
    assert file_part.media_type == "text/plain"
    assert url.artifacts[0].parts[0].url == "https://example.com/output.txt"
    assert dict(data.artifacts[0].parts[0].data.struct_value) == {"key": "value", "count": 42}


async def test_rejected_task(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        task = (await sdk_send(client, tck_message("tck-reject-task"))).task
    assert task.status.state == pb.TASK_STATE_REJECTED
    assert text_of(task.status.message) == "rejected"


async def test_get_task_history_lengths(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        first = (await sdk_send(client, tck_message("tck-input-required", "one"))).task
        # Any other prefix completes the task: the follow-up answers the question.
        done = (await sdk_send(client, sdk_message("two", task_id=first.id))).task
        unset = await client.get_task(pb.GetTaskRequest(id=first.id))
        none = await client.get_task(pb.GetTaskRequest(id=first.id, history_length=0))
        last = await client.get_task(pb.GetTaskRequest(id=first.id, history_length=1))
    assert first.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert [text_of(m) for m in unset.history] == ["one", "two"]
    assert len(none.history) == 0
    assert [text_of(m) for m in last.history] == ["two"]
    assert none.status == last.status == unset.status


async def test_send_with_history_length(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        task = (await sdk_send(client, tck_message("tck-complete-task"), history_length=0)).task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert len(task.history) == 0


async def test_list_tasks(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        created = [
            (await sdk_send(client, tck_message("tck-complete-task"))).task.id for _ in range(3)
        ]
        waiting = (await sdk_send(client, tck_message("tck-input-required"))).task
        everything = await client.list_tasks(pb.ListTasksRequest())
        first = await client.list_tasks(pb.ListTasksRequest(page_size=2))
        second = await client.list_tasks(
            pb.ListTasksRequest(page_size=2, page_token=first.next_page_token)
        )
        by_context = await client.list_tasks(pb.ListTasksRequest(context_id=waiting.context_id))
        by_state = await client.list_tasks(pb.ListTasksRequest(status=pb.TASK_STATE_INPUT_REQUIRED))
    newest_first = [waiting.id, *created[::-1]]
    assert [t.id for t in everything.tasks] == newest_first
    assert everything.total_size == 4
    assert everything.next_page_token == ""
    assert first.next_page_token != ""
    assert second.next_page_token == ""
    assert [t.id for t in [*first.tasks, *second.tasks]] == newest_first
    assert first.page_size == 2
    assert [t.id for t in by_context.tasks] == [waiting.id]
    assert [t.id for t in by_state.tasks] == [waiting.id]
    assert by_state.total_size == 1


async def test_cancel_a_running_task(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        # This script stays working for seconds: long enough to be canceled mid-run.
        started = await sdk_send(
            client, tck_message("test-resubscribe-message-id"), return_immediately=True
        )
        task_id = started.task.id
        deadline = time.monotonic() + 5.0
        task = await client.get_task(pb.GetTaskRequest(id=task_id))
        while task.status.state != pb.TASK_STATE_WORKING and time.monotonic() < deadline:
            await anyio.sleep(0.01)
            task = await client.get_task(pb.GetTaskRequest(id=task_id))
        canceled = await client.cancel_task(pb.CancelTaskRequest(id=task_id))
        fetched = await client.get_task(pb.GetTaskRequest(id=task_id))
    assert task.status.state == pb.TASK_STATE_WORKING
    assert canceled.id == task_id
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert fetched.status.state == pb.TASK_STATE_CANCELED


async def test_input_required_round_trip() -> None:
    with running_server(multi_turn.agent, card=multi_turn.card) as url:
        async with sdk_client(url) as client:
            asked = (await sdk_send(client, sdk_message("hello there"))).task
            answered = (
                await sdk_send(
                    client,
                    sdk_message("Ada", task_id=asked.id, context_id=asked.context_id),
                )
            ).task
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert text_of(asked.status.message) == "What is your name?"
    assert answered.id == asked.id
    assert answered.context_id == asked.context_id
    assert answered.status.state == pb.TASK_STATE_COMPLETED
    assert text_of(answered.status.message) == "Hello, Ada! You first said: 'hello there'."


async def test_unknown_task_raises_task_not_found(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        with pytest.raises(sdk_errors.TaskNotFoundError) as raised:
            await client.get_task(pb.GetTaskRequest(id="no-such-task"))
        with pytest.raises(sdk_errors.TaskNotFoundError):
            await client.cancel_task(pb.CancelTaskRequest(id="no-such-task"))
        with pytest.raises(sdk_errors.TaskNotFoundError):
            await sdk_send(client, sdk_message("hi", task_id="no-such-task"))
    # The sdk read the ErrorInfo metadata out of error.data.
    assert raised.value.data == {"taskId": "no-such-task"}


async def test_cancel_of_a_finished_task_raises_not_cancelable(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        task = (await sdk_send(client, tck_message("tck-complete-task"))).task
        with pytest.raises(sdk_errors.TaskNotCancelableError) as raised:
            await client.cancel_task(pb.CancelTaskRequest(id=task.id))
    assert raised.value.data == {"taskId": task.id, "state": "TASK_STATE_COMPLETED"}


async def test_message_to_a_terminal_task_raises_unsupported_operation(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        task = (await sdk_send(client, tck_message("tck-complete-task"))).task
        with pytest.raises(sdk_errors.UnsupportedOperationError) as raised:
            await sdk_send(client, sdk_message("more", task_id=task.id))
        after = await client.get_task(pb.GetTaskRequest(id=task.id))
    assert raised.value.data is not None
    assert raised.value.data["taskId"] == task.id
    assert after.status == task.status


async def test_wrong_context_raises_invalid_params(tck_url: str) -> None:
    async with sdk_client(tck_url) as client:
        task = (await sdk_send(client, tck_message("tck-input-required"))).task
        other = (await sdk_send(client, tck_message("tck-complete-task"))).task
        with pytest.raises(sdk_errors.InvalidParamsError):
            await sdk_send(
                client, sdk_message("answer", task_id=task.id, context_id=other.context_id)
            )
