"""The legacy (pre-0.3) dialect, and one task store behind every dialect, over real HTTP.

The server answers three JSON-RPC dialects on one endpoint (PROTOCOL.md §1.2, §3.1, §10.1):
v1.0 (``A2A-Version: 1.0``), v0.3 (no header) and the ``tasks/send`` family of v0.1/0.2, plus
the v1.0 HTTP+JSON binding. They are views of the same tasks: a task created through any one
of them is read, canceled, continued and subscribed to through any other, and every view sees
the same events (the same SSE ids, in the same order).

The agents are ``examples/skills.py``'s (``upper`` and ``count``): ``count`` without words asks
for input, which leaves a task waiting for as long as a test needs, and a follow-up with words
completes it. One server per adapter serves the whole module.
"""

import json
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from a2a_adapters import BearerTokens
from a2a_core import AgentContext
from examples import skills
from tests import servers
from tests.a2a_adapters.sse import Gate, SseStream
from tests.a2a_adapters.support import HTTP_TIMEOUT, TLS, endpoint, new_id, wait_until
from tests.a2a_adapters.webhooks import receiving
from tests.servers import running_server

#: Every test here runs against the asyncio and the trio adapter.
pytestmark = pytest.mark.usefixtures("module_adapter")

Json = dict[str, Any]

V1 = {"A2A-Version": "1.0"}
#: The JSON-RPC dialects, and every way to reach a task (the v1.0 REST binding too).
DIALECTS = ("v1.0", "v0.3", "legacy")
READERS = (*DIALECTS, "rest")
#: Every (creator, reader) pair of different dialects.
PAIRS = [(creator, reader) for creator in DIALECTS for reader in READERS if creator != reader]
PAIR_IDS = [f"{creator}-to-{reader}" for creator, reader in PAIRS]
FOLLOW_UPS = [(creator, other) for creator in DIALECTS for other in DIALECTS if creator != other]
FOLLOW_UP_IDS = [f"{creator}-then-{other}" for creator, other in FOLLOW_UPS]

#: v1.0 enum names in the lower-case v0.3/v0.1 spelling all views are compared in.
V1_STATES = {
    "TASK_STATE_SUBMITTED": "submitted",
    "TASK_STATE_WORKING": "working",
    "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_AUTH_REQUIRED": "auth-required",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_REJECTED": "rejected",
}
V1_ROLES = {"ROLE_USER": "user", "ROLE_AGENT": "agent"}
SETTLED = frozenset({"input-required", "completed", "canceled", "failed", "rejected"})

#: What ``count`` asks when a message has no words.
QUESTION = "Which text should I count?"


@pytest.fixture(scope="module")
def url(module_adapter: servers.Adapter) -> Iterator[str]:
    """The two skills of ``examples/skills.py`` behind one endpoint, streaming and push on."""
    with running_server(
        skills.agents,
        card=skills.card,
        streaming=True,
        push=True,
        push_allow_hosts=("127.0.0.1",),
    ) as found:
        yield found


# --- requests in each dialect ---------------------------------------------------------------------


def rpc(
    url: str,
    method: str,
    params: Any,
    *,
    headers: Mapping[str, str] | None = None,
    rpc_id: str | int = 1,
) -> httpx.Response:
    """One JSON-RPC request; no ``A2A-Version`` header unless given (as v0.3 and older send)."""
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    return httpx.post(
        endpoint(url), json=body, headers=dict(headers or {}), timeout=HTTP_TIMEOUT, verify=TLS
    )


def ok(response: httpx.Response, *, rpc_id: str | int = 1) -> Any:
    assert response.status_code == 200, response.text
    found = response.json()
    assert found["jsonrpc"] == "2.0"
    assert found["id"] == rpc_id
    assert "error" not in found, found["error"]
    return found["result"]


def error_code(response: httpx.Response, *, rpc_id: str | int = 1) -> int:
    """The code of a JSON-RPC error response (checked to be one)."""
    assert response.status_code == 200, response.text
    found = response.json()
    assert found["id"] == rpc_id
    assert "result" not in found, found
    code: int = found["error"]["code"]
    return code


def rest(url: str, method: str, path: str, **options: Any) -> httpx.Response:
    """A v1.0 HTTP+JSON request (it needs ``A2A-Version: 1.0``)."""
    return httpx.request(
        method, url + path, headers=V1, timeout=HTTP_TIMEOUT, verify=TLS, **options
    )


def task_path(task_id: str, action: str = "") -> str:
    return f"/tasks/{quote(task_id, safe='')}{action}"


def legacy_message(text: str) -> Json:
    """A v0.1 message: ``type`` parts, and no ``messageId`` (v0.1 messages had none)."""
    return {"role": "user", "parts": [{"type": "text", "text": text}]}


