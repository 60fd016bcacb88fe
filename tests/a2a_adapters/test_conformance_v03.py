"""What the official v0.3 conformance kit checks over JSON-RPC, as our own black-box tests.

The kit is a2aproject/a2a-tck, branch ``0.3.x`` (tag 0.3.0.beta4): its ``tests/mandatory``,
``tests/optional/capabilities``, ``tests/optional/quality`` and ``tests/optional/features``
categories. Each test below names, in its docstring, the kit test (``path::name``) and the
section of the A2A v0.3.0 specification it checks; where the kit only logs or accepts several
answers, the test asserts what the specification (or ``PROTOCOL.md``) requires and no more.

The server is ``examples/tck_agent.py`` configured as for the 0.3 kit: streaming and push on,
webhooks allowed to 127.0.0.1, sends not deduplicated. Like the kit, requests carry no
``A2A-Version`` header unless a test is about that header. One server per adapter serves the
whole module; every test makes its own tasks, and none waits on another's.

Not encoded here: the kit's TLS and certificate checks (these servers speak plain HTTP on
127.0.0.1), its gRPC- and REST-transport tests (this module is the JSON-RPC binding), and
in-task authentication (the TCK agent never asks for it). Webhooks only ever point at a
receiver on 127.0.0.1, so no test makes the server reach beyond it.
"""

import json
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from a2a_adapters import BearerTokens
from a2a_core.card import AgentCard, AgentSkill
from examples import tck_agent
from tests import servers
from tests.a2a_adapters.sse import Event, SseStream
from tests.a2a_adapters.support import HTTP_TIMEOUT, TLS, endpoint, new_id, wait_until
from tests.a2a_adapters.webhooks import Receiver, receiving
from tests.servers import running_server

#: Every test here runs against the asyncio and the trio adapter.
pytestmark = pytest.mark.usefixtures("module_adapter")

Json = dict[str, Any]

#: The v0.3 task states (``TaskState`` of the v0.3 JSON schema).
V03_STATES = frozenset(
    {
        "submitted",
        "working",
        "input-required",
        "completed",
        "canceled",
        "failed",
        "rejected",
        "auth-required",
        "unknown",
    }
)
V03_TERMINAL = frozenset({"completed", "canceled", "failed", "rejected"})
#: What the kit's message/send tests accept for a freshly sent message's task.
SEND_STATES = frozenset({"submitted", "working", "input-required", "completed"})

#: How long the TCK agent works on a message without a scripted prefix.
PLAIN_SECONDS = tck_agent.DEFAULT_SECONDS

#: Each v0.3 JSON-RPC method and its v1.0 name (spec v1.0 Appendix A / PROTOCOL.md §3.1).
V03_TO_V1 = {
    "message/send": "SendMessage",
    "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask",
    "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
    "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
}


@pytest.fixture(scope="module")
def tck_url(module_adapter: servers.Adapter) -> Iterator[str]:
    """The TCK agent, configured as for the 0.3.x kit."""
    with running_server(
        tck_agent.agent,
        card=tck_agent.card,
        streaming=True,
        push=True,
        push_allow_hosts=("127.0.0.1",),
        idempotent_sends=False,
    ) as url:
        yield url


# --- raw v0.3 JSON-RPC ----------------------------------------------------------------------------


def post(
    url: str,
    method: str,
    params: Any,
    *,
    rpc_id: str | int | None = 1,
    headers: Mapping[str, str] | None = None,
) -> httpx.Response:
    """POST one JSON-RPC request as the kit does: JSON, and no ``A2A-Version`` unless given."""
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    return httpx.post(
        endpoint(url), json=body, headers=dict(headers or {}), timeout=HTTP_TIMEOUT, verify=TLS
    )


def post_raw(url: str, body: bytes) -> httpx.Response:
    return httpx.post(
        endpoint(url),
        content=body,
        headers={"Content-Type": "application/json"},
        timeout=HTTP_TIMEOUT,
        verify=TLS,
    )


def document(response: httpx.Response) -> Json:
    """A JSON-RPC response over HTTP: 200 and JSON, errors included (the kit asserts both)."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    found: Json = response.json()
    assert found["jsonrpc"] == "2.0", found
    return found


def ok(response: httpx.Response, *, rpc_id: str | int | None = 1) -> Any:
    """The ``result`` of a successful response with our id."""
    found = document(response)
    assert "error" not in found, found["error"]
    assert found["id"] == rpc_id
    return found["result"]


def check_error(found: Mapping[str, Any], code: int, rpc_id: str | int | None) -> Json:
    """A v0.3 error response: a plain JSON-RPC error object (``data``, if any, is free-form)."""
    assert found["jsonrpc"] == "2.0", found
    assert "result" not in found, found
    assert found["id"] == rpc_id, found
    error: Json = found["error"]
    assert set(error) <= {"code", "message", "data"}, error
    assert type(error["code"]) is int
    assert error["code"] == code, error
    assert isinstance(error["message"], str)
    assert error["message"].strip()
    return error


def failed(response: httpx.Response, code: int, *, rpc_id: str | int | None = 1) -> Json:
    """The ``error`` of an error response, checked (code, our id, the v0.3 error shape)."""
    return check_error(document(response), code, rpc_id)


def stream_or_json_error(response: httpx.Response, code: int, *, rpc_id: str | int = 1) -> Json:
    """An error to a streaming call: a JSON-RPC error, as plain JSON or as the one SSE event."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        frames = [line for line in response.text.splitlines() if line.startswith("data:")]
        assert len(frames) == 1, response.text
        found: Json = json.loads(frames[0].removeprefix("data:"))
    else:
        found = document(response)
    return check_error(found, code, rpc_id)


# --- v0.3 objects ---------------------------------------------------------------------------------


def message(
    prefix: str = "plain",
    text: str = "hello",
    *,
    parts: list[Json] | None = None,
    **fields: Any,
) -> Json:
    """A v0.3 user message; the TCK agent scripts its answer by the ``messageId`` prefix."""
    found: Json = {
        "kind": "message",
        "messageId": f"{prefix}-{new_id()}",
        "role": "user",
        "parts": parts if parts is not None else [{"kind": "text", "text": text}],
    }
    found.update(fields)
    return found


def send_params(msg: Json, *, blocking: bool | None = None, **configuration: Any) -> Json:
    params: Json = {"message": msg}
    if blocking is not None:
        configuration["blocking"] = blocking
    if configuration:
        params["configuration"] = configuration
    return params


def send(url: str, prefix: str, text: str = "hello", **options: Any) -> Json:
    """``message/send`` of a fresh message with this prefix; the result (a Task or a Message)."""
    result: Json = ok(post(url, "message/send", send_params(message(prefix, text), **options)))
    return result


def send_task(url: str, prefix: str, text: str = "hello", **options: Any) -> Json:
    """``message/send`` answered with a task; that task, checked as v0.3."""
    task = send(url, prefix, text, **options)
    check_task(task)
    return task


def get_task(url: str, task_id: str, **params: Any) -> Json:
    task: Json = ok(post(url, "tasks/get", {"id": task_id, **params}))
    check_task(task)
    return task


def cancel(url: str, task_id: str) -> Json:
    task: Json = ok(post(url, "tasks/cancel", {"id": task_id}))
    check_task(task)
    return task


def working_task(url: str) -> Json:
    """A task the agent is still working on (a plain message, sent without blocking)."""
    task = send_task(url, "plain", "keep busy", blocking=False)
    assert task["status"]["state"] in ("submitted", "working")
    return task


def waiting_task(url: str) -> Json:
    """A task waiting for input: not terminal, so cancelable, and it stays so."""
    task = send_task(url, "tck-input-required", blocking=True)
    assert task["status"]["state"] == "input-required"
    return task


