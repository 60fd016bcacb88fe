"""The official a2a-sdk client (``a2a-sdk`` 1.x) as a real peer, over real HTTP.

Whatever the sdk accepts, the wire shapes are right for the reference implementation's parser;
whatever error class it raises, the codes and ErrorInfo details are right for it too.
"""

import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as sdk_errors
from a2a.utils.constants import TransportProtocol

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


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_artifacts_of_every_part_kind(tck_url: str, version: str) -> None:
    """Every part kind survives both wire forms (v0.3 through the sdk's compat transport)."""
    opened = sdk_client(tck_url) if version == "1.0" else v03_client(tck_url)
    async with opened as client:
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
        # The follow-up answers the question, and its prefix makes the agent complete the task.
        answer = tck_message("tck-complete-task", "two", task_id=first.id)
        done = (await sdk_send(client, answer)).task
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


# --- the official client over HTTP+JSON (REST) ------------------------------------------------

#: The longest any streaming exchange below may take.
STREAM_TIMEOUT = 5.0
HOOK = "https://hooks.example.com/a2a"


@pytest.fixture
def full_url() -> Iterator[str]:
    """The TCK agent with streaming and push notifications on.

    Push configs are only ever set on tasks that are already finished, so no webhook is called.
    """
    with running_server(tck_agent.agent, card=tck_agent.card, streaming=True, push=True) as url:
        yield url


@asynccontextmanager
async def rest_client(
    url: str, *, streaming: bool = False, requests: list[str] | None = None
) -> AsyncIterator[Any]:
    """An a2a-sdk client that picks the card's HTTP+JSON interface; closed afterwards.

    ``requests`` collects "METHOD /path?query" of every HTTP request it makes.
    """

    async def record(request: httpx.Request) -> None:
        if requests is not None:
            query = request.url.query.decode()
            requests.append(f"{request.method} {request.url.path}" + (f"?{query}" if query else ""))

    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT, event_hooks={"request": [record]}) as http:
        config = ClientConfig(
            httpx_client=http,
            streaming=streaming,
            supported_protocol_bindings=[TransportProtocol.HTTP_JSON],
        )
        client = await ClientFactory(config).create_from_url(url)
        try:
            yield client
        finally:
            await client.close()


async def sdk_stream(client: Any, message: Any) -> list[Any]:
    """Every event of a streamed send (the stream must end within the timeout)."""
    with anyio.fail_after(STREAM_TIMEOUT):
        return [e async for e in client.send_message(pb.SendMessageRequest(message=message))]


def kinds(events: list[Any]) -> list[str]:
    return [event.WhichOneof("payload") for event in events]


def states(events: list[Any]) -> list[int]:
    """The task state each task or status event carries, in order."""
    found = []
    for event in events:
        if event.HasField("task"):
            found.append(event.task.status.state)
        elif event.HasField("status_update"):
            found.append(event.status_update.status.state)
    return found


async def subscribe_and_cancel(client: Any, task_id: str) -> tuple[list[Any], Any]:
    """Subscribe to a waiting task, cancel it once the subscription has its first event; the
    subscription's events (it must end by itself) and the cancel's answer."""
    events: list[Any] = []
    subscribed = anyio.Event()
    canceled: list[Any] = []

    async def listen() -> None:
        async for event in client.subscribe(pb.SubscribeToTaskRequest(id=task_id)):
            events.append(event)
            subscribed.set()

    with anyio.fail_after(STREAM_TIMEOUT):
        async with anyio.create_task_group() as group:
            group.start_soon(listen)
            await subscribed.wait()
            canceled.append(await client.cancel_task(pb.CancelTaskRequest(id=task_id)))
    return events, canceled[0]