def v03_message(text: str, **fields: Any) -> Json:
    return {
        "kind": "message",
        "messageId": new_id(),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **fields,
    }


def v1_message(text: str, **fields: Any) -> Json:
    return {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": text}], **fields}


def legacy_send(url: str, task_id: str, text: str, **params: Any) -> Json:
    """``tasks/send`` of a text message; the acknowledgement (a task)."""
    sent = {"id": task_id, "message": legacy_message(text), **params}
    task: Json = ok(rpc(url, "tasks/send", sent))
    return task


def legacy_get(url: str, task_id: str) -> Json:
    task: Json = ok(rpc(url, "tasks/get", {"id": task_id}))
    return task


def legacy_settled(url: str, task_id: str) -> Json:
    """``tasks/get`` until the task is terminal or waits for input (fails on timeout)."""
    seen: list[Json] = []

    def settled() -> bool:
        seen.append(legacy_get(url, task_id))
        return seen[-1]["status"]["state"] in SETTLED

    assert wait_until(settled), f"the task never settled: {seen[-1]}"
    return seen[-1]


def create(url: str, dialect: str, text: str = " ", *, skill: str = "count") -> str:
    """A task made through ``dialect``, settled; its id. With no words, ``count`` leaves it
    waiting for input."""
    match dialect:
        case "v1.0":
            params = {"message": v1_message(text), "metadata": {"skillId": skill}}
            task_id: str = ok(rpc(url, "SendMessage", params, headers=V1))["task"]["id"]
        case "v0.3":
            params = {
                "message": v03_message(text),
                "metadata": {"skillId": skill},
                "configuration": {"blocking": True},
            }
            task_id = ok(rpc(url, "message/send", params))["id"]
        case _:
            task_id = f"legacy-{new_id()}"
            legacy_send(url, task_id, text, sessionId=f"session-{new_id()}", skillId=skill)
            legacy_settled(url, task_id)
    return task_id


def follow_up(url: str, dialect: str, task_id: str, text: str) -> None:
    """Send ``text`` to the task through ``dialect``."""
    match dialect:
        case "v1.0":
            params = {"message": v1_message(text, taskId=task_id)}
            ok(rpc(url, "SendMessage", params, headers=V1))
        case "v0.3":
            params = {"message": v03_message(text, taskId=task_id)}
            ok(rpc(url, "message/send", {**params, "configuration": {"blocking": True}}))
        case _:
            assert legacy_send(url, task_id, text)["id"] == task_id


# --- what each dialect shows ----------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """A task as any dialect shows it, in one spelling: what must agree between them."""

    id: str
    context_id: str
    state: str
    status_text: str
    #: ``(role, text)`` of each message of the history.
    history: tuple[tuple[str, str], ...]


def _text(parts: list[Json]) -> str:
    return "".join(part.get("text", "") for part in parts)


def _v1_view(task: Mapping[str, Any]) -> View:
    """A v1.0 Task (JSON-RPC or REST): ProtoJSON enums, no ``kind``, flat parts."""
    assert "kind" not in task, task
    status = task["status"]
    history = task.get("history", [])
    for msg in [*history, *([status["message"]] if "message" in status else [])]:
        assert msg["role"] in V1_ROLES, msg
        assert all("kind" not in part and "type" not in part for part in msg["parts"]), msg
    return View(
        task["id"],
        task["contextId"],
        V1_STATES[status["state"]],
        _text(status["message"]["parts"]) if "message" in status else "",
        tuple((V1_ROLES[m["role"]], _text(m["parts"])) for m in history),
    )


def _old_view(task: Mapping[str, Any], dialect: str) -> View:
    """A v0.3 Task (``kind`` everywhere), or the same object as a v0.1 client reads it
    (``sessionId``, parts by ``type``)."""
    status = task["status"]
    history = task.get("history", [])
    messages = [*history, *([status["message"]] if "message" in status else [])]
    if dialect == "v0.3":
        assert task["kind"] == "task", task
        for msg in messages:
            assert msg["kind"] == "message", msg
            assert all(part["kind"] == "text" for part in msg["parts"]), msg
    else:
        assert task["sessionId"] == task["contextId"], task
        for msg in messages:
            assert all(part["type"] == "text" for part in msg["parts"]), msg
    assert status["state"] in V1_STATES.values(), status
    return View(
        task["id"],
        task["contextId"],
        status["state"],
        _text(status["message"]["parts"]) if "message" in status else "",
        tuple((m["role"], _text(m["parts"])) for m in history),
    )


def read(url: str, reader: str, task_id: str) -> View:
    """GetTask / ``tasks/get`` / ``GET /tasks/{id}``, as ``reader`` calls it."""
    match reader:
        case "v1.0":
            return _v1_view(ok(rpc(url, "GetTask", {"id": task_id}, headers=V1)))
        case "rest":
            response = rest(url, "GET", task_path(task_id))
            assert response.status_code == 200, response.text
            return _v1_view(response.json())
        case _:
            return _old_view(ok(rpc(url, "tasks/get", {"id": task_id})), reader)


def cancel(url: str, reader: str, task_id: str) -> View:
    """CancelTask / ``tasks/cancel`` / ``POST /tasks/{id}:cancel``; the task it answers."""
    match reader:
        case "v1.0":
            return _v1_view(ok(rpc(url, "CancelTask", {"id": task_id}, headers=V1)))
        case "rest":
            response = rest(url, "POST", task_path(task_id, ":cancel"), json={})
            assert response.status_code == 200, response.text
            return _v1_view(response.json())
        case _:
            return _old_view(ok(rpc(url, "tasks/cancel", {"id": task_id})), reader)


def cancel_error(url: str, reader: str, task_id: str) -> int:
    """The JSON-RPC code (or HTTP status, on REST) of a cancel that must fail."""
    match reader:
        case "v1.0":
            return error_code(rpc(url, "CancelTask", {"id": task_id}, headers=V1))
        case "rest":
            return rest(url, "POST", task_path(task_id, ":cancel"), json={}).status_code
        case _:
            return error_code(rpc(url, "tasks/cancel", {"id": task_id}))


# --- subscriptions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Update:
    """One stream event as any dialect shows it: its SSE id, what it is, state and text."""

    seq: int
    kind: str
    state: str | None
    text: str


def _update(seq: int, kind: str, payload: Mapping[str, Any], *, v1: bool) -> Update:
    status = payload.get("status")
    if status is None:
        return Update(seq, kind, None, _text(payload.get("artifact", payload).get("parts", [])))
    state = V1_STATES[status["state"]] if v1 else status["state"]
    text = _text(status["message"]["parts"]) if "message" in status else ""
    return Update(seq, kind, state, text)


_V1_KINDS = {"task": "task", "statusUpdate": "status", "artifactUpdate": "artifact"}
_OLD_KINDS = {"task": "task", "status-update": "status", "artifact-update": "artifact"}


def parse_update(reader: str, frame_id: str | None, data: Any, task_id: str) -> Update:
    """A subscription frame in ``reader``'s shape, checked, as an :class:`Update`."""
    assert frame_id is not None
    seq = int(frame_id)
    if not reader.startswith("rest"):
        assert data["jsonrpc"] == "2.0", data
        assert data["id"] == "sub", data
        assert "error" not in data, data
        data = data["result"]
    if reader in ("v1.0", "rest", "rest-get"):
        [(key, payload)] = data.items()
        assert (payload["id"] if key == "task" else payload["taskId"]) == task_id
        return _update(seq, _V1_KINDS[key], payload, v1=True)
    kind = _OLD_KINDS[data["kind"]]
    if reader == "legacy":
        assert data["id"] == task_id, data  # what a v0.1 client keys events by
    else:
        assert (data["id"] if kind == "task" else data["taskId"]) == task_id
        if kind == "status":
            assert type(data["final"]) is bool, data
    return _update(seq, kind, data, v1=False)


class Subscription:
    """An open subscription: its updates, read one at a time, within a deadline."""

    def __init__(self, reader: str, stream: SseStream, task_id: str) -> None:
        self.reader = reader
        self.stream = stream
        self.task_id = task_id

    def next(self) -> Update:
        frame = self.stream.next_event()
        assert frame is not None, "the stream ended early"
        return parse_update(self.reader, frame.id, frame.json(), self.task_id)

    def rest(self) -> list[Update]:
        """Every remaining update, until the server ends the stream."""
        found = [
            parse_update(self.reader, frame.id, frame.json(), self.task_id)
            for frame in self.stream.events()
        ]
        assert self.stream.ended
        return found


@contextmanager
def subscribe(url: str, reader: str, task_id: str) -> Iterator[Subscription]:
    """SubscribeToTask / ``tasks/resubscribe`` / ``GET /tasks/{id}:subscribe``, open."""
    accept = {"Accept": "text/event-stream"}
    if reader in ("rest", "rest-get"):
        # The spec text says POST, the proto GET; both must be accepted (PROTOCOL.md §2.4).
        method = "GET" if reader == "rest-get" else "POST"
        target, headers, body = url + task_path(task_id, ":subscribe"), V1, None
    else:
        name = "SubscribeToTask" if reader == "v1.0" else "tasks/resubscribe"
        headers = V1 if reader == "v1.0" else {}
        target, method = endpoint(url), "POST"
        body = {"jsonrpc": "2.0", "id": "sub", "method": name, "params": {"id": task_id}}
    with (
        httpx.Client(timeout=HTTP_TIMEOUT, verify=TLS) as client,
        client.stream(method, target, json=body, headers={**headers, **accept}) as response,
    ):
        assert response.status_code == 200, response.read().decode()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield Subscription(reader, SseStream(response), task_id)


# --- v0.3 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "configuration",
    [None, {}, {"historyLength": 5}, {"blocking": True}],
    ids=["none", "empty", "no-flag", "blocking"],
)
def test_v03_send_blocks_unless_told_not_to(url: str, configuration: Json | None) -> None:
    """v0.3 ``message/send`` waits for the task to settle unless ``blocking`` is false, as the
    official SDK's server does (and as every v1.0 send does)."""
    params: Json = {"message": v03_message("wait for me"), "metadata": {"skillId": "upper"}}
    if configuration is not None:
        params["configuration"] = configuration
    task = ok(rpc(url, "message/send", params))
    assert task["kind"] == "task", task
    assert task["status"]["state"] == "completed", task
    assert _text(task["status"]["message"]["parts"]) == "WAIT FOR ME"