def text_of(msg: Mapping[str, Any]) -> str:
    return "".join(part.get("text", "") for part in msg["parts"])


def check_part(part: Mapping[str, Any]) -> None:
    """A v0.3 Part: ``kind`` text, file (bytes or uri) or data (an object)."""
    match part["kind"]:
        case "text":
            assert isinstance(part["text"], str)
        case "file":
            file = part["file"]
            assert ("bytes" in file) != ("uri" in file), part
        case "data":
            assert isinstance(part["data"], dict), part
        case other:
            raise AssertionError(f"not a v0.3 part kind: {other!r}")


def check_message(msg: Mapping[str, Any]) -> None:
    assert msg["kind"] == "message", msg
    assert msg["role"] in ("user", "agent"), msg
    assert isinstance(msg["messageId"], str)
    assert msg["messageId"]
    assert msg["parts"], msg
    for part in msg["parts"]:
        check_part(part)


def check_status(status: Mapping[str, Any]) -> None:
    assert status["state"] in V03_STATES, status
    if "message" in status:
        check_message(status["message"])
    if "timestamp" in status:
        assert isinstance(status["timestamp"], str)


def check_artifact(artifact: Mapping[str, Any]) -> None:
    assert isinstance(artifact["artifactId"], str)
    assert artifact["artifactId"]
    assert artifact["parts"], artifact
    for part in artifact["parts"]:
        check_part(part)


def check_task(task: Mapping[str, Any]) -> None:
    """A v0.3 Task: ``kind: "task"``, ids, a status with a lower-case state."""
    assert task["kind"] == "task", task
    assert isinstance(task["id"], str)
    assert task["id"]
    assert isinstance(task["contextId"], str)
    assert task["contextId"]
    check_status(task["status"])
    for msg in task.get("history", []):
        check_message(msg)
    for artifact in task.get("artifacts", []):
        check_artifact(artifact)


def check_event(event: Mapping[str, Any]) -> None:
    """One v0.3 stream event: a Task, a Message, or a status or artifact update."""
    match event["kind"]:
        case "task":
            check_task(event)
        case "message":
            check_message(event)
        case "status-update":
            assert isinstance(event["taskId"], str)
            assert isinstance(event["contextId"], str)
            check_status(event["status"])
            assert type(event["final"]) is bool, event
        case "artifact-update":
            assert isinstance(event["taskId"], str)
            assert isinstance(event["contextId"], str)
            check_artifact(event["artifact"])
        case other:
            raise AssertionError(f"not a v0.3 event kind: {other!r}")


# --- v0.3 streams ---------------------------------------------------------------------------------


@contextmanager
def open_stream(
    url: str, method: str, params: Any, *, rpc_id: str | int = 1, timeout: float = 10.0
) -> Iterator[SseStream]:
    """A streaming v0.3 call, open: fails unless answered 200 with ``text/event-stream``."""
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    with (
        httpx.Client(timeout=HTTP_TIMEOUT, verify=TLS) as client,
        client.stream(
            "POST", endpoint(url), json=body, headers={"Accept": "text/event-stream"}
        ) as response,
    ):
        assert response.status_code == 200, response.read().decode()
        content_type = response.headers["content-type"]
        assert content_type.startswith("text/event-stream"), content_type
        yield SseStream(response, timeout=timeout)


def result_of_frame(frame: Event, *, rpc_id: str | int = 1) -> Json:
    """The v0.3 event one SSE frame carries: a JSON-RPC response with our id, checked."""
    found = frame.json()
    assert found["jsonrpc"] == "2.0", found
    assert found["id"] == rpc_id, found
    assert "error" not in found, found
    event: Json = found["result"]
    check_event(event)
    return event


def stream_events(url: str, method: str, params: Any, *, rpc_id: str | int = 1) -> list[Json]:
    """Every event of a stream, read to the end the server gives it."""
    with open_stream(url, method, params, rpc_id=rpc_id) as stream:
        frames = stream.events()
        assert stream.ended
    return [result_of_frame(frame, rpc_id=rpc_id) for frame in frames]


def kinds(events: list[Json]) -> list[str]:
    return [event["kind"] for event in events]


def check_finals(events: list[Json]) -> None:
    """``final`` is true on the last event (a status update) and on no other."""
    assert events[-1]["kind"] == "status-update", events[-1]
    assert events[-1]["final"] is True
    for event in events[:-1]:
        assert event.get("final", False) is False, event


# --- the agent card -------------------------------------------------------------------------------


def card_of(url: str) -> Json:
    response = httpx.get(url + "/.well-known/agent-card.json", timeout=HTTP_TIMEOUT, verify=TLS)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    card: Json = response.json()
    return card


def test_card_has_the_v03_required_fields(tck_url: str) -> None:
    """mandatory/protocol/test_agent_card_mandatory.py::test_agent_card_mandatory_fields,
    ::test_agent_card_basic_info_mandatory,
    mandatory/protocol/test_agent_card.py::test_mandatory_field_types
    (A2A v0.3 §5.5: the AgentCard's required fields and their types)."""
    card = card_of(tck_url)
    for field in ("name", "description", "url", "version", "protocolVersion"):
        assert isinstance(card[field], str), field
        assert card[field].strip(), field
    assert card["protocolVersion"].startswith("0.3")
    assert card["url"] == tck_url + "/"
    assert isinstance(card["capabilities"], dict)
    for field in ("defaultInputModes", "defaultOutputModes"):
        modes = card[field]
        assert isinstance(modes, list), field
        assert all(isinstance(mode, str) and mode.strip() for mode in modes), modes


def test_card_skills(tck_url: str) -> None:
    """mandatory/protocol/test_agent_card_mandatory.py::test_agent_card_skills_mandatory
    (v0.3 §5.5.4: at least one skill, each with id, name, description and tags)."""
    skills = card_of(tck_url)["skills"]
    assert isinstance(skills, list)
    assert skills
    for skill in skills:
        for field in ("id", "name", "description"):
            assert isinstance(skill[field], str), (field, skill)
        assert isinstance(skill["tags"], list), skill
    assert [skill["id"] for skill in skills] == ["tck"]


def test_card_transport_fields(tck_url: str) -> None:
    """optional/capabilities/test_agent_card_optional.py::test_agent_interfaces_structure
    (v0.3 §5.5: ``preferredTransport`` names the transport at ``url``; §5.5.5 each
    ``additionalInterfaces`` entry is an AgentInterface with a URL and a transport)."""
    card = card_of(tck_url)
    assert card["preferredTransport"] == "JSONRPC"
    interfaces = card["additionalInterfaces"]
    assert isinstance(interfaces, list)
    for interface in interfaces:
        assert set(interface) == {"url", "transport"}, interface
        assert interface["url"].startswith(("http://", "https://")), interface
        assert interface["transport"] in ("JSONRPC", "GRPC", "HTTP+JSON"), interface
    # The card's own url is the one interface: it is listed again, as the spec advises.
    assert {"url": card["url"], "transport": "JSONRPC"} in interfaces
    # ... and it is where v0.3 JSON-RPC is answered.
    failed(post(card["url"].removesuffix("/"), "tasks/get", {"id": "no-such-task"}), -32001)