async def test_rest_send_get_and_direct_reply(tck_url: str) -> None:
    requests: list[str] = []
    async with rest_client(tck_url, requests=requests) as client:
        task = (await sdk_send(client, tck_message("tck-complete-task", "hello"))).task
        fetched = await client.get_task(pb.GetTaskRequest(id=task.id))
        trimmed = await client.get_task(pb.GetTaskRequest(id=task.id, history_length=0))
        reply = await sdk_send(client, tck_message("tck-message-response"))
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert text_of(task.status.message) == "Hello from TCK"
    assert [text_of(m) for m in task.history] == ["hello"]
    assert task.history[0].task_id == task.id
    assert (fetched.id, fetched.context_id, fetched.status) == (
        task.id,
        task.context_id,
        task.status,
    )
    assert [m.message_id for m in fetched.history] == [m.message_id for m in task.history]
    assert trimmed.status == task.status
    assert len(trimmed.history) == 0
    assert reply.WhichOneof("payload") == "message"
    assert text_of(reply.message) == "Direct message response"
    # The card was read, then only the REST routes were used.
    assert requests == [
        f"GET {CARD_PATH}",
        "POST /message:send",
        f"GET /tasks/{task.id}",
        f"GET /tasks/{task.id}?historyLength=0",
        "POST /message:send",
    ]


async def test_rest_artifacts_of_every_part_kind(tck_url: str) -> None:
    async with rest_client(tck_url) as client:
        raw = (await sdk_send(client, tck_message("tck-artifact-file"))).task
        url = (await sdk_send(client, tck_message("tck-artifact-file-url"))).task
        data = (await sdk_send(client, tck_message("tck-artifact-data"))).task
    [file_part] = raw.artifacts[0].parts
    assert (file_part.raw, file_part.filename, file_part.media_type) == (
        b"tck",
        "output.txt",
        "text/plain",
    )
    assert url.artifacts[0].parts[0].url == "https://example.com/output.txt"
    assert dict(data.artifacts[0].parts[0].data.struct_value) == {"key": "value", "count": 42}


async def test_rest_list_tasks(tck_url: str) -> None:
    requests: list[str] = []
    async with rest_client(tck_url, requests=requests) as client:
        made = [(await sdk_send(client, tck_message("tck-artifact-text"))).task for _ in range(2)]
        waiting = (await sdk_send(client, tck_message("tck-input-required"))).task
        everything = await client.list_tasks(pb.ListTasksRequest())
        with_artifacts = await client.list_tasks(pb.ListTasksRequest(include_artifacts=True))
        first = await client.list_tasks(pb.ListTasksRequest(page_size=2, history_length=0))
        second = await client.list_tasks(
            pb.ListTasksRequest(page_size=2, page_token=first.next_page_token)
        )
        by_state = await client.list_tasks(pb.ListTasksRequest(status=pb.TASK_STATE_COMPLETED))
        by_context = await client.list_tasks(pb.ListTasksRequest(context_id=waiting.context_id))
    newest_first = [waiting.id, made[1].id, made[0].id]
    assert [t.id for t in everything.tasks] == newest_first
    assert (everything.total_size, everything.next_page_token) == (3, "")
    assert all(len(t.artifacts) == 0 for t in everything.tasks)
    assert [len(t.artifacts) for t in with_artifacts.tasks] == [0, 1, 1]
    assert with_artifacts.tasks[1].artifacts[0].parts[0].text == "Generated text content"
    assert [t.id for t in [*first.tasks, *second.tasks]] == newest_first
    assert first.page_size == 2
    assert first.next_page_token != ""
    assert second.next_page_token == ""
    assert all(len(t.history) == 0 for t in first.tasks)
    assert all(len(t.history) == 1 for t in second.tasks)
    assert [t.id for t in by_state.tasks] == [made[1].id, made[0].id]
    assert [t.id for t in by_context.tasks] == [waiting.id]
    # The filters travelled as query parameters.
    assert "GET /tasks?includeArtifacts=true" in requests
    assert "GET /tasks?status=TASK_STATE_COMPLETED" in requests
    assert f"GET /tasks?contextId={waiting.context_id}" in requests