def test_v03_send_with_blocking_false_returns_at_once(url: str) -> None:
    params = {
        "message": v03_message("no waiting"),
        "metadata": {"skillId": "upper"},
        "configuration": {"blocking": False},
    }
    task = ok(rpc(url, "message/send", params))
    assert task["status"]["state"] == "submitted", task
    done = legacy_settled(url, task["id"])
    assert _text(done["status"]["message"]["parts"]) == "NO WAITING"


# --- the legacy dialect ---------------------------------------------------------------------------


def test_legacy_send_is_acknowledged_as_submitted_then_completes(url: str) -> None:
    """v0.1 ``tasks/send``: the client chooses the task id, ``sessionId`` is the context, the
    answer is the task just created (submitted); ``tasks/get`` then follows it to the end."""
    task_id, session = f"client-chosen-{new_id()}", f"session-{new_id()}"
    ack = legacy_send(url, task_id, "hello there", sessionId=session, skillId="upper")
    assert ack["id"] == task_id
    assert ack["sessionId"] == session
    assert ack["contextId"] == session
    assert ack["status"]["state"] == "submitted"
    [sent] = ack["history"]
    assert sent["role"] == "user"
    assert sent["parts"][0]["type"] == "text"
    assert _text(sent["parts"]) == "hello there"
    done = legacy_settled(url, task_id)
    assert done["id"] == task_id
    assert done["sessionId"] == session
    assert done["status"]["state"] == "completed"
    answer = done["status"]["message"]
    assert answer["role"] == "agent"
    assert [part["type"] for part in answer["parts"]] == ["text"]
    assert _text(answer["parts"]) == "HELLO THERE"