def test_card_additional_interfaces_speak_v03(tck_url: str) -> None:
    """mandatory/protocol/test_a2a_v030_transport_compliance.py::test_multi_transport_method_mapping,
    optional/multi_transport (v0.3 §3.4/§5.5.5: every interface the card declares serves the
    v0.3 methods over its transport: JSON-RPC ``message/send`` at its URL, or over HTTP+JSON
    ``POST {url}/v1/message:send``; PROTOCOL.md §4.2: the v0.3 fields describe the 0.3
    interfaces only)."""
    card = card_of(tck_url)
    assert card["additionalInterfaces"]
    for interface in card["additionalInterfaces"]:
        params = send_params(message("tck-complete-task"), blocking=True)
        if interface["transport"] == "JSONRPC":
            task = ok(post(interface["url"].removesuffix("/"), "message/send", params))
        else:
            assert interface["transport"] == "HTTP+JSON", interface
            response = httpx.post(
                interface["url"].rstrip("/") + "/v1/message:send",
                json=params,
                timeout=HTTP_TIMEOUT,
                verify=TLS,
            )
            assert response.status_code == 200, response.text
            task = response.json()
        check_task(task)
        assert task["status"]["state"] == "completed"


def test_card_capabilities(tck_url: str) -> None:
    """optional/capabilities/test_agent_card_optional.py::test_capabilities_structure
    (v0.3 §5.5.2: capabilities are booleans; this server declares what it was started with,
    and ``supportsAuthenticatedExtendedCard`` only when it has an extended card)."""
    card = card_of(tck_url)
    capabilities = card["capabilities"]
    assert capabilities["streaming"] is True
    assert capabilities["pushNotifications"] is True
    for value in capabilities.values():
        assert isinstance(value, bool | list), capabilities
    assert card.get("supportsAuthenticatedExtendedCard", False) is False


# --- message/send ---------------------------------------------------------------------------------


def test_blocking_send_returns_the_completed_task(tck_url: str) -> None:
    """mandatory/protocol/test_message_send_method.py::test_message_send_valid_text
    (v0.3 §7.1: the result is a bare Task with ``kind``; ``blocking: true`` waits for it)."""
    msg = message("tck-complete-task", "hello")
    task = ok(
        post(tck_url, "message/send", send_params(msg, blocking=True), rpc_id="r-1"), rpc_id="r-1"
    )
    check_task(task)
    assert task["status"]["state"] == "completed"
    answer = task["status"]["message"]
    assert answer["role"] == "agent"
    assert text_of(answer) == "Hello from TCK"
    assert answer["taskId"] == task["id"]
    assert answer["contextId"] == task["contextId"]
    [sent] = task["history"]
    assert sent["messageId"] == msg["messageId"]
    assert sent["role"] == "user"
    assert text_of(sent) == "hello"
    assert sent["taskId"] == task["id"]
    assert sent["contextId"] == task["contextId"]


def test_non_blocking_send_returns_at_once(tck_url: str) -> None:
    """mandatory/protocol/test_message_send_method.py::test_message_send_valid_text
    (v0.3 §7.1.1 ``MessageSendConfiguration.blocking: false``: answered with the task while
    the agent is still working on it)."""
    started = time.monotonic()
    task = send_task(tck_url, "plain", blocking=False)
    elapsed = time.monotonic() - started
    try:
        assert task["status"]["state"] in ("submitted", "working")
        assert elapsed < PLAIN_SECONDS / 2, f"a non-blocking send took {elapsed:.2f} s"
        assert get_task(tck_url, task["id"])["status"]["state"] in ("submitted", "working")
    finally:
        cancel(tck_url, task["id"])


def test_send_without_configuration(tck_url: str) -> None:
    """mandatory/protocol/test_message_send_method.py::test_message_send_valid_text (v0.3 §7.1:
    no configuration at all is valid; the answer is a Task in one of the states the kit
    accepts, or a Message)."""
    result = ok(post(tck_url, "message/send", {"message": message("tck-complete-task")}))
    if result["kind"] == "message":
        check_message(result)
        assert result["role"] == "agent"
    else:
        check_task(result)
        assert result["status"]["state"] in SEND_STATES


def test_send_answered_with_a_message(tck_url: str) -> None:
    """mandatory/protocol/test_message_send_method.py::test_message_send_valid_text
    (v0.3 §7.1: ``message/send`` may answer with a bare Message, ``kind: "message"``)."""
    answer = send(tck_url, "tck-message-response", blocking=True)
    check_message(answer)
    assert answer["role"] == "agent"
    assert text_of(answer) == "Direct message response"


def test_blocking_send_returns_on_input_required(tck_url: str) -> None:
    """mandatory/protocol/test_message_send_method.py (v0.3 §6.3: input-required interrupts
    the task, so a blocking send answers there)."""
    task = send_task(tck_url, "tck-input-required", blocking=True)
    assert task["status"]["state"] == "input-required"


def test_rejected_task(tck_url: str) -> None:
    """v0.3 §6.3 TaskState ``rejected`` (a lower-case v0.3 state on the wire)."""
    task = send_task(tck_url, "tck-reject-task", blocking=True)
    assert task["status"]["state"] == "rejected"
    assert text_of(task["status"]["message"]) == "rejected"


def test_send_continues_a_task(tck_url: str) -> None:
    """mandatory/protocol/test_message_send_method.py::test_message_send_continue_task,
    optional/capabilities/test_message_send_capabilities.py::
    test_message_send_continue_with_contextid (v0.3 §7.1: a message with the task's
    ``taskId``, and its ``contextId``, continues that task)."""
    task = waiting_task(tck_url)
    follow_up = message(
        "tck-complete-task", "go on", taskId=task["id"], contextId=task["contextId"]
    )
    continued = ok(post(tck_url, "message/send", send_params(follow_up, blocking=True)))
    check_task(continued)
    assert continued["id"] == task["id"]
    assert continued["contextId"] == task["contextId"]
    assert continued["status"]["state"] in SEND_STATES
    texts = [text_of(m) for m in continued["history"] if m["role"] == "user"]
    assert texts == ["hello", "go on"]


@pytest.mark.parametrize(
    "parts",
    [
        pytest.param(
            [
                {
                    "kind": "file",
                    "file": {"name": "a.txt", "mimeType": "text/plain", "bytes": "dGNr"},
                }
            ],
            id="file-bytes",
        ),
        pytest.param(
            [{"kind": "file", "file": {"mimeType": "text/plain", "uri": "https://example.com/a"}}],
            id="file-uri",
        ),
        pytest.param([{"kind": "data", "data": {"key": "value", "n": [1, 2]}}], id="data"),
        pytest.param(
            [{"kind": "text", "text": "two parts"}, {"kind": "data", "data": {"k": 1}}],
            id="multiple",
        ),
    ],
)
def test_send_part_kinds(tck_url: str, parts: list[Json]) -> None:
    """optional/capabilities/test_message_send_capabilities.py::test_message_send_valid_file_part,
    ::test_message_send_valid_data_part, ::test_message_send_valid_multiple_parts
    (v0.3 §6.5: TextPart, FilePart with FileWithBytes or FileWithUri, DataPart; they come
    back as sent)."""
    msg = message("tck-complete-task", parts=parts)
    task = ok(post(tck_url, "message/send", send_params(msg, blocking=True)))
    check_task(task)
    assert task["status"]["state"] == "completed"
    [sent] = get_task(tck_url, task["id"])["history"]
    assert [{k: v for k, v in part.items() if k != "type"} for part in sent["parts"]] == parts