async def test_rest_cancel_and_errors(tck_url: str) -> None:
    async with rest_client(tck_url) as client:
        waiting = (await sdk_send(client, tck_message("tck-input-required"))).task
        canceled = await client.cancel_task(pb.CancelTaskRequest(id=waiting.id))
        fetched = await client.get_task(pb.GetTaskRequest(id=waiting.id))
        with pytest.raises(sdk_errors.TaskNotCancelableError) as not_cancelable:
            await client.cancel_task(pb.CancelTaskRequest(id=waiting.id))
        with pytest.raises(sdk_errors.TaskNotFoundError) as not_found:
            await client.get_task(pb.GetTaskRequest(id="no-such-task"))
        with pytest.raises(sdk_errors.UnsupportedOperationError):
            await sdk_send(client, sdk_message("more", task_id=waiting.id))
        other = (await sdk_send(client, tck_message("tck-input-required"))).task
        with pytest.raises(sdk_errors.InvalidParamsError) as wrong_context:
            await sdk_send(
                client, sdk_message("x", task_id=other.id, context_id=waiting.context_id)
            )
        with pytest.raises(sdk_errors.InvalidParamsError) as too_big:
            await client.list_tasks(pb.ListTasksRequest(page_size=1000))
        with pytest.raises(sdk_errors.PushNotificationNotSupportedError):
            await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=other.id)
            )
    assert waiting.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert canceled.id == waiting.id
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert fetched.status.state == pb.TASK_STATE_CANCELED
    # The sdk read each error's ErrorInfo out of the google.rpc.Status body.
    assert not_cancelable.value.data == {"taskId": waiting.id, "state": "TASK_STATE_CANCELED"}
    assert not_found.value.data == {"taskId": "no-such-task"}
    assert "contextId" in str(wrong_context.value)
    assert "pageSize" in str(too_big.value)
    assert "params." not in str(too_big.value)


async def test_rest_streaming_send(full_url: str) -> None:
    requests: list[str] = []
    async with rest_client(full_url, streaming=True, requests=requests) as client:
        events = await sdk_stream(client, tck_message("tck-stream-001"))
        chunked = await sdk_stream(client, tck_message("tck-stream-artifact-chunked"))
        direct = await sdk_stream(client, tck_message("tck-message-response"))
        task_id = events[0].task.id
        after = await client.get_task(pb.GetTaskRequest(id=task_id))
    assert kinds(events) == ["task", "status_update", "artifact_update", "status_update"]
    assert states(events) == [
        pb.TASK_STATE_SUBMITTED,
        pb.TASK_STATE_WORKING,
        pb.TASK_STATE_COMPLETED,
    ]
    update = events[2].artifact_update
    assert (update.task_id, update.context_id) == (task_id, events[0].task.context_id)
    assert update.artifact.parts[0].text == "Stream hello from TCK"
    assert update.last_chunk
    assert after.status.state == pb.TASK_STATE_COMPLETED
    assert [a.artifact_id for a in after.artifacts] == [update.artifact.artifact_id]
    chunks = [e.artifact_update for e in chunked if e.HasField("artifact_update")]
    assert [(c.artifact.parts[0].text, c.append, c.last_chunk) for c in chunks] == [
        ("chunk-1 ", True, False),
        ("chunk-2", True, True),
    ]
    assert states(chunked)[-1] == pb.TASK_STATE_COMPLETED
    assert kinds(direct) == ["message"]
    assert text_of(direct[0].message) == "Direct message response"
    assert requests.count("POST /message:stream") == 3


async def test_rest_subscribe_until_canceled(full_url: str) -> None:
    requests: list[str] = []
    async with rest_client(full_url, streaming=True, requests=requests) as client:
        # A streamed send ends when the task needs input; a subscription stays until the end.
        sent = await sdk_stream(client, tck_message("tck-input-required"))
        task_id = sent[0].task.id
        events, canceled = await subscribe_and_cancel(client, task_id)
        with pytest.raises(sdk_errors.UnsupportedOperationError):
            async for _ in client.subscribe(pb.SubscribeToTaskRequest(id=task_id)):
                pass
    assert states(sent) == [pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_INPUT_REQUIRED]
    assert kinds(events) == ["task", "status_update"]
    assert events[0].task.id == task_id
    assert events[0].task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert events[1].status_update.status.state == pb.TASK_STATE_CANCELED
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert f"POST /tasks/{task_id}:subscribe" in requests
    assert f"POST /tasks/{task_id}:cancel" in requests


def named_config(task_id: str) -> pb.TaskPushNotificationConfig:
    """A push config with every field set, named ``cfg-1``."""
    return pb.TaskPushNotificationConfig(
        task_id=task_id,
        id="cfg-1",
        url=HOOK,
        token="tok",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )


async def test_rest_push_config_crud(full_url: str) -> None:
    requests: list[str] = []
    async with rest_client(full_url, requests=requests) as client:
        task = (await sdk_send(client, tck_message("tck-complete-task"))).task
        config = named_config(task.id)
        created = await client.create_task_push_notification_config(config)
        unnamed = await client.create_task_push_notification_config(
            pb.TaskPushNotificationConfig(task_id=task.id, url=HOOK + "/2")
        )
        got = await client.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
        )
        listed = await client.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        await client.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
        )
        await client.delete_task_push_notification_config(  # deleting is idempotent
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
        )
        remaining = await client.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        with pytest.raises(sdk_errors.TaskNotFoundError):
            await client.get_task_push_notification_config(
                pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
            )
        with pytest.raises(sdk_errors.TaskNotFoundError):
            await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id="no-such-task")
            )
    assert created == config
    assert got == config
    assert unnamed.id
    assert unnamed.id != "cfg-1"
    assert (unnamed.task_id, unnamed.url) == (task.id, HOOK + "/2")
    assert list(listed.configs) == [config, unnamed]
    assert list(remaining.configs) == [unnamed]
    path = f"/tasks/{task.id}/pushNotificationConfigs"
    assert [r for r in requests if "pushNotificationConfigs" in r] == [
        f"POST {path}",
        f"POST {path}",
        f"GET {path}/cfg-1",
        f"GET {path}",
        f"DELETE {path}/cfg-1",
        f"DELETE {path}/cfg-1",
        f"GET {path}",
        f"GET {path}/cfg-1",
        "GET /tasks/no-such-task/pushNotificationConfigs",
    ]


async def test_rest_oversized_body_is_refused_as_a_google_rpc_status() -> None:
    with running_server(tck_agent.agent, card=tck_agent.card, max_body_bytes=2048) as url:
        async with rest_client(url) as client:
            with pytest.raises(A2AClientError) as raised:
                await sdk_send(client, tck_message("tck-complete-task", "x" * 4096))
    cause = raised.value.__cause__
    assert isinstance(cause, httpx.HTTPStatusError)
    assert cause.response.status_code == 413
    body = cause.response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == 413
    assert body["error"]["details"][0]["reason"] == "PAYLOAD_TOO_LARGE"


# --- the official client in v0.3 compatibility mode ------------------------------------------


@asynccontextmanager
async def v03_client(
    url: str, *, streaming: bool = False, calls: list[str] | None = None
) -> AsyncIterator[Any]:
    """An a2a-sdk client on the card's v0.3 JSON-RPC interface (the sdk's compat transport).

    The factory prefers v1.0 where the card offers it, so the client is made from the card
    with only its v0.3 interfaces left. ``calls`` collects "path A2A-Version method" of every
    JSON-RPC request.
    """

    async def record(request: httpx.Request) -> None:
        if calls is not None and request.method == "POST":
            method = json.loads(request.content)["method"]
            calls.append(f"{request.url.path} {request.headers.get('a2a-version')} {method}")

    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT, event_hooks={"request": [record]}) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        legacy = [i for i in card.supported_interfaces if i.protocol_version == "0.3"]
        assert [(i.protocol_binding, i.url) for i in legacy] == [("JSONRPC", url + "/")]
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(legacy)
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        try:
            yield client
        finally:
            await client.close()


async def test_v03_send_get_and_cancel(tck_url: str) -> None:
    calls: list[str] = []
    async with v03_client(tck_url, calls=calls) as client:
        task = (await sdk_send(client, tck_message("tck-complete-task", "hello"))).task
        fetched = await client.get_task(pb.GetTaskRequest(id=task.id, history_length=1))
        reply = await sdk_send(client, tck_message("tck-message-response"))
        waiting = (await sdk_send(client, tck_message("tck-input-required"))).task
        canceled = await client.cancel_task(pb.CancelTaskRequest(id=waiting.id))
        with pytest.raises(sdk_errors.TaskNotCancelableError):
            await client.cancel_task(pb.CancelTaskRequest(id=waiting.id))
        with pytest.raises(sdk_errors.TaskNotFoundError):
            await client.get_task(pb.GetTaskRequest(id="no-such-task"))
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert text_of(task.status.message) == "Hello from TCK"
    assert task.status.message.role == pb.ROLE_AGENT
    assert [text_of(m) for m in task.history] == ["hello"]
    assert task.history[0].role == pb.ROLE_USER
    assert (fetched.id, fetched.context_id, fetched.status) == (
        task.id,
        task.context_id,
        task.status,
    )
    assert [text_of(m) for m in fetched.history] == ["hello"]
    assert reply.WhichOneof("payload") == "message"
    assert text_of(reply.message) == "Direct message response"
    assert waiting.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert canceled.id == waiting.id
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    # Every call was a v0.3 method, marked as 0.3, at the JSON-RPC endpoint.
    assert calls == [
        "/ 0.3 message/send",
        "/ 0.3 tasks/get",
        "/ 0.3 message/send",
        "/ 0.3 message/send",
        "/ 0.3 tasks/cancel",
        "/ 0.3 tasks/cancel",
        "/ 0.3 tasks/get",
    ]