def test_legacy_follow_up_uses_the_same_task_id(url: str) -> None:
    """v0.1: a later ``tasks/send`` with the same id is the next turn of that task."""
    task_id = f"turns-{new_id()}"
    legacy_send(url, task_id, "   ", skillId="count")
    waiting = legacy_settled(url, task_id)
    assert waiting["status"]["state"] == "input-required"
    assert _text(waiting["status"]["message"]["parts"]) == QUESTION
    ack = legacy_send(url, task_id, "one two")
    assert ack["id"] == task_id
    assert ack["status"]["state"] == "working"
    done = legacy_settled(url, task_id)
    assert done["status"]["state"] == "completed"
    assert _text(done["status"]["message"]["parts"]) == "2 words"
    assert [(m["role"], _text(m["parts"])) for m in done["history"]] == [
        ("user", "   "),
        ("agent", QUESTION),
        ("user", "one two"),
    ]


def legacy_stream(url: str, params: Json) -> list[Json]:
    """``tasks/sendSubscribe``, read to its end: the ``result`` of every event."""
    body = {"jsonrpc": "2.0", "id": "ss", "method": "tasks/sendSubscribe", "params": params}
    with (
        httpx.Client(timeout=HTTP_TIMEOUT, verify=TLS) as client,
        client.stream("POST", endpoint(url), json=body) as response,
    ):
        assert response.status_code == 200, response.read().decode()
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = SseStream(response)
        frames = stream.events()
        assert stream.ended
    results: list[Json] = []
    for frame in frames:
        found = frame.json()
        assert found["jsonrpc"] == "2.0"
        assert found["id"] == "ss"
        results.append(found["result"])
    return results


def test_legacy_send_subscribe_streams_status_updates(url: str) -> None:
    """v0.1 ``tasks/sendSubscribe``: only TaskStatusUpdateEvent/TaskArtifactUpdateEvent, keyed
    by the task ``id`` (no initial Task), the last one ``final: true``."""
    task_id = f"streamed-{new_id()}"
    params = {"id": task_id, "message": legacy_message("a b c"), "skillId": "count"}
    events = legacy_stream(url, params)
    assert events, "no events"
    for event in events:
        assert event["id"] == task_id
        assert "status" in event or "artifact" in event, event
        assert "history" not in event, "a v0.1 stream carries no Task"
    assert [event.get("final", False) for event in events] == [False] * (len(events) - 1) + [True]
    last = events[-1]
    assert last["status"]["state"] == "completed"
    assert _text(last["status"]["message"]["parts"]) == "3 words"
    assert legacy_get(url, task_id)["status"]["state"] == "completed"


