"""Hostile input through the whole server (``a2a_core.transport.Server``, no I/O): refused where
it enters, with the protocol's error and the field, never stored, and never in the way of later
reads.

Each case here made the server answer a plain 500 before, and through a legacy ``tasks/send``
(acknowledged at once) stored a task that then broke every GetTask, CancelTask and ListTasks
page holding it.
"""

import json
from collections.abc import Mapping
from typing import Any

import pytest

from a2a_core import CoreConfig
from a2a_core.testing import Driver, Exchange
from a2a_core.transport import HttpRequest, HttpResponse

from .support import CARD

V1 = {"content-type": "application/json", "a2a-version": "1.0"}
V03 = {"content-type": "application/json"}
SURROGATE = b"\\ud800"


def make_server(**options: Any) -> Driver:
    """The whole server, agents scripted by the test."""
    options.setdefault("card", CARD)
    return Driver(config=CoreConfig(**options))


def post(server: Driver, body: bytes, headers: Mapping[str, str] = V1, path: str = "/") -> Exchange:
    return server.request(HttpRequest("POST", path, headers, body))


def rpc_body(method: str, params: Any, rpc_id: Any = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}).encode()


def answer(exchange: Exchange) -> dict[str, Any]:
    reply = exchange.response
    assert isinstance(reply, HttpResponse), exchange
    assert reply.status in (200, 400, 413), reply
    document: dict[str, Any] = json.loads(reply.body)  # always valid UTF-8 JSON
    return document


def error_of(reply: Exchange) -> dict[str, Any]:
    document = answer(reply)
    assert "error" in document, document
    error: dict[str, Any] = document["error"]
    return error


def message(text: str = "hi", **fields: Any) -> dict[str, Any]:
    return {"messageId": fields.pop("messageId", "m-1"), "role": "ROLE_USER",
            "parts": [{"text": text}], **fields}  # fmt: skip


def with_text(body: bytes, raw: bytes) -> bytes:
    """``body`` with its text ``PLACEHOLDER`` replaced by raw JSON bytes (escapes kept)."""
    return body.replace(b"PLACEHOLDER", raw)


def listing(server: Driver) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = answer(post(server, rpc_body("ListTasks", {})))["result"]["tasks"]
    return tasks


# --- lone surrogates ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "code"),
    [(SURROGATE, -32602), (b"\xed\xa0\x80", -32700), (b"a\\udfffb", -32602)],
)
def test_a_lone_surrogate_in_a_v1_send_is_refused_and_not_stored(raw: bytes, code: int) -> None:
    server = make_server()
    body = with_text(rpc_body("SendMessage", {"message": message("PLACEHOLDER")}), raw)
    error = error_of(post(server, body))
    assert error["code"] == code
    if code == -32602:
        assert "params.message.parts[0].text" in error["message"]
        assert "lone surrogate" in error["message"]
    assert len(server.tasks) == 0
    assert server.runs == {}


def test_a_legacy_send_with_a_lone_surrogate_stores_nothing_and_reads_still_work() -> None:
    server = make_server()
    params = {"id": "t-1", "message": {"role": "user", "parts": [{"type": "text", "text": "ok"}]}}
    assert "result" in answer(post(server, rpc_body("tasks/send", params), V03))
    bad = {**params, "id": "t-2"}
    bad["message"] = {"role": "user", "parts": [{"type": "text", "text": "PLACEHOLDER"}]}
    body = with_text(rpc_body("tasks/send", bad), SURROGATE)
    assert error_of(post(server, body, V03))["code"] == -32602
    assert len(server.tasks) == 1
    assert [task["id"] for task in listing(server)] == ["t-1"]
    got = answer(post(server, rpc_body("tasks/get", {"id": "t-1"}), V03))
    assert got["result"]["id"] == "t-1"


def test_a_lone_surrogate_in_the_id_is_an_invalid_request_answered_to_null() -> None:
    body = b'{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{"id":"x"}}'
    document = answer(post(make_server(), body))
    assert document["id"] is None
    assert document["error"]["code"] == -32600


def test_a_lone_surrogate_in_metadata_keys_is_refused() -> None:
    params = {"message": message(), "metadata": {"PLACEHOLDER": 1}}
    body = with_text(rpc_body("SendMessage", params), SURROGATE)
    error = error_of(post(make_server(), body))
    assert error["code"] == -32602
    assert "params.metadata" in error["message"]