async def test_v03_non_blocking_send(tck_url: str) -> None:
    async with v03_client(tck_url) as client:
        started = time.monotonic()
        # This script works for seconds: "blocking": false must not wait for it.
        event = await sdk_send(
            client, tck_message("test-resubscribe-message-id"), return_immediately=True
        )
        elapsed = time.monotonic() - started
        canceled = await client.cancel_task(pb.CancelTaskRequest(id=event.task.id))
    assert elapsed < tck_agent.RESUBSCRIBE_SECONDS / 2
    assert event.task.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    assert canceled.status.state == pb.TASK_STATE_CANCELED


async def test_v03_streaming_send(full_url: str) -> None:
    calls: list[str] = []
    async with v03_client(full_url, streaming=True, calls=calls) as client:
        events = await sdk_stream(client, tck_message("tck-stream-001"))
        chunked = await sdk_stream(client, tck_message("tck-stream-artifact-chunked"))
        direct = await sdk_stream(client, tck_message("tck-message-response"))
        after = await client.get_task(pb.GetTaskRequest(id=events[0].task.id))
    assert kinds(events) == ["task", "status_update", "artifact_update", "status_update"]
    assert states(events) == [
        pb.TASK_STATE_SUBMITTED,
        pb.TASK_STATE_WORKING,
        pb.TASK_STATE_COMPLETED,
    ]
    update = events[2].artifact_update
    assert update.task_id == events[0].task.id
    assert update.artifact.parts[0].text == "Stream hello from TCK"
    assert update.last_chunk
    assert after.status.state == pb.TASK_STATE_COMPLETED
    assert after.artifacts[0].parts[0].text == "Stream hello from TCK"
    chunks = [e.artifact_update for e in chunked if e.HasField("artifact_update")]
    assert [(c.artifact.parts[0].text, c.append, c.last_chunk) for c in chunks] == [
        ("chunk-1 ", True, False),
        ("chunk-2", True, True),
    ]
    assert kinds(direct) == ["message"]
    assert text_of(direct[0].message) == "Direct message response"
    assert calls == [
        "/ 0.3 message/stream",
        "/ 0.3 message/stream",
        "/ 0.3 message/stream",
        "/ 0.3 tasks/get",
    ]


async def test_v03_resubscribe_until_canceled(full_url: str) -> None:
    calls: list[str] = []
    async with v03_client(full_url, streaming=True, calls=calls) as client:
        sent = await sdk_stream(client, tck_message("tck-input-required"))
        task_id = sent[0].task.id
        events, canceled = await subscribe_and_cancel(client, task_id)
    assert states(sent) == [pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_INPUT_REQUIRED]
    assert kinds(events) == ["task", "status_update"]
    assert events[0].task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert events[1].status_update.status.state == pb.TASK_STATE_CANCELED
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert calls == ["/ 0.3 message/stream", "/ 0.3 tasks/resubscribe", "/ 0.3 tasks/cancel"]


async def test_v03_push_config_crud(full_url: str) -> None:
    calls: list[str] = []
    async with v03_client(full_url, calls=calls) as client:
        task = (await sdk_send(client, tck_message("tck-complete-task"))).task
        config = named_config(task.id)
        created = await client.create_task_push_notification_config(config)
        got = await client.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
        )
        listed = await client.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        await client.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
        )
        remaining = await client.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
    assert created == config
    assert got == config
    assert list(listed.configs) == [config]
    assert list(remaining.configs) == []
    assert calls[1:] == [
        "/ 0.3 tasks/pushNotificationConfig/set",
        "/ 0.3 tasks/pushNotificationConfig/get",
        "/ 0.3 tasks/pushNotificationConfig/list",
        "/ 0.3 tasks/pushNotificationConfig/delete",
        "/ 0.3 tasks/pushNotificationConfig/list",
    ]
