"""Helpers shared by the black-box tests: raw JSON-RPC over HTTP, cards, the sdk client, agents.

Everything here talks to a real server over real HTTP, as a remote client would; nothing reaches
into the server's objects. Every wait is a bounded loop with a deadline.
"""

import ssl
import time
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb

from a2a_core import AgentContext

#: What every v1.0 request must carry.
A2A_HEADERS: Mapping[str, str] = {"A2A-Version": "1.0"}
CARD_PATH = "/.well-known/agent-card.json"
LEGACY_CARD_PATH = "/.well-known/agent.json"

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"
ERROR_DOMAIN = "a2a-protocol.org"

#: ``google.rpc.ErrorInfo.reason`` of each A2A-specific code (spec v1.0 §5.4 / PROTOCOL.md §6.2).
A2A_REASONS: Mapping[int, str] = {
    -32001: "TASK_NOT_FOUND",
    -32002: "TASK_NOT_CANCELABLE",
    -32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    -32004: "UNSUPPORTED_OPERATION",
    -32005: "CONTENT_TYPE_NOT_SUPPORTED",
    -32006: "INVALID_AGENT_RESPONSE",
    -32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    -32008: "EXTENSION_SUPPORT_REQUIRED",
    -32009: "VERSION_NOT_SUPPORTED",
}

SUBMITTED = "TASK_STATE_SUBMITTED"
WORKING = "TASK_STATE_WORKING"
COMPLETED = "TASK_STATE_COMPLETED"
FAILED = "TASK_STATE_FAILED"
CANCELED = "TASK_STATE_CANCELED"
REJECTED = "TASK_STATE_REJECTED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELED, REJECTED})

#: Seconds a client waits for any one HTTP answer.
HTTP_TIMEOUT = 5.0
#: One TLS context for every request: httpx builds (slowly) a new one per call otherwise. The
#: servers speak plain HTTP; this only keeps each call's setup cheap.
TLS = ssl.create_default_context()
#: The longest any polling loop in these tests waits.
POLL_TIMEOUT = 5.0


def new_id() -> str:
    return str(uuid.uuid4())


# --- waiting ------------------------------------------------------------------------------------


def wait_until(condition: Callable[[], bool], *, timeout: float = POLL_TIMEOUT) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass; say whether it held."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


# --- raw JSON-RPC over HTTP ---------------------------------------------------------------------


def endpoint(url: str) -> str:
    """The JSON-RPC endpoint below a base URL (the server serves it at ``/``)."""
    return url.rstrip("/") + "/"


def rpc(
    url: str,
    method: str,
    params: Any = None,
    *,
    headers: Mapping[str, str] | None = None,
    rpc_id: str | int | None = 1,
) -> httpx.Response:
    """POST one JSON-RPC request (with ``A2A-Version: 1.0`` unless ``headers`` replace it)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id, "method": method}
    if params is not None:
        body["params"] = params
    sent = dict(A2A_HEADERS if headers is None else headers)
    return httpx.post(endpoint(url), json=body, headers=sent, timeout=HTTP_TIMEOUT, verify=TLS)


def post_raw(url: str, body: bytes, *, headers: Mapping[str, str] | None = None) -> httpx.Response:
    """POST raw bytes to the JSON-RPC endpoint (JSON content type and v1.0 unless replaced)."""
    sent = {"Content-Type": "application/json", **A2A_HEADERS} if headers is None else headers
    return httpx.post(
        endpoint(url), content=body, headers=dict(sent), timeout=HTTP_TIMEOUT, verify=TLS
    )


def result_of(response: httpx.Response, *, rpc_id: str | int | None = 1) -> Any:
    """The ``result`` of a successful JSON-RPC response (fails the test on an error)."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    document = response.json()
    assert "error" not in document, document["error"]
    assert document["jsonrpc"] == "2.0"
    assert document["id"] == rpc_id
    return document["result"]