def test_a_lone_surrogate_in_a_rest_body_is_400_naming_the_field() -> None:
    server = make_server()
    body = with_text(json.dumps({"message": message("PLACEHOLDER")}).encode(), SURROGATE)
    reply = post(server, body, V1, "/message:send").response
    assert isinstance(reply, HttpResponse)
    assert reply.status == 400
    error = json.loads(reply.body)["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    bad = [d for d in error["details"] if d["@type"].endswith("BadRequest")]
    assert bad[0]["fieldViolations"][0]["field"] == "message.parts[0].text"
    assert len(server.tasks) == 0


# --- nesting --------------------------------------------------------------------------------


def deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def test_the_deepest_allowed_request_goes_through_every_path() -> None:
    """A value nested to the limit is stored, read, listed, streamed and pushed."""
    server = make_server(streaming=True, push_notifications=True)
    # The envelope, params, message, metadata: four levels before ours.
    params = {
        "message": message(metadata={"deep": deep(64 - 4)}),
        "configuration": {"taskPushNotificationConfig": {"url": "https://example.com/hook"}},
    }
    stream = post(server, rpc_body("SendStreamingMessage", params))
    assert stream.stream
    (start,) = server.runs.values()
    server.agent_returns(start.task_id, "done")
    assert b"TASK_STATE_COMPLETED" in b"".join(stream.frames)
    assert server.pushes
    assert all(json.loads(notify.body) for notify in server.pushes)
    got = answer(post(server, rpc_body("GetTask", {"id": start.task_id})))
    assert got["result"]["history"][0]["metadata"]["deep"] == deep(60)
    assert [t["id"] for t in listing(server)] == [start.task_id]


def test_one_level_deeper_is_refused_naming_the_place() -> None:
    server = make_server()
    params = {"message": message(metadata={"deep": deep(64 - 3)})}
    error = error_of(post(server, rpc_body("SendMessage", params)))
    assert error["code"] == -32602
    assert "params.message.metadata.deep[0][0]" in error["message"]
    assert "nested more than 64 levels deep" in error["message"]
    assert len(server.tasks) == 0


def test_the_nesting_limit_is_configurable() -> None:
    params = {"message": message(metadata={"deep": deep(10)})}
    error = error_of(post(make_server(max_json_depth=8), rpc_body("SendMessage", params)))
    assert "nested more than 8 levels deep" in error["message"]


def test_deep_nesting_in_a_legacy_send_stores_nothing() -> None:
    server = make_server()
    params = {
        "id": "t-1",
        "message": {"role": "user", "parts": [{"type": "data", "data": {"x": deep(500)}}]},
    }
    assert error_of(post(server, rpc_body("tasks/send", params), V03))["code"] == -32602
    assert len(server.tasks) == 0


# --- size in items and parts ----------------------------------------------------------------


def test_hundreds_of_thousands_of_tiny_parts_are_refused_before_parsing() -> None:
    parts = b",".join([b'{"text":""}'] * 690_000)  # just under 8 MiB
    body = (
        b'{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":'
        b'{"messageId":"m","role":"ROLE_USER","parts":[' + parts + b"]}}}"
    )
    reply = post(make_server(), body).response
    assert isinstance(reply, HttpResponse)
    assert reply.status == 413
    error = json.loads(reply.body)["error"]
    assert error["code"] == -32600
    assert "the limit is 10000" in error["message"]


def test_more_parts_than_a_message_may_hold_are_refused_naming_the_field() -> None:
    server = make_server(max_message_parts=5)
    params = {"message": {**message(), "parts": [{"text": "x"}] * 6}}
    error = error_of(post(server, rpc_body("SendMessage", params)))
    assert error["code"] == -32602
    assert "params.message.parts" in error["message"]
    assert "at most 5" in error["message"]
    params = {"message": {**message(), "parts": [{"text": "x"}] * 5}}
    assert not post(server, rpc_body("SendMessage", params)).answered  # it waits for the agent


# --- agent output that could not be written back --------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "text with a lone surrogate \ud800",
        {"not": "an update"},
    ],
)
def test_agent_output_that_is_not_json_fails_the_task_and_reads_still_work(value: Any) -> None:
    from a2a_core import Artifact, Part

    server = make_server()
    params = {"message": message(), "configuration": {"returnImmediately": True}}
    task_id = answer(post(server, rpc_body("SendMessage", params)))["result"]["task"]["id"]
    bad = value if isinstance(value, str) else Artifact("a", (Part(data={"x": {1, 2}}),))
    server.agent_yields(task_id, bad)
    got = answer(post(server, rpc_body("GetTask", {"id": task_id})))["result"]
    assert got["status"]["state"] == "TASK_STATE_FAILED"
    assert "Invalid agent response" in got["status"]["message"]["parts"][0]["text"]
    assert [t["id"] for t in listing(server)] == [task_id]