def test_legacy_send_subscribe_ends_when_input_is_required(url: str) -> None:
    """v0.1: the stream ends (``final: true``) when the task needs input; a second
    ``tasks/sendSubscribe`` with the same id continues the task and streams to its end."""
    task_id = f"streamed-{new_id()}"
    first = legacy_stream(url, {"id": task_id, "message": legacy_message(""), "skillId": "count"})
    assert first[-1]["final"] is True
    assert first[-1]["status"]["state"] == "input-required"
    second = legacy_stream(url, {"id": task_id, "message": legacy_message("four more words here")})
    assert all(event["id"] == task_id for event in second)
    assert second[-1]["final"] is True
    assert second[-1]["status"]["state"] == "completed"
    assert _text(second[-1]["status"]["message"]["parts"]) == "4 words"


@pytest.mark.parametrize(
    ("skill", "text", "answer"),
    [
        pytest.param("upper", "route me", "ROUTE ME", id="upper"),
        pytest.param("count", "route me", "2 words", id="count"),
        pytest.param(None, "no skill named", "NO SKILL NAMED", id="default-is-the-first"),
    ],
)
def test_legacy_skill_id_routes(url: str, skill: str | None, text: str, answer: str) -> None:
    """The seed's ``params.skillId`` routes a new task to that skill's agent (none: the
    first skill of the card)."""
    task_id = f"routed-{new_id()}"
    legacy_send(url, task_id, text, **({} if skill is None else {"skillId": skill}))
    done = legacy_settled(url, task_id)
    assert _text(done["status"]["message"]["parts"]) == answer


def test_legacy_follow_up_stays_with_its_skill(url: str) -> None:
    """A follow-up goes to the skill its task started with, whatever ``skillId`` it names."""
    task_id = f"sticky-{new_id()}"
    legacy_send(url, task_id, "", skillId="count")
    assert legacy_settled(url, task_id)["status"]["state"] == "input-required"
    legacy_send(url, task_id, "still counting", skillId="upper")
    done = legacy_settled(url, task_id)
    assert _text(done["status"]["message"]["parts"]) == "2 words"


def test_legacy_unknown_skill_is_invalid(url: str) -> None:
    """A ``skillId`` the card does not list is invalid params (-32602); no task is made."""
    task_id = f"nowhere-{new_id()}"
    params = {"id": task_id, "message": legacy_message("x"), "skillId": "no-such-skill"}
    assert error_code(rpc(url, "tasks/send", params)) == -32602
    assert error_code(rpc(url, "tasks/get", {"id": task_id})) == -32001


def test_legacy_push_notification_set_and_get(url: str) -> None:
    """v0.1 ``tasks/pushNotification/set`` (``{id, pushNotificationConfig}``, echoed back) and
    ``/get`` (by task id); the webhook then hears of the task's end."""
    task_id = create(url, "legacy")
    with receiving() as receiver:
        config = {"url": receiver.url + "/legacy", "token": "legacy-token"}
        params = {"id": task_id, "pushNotificationConfig": config}
        stored = ok(rpc(url, "tasks/pushNotification/set", params))
        assert stored["id"] == task_id
        assert {k: stored["pushNotificationConfig"][k] for k in config} == config
        found = ok(rpc(url, "tasks/pushNotification/get", {"id": task_id}))
        assert found["id"] == task_id
        assert found["pushNotificationConfig"]["url"] == config["url"]
        legacy_send(url, task_id, "now it counts")
        assert legacy_settled(url, task_id)["status"]["state"] == "completed"

        def completed() -> bool:
            return any("COMPLETED" in d.body.decode().upper() for d in receiver.deliveries())

        assert wait_until(completed), receiver.deliveries()
        for delivery in receiver.deliveries():
            assert delivery.path == "/legacy"
            assert delivery.headers["x-a2a-notification-token"] == "legacy-token"
            assert task_id in delivery.body.decode()


@pytest.mark.parametrize(
    ("method", "v1_name"),
    [
        ("tasks/send", "SendMessage"),
        ("tasks/sendSubscribe", "SendStreamingMessage"),
        ("tasks/pushNotification/set", "CreateTaskPushNotificationConfig"),
        ("tasks/pushNotification/get", "GetTaskPushNotificationConfig"),
    ],
)
def test_legacy_methods_are_not_v1_methods(url: str, method: str, v1_name: str) -> None:
    """PROTOCOL.md §1.2 / ``_http.py``: under ``A2A-Version: 1.0`` the legacy names are unknown
    methods (-32601), whose error names the v1.0 method instead."""
    params = {"id": "x", "message": legacy_message("x")}
    response = rpc(url, method, params, headers=V1)
    assert error_code(response) == -32601
    assert repr(v1_name) in response.json()["error"]["message"]