def error_of(
    response: httpx.Response,
    code: int,
    *,
    rpc_id: str | int | None = 1,
    http_status: int = 200,
) -> dict[str, Any]:
    """The ``error`` of a JSON-RPC error response, checked: code, id, and the ErrorInfo entry."""
    assert response.status_code == http_status, response.text
    assert response.headers["content-type"].startswith("application/json")
    document = response.json()
    assert document["jsonrpc"] == "2.0"
    assert "result" not in document, document
    assert document["id"] == rpc_id
    error: dict[str, Any] = document["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str)
    assert error["message"]
    error_info(error)
    return error


def error_info(error: Mapping[str, Any]) -> dict[str, Any]:
    """The ``google.rpc.ErrorInfo`` entry of ``error.data``, checked against the spec's table."""
    data = error.get("data")
    assert isinstance(data, list), f"error.data must be an array of typed details: {error}"
    assert all("@type" in item for item in data), data
    infos = [item for item in data if item["@type"] == ERROR_INFO_TYPE]
    assert len(infos) == 1, data
    info: dict[str, Any] = infos[0]
    assert info["domain"] == ERROR_DOMAIN
    expected = A2A_REASONS.get(error["code"])
    if expected is not None:
        assert info["reason"] == expected, info
    else:
        assert isinstance(info["reason"], str), info
        assert info["reason"].isupper(), info
    return info


def violated_fields(error: Mapping[str, Any]) -> list[str]:
    """The wire paths named by the ``google.rpc.BadRequest`` entry of ``error.data``."""
    bad = [item for item in error["data"] if item["@type"] == BAD_REQUEST_TYPE]
    assert len(bad) == 1, error
    return [violation["field"] for violation in bad[0]["fieldViolations"]]


# --- A2A operations -----------------------------------------------------------------------------


def user_message(
    text: str,
    *,
    message_id: str | None = None,
    task_id: str | None = None,
    context_id: str | None = None,
) -> dict[str, Any]:
    """A v1.0 user message (a fresh ``messageId`` unless given)."""
    message: dict[str, Any] = {
        "messageId": message_id or new_id(),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id is not None:
        message["taskId"] = task_id
    if context_id is not None:
        message["contextId"] = context_id
    return message


def send_params(
    text: str,
    *,
    return_immediately: bool = False,
    history_length: int | None = None,
    message_id: str | None = None,
    task_id: str | None = None,
    context_id: str | None = None,
) -> dict[str, Any]:
    """``SendMessage`` params for one text message."""
    message = user_message(text, message_id=message_id, task_id=task_id, context_id=context_id)
    params: dict[str, Any] = {"message": message}
    configuration: dict[str, Any] = {}
    if return_immediately:
        configuration["returnImmediately"] = True
    if history_length is not None:
        configuration["historyLength"] = history_length
    if configuration:
        params["configuration"] = configuration
    return params


def send(url: str, text: str, **options: Any) -> dict[str, Any]:
    """``SendMessage``; the result (``{"task": …}`` or ``{"message": …}``)."""
    result: dict[str, Any] = result_of(rpc(url, "SendMessage", send_params(text, **options)))
    return result


def send_task(url: str, text: str, **options: Any) -> dict[str, Any]:
    """``SendMessage`` answered with a task; that task."""
    result = send(url, text, **options)
    assert set(result) == {"task"}, result
    task: dict[str, Any] = result["task"]
    return task


def get_task(url: str, task_id: str, *, history_length: int | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"id": task_id}
    if history_length is not None:
        params["historyLength"] = history_length
    task: dict[str, Any] = result_of(rpc(url, "GetTask", params))
    return task


def list_tasks(url: str, **params: Any) -> dict[str, Any]:
    listing: dict[str, Any] = result_of(rpc(url, "ListTasks", params))
    return listing


def cancel_task(url: str, task_id: str) -> dict[str, Any]:
    task: dict[str, Any] = result_of(rpc(url, "CancelTask", {"id": task_id}))
    return task


def state_of(task: Mapping[str, Any]) -> str:
    state: str = task["status"]["state"]
    return state


def text_of(message: Mapping[str, Any]) -> str:
    """The text of a message's text parts, joined."""
    return "".join(part.get("text", "") for part in message["parts"])


def status_text(task: Mapping[str, Any]) -> str:
    """The text of a task's status message ("" when it has none)."""
    message = task["status"].get("message")
    return text_of(message) if message else ""


def wait_for_state(
    url: str, task_id: str, states: Collection[str], *, timeout: float = POLL_TIMEOUT
) -> dict[str, Any]:
    """Poll ``GetTask`` until the task is in one of ``states``; the task (fails on timeout)."""
    seen: list[dict[str, Any]] = []

    def reached() -> bool:
        seen.append(get_task(url, task_id))
        return state_of(seen[-1]) in states

    assert wait_until(reached, timeout=timeout), f"task never reached {states}: {seen[-1]}"
    return seen[-1]


# --- the agent card -----------------------------------------------------------------------------


def fetch_card(
    url: str, *, path: str = CARD_PATH, headers: Mapping[str, str] | None = None
) -> httpx.Response:
    return httpx.get(
        url.rstrip("/") + path, headers=dict(headers or {}), timeout=HTTP_TIMEOUT, verify=TLS
    )


def card_of(url: str, *, path: str = CARD_PATH) -> dict[str, Any]:
    """The agent card served below ``url``."""
    response = fetch_card(url, path=path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    card: dict[str, Any] = response.json()
    return card


def jsonrpc_url(card: Mapping[str, Any]) -> str:
    """The URL of the card's (single) v1.0 JSON-RPC interface."""
    interfaces = [
        i
        for i in card["supportedInterfaces"]
        if i["protocolBinding"] == "JSONRPC" and i["protocolVersion"] == "1.0"
    ]
    assert len(interfaces) == 1, card["supportedInterfaces"]
    url: str = interfaces[0]["url"]
    return url


# --- the official a2a-sdk client ----------------------------------------------------------------


@asynccontextmanager
async def sdk_client(url: str, *, requests: list[str] | None = None) -> AsyncIterator[Any]:
    """An a2a-sdk client resolved from ``url``'s card (non-streaming); closed afterwards.

    ``requests`` collects "METHOD URL" of every HTTP request the sdk makes.
    """

    async def record(request: httpx.Request) -> None:
        if requests is not None:
            requests.append(f"{request.method} {request.url}")

    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT, event_hooks={"request": [record]}) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
        client = await factory.create_from_url(url)
        try:
            yield client
        finally:
            await client.close()


def sdk_message(
    text: str,
    *,
    message_id: str | None = None,
    task_id: str = "",
    context_id: str = "",
) -> Any:
    """A protobuf user message."""
    return pb.Message(
        message_id=message_id or new_id(),
        role=pb.ROLE_USER,
        parts=[pb.Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


async def sdk_send(
    client: Any,
    message: Any,
    *,
    return_immediately: bool = False,
    history_length: int | None = None,
) -> Any:
    """Send ``message``; the single ``StreamResponse`` a non-streaming send yields."""
    configuration = pb.SendMessageConfiguration(return_immediately=return_immediately)
    if history_length is not None:
        configuration.history_length = history_length
    request = pb.SendMessageRequest(message=message, configuration=configuration)
    events = [event async for event in client.send_message(request)]
    assert len(events) == 1, events
    return events[0]


# --- agents used by several test modules --------------------------------------------------------

#: How long :func:`slow_agent` works before it answers.
SLOW_SECONDS = 0.5


async def slow_agent(ctx: AgentContext) -> str:
    """Work for :data:`SLOW_SECONDS`, then answer."""
    await anyio.sleep(SLOW_SECONDS)
    return f"slow: {ctx.text}"