@pytest.mark.parametrize(
    ("prefix", "part"),
    [
        pytest.param(
            "tck-artifact-text", {"kind": "text", "text": "Generated text content"}, id="text"
        ),
        pytest.param(
            "tck-artifact-file",
            {
                "kind": "file",
                "file": {"bytes": "dGNr", "name": "output.txt", "mimeType": "text/plain"},
            },
            id="file-bytes",
        ),
        pytest.param(
            "tck-artifact-file-url",
            {
                "kind": "file",
                "file": {
                    "uri": "https://example.com/output.txt",
                    "name": "output.txt",
                    "mimeType": "text/plain",
                },
            },
            id="file-uri",
        ),
        pytest.param(
            "tck-artifact-data", {"kind": "data", "data": {"key": "value", "count": 42}}, id="data"
        ),
    ],
)
def test_artifacts_of_every_part_kind(tck_url: str, prefix: str, part: Json) -> None:
    """v0.3 §6.7 Artifact (``artifactId``, ``parts``) and §6.5 its parts in the v0.3 form
    (``kind``; a file's ``bytes``/``uri``, ``name`` and ``mimeType``)."""
    task = send_task(tck_url, prefix, blocking=True)
    assert task["status"]["state"] == "completed"
    [artifact] = task["artifacts"]
    [found] = artifact["parts"]
    assert {k: v for k, v in found.items() if k != "type"} == part
    assert get_task(tck_url, task["id"])["artifacts"] == task["artifacts"]


def test_send_history_length(tck_url: str) -> None:
    """v0.3 §7.1.1 ``MessageSendConfiguration.historyLength`` limits the history the answer
    carries."""
    with_one = send_task(tck_url, "tck-complete-task", blocking=True, historyLength=1)
    assert len(with_one["history"]) == 1
    with_none = send_task(tck_url, "tck-complete-task", blocking=True, historyLength=0)
    assert with_none.get("history", []) == []


def test_new_task_in_an_existing_context(tck_url: str) -> None:
    """optional/capabilities/test_message_send_capabilities.py::
    test_message_send_continue_with_contextid (v0.3 §7.1: a message with only the
    ``contextId`` of an earlier task starts a new task in that context)."""
    first = send_task(tck_url, "tck-complete-task", blocking=True)
    msg = message("tck-complete-task", contextId=first["contextId"])
    second = ok(post(tck_url, "message/send", send_params(msg, blocking=True)))
    check_task(second)
    assert second["id"] != first["id"]
    assert second["contextId"] == first["contextId"]


@pytest.mark.parametrize("reference", ["earlier", "non-existent-task-id"])
def test_reference_task_ids(tck_url: str, reference: str) -> None:
    """optional/features/test_reference_task_ids.py::test_reference_task_ids_valid,
    ::test_reference_task_ids_invalid (v0.3 §6.4 ``referenceTaskIds``: accepted and kept with
    the message; an unknown one is not an error of the send)."""
    if reference == "earlier":
        reference = send_task(tck_url, "tck-complete-task", blocking=True)["id"]
    msg = message("tck-complete-task", referenceTaskIds=[reference])
    task = ok(post(tck_url, "message/send", send_params(msg, blocking=True)))
    check_task(task)
    assert task["history"][0]["referenceTaskIds"] == [reference]


def test_send_to_an_unknown_task(tck_url: str) -> None:
    """v0.3 §7.1 and §8.2 TaskNotFoundError (-32001): a message naming an unknown task."""
    msg = message("tck-complete-task", taskId="no-such-task")
    error = failed(post(tck_url, "message/send", send_params(msg, blocking=True)), -32001)
    assert "not found" in error["message"].lower()


def test_send_to_a_terminal_task(tck_url: str) -> None:
    """v0.3 §6.3: a terminal task accepts no more messages ("will result in an error"; the
    v1.0 code is -32004, the reference SDK's -32602, PROTOCOL.md §3.2)."""
    task = send_task(tck_url, "tck-complete-task", blocking=True)
    msg = message("tck-complete-task", taskId=task["id"])
    found = document(post(tck_url, "message/send", send_params(msg, blocking=True)))
    assert found["error"]["code"] in (-32004, -32602), found
    check_error(found, found["error"]["code"], 1)


# --- tasks/get ------------------------------------------------------------------------------------


def test_tasks_get(tck_url: str) -> None:
    """mandatory/protocol/test_tasks_get_method.py::test_tasks_get_valid
    (v0.3 §7.3: ``tasks/get`` by id answers the Task)."""
    task = send_task(tck_url, "tck-complete-task", blocking=True)
    found = get_task(tck_url, task["id"])
    assert found["id"] == task["id"]
    assert found["contextId"] == task["contextId"]
    assert found["status"]["state"] == "completed"


def test_tasks_get_history_length(tck_url: str) -> None:
    """mandatory/protocol/test_tasks_get_method.py::test_tasks_get_with_history_length,
    mandatory/protocol/test_state_transitions.py::test_task_history_length,
    optional/features/test_sdk_limitations.py::test_history_length_parameter_compliance,
    optional/quality/test_task_state_quality.py::test_task_state_transitions
    (v0.3 §7.3.1 ``historyLength``: at most the N most recent messages)."""
    task = waiting_task(tck_url)
    for turn in range(3):
        follow_up = message("tck-input-required", f"turn {turn}", taskId=task["id"])
        continued = ok(post(tck_url, "message/send", send_params(follow_up, blocking=True)))
        assert continued["status"]["state"] == "input-required"
    full = get_task(tck_url, task["id"])["history"]
    assert [text_of(m) for m in full] == ["hello", "turn 0", "turn 1", "turn 2"]
    one = get_task(tck_url, task["id"], historyLength=1)
    assert "history" in one
    assert [m["messageId"] for m in one["history"]] == [full[-1]["messageId"]]
    two = get_task(tck_url, task["id"], historyLength=2)["history"]
    assert [m["messageId"] for m in two] == [m["messageId"] for m in full[-2:]]
    assert len(get_task(tck_url, task["id"], historyLength=100)["history"]) == len(full)


def test_tasks_get_history_length_boundaries(tck_url: str) -> None:
    """optional/quality/test_edge_cases.py::test_boundary_values (a large and a zero
    ``historyLength`` are accepted; a negative one is invalid, -32602)."""
    task = send_task(tck_url, "tck-complete-task", blocking=True)
    for history_length in (2147483647, 9999, 0):
        assert get_task(tck_url, task["id"], historyLength=history_length)["id"] == task["id"]
    failed(post(tck_url, "tasks/get", {"id": task["id"], "historyLength": -1}), -32602)


def test_tasks_get_unknown_task(tck_url: str) -> None:
    """mandatory/protocol/test_tasks_get_method.py::test_tasks_get_nonexistent,
    mandatory/quality/test_error_validation_enhanced.py::test_nonexistent_resource_error_validation
    (v0.3 §7.3 and §8.2: TaskNotFoundError, -32001)."""
    error = failed(post(tck_url, "tasks/get", {"id": "nonexistent-task-id"}), -32001)
    assert "not found" in error["message"].lower()


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({}, id="no-id"),
        pytest.param({"id": 12345}, id="number-id"),
        pytest.param({"id": {"invalid": "object"}}, id="object-id"),
        pytest.param({"id": ""}, id="empty-id"),
        pytest.param(["not", "an", "object"], id="array-params"),
    ],
)
def test_tasks_get_invalid_params(tck_url: str, params: Any) -> None:
    """mandatory/quality/test_error_validation_enhanced.py::test_invalid_params_error_validation,
    ::test_error_response_completeness (JSON-RPC 2.0 §5.1, v0.3 §8.1 InvalidParamsError -32602)."""
    failed(post(tck_url, "tasks/get", params), -32602)


def test_unknown_params_are_ignored(tck_url: str) -> None:
    """mandatory/quality/test_error_validation_enhanced.py::test_invalid_params_error_validation
    ("extra invalid parameters"), optional/quality/test_edge_cases.py::test_extra_fields
    (unknown members are ignored, not refused: the unknown task is what is reported)."""
    failed(post(tck_url, "tasks/get", {"id": "nonexistent", "invalid_extra_param": 1}), -32001)
    msg = message("tck-complete-task", _extra_field="x", _debug_info={"client": "1.0"})
    task = ok(post(tck_url, "message/send", {**send_params(msg, blocking=True), "extra": True}))
    assert task["status"]["state"] == "completed"