# --- the authenticated principal, not metadata.owner ----------------------------------------------

TOKENS = {"alice-token": "alice", "bob-token": "bob"}
ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}
#: Gates the test opens, by the text of the message that waits on them.
GATES: dict[str, Gate] = {}


async def principal_agent(ctx: AgentContext) -> str:
    """Answers who it ran for and what metadata it saw (after the message's gate, if any)."""
    gate = GATES.get(ctx.text)
    if gate is not None:
        await gate.wait()
    seen = {"principal": ctx.principal, "metadata": ctx.metadata, "contextId": ctx.context_id}
    return json.dumps(seen, sort_keys=True)


@pytest.fixture(scope="module")
def auth_url(module_adapter: servers.Adapter) -> Iterator[str]:
    with running_server(principal_agent, auth=[BearerTokens(TOKENS)]) as found:
        yield found


def test_legacy_send_is_acknowledged_before_the_agent_answers(auth_url: str) -> None:
    """v0.1 ``tasks/send`` is always acknowledged at once with the submitted task, however
    long the agent takes; ``tasks/get`` shows it answered later."""
    text = f"gated {new_id()}"
    GATES[text] = gate = Gate()
    task_id = f"gated-{new_id()}"
    try:
        started = time.monotonic()
        ack = ok(
            rpc(
                auth_url,
                "tasks/send",
                {"id": task_id, "message": legacy_message(text)},
                headers=ALICE,
            )
        )
        elapsed = time.monotonic() - started
        assert ack["status"]["state"] == "submitted"
        assert elapsed < HTTP_TIMEOUT / 2
        still = ok(rpc(auth_url, "tasks/get", {"id": task_id}, headers=ALICE))
        assert still["status"]["state"] in ("submitted", "working")
    finally:
        gate.open()

    def done() -> bool:
        found = ok(rpc(auth_url, "tasks/get", {"id": task_id}, headers=ALICE))
        return bool(found["status"]["state"] == "completed")

    assert wait_until(done)


def test_legacy_metadata_owner_is_ignored(auth_url: str) -> None:
    """The seed: ``metadata.owner`` is not trusted; the task belongs to the authenticated
    principal (alice), the agent runs for her and never sees the claimed owner, and the
    claimed owner (bob) cannot see the task at all (-32001, as if it did not exist)."""
    task_id = f"owned-{new_id()}"
    params = {
        "id": task_id,
        "sessionId": "s-1",
        "message": legacy_message("whose?"),
        "metadata": {"owner": "bob", "topic": "kept"},
    }
    ok(rpc(auth_url, "tasks/send", params, headers=ALICE))

    def answered() -> bool:
        found = ok(rpc(auth_url, "tasks/get", {"id": task_id}, headers=ALICE))
        return bool(found["status"]["state"] == "completed")

    assert wait_until(answered)
    task = ok(rpc(auth_url, "tasks/get", {"id": task_id}, headers=ALICE))
    seen = json.loads(_text(task["status"]["message"]["parts"]))
    assert seen == {"principal": "alice", "metadata": {"topic": "kept"}, "contextId": "s-1"}
    assert error_code(rpc(auth_url, "tasks/get", {"id": task_id}, headers=BOB)) == -32001
    assert error_code(rpc(auth_url, "GetTask", {"id": task_id}, headers={**V1, **BOB})) == -32001
    assert error_code(rpc(auth_url, "tasks/cancel", {"id": task_id}, headers=BOB)) == -32001


def _modulo_ids(value: Any, ids: Mapping[str, str]) -> Any:
    """``value`` with the ids in ``ids`` replaced by their stand-ins, and the fields that differ
    between any two sends (message ids the server drew, timestamps) blanked."""
    match value:
        case dict():
            return {
                key: "*" if key in ("messageId", "timestamp") else _modulo_ids(item, ids)
                for key, item in value.items()
            }
        case list():
            return [_modulo_ids(item, ids) for item in value]
        case str():
            for found, stand_in in ids.items():
                value = value.replace(found, stand_in)
            return value
    return value


def _answer(response: httpx.Response, ids: Mapping[str, str]) -> tuple[int, str, Any]:
    """Everything a client sees of an answer, modulo ids (an event stream: each event's data)."""
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        body: Any = [
            json.loads(line.removeprefix("data:"))
            for line in response.text.splitlines()
            if line.startswith("data:")
        ]
    else:
        body = response.json()
    return response.status_code, kind, _modulo_ids(body, ids)