# --- push configs the sender could not send -------------------------------------------------


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"token": "t\u00e9"}, "params.token"),
        ({"token": "line\r\nx-injected: 1"}, "params.token"),
        ({"authentication": {"scheme": "Bearer", "credentials": "\u2603"}},
         "params.authentication.credentials"),
        ({"authentication": {"scheme": "Be arer"}}, "params.authentication.scheme"),
        ({"authentication": {"scheme": "B\u00e9"}}, "params.authentication.scheme"),
        ({"url": "https://example.com/h\u00e9"}, "params.url"),
        ({"url": "https://exa mple.com/"}, "params.url"),
    ],
)  # fmt: skip
def test_push_config_values_http_cannot_carry_are_refused_naming_the_field(
    config: dict[str, Any], field: str
) -> None:
    server = make_server(push_notifications=True)
    params = {"message": message(), "configuration": {"returnImmediately": True}}
    task_id = answer(post(server, rpc_body("SendMessage", params)))["result"]["task"]["id"]
    created = {"taskId": task_id, "url": "https://example.com/hook", **config}
    error = error_of(post(server, rpc_body("CreateTaskPushNotificationConfig", created)))
    assert error["code"] == -32602
    assert f"{field}:" in error["message"]
    inline = {
        "message": message(messageId="m-2"),
        "configuration": {"taskPushNotificationConfig": {**created, "taskId": ""}},
    }
    error = error_of(post(server, rpc_body("SendMessage", inline)))
    assert error["code"] == -32602
    assert "params.configuration.taskPushNotificationConfig." in error["message"]
    assert len(server.tasks) == 1


@pytest.mark.parametrize(
    ("field", "config"),
    [
        ("params.id", {"id": "i" * 65}),
        ("params.url", {"url": "https://example.com/" + "p" * 45}),
        ("params.token", {"token": "t" * 65}),
        ("params.authentication.scheme", {"authentication": {"scheme": "B" * 65}}),
        (
            "params.authentication.credentials",
            {"authentication": {"scheme": "Bearer", "credentials": "\u00e9" * 33}},
        ),
    ],
)
def test_each_push_config_field_is_bounded_in_bytes(field: str, config: dict[str, Any]) -> None:
    server = make_server(push_notifications=True, max_push_field_bytes=64)
    params = {"message": message(), "configuration": {"returnImmediately": True}}
    task_id = answer(post(server, rpc_body("SendMessage", params)))["result"]["task"]["id"]
    created = {"taskId": task_id, "url": "https://example.com/hook", **config}
    error = error_of(post(server, rpc_body("CreateTaskPushNotificationConfig", created)))
    assert error["code"] == -32602
    assert error["message"].startswith(f"Invalid parameters: {field}: holds")
    assert "at most 64" in error["message"]


def test_a_push_config_field_at_the_byte_limit_is_taken() -> None:
    server = make_server(push_notifications=True, max_push_field_bytes=64)
    params = {"message": message(), "configuration": {"returnImmediately": True}}
    task_id = answer(post(server, rpc_body("SendMessage", params)))["result"]["task"]["id"]
    created = {"taskId": task_id, "url": "https://example.com/h", "id": "\u00e9" * 32}
    made = answer(post(server, rpc_body("CreateTaskPushNotificationConfig", created)))
    assert made["result"]["id"] == "\u00e9" * 32


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("SendMessage", {"message": message(taskId="")}, V1),
        ("SendStreamingMessage", {"message": message(taskId="")}, V1),
        (
            "message/send",
            {
                "message": {
                    "kind": "message",
                    "messageId": "m-1",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}],
                    "taskId": "",
                }
            },
            V03,
        ),
        (
            "tasks/send",
            {"id": "", "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}},
            V03,
        ),
    ],
)
def test_an_empty_task_id_is_refused_not_taken_for_a_new_task(
    method: str, params: Any, headers: Mapping[str, str]
) -> None:
    server = make_server(streaming=True)
    error = error_of(post(server, rpc_body(method, params), headers))
    assert error["code"] == -32602
    assert error["message"].startswith("Invalid parameters: params.message.taskId: must not be")
    assert len(server.tasks) == 0


def test_an_empty_task_id_over_rest_names_the_body_field() -> None:
    server = make_server()
    body = json.dumps({"message": message(taskId="")}).encode()
    exchange = post(server, body, path="/message:send")
    assert exchange.response is not None
    assert exchange.response.status == 400
    assert "message.taskId: must not be empty" in exchange.json()["error"]["message"]