# --- tasks/cancel ---------------------------------------------------------------------------------


def test_cancel_a_working_task(tck_url: str) -> None:
    """mandatory/protocol/test_tasks_cancel_method.py::test_tasks_cancel_valid,
    mandatory/protocol/test_a2a_v030_new_methods.py::test_core_method_mapping_compliance
    (v0.3 §7.4: ``tasks/cancel`` answers the task, now ``canceled``)."""
    task = working_task(tck_url)
    canceled = cancel(tck_url, task["id"])
    assert canceled["id"] == task["id"]
    assert canceled["status"]["state"] == "canceled"
    assert get_task(tck_url, task["id"])["status"]["state"] == "canceled"


def test_cancel_a_task_waiting_for_input(tck_url: str) -> None:
    """v0.3 §7.4: any non-terminal task can be canceled (input-required included)."""
    task = waiting_task(tck_url)
    assert cancel(tck_url, task["id"])["status"]["state"] == "canceled"


def test_cancel_twice_is_not_cancelable(tck_url: str) -> None:
    """optional/quality/test_task_state_quality.py::test_task_cancel_state_handling,
    mandatory/jsonrpc/test_a2a_error_codes.py (coverage: -32002 TaskNotCancelableError)
    (v0.3 §8.2: a canceled task cannot be canceled again)."""
    task = waiting_task(tck_url)
    cancel(tck_url, task["id"])
    failed(post(tck_url, "tasks/cancel", {"id": task["id"]}), -32002)


@pytest.mark.parametrize("prefix", ["tck-complete-task", "tck-reject-task"])
def test_cancel_a_terminal_task(tck_url: str, prefix: str) -> None:
    """v0.3 §8.2 TaskNotCancelableError (-32002): a terminal task is not cancelable."""
    task = send_task(tck_url, prefix, blocking=True)
    assert task["status"]["state"] in V03_TERMINAL
    failed(post(tck_url, "tasks/cancel", {"id": task["id"]}), -32002)
    assert get_task(tck_url, task["id"])["status"]["state"] == task["status"]["state"]


def test_cancel_an_unknown_task(tck_url: str) -> None:
    """mandatory/protocol/test_tasks_cancel_method.py::test_tasks_cancel_nonexistent
    (v0.3 §7.4: TaskNotFoundError, -32001)."""
    failed(post(tck_url, "tasks/cancel", {"id": "nonexistent-task-id"}), -32001)


# --- the JSON-RPC envelope ------------------------------------------------------------------------


def test_parse_error(tck_url: str) -> None:
    """mandatory/jsonrpc/test_json_rpc_compliance.py::test_rejects_malformed_json,
    mandatory/jsonrpc/test_protocol_violations.py::test_raw_invalid_json
    (JSON-RPC 2.0 §5.1: invalid JSON is -32700, with a null id)."""
    bodies = (
        b'{"jsonrpc": "2.0", "method": "message/send", "params": {"foo": "bar"}',
        b'{"jsonrpc": "2.0", "method": "message/send", "params": {"unclosed_object": true',
    )
    for body in bodies:
        failed(post_raw(tck_url, body), -32700, rpc_id=None)


@pytest.mark.parametrize(
    ("request_body", "code", "rpc_id"),
    [
        pytest.param(
            {"jsonrpc": "aaa", "method": "message/send", "params": {}}, -32600, None, id="jsonrpc"
        ),
        pytest.param(
            {"jsonrpc": "1.0", "method": "message/send", "params": {}, "id": "v1"},
            -32600,
            "v1",
            id="jsonrpc-1.0",
        ),
        pytest.param({"jsonrpc": "2.0", "params": {}}, -32600, None, id="no-method"),
        pytest.param(
            {"jsonrpc": "2.0", "params": {}, "id": "m"}, -32600, "m", id="no-method-with-id"
        ),
        pytest.param(
            {"jsonrpc": "2.0", "method": "message/ssend", "params": {}}, -32601, None, id="method"
        ),
        pytest.param(
            {"jsonrpc": "2.0", "method": "message/send", "params": {}, "id": {"bad": "type"}},
            -32600,
            None,
            id="id-type",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "method": "message/send", "params": {"": "not_a_dict"}},
            -32602,
            None,
            id="params",
        ),
    ],
)
def test_invalid_requests(tck_url: str, request_body: Json, code: int, rpc_id: str | None) -> None:
    """mandatory/jsonrpc/test_json_rpc_compliance.py::test_rejects_invalid_json_rpc_requests,
    mandatory/jsonrpc/test_protocol_violations.py::test_invalid_jsonrpc_version,
    ::test_missing_method_field (JSON-RPC 2.0 §4 and §5.1: -32600 Invalid Request, -32601
    Method not found, -32602 Invalid params; answered with HTTP 200, the id echoed when it
    could be read)."""
    failed(post_raw(tck_url, json.dumps(request_body).encode()), code, rpc_id=rpc_id)


@pytest.mark.parametrize(
    "method", ["nonexistent/method", "invalid/nonexistent/method", "tasks/list", "tasks/status"]
)
def test_method_not_found(tck_url: str, method: str) -> None:
    """mandatory/jsonrpc/test_json_rpc_compliance.py::test_rejects_unknown_method,
    mandatory/quality/test_error_validation_enhanced.py::test_invalid_method_error_validation,
    mandatory/protocol/test_a2a_v030_new_methods.py::TestTasksList (``tasks/list`` is
    gRPC/REST only in v0.3) (JSON-RPC 2.0 §5.1: -32601)."""
    error = failed(post(tck_url, method, {}, rpc_id="req-7"), -32601, rpc_id="req-7")
    assert "method" in error["message"].lower()


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"message": {"parts": "invalid"}}, id="parts-not-an-array"),
        pytest.param({"message": {"kind": "message"}}, id="nothing-required"),
        pytest.param({"invalid": "params"}, id="no-message"),
    ],
)
def test_send_invalid_params(tck_url: str, params: Json) -> None:
    """mandatory/jsonrpc/test_json_rpc_compliance.py::test_rejects_invalid_params,
    mandatory/protocol/test_message_send_method.py::test_message_send_invalid_params
    (v0.3 §8.1 InvalidParamsError, -32602)."""
    failed(post(tck_url, "message/send", params), -32602)


@pytest.mark.parametrize("missing", ["messageId", "role", "parts"])
def test_send_message_missing_a_required_field(tck_url: str, missing: str) -> None:
    """optional/features/test_invalid_business_logic.py::test_missing_required_message_fields
    (v0.3 §6.4: a Message MUST have messageId, role and parts; -32602)."""
    msg = message("tck-complete-task")
    del msg[missing]
    failed(post(tck_url, "message/send", send_params(msg, blocking=True)), -32602)


def test_send_message_with_no_parts(tck_url: str) -> None:
    """optional/features/test_invalid_business_logic.py::test_empty_message_parts,
    optional/quality/test_edge_cases.py::test_empty_arrays (v0.3 §6.4: at least one part;
    the kit accepts -32602 or -32603, the spec's validation error is -32602)."""
    msg = message("tck-complete-task", parts=[])
    failed(post(tck_url, "message/send", send_params(msg, blocking=True)), -32602)


def test_send_part_of_an_unknown_kind(tck_url: str) -> None:
    """optional/features/test_invalid_business_logic.py::test_unsupported_part_kind (refused
    with -32602 or -32603, or a failed task: here refused as invalid params)."""
    msg = message("tck-complete-task", parts=[{"type": "unsupported_type", "text": "x"}])
    failed(post(tck_url, "message/send", send_params(msg, blocking=True)), -32602)