def test_legacy_task_id_of_another_principal_is_a_new_task_of_ones_own(auth_url: str) -> None:
    """A client-chosen id is the caller's own: bob naming a task with an id alice already uses
    gets exactly what he gets for an id nobody used (a new task of his), by every method he can
    then call, and alice's task is untouched (PROTOCOL.md §8: ids cannot be probed)."""
    taken, fresh = f"taken-{new_id()}", f"fresh-{new_id()}"
    ids = {taken: "<task>", fresh: "<task>"}

    def send(task_id: str, text: str, headers: Mapping[str, str], session: str) -> httpx.Response:
        params = {"id": task_id, "sessionId": session, "message": legacy_message(text)}
        return rpc(auth_url, "tasks/send", params, headers=headers)

    def completed(task_id: str, headers: Mapping[str, str]) -> Json:
        def done() -> bool:
            found = ok(rpc(auth_url, "tasks/get", {"id": task_id}, headers=headers))
            return bool(found["status"]["state"] == "completed")

        assert wait_until(done)
        task: Json = ok(rpc(auth_url, "tasks/get", {"id": task_id}, headers=headers))
        return task

    ok(send(taken, "mine", ALICE, "s-alice"))
    alices = completed(taken, ALICE)

    # The acknowledgement: the same for an id alice holds as for one nobody used.
    assert _answer(send(taken, "probe", BOB, "s-bob"), ids) == _answer(
        send(fresh, "probe", BOB, "s-bob"), ids
    )
    assert completed(taken, BOB)["history"][0]["parts"][0]["text"] == "probe"
    completed(fresh, BOB)

    # Every way bob can reach a task by its id answers the same for both.
    bob_v1 = {**V1, **BOB}
    calls: list[tuple[str, str, Mapping[str, str]]] = [
        ("tasks/get", "id", BOB),
        ("GetTask", "id", bob_v1),
        ("tasks/cancel", "id", BOB),
        ("tasks/resubscribe", "id", BOB),
        ("SubscribeToTask", "id", bob_v1),
        ("CancelTask", "id", bob_v1),
        ("tasks/pushNotification/get", "id", BOB),
        ("ListTaskPushNotificationConfigs", "taskId", bob_v1),
    ]
    for method, field, headers in calls:
        answers = [_answer(rpc(auth_url, method, {field: t}, headers=headers), ids) for t in ids]
        assert answers[0] == answers[1], method
    for method, path, body in (("GET", "", None), ("POST", ":cancel", {})):
        answers = [
            _answer(
                httpx.request(
                    method,
                    auth_url + task_path(t, path),
                    json=body,
                    headers=bob_v1,
                    timeout=HTTP_TIMEOUT,
                    verify=TLS,
                ),
                ids,
            )
            for t in ids
        ]
        assert answers[0] == answers[1], path
    listed = ok(rpc(auth_url, "ListTasks", {}, headers=bob_v1))["tasks"]
    assert sorted(t["id"] for t in listed) == sorted([taken, fresh])
    assert {t["contextId"] for t in listed} == {"s-bob"}

    # Alice's task is hers as it was: her message, her agent's answer, nothing of bob's.
    assert completed(taken, ALICE) == alices
    assert [_text(m["parts"]) for m in alices["history"] if m["role"] == "user"] == ["mine"]
    assert json.loads(_text(alices["status"]["message"]["parts"]))["principal"] == "alice"
    mine = ok(rpc(auth_url, "ListTasks", {}, headers={**V1, **ALICE}))["tasks"]
    assert [t["id"] for t in mine if t["id"] == taken] == [taken]


def test_anonymous_legacy_calls_are_unauthenticated(auth_url: str) -> None:
    """PROTOCOL.md §8: every request is authenticated, the old dialects' too (HTTP 401)."""
    response = rpc(auth_url, "tasks/send", {"id": "x", "message": legacy_message("x")})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].lower().startswith("bearer")


# --- one store behind every dialect ---------------------------------------------------------------


@pytest.mark.parametrize(("creator", "reader"), PAIRS, ids=PAIR_IDS)
def test_read_across_dialects(url: str, creator: str, reader: str) -> None:
    """A task created through one dialect reads the same through every other (GetTask,
    ``tasks/get``, ``GET /tasks/{id}``), before and after it moves on."""
    task_id = create(url, creator)
    seen = read(url, reader, task_id)
    assert seen == read(url, creator, task_id)
    assert seen.id == task_id
    assert seen.state == "input-required"
    assert seen.status_text == QUESTION
    assert seen.history == (("user", " "),)
    follow_up(url, creator, task_id, "one two three")
    assert wait_until(lambda: read(url, reader, task_id).state == "completed")
    done = read(url, reader, task_id)
    assert done == read(url, creator, task_id)
    assert done.status_text == "3 words"
    assert done.history == (("user", " "), ("agent", QUESTION), ("user", "one two three"))


@pytest.mark.parametrize(("creator", "reader"), PAIRS, ids=PAIR_IDS)
def test_cancel_across_dialects(url: str, creator: str, reader: str) -> None:
    """A task created through one dialect is canceled through any other; its creator sees it
    canceled, and can no longer cancel it (-32002; HTTP 400 on REST, the v1.0.1 table)."""
    task_id = create(url, creator)
    canceled = cancel(url, reader, task_id)
    assert canceled.id == task_id
    assert canceled.state == "canceled"
    assert read(url, creator, task_id).state == "canceled"
    assert cancel_error(url, creator, task_id) == (400 if creator == "rest" else -32002)
    assert cancel_error(url, reader, task_id) == (400 if reader == "rest" else -32002)


@pytest.mark.parametrize(("creator", "reader"), PAIRS, ids=PAIR_IDS)
def test_subscribe_across_dialects(url: str, creator: str, reader: str) -> None:
    """A task created through one dialect is subscribed to through any other (SubscribeToTask,
    ``tasks/resubscribe``, ``GET /tasks/{id}:subscribe``): the task first, then what happens
    to it, until it ends."""
    task_id = create(url, creator)
    with subscribe(url, reader, task_id) as subscription:
        first = subscription.next()
        assert (first.kind, first.state, first.text) == ("task", "input-required", QUESTION)
        follow_up(url, creator, task_id, "a b c")
        rest_of_it = subscription.rest()
    assert [(u.kind, u.state) for u in rest_of_it] == [
        ("status", "working"),
        ("status", "completed"),
    ]
    assert rest_of_it[-1].text == "3 words"
    assert [u.seq for u in rest_of_it] == [first.seq + 1, first.seq + 2]


@pytest.mark.parametrize("creator", DIALECTS)
def test_subscribe_over_rest_with_get(url: str, creator: str) -> None:
    """The proto's verb for SubscribeToTask over HTTP+JSON is GET (PROTOCOL.md §2.4: accept
    both): a task from any dialect, subscribed to with ``GET /tasks/{id}:subscribe``."""
    task_id = create(url, creator)
    with subscribe(url, "rest-get", task_id) as subscription:
        first = subscription.next()
        assert (first.kind, first.state) == ("task", "input-required")
        follow_up(url, creator, task_id, "a b c")
        assert subscription.rest()[-1].state == "completed"


@pytest.mark.parametrize(("creator", "other"), FOLLOW_UPS, ids=FOLLOW_UP_IDS)
def test_follow_up_across_dialects(url: str, creator: str, other: str) -> None:
    """A task created through one dialect is continued through another: same task, same
    skill, one history."""
    task_id = create(url, creator)
    follow_up(url, other, task_id, "across the dialects")
    assert wait_until(lambda: read(url, creator, task_id).state == "completed")
    done = read(url, creator, task_id)
    assert done.status_text == "3 words"
    assert done == read(url, other, task_id)
    assert done.history[-1] == ("user", "across the dialects")


@pytest.mark.parametrize("creator", DIALECTS)
def test_every_view_sees_the_same_events(url: str, creator: str) -> None:
    """Subscriptions through every dialect at once: the same events (same SSE ids, kinds,
    states and texts), in the same order, whoever made the task."""
    task_id = create(url, creator)
    with ExitStack() as stack:
        subscriptions = [stack.enter_context(subscribe(url, reader, task_id)) for reader in READERS]
        firsts = [subscription.next() for subscription in subscriptions]
        follow_up(url, creator, task_id, "same for all")
        streams = [
            [first, *subscription.rest()]
            for first, subscription in zip(firsts, subscriptions, strict=True)
        ]
    assert all(stream == streams[0] for stream in streams), streams
    assert [(u.kind, u.state) for u in streams[0]] == [
        ("task", "input-required"),
        ("status", "working"),
        ("status", "completed"),
    ]


# --- the REST view of client-chosen ids -----------------------------------------------------------


@pytest.mark.parametrize("task_id", ["legacy%41", "legacy/a"])
def test_rest_reads_legacy_ids_that_need_escaping(url: str, task_id: str) -> None:
    """A v0.1 client chooses its task ids; the REST view addresses them percent-encoded
    (RFC 3986), as it must any path segment, and finds exactly that task."""
    unique = f"{task_id}-{new_id()}"
    decoded_twice = unique.replace("%41", "A")
    legacy_send(url, unique, "the one asked for", skillId="upper")
    if decoded_twice != unique:
        legacy_send(url, decoded_twice, "a different task", skillId="upper")
    legacy_settled(url, unique)
    assert read(url, "rest", unique).status_text == "THE ONE ASKED FOR"