def test_send_null_optional_fields(tck_url: str) -> None:
    """optional/quality/test_edge_cases.py::test_null_optional_fields (explicit nulls in
    optional fields: treated as absent, or refused with -32602)."""
    msg = message("tck-complete-task", taskId=None, contextId=None, metadata=None)
    found = document(post(tck_url, "message/send", send_params(msg, blocking=True)))
    if "error" in found:
        check_error(found, -32602, 1)
    else:
        assert found["result"]["id"]


def test_duplicate_request_ids(tck_url: str) -> None:
    """mandatory/jsonrpc/test_protocol_violations.py::test_duplicate_request_ids
    (JSON-RPC 2.0 §4: each request is answered with its own id, reused or not)."""
    for text in ("first", "second"):
        params = send_params(message("tck-complete-task", text), blocking=True)
        task = ok(post(tck_url, "message/send", params, rpc_id="dup"), rpc_id="dup")
        assert text_of(task["history"][0]) == text


def test_errors_are_plain_jsonrpc_errors(tck_url: str) -> None:
    """mandatory/quality/test_error_validation_enhanced.py::validate_json_rpc_error_structure,
    optional/capabilities/test_transport_specific_features.py::test_json_rpc_error_extensions
    (JSON-RPC 2.0 §5.1 / v0.3 §8: ``{"jsonrpc", "id", "error": {code, message, data?}}``,
    HTTP 200, ``application/json``, no ``result``, a descriptive message)."""
    answers: list[tuple[httpx.Response, int, str | int | None]] = [
        (post(tck_url, "tasks/get", {"id": "missing"}, rpc_id=7), -32001, 7),
        (post(tck_url, "tasks/cancel", {"id": "missing"}, rpc_id="c"), -32001, "c"),
        (post(tck_url, "tasks/get", {}, rpc_id=8), -32602, 8),
        (post(tck_url, "nope/nope", {}, rpc_id=9), -32601, 9),
        (post_raw(tck_url, b"{"), -32700, None),
    ]
    for response, code, rpc_id in answers:
        error = failed(response, code, rpc_id=rpc_id)
        assert len(error["message"]) > 10, error


# --- protocol versions ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", [None, "0.3", "0.3.0", "0.2"])
def test_v03_methods_need_no_version_header(tck_url: str, version: str | None) -> None:
    """v1.0 §3.6.2 (PROTOCOL.md §1.2): an empty or missing ``A2A-Version`` means 0.3, and the
    0.3 kit sends none; an explicit 0.3 (patch ignored), or the older 0.2, works as well."""
    headers = {} if version is None else {"A2A-Version": version}
    task = send_task(tck_url, "tck-complete-task", blocking=True)
    found = ok(post(tck_url, "tasks/get", {"id": task["id"]}, headers=headers))
    check_task(found)
    assert found["status"]["state"] == "completed"


@pytest.mark.parametrize("method", sorted(set(V03_TO_V1.values()) | {"ListTasks"}))
@pytest.mark.parametrize("version", [None, "0.3"])
def test_v1_methods_need_the_1_0_header(tck_url: str, method: str, version: str | None) -> None:
    """v1.0 §3.6.2 (PROTOCOL.md §1.2, ``_http.py``): a v1.0 method asked for as 0.3 (no header,
    or ``A2A-Version: 0.3``) is VersionNotSupportedError, -32009."""
    headers = {} if version is None else {"A2A-Version": version}
    error = failed(post(tck_url, method, {}, headers=headers), -32009)
    assert "1.0" in error["message"]


@pytest.mark.parametrize(("method", "v1_name"), sorted(V03_TO_V1.items()))
def test_v03_methods_under_the_1_0_header(tck_url: str, method: str, v1_name: str) -> None:
    """PROTOCOL.md §1.2 and ``_http.py``: with ``A2A-Version: 1.0`` the v0.3 names are not
    methods (-32601), and the error names the v1.0 method to call instead."""
    response = post(tck_url, method, {}, headers={"A2A-Version": "1.0"})
    error = failed(response, -32601)
    assert repr(v1_name) in error["message"]


@pytest.mark.parametrize("version", ["2.0", "0.9", "garbage"])
def test_unsupported_versions(tck_url: str, version: str) -> None:
    """v1.0 §3.6.2 (PROTOCOL.md §1.2): a version the server does not speak is -32009."""
    failed(post(tck_url, "tasks/get", {"id": "x"}, headers={"A2A-Version": version}), -32009)


# --- message/stream -------------------------------------------------------------------------------


def test_stream_event_shapes(tck_url: str) -> None:
    """optional/capabilities/test_streaming_methods.py::test_message_stream_basic,
    ::test_sse_event_format_compliance, ::test_sse_header_compliance (v0.3 §7.2 and §3.3.1:
    ``text/event-stream``; each ``data`` is a JSON-RPC response with the request's id holding a
    Task, a status-update or an artifact-update; ``final: true`` on the last, then the end)."""
    msg = message("tck-stream-001")
    events = stream_events(tck_url, "message/stream", {"message": msg}, rpc_id="s-1")
    assert kinds(events) == ["task", "status-update", "artifact-update", "status-update"]
    task, working, artifact, completed = events
    assert task["history"][0]["messageId"] == msg["messageId"]
    for event in events[1:]:
        assert event["taskId"] == task["id"]
        assert event["contextId"] == task["contextId"]
    assert working["status"]["state"] == "working"
    assert [text_of(artifact["artifact"])] == ["Stream hello from TCK"]
    assert artifact["lastChunk"] is True
    assert completed["status"]["state"] == "completed"
    check_finals(events)
    final = get_task(tck_url, task["id"])
    assert final["status"]["state"] == "completed"
    assert [a["artifactId"] for a in final["artifacts"]] == [artifact["artifact"]["artifactId"]]


def test_stream_chunked_artifact(tck_url: str) -> None:
    """optional/capabilities/test_streaming_methods.py::test_sse_event_format_compliance
    (v0.3 §7.2.3 TaskArtifactUpdateEvent: ``append`` and ``lastChunk`` build one artifact)."""
    events = stream_events(
        tck_url, "message/stream", {"message": message("tck-stream-artifact-chunked")}
    )
    chunks = [event for event in events if event["kind"] == "artifact-update"]
    assert [(c["append"], c["lastChunk"]) for c in chunks] == [(True, False), (True, True)]
    assert {c["artifact"]["artifactId"] for c in chunks} == {"chunked"}
    check_finals(events)
    [artifact] = get_task(tck_url, events[0]["id"])["artifacts"]
    assert text_of(artifact) == "chunk-1 chunk-2"


def test_stream_answered_with_a_message(tck_url: str) -> None:
    """optional/capabilities/test_streaming_methods.py::test_sse_event_format_compliance
    (v0.3 §7.2: a stream may be one Message, after which it ends)."""
    events = stream_events(tck_url, "message/stream", {"message": message("tck-message-response")})
    assert kinds(events) == ["message"]
    assert text_of(events[0]) == "Direct message response"


def test_stream_ends_when_input_is_required(tck_url: str) -> None:
    """v0.3 §7.2 (``final`` marks the end of the stream; an interrupted task ends it too)."""
    events = stream_events(tck_url, "message/stream", {"message": message("tck-input-required")})
    assert kinds(events) == ["task", "status-update"]
    assert events[-1]["status"]["state"] == "input-required"
    check_finals(events)


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"invalid": "params"}, id="no-message"),
        pytest.param({"message": {"kind": "message", "parts": []}}, id="bad-message"),
    ],
)
def test_stream_invalid_params(tck_url: str, params: Json) -> None:
    """optional/capabilities/test_streaming_methods.py::test_message_stream_invalid_params
    (v0.3 §7.2: invalid params are an error, -32602, as JSON or as the stream's one event)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": params}
    response = httpx.post(endpoint(tck_url), json=body, timeout=HTTP_TIMEOUT, verify=TLS)
    stream_or_json_error(response, -32602)


def test_resubscribe(tck_url: str) -> None:
    """optional/capabilities/test_streaming_methods.py::test_tasks_resubscribe
    (v0.3 §7.9 ``tasks/resubscribe``: the task first, then its updates to the final one)."""
    task = send_task(tck_url, "test-resubscribe-message-id", blocking=False)
    try:
        with open_stream(tck_url, "tasks/resubscribe", {"id": task["id"]}, rpc_id="rs") as stream:
            first = stream.next_event()
            assert first is not None
            snapshot = result_of_frame(first, rpc_id="rs")
            assert snapshot["kind"] == "task"
            assert snapshot["id"] == task["id"]
            assert snapshot["status"]["state"] in ("submitted", "working")
            cancel(tck_url, task["id"])
            rest = [result_of_frame(frame, rpc_id="rs") for frame in stream.events()]
            assert stream.ended
    finally:
        post(tck_url, "tasks/cancel", {"id": task["id"]})
    assert rest[-1]["kind"] == "status-update"
    assert rest[-1]["status"]["state"] == "canceled"
    assert all(event["taskId"] == task["id"] for event in rest)
    check_finals([snapshot, *rest])


def test_resubscribe_unknown_task(tck_url: str) -> None:
    """optional/capabilities/test_streaming_methods.py::test_tasks_resubscribe_nonexistent
    (v0.3 §7.9: TaskNotFoundError, -32001; the message says the task was not found)."""
    body = {"jsonrpc": "2.0", "id": 3, "method": "tasks/resubscribe", "params": {"id": "nope"}}
    response = httpx.post(endpoint(tck_url), json=body, timeout=HTTP_TIMEOUT, verify=TLS)
    error = stream_or_json_error(response, -32001, rpc_id=3)
    assert "not found" in error["message"].lower()


# --- push notification configs --------------------------------------------------------------------


def push_set(url: str, task_id: str, config: Json) -> Json:
    result: Json = ok(
        post(
            url,
            "tasks/pushNotificationConfig/set",
            {"taskId": task_id, "pushNotificationConfig": config},
        )
    )
    return result


def check_push_config(found: Mapping[str, Any], task_id: str) -> Json:
    """A v0.3 TaskPushNotificationConfig: ``{taskId, pushNotificationConfig{id, url, …}}``."""
    assert found["taskId"] == task_id, found
    config: Json = found["pushNotificationConfig"]
    assert isinstance(config["url"], str)
    assert isinstance(config["id"], str)
    assert config["id"]
    return config


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as found:
        yield found


def test_push_config_set_and_get(tck_url: str, receiver: Receiver) -> None:
    """optional/capabilities/test_push_notification_config_methods.py::
    test_set_push_notification_config, ::test_get_push_notification_config
    (v0.3 §7.5/§7.6: set answers the config as stored; get by task id alone answers it, and so
    does get naming its ``pushNotificationConfigId``)."""
    task = waiting_task(tck_url)
    hook = receiver.url + "/set-get"
    config = {
        "url": hook,
        "token": "tok",
        "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
    }
    stored = check_push_config(push_set(tck_url, task["id"], config), task["id"])
    assert {k: v for k, v in stored.items() if k != "id"} == config
    by_task = ok(post(tck_url, "tasks/pushNotificationConfig/get", {"id": task["id"]}))
    assert check_push_config(by_task, task["id"]) == stored
    params = {"id": task["id"], "pushNotificationConfigId": stored["id"]}
    by_id = ok(post(tck_url, "tasks/pushNotificationConfig/get", params))
    assert check_push_config(by_id, task["id"]) == stored
    cancel(tck_url, task["id"])
    receiver.wait_for(1, "/set-get")


def test_push_config_list_and_delete(tck_url: str, receiver: Receiver) -> None:
    """optional/capabilities/test_push_notification_config_methods.py::
    test_list_push_notification_config, ::test_list_push_notification_config_empty,
    ::test_delete_push_notification_config (v0.3 §7.7/§7.8: list answers a bare array of
    TaskPushNotificationConfig; delete answers null, after which the config is gone)."""
    task = waiting_task(tck_url)
    listing = ok(post(tck_url, "tasks/pushNotificationConfig/list", {"id": task["id"]}))
    assert listing == []
    first = check_push_config(
        push_set(tck_url, task["id"], {"url": receiver.url + "/1"}), task["id"]
    )
    second = check_push_config(
        push_set(tck_url, task["id"], {"id": "mine", "url": receiver.url + "/2"}), task["id"]
    )
    assert second["id"] == "mine"
    listing = ok(post(tck_url, "tasks/pushNotificationConfig/list", {"id": task["id"]}))
    assert isinstance(listing, list)
    assert [check_push_config(entry, task["id"]) for entry in listing] == [first, second]
    deleted = ok(
        post(
            tck_url,
            "tasks/pushNotificationConfig/delete",
            {"id": task["id"], "pushNotificationConfigId": first["id"]},
        )
    )
    assert deleted is None
    params = {"id": task["id"], "pushNotificationConfigId": first["id"]}
    failed(post(tck_url, "tasks/pushNotificationConfig/get", params), -32001)
    listing = ok(post(tck_url, "tasks/pushNotificationConfig/list", {"id": task["id"]}))
    assert [entry["pushNotificationConfig"] for entry in listing] == [second]
    cancel(tck_url, task["id"])
    receiver.wait_for(1, "/2")
    assert receiver.deliveries("/1") == []


def test_push_config_delete_nonexistent(tck_url: str) -> None:
    """optional/capabilities/test_push_notification_config_methods.py::
    test_delete_push_notification_config_nonexistent, mandatory/jsonrpc/
    test_a2a_error_codes_enhanced.py::test_push_notification_not_supported_error_32003_enhanced
    (an unknown task is TaskNotFoundError; deleting an unknown config of a known task is
    idempotent, null)."""
    params = {"id": "nonexistent-task-id", "pushNotificationConfigId": "some-config-id"}
    error = failed(post(tck_url, "tasks/pushNotificationConfig/delete", params), -32001)
    assert "not found" in error["message"].lower()
    task = waiting_task(tck_url)
    try:
        params = {"id": task["id"], "pushNotificationConfigId": "nonexistent-config-id"}
        assert ok(post(tck_url, "tasks/pushNotificationConfig/delete", params)) is None
    finally:
        cancel(tck_url, task["id"])


@pytest.mark.parametrize(
    ("method", "params"),
    [
        pytest.param(
            "tasks/pushNotificationConfig/set",
            {
                "taskId": "nonexistent-task-id",
                "pushNotificationConfig": {"url": "http://127.0.0.1:9/"},
            },
            id="set",
        ),
        pytest.param(
            "tasks/pushNotificationConfig/get",
            {"id": "nonexistent-task-id", "pushNotificationConfigId": "default"},
            id="get",
        ),
        pytest.param("tasks/pushNotificationConfig/list", {"id": "nonexistent-task-id"}, id="list"),
    ],
)
def test_push_config_unknown_task(tck_url: str, method: str, params: Json) -> None:
    """optional/capabilities/test_push_notification_config_methods.py::
    test_set_push_notification_config_nonexistent, ::test_get_push_notification_config_nonexistent
    (v0.3 §7.5-§7.7: TaskNotFoundError, -32001, saying so)."""
    error = failed(post(tck_url, method, params), -32001)
    message_text = error["message"].lower()
    assert "not found" in message_text or "task" in message_text


def test_push_delivery_of_a_config_set_in_v03(tck_url: str, receiver: Receiver) -> None:
    """v0.3 §9.5 (push notifications; not exercised by the kit): the webhook gets a POST that
    names the task and its state, with the token in ``X-A2A-Notification-Token`` and the
    credentials of ``authentication``."""
    task = waiting_task(tck_url)
    config = {
        "url": receiver.url + "/delivered",
        "token": "tok-1",
        "authentication": {"schemes": ["Bearer"], "credentials": "creds"},
    }
    push_set(tck_url, task["id"], config)
    cancel(tck_url, task["id"])
    [delivery] = receiver.wait_for(1, "/delivered")
    assert delivery.method == "POST"
    assert delivery.headers["x-a2a-notification-token"] == "tok-1"
    assert delivery.headers["authorization"] == "Bearer creds"
    body = delivery.body.decode()
    assert task["id"] in body
    assert "CANCELED" in body.upper()


def test_push_config_inline_in_message_send(tck_url: str, receiver: Receiver) -> None:
    """v0.3 §7.1.1 ``MessageSendConfiguration.pushNotificationConfig``: a config sent with the
    message is stored on the new task and receives its notifications."""
    params = send_params(
        message("tck-complete-task"),
        blocking=True,
        pushNotificationConfig={"url": receiver.url + "/inline", "token": "t-2"},
    )
    task = ok(post(tck_url, "message/send", params))
    assert task["status"]["state"] == "completed"
    [entry] = ok(post(tck_url, "tasks/pushNotificationConfig/list", {"id": task["id"]}))
    assert check_push_config(entry, task["id"])["url"] == receiver.url + "/inline"
    assert wait_until(
        lambda: any("COMPLETED" in d.body.decode().upper() for d in receiver.deliveries("/inline"))
    )


# --- the authenticated extended card --------------------------------------------------------------


def test_extended_card_not_configured(tck_url: str) -> None:
    """mandatory/protocol/test_a2a_v030_new_methods.py::test_authenticated_extended_card_method_exists
    (v0.3 §7.10 / §8.2: an agent without an extended card answers
    AuthenticatedExtendedCardNotConfiguredError, -32007)."""
    failed(post(tck_url, "agent/getAuthenticatedExtendedCard", {}), -32007)


TOKENS = {"member-token": "member"}
MEMBERS_CARD = AgentCard(
    name="TCK agent (members)",
    description="The extended card, for authenticated callers.",
    version="1.0.0",
    skills=(AgentSkill(id="members", name="Members", description="More", tags=("x",)),),
)


def test_extended_card_with_credentials() -> None:
    """mandatory/protocol/test_a2a_v030_new_methods.py::test_authenticated_extended_card_with_auth,
    ::test_authenticated_extended_card_without_auth, optional/capabilities/
    test_a2a_v030_authentication.py::test_security_scheme_structure_compliance,
    optional/capabilities/test_authentication.py::test_missing_authentication
    (v0.3 §7.10: the extended card for an authenticated caller, a v0.3 card; §4.4 every request
    is authenticated, 401 with ``WWW-Authenticate`` otherwise; §5.5 ``securitySchemes`` in the
    OpenAPI style and ``supportsAuthenticatedExtendedCard``)."""
    with running_server(
        tck_agent.agent,
        card=tck_agent.card,
        extended_card=MEMBERS_CARD,
        auth=[BearerTokens(TOKENS)],
    ) as url:
        public = card_of(url)
        member = {"Authorization": "Bearer member-token"}
        extended = ok(post(url, "agent/getAuthenticatedExtendedCard", {}, headers=member))
        anonymous = post(url, "agent/getAuthenticatedExtendedCard", {})
        wrong = post(url, "tasks/get", {"id": "x"}, headers={"Authorization": "Bearer nope"})
    assert public["supportsAuthenticatedExtendedCard"] is True
    schemes = public["securitySchemes"]
    assert schemes
    for scheme in schemes.values():
        assert scheme["type"] == "http", scheme
        assert scheme["scheme"].lower() == "bearer", scheme
    assert public["security"] == [{name: []} for name in schemes]
    assert extended["name"] == "TCK agent (members)"
    assert extended["protocolVersion"].startswith("0.3")
    assert extended["url"] == url + "/"
    assert [skill["id"] for skill in extended["skills"]] == ["members"]
    assert isinstance(extended["capabilities"], dict)
    assert "description" in extended
    for response in (anonymous, wrong):
        assert response.status_code == 401, response.text
        assert response.headers["www-authenticate"].lower().startswith("bearer")


# --- quality --------------------------------------------------------------------------------------


def test_unicode_round_trip(tck_url: str) -> None:
    """optional/quality/test_edge_cases.py::test_unicode_and_special_chars (text is stored and
    answered unchanged, whatever its script or control characters)."""
    text = "Unicode: 你好, здравствуйте, مرحبا, こんにちは\nControl chars: \t\b\f\r\n"
    task = send_task(tck_url, "tck-complete-task", text, blocking=True)
    [sent] = get_task(tck_url, task["id"])["history"]
    assert text_of(sent) == text


def test_large_message(tck_url: str) -> None:
    """optional/quality/test_edge_cases.py::test_very_long_string,
    optional/features/test_invalid_business_logic.py::test_very_large_message (a 1 MB text part
    is processed, well within the server's body limit)."""
    text = "A" * (1024 * 1024)
    task = send_task(tck_url, "tck-complete-task", text, blocking=True)
    assert task["status"]["state"] == "completed"
    assert len(text_of(task["history"][0])) == len(text)


def test_parallel_requests(tck_url: str) -> None:
    """optional/quality/test_concurrency.py::test_parallel_requests,
    ::test_rapid_sequential_requests (concurrent sends are all answered, each its own task)."""

    def one(index: int) -> Json:
        params = send_params(message("tck-complete-task", f"parallel {index}"), blocking=True)
        return dict(ok(post(tck_url, "message/send", params, rpc_id=index), rpc_id=index))

    with ThreadPoolExecutor(max_workers=5) as pool:
        tasks = list(pool.map(one, range(5)))
    assert len({task["id"] for task in tasks}) == 5
    assert [text_of(task["history"][0]) for task in tasks] == [f"parallel {i}" for i in range(5)]
    assert {task["status"]["state"] for task in tasks} == {"completed"}


def test_concurrent_operations_on_one_task(tck_url: str) -> None:
    """optional/quality/test_concurrency.py::test_concurrent_operations_same_task (get,
    continue and cancel at once: each is answered, and the task ends canceled)."""
    task = waiting_task(tck_url)
    answers: dict[str, Json] = {}

    def run(name: str, method: str, params: Json) -> None:
        answers[name] = document(post(tck_url, method, params))

    follow_up = send_params(message("tck-input-required", taskId=task["id"]), blocking=True)
    threads = [
        threading.Thread(target=run, args=("get", "tasks/get", {"id": task["id"]})),
        threading.Thread(target=run, args=("send", "message/send", follow_up)),
        threading.Thread(target=run, args=("cancel", "tasks/cancel", {"id": task["id"]})),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HTTP_TIMEOUT * 2)
    assert set(answers) == {"get", "send", "cancel"}
    for found in answers.values():
        assert ("result" in found) != ("error" in found), found
    # Nothing else ends the task, so the cancel wins whichever way the three interleave.
    assert answers["cancel"]["result"]["status"]["state"] == "canceled"
    assert get_task(tck_url, task["id"])["status"]["state"] == "canceled"
