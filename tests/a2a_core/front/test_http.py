"""The HTTP front: the agent card, the JSON-RPC envelope, its errors, and a fuzz of both."""

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from a2a_core import (
    AuthenticationInfo,
    CancelTaskRequest,
    Core,
    CoreConfig,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.card import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a_core.decisions import AgentDone, AwaitTask, Call, Dispatch, Fail, Operation, Push, Respond
from a2a_core.errors import ERROR_CODES, A2AError, BusyError, TaskNotFoundError
from a2a_core.front._http import HttpFront, task_concerned
from a2a_core.store import LoggedEvent, MemoryTasks
from a2a_core.testing import counting_ids
from a2a_core.transport import (
    ANONYMOUS,
    Caller,
    HttpRequest,
    HttpResponse,
    Notify,
    Server,
    StartRun,
    V1Codec,
    url_problem,
)
from tests.a2a_core.support import (
    CARD,
    METHODS,
    RPC_HEADERS,
    Harness,
    json_values,
    make_core,
    rpc_request,
    strict_json,
    user_message_json,
)

BASE = "http://host"
ALICE = Caller("alice")
CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"]
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
#: Every code the JSON-RPC front or the reducer may answer with.
KNOWN_CODES = {-32700, -32600, -32601, -32602, -32603, *range(-32009, -32000)}


def handle(core: Core, request: HttpRequest, base_url: str = BASE) -> HttpResponse | Dispatch:
    return core.handle_http(request, ALICE, base_url)


def answer(core: Core, request: HttpRequest, base_url: str = BASE) -> HttpResponse:
    routed = handle(core, request, base_url)
    assert isinstance(routed, HttpResponse), routed
    return routed


def dispatch(core: Core, request: HttpRequest) -> Dispatch:
    routed = handle(core, request)
    assert isinstance(routed, Dispatch), routed
    return routed


def header(response: HttpResponse, name: str) -> str | None:
    values = [value for key, value in response.headers if key == name]
    assert len(values) <= 1, f"{name} appears {len(values)} times"
    return values[0] if values else None


def rpc_error(response: HttpResponse, status: int = 200) -> dict[str, Any]:
    """The JSON-RPC error object of ``response``, after checking the envelope."""
    assert response.status == status
    assert header(response, "content-type") == "application/json"
    body = strict_json(response.body)
    assert set(body) == {"jsonrpc", "id", "error"}
    assert body["jsonrpc"] == "2.0"
    error = body["error"]
    assert type(error["code"]) is int
    assert type(error["message"]) is str
    assert error["message"]
    return dict(body)


def error_info(error: dict[str, Any]) -> dict[str, Any]:
    infos = [d for d in error["data"] if d["@type"] == ERROR_INFO]
    assert len(infos) == 1
    return dict(infos[0])


def card_request(path: str = CARD_PATHS[0], method: str = "GET", **headers: str) -> HttpRequest:
    return HttpRequest(method, path, headers)


# --- the agent card ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", CARD_PATHS)
def test_card_is_served_at_both_well_known_paths(path: str) -> None:
    core = make_core()
    response = answer(core, card_request(path))
    assert response.status == 200
    assert header(response, "content-type") == "application/json"
    assert header(response, "cache-control") == "public, max-age=300"
    etag = header(response, "etag")
    assert etag is not None
    assert etag.startswith('"')
    assert etag.endswith('"')
    assert header(response, "last-modified") is None
    card = core.codec.decode(AgentCard, json.loads(response.body), "card")
    assert card == core.card(BASE)
    assert card.name == CARD.name
    assert card.supported_interfaces == (
        AgentInterface(url="http://host/", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url="http://host", protocol_binding="HTTP+JSON", protocol_version="1.0"),
        AgentInterface(url="http://host/", protocol_binding="JSONRPC", protocol_version="0.3"),
    )


def test_both_card_paths_serve_the_same_bytes() -> None:
    core = make_core()
    first, second = (answer(core, card_request(path)) for path in CARD_PATHS)
    assert first.body == second.body
    assert header(first, "etag") == header(second, "etag")


def test_card_has_last_modified_when_configured() -> None:
    core = make_core(card_modified=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC), card_max_age=60)
    response = answer(core, card_request())
    assert header(response, "last-modified") == "Thu, 02 Jan 2025 03:04:05 GMT"
    assert header(response, "cache-control") == "public, max-age=60"


def test_last_modified_accepts_any_aware_time() -> None:
    two_hours_east = timezone(timedelta(hours=2))
    core = make_core(card_modified=datetime(2025, 1, 2, 5, 4, 5, tzinfo=two_hours_east))
    response = answer(core, card_request())
    assert header(response, "last-modified") == "Thu, 02 Jan 2025 03:04:05 GMT"


@pytest.mark.parametrize("form", ["{etag}", "W/{etag}", "*", '"other", {etag}', '"a",W/{etag}'])
def test_matching_if_none_match_answers_304(form: str) -> None:
    core = make_core()
    etag = header(answer(core, card_request()), "etag")
    assert etag is not None
    response = answer(core, card_request(**{"if-none-match": form.format(etag=etag)}))
    assert response.status == 304
    assert response.body == b""
    assert header(response, "etag") == etag
    assert header(response, "cache-control") == "public, max-age=300"


@pytest.mark.parametrize("value", ['"nope"', 'W/"nope"', "", "etag"])
def test_other_if_none_match_gets_the_card(value: str) -> None:
    core = make_core()
    response = answer(core, card_request(**{"if-none-match": value}))
    assert response.status == 200
    assert response.body


@pytest.mark.parametrize("path", CARD_PATHS)
def test_head_of_the_card_has_headers_but_no_body(path: str) -> None:
    core = make_core()
    get = answer(core, card_request(path))
    head = answer(core, card_request(path, "HEAD"))
    assert head.status == 200
    assert head.body == b""
    assert head.headers == (*get.headers, ("content-length", str(len(get.body))))


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_card_refuses_other_methods(method: str) -> None:
    response = answer(make_core(), card_request(method=method))
    assert response.status == 405
    assert header(response, "allow") == "GET, HEAD"


def test_interface_url_is_base_url_plus_rpc_path() -> None:
    core = make_core(rpc_path="/a2a/rpc")
    card = core.codec.decode(
        AgentCard, json.loads(answer(core, card_request(), "http://h:8080/").body), "card"
    )
    assert [i.url for i in card.supported_interfaces] == [
        "http://h:8080/a2a/rpc",
        "http://h:8080",
        "http://h:8080/a2a/rpc",
    ]


def test_etag_follows_the_base_url() -> None:
    core = make_core()
    one = answer(core, card_request(), "http://one")
    two = answer(core, card_request(), "http://two")
    assert header(one, "etag") != header(two, "etag")
    assert b"http://one/" in one.body
    assert b"http://two/" in two.body
    # A cached ETag is still right after other hosts were served.
    for n in range(20):
        answer(core, card_request(), f"http://h{n}")
    assert answer(core, card_request(), "http://one") == one


def test_public_url_overrides_the_request_base() -> None:
    core = make_core(public_url="https://public.example/", rpc_path="/rpc")
    for base in ("http://one", "http://two:81"):
        body = json.loads(answer(core, card_request(), base).body)
        assert body["supportedInterfaces"][0]["url"] == "https://public.example/rpc"
    assert core.card("http://elsewhere").supported_interfaces[0].url == "https://public.example/rpc"


def test_pinned_interfaces_are_served_as_written() -> None:
    pinned = (AgentInterface("https://x/y", "HTTP+JSON", "1.0"),)
    core = make_core(card=AgentCard("n", "d", "1", supported_interfaces=pinned))
    assert core.card(BASE).supported_interfaces == pinned


def test_capabilities_are_false_by_default() -> None:
    body = json.loads(answer(make_core(), card_request()).body)
    assert body["capabilities"] == {
        "streaming": False,
        "pushNotifications": False,
        "extendedAgentCard": False,
        "stateTransitionHistory": False,  # v0.3's name, for v0.3 clients
    }


def test_capabilities_follow_the_config_not_the_template() -> None:
    template = AgentCard(
        "n",
        "d",
        "1",
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
    )
    core = make_core(card=template, streaming=True, push_notifications=True, extended_card=template)
    body = json.loads(answer(core, card_request()).body)
    assert body["capabilities"] == {
        "streaming": True,
        "pushNotifications": True,
        "extendedAgentCard": True,
        "stateTransitionHistory": False,
    }
    lying = AgentCard("n", "d", "1", capabilities=AgentCapabilities(streaming=True))
    body = json.loads(answer(make_core(card=lying), card_request()).body)
    assert body["capabilities"]["streaming"] is False


def test_card_without_skills_gets_a_default_skill() -> None:
    card = make_core().card(BASE)
    assert card.skills == (AgentSkill("default", CARD.name, CARD.description, tags=("default",)),)
    named = AgentSkill("s", "S", "does s", ("t",))
    core = make_core(card=AgentCard("n", "d", "1", skills=(named,)))
    assert core.card(BASE).skills == (named,)


def test_unknown_path_is_404_and_get_on_the_endpoint_is_405() -> None:
    core = make_core()
    assert answer(core, HttpRequest("GET", "/nowhere")).status == 404
    response = answer(core, HttpRequest("GET", "/"))
    assert response.status == 405
    assert header(response, "allow") == "POST"


def test_rpc_path_is_configurable() -> None:
    core = make_core(rpc_path="/a2a")
    request = rpc_request("GetTask", {"id": "t"})
    assert answer(core, request).status == 404
    moved = HttpRequest("POST", "/a2a", request.headers, request.body)
    assert isinstance(handle(core, moved), Dispatch)


# --- the JSON-RPC envelope --------------------------------------------------------------------


def raw_request(body: bytes, headers: dict[str, str] | None = None, query: str = "") -> HttpRequest:
    return HttpRequest("POST", "/", dict(RPC_HEADERS) if headers is None else headers, body, query)


@pytest.mark.parametrize(
    "body", [b"{", b"", b"not json", b'{"jsonrpc": "2.0",}', b"\xff\xfe\x00garbage", b"\xc3\x28"]
)
def test_invalid_json_is_a_parse_error_with_null_id(body: bytes) -> None:
    error = rpc_error(answer(make_core(), raw_request(body)))
    assert error["id"] is None
    assert error["error"]["code"] == -32700
    assert error_info(error["error"])["reason"] == "INVALID_JSON"


@pytest.mark.parametrize(
    ("document", "rpc_id"),
    [
        ([{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}], None),
        ([], None),
        ("SendMessage", None),
        (42, None),
        (None, None),
        ({"jsonrpc": "1.0", "id": 5, "method": "GetTask"}, 5),
        ({"id": "x", "method": "GetTask"}, "x"),
        ({"jsonrpc": 2.0, "id": 1, "method": "GetTask"}, 1),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "GetTask"}, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "GetTask"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "GetTask"}, None),
        ({"jsonrpc": "2.0", "id": 3, "method": 7}, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": ""}, 3),
        ({"jsonrpc": "2.0", "id": 3}, 3),
    ],
)
def test_bad_envelopes_are_invalid_requests(document: Any, rpc_id: Any) -> None:
    error = rpc_error(answer(make_core(), raw_request(json.dumps(document).encode())))
    assert error["error"]["code"] == -32600
    assert error["id"] == rpc_id
    assert error_info(error["error"])["reason"] == "INVALID_REQUEST"


def test_a_request_without_an_id_is_answered_with_a_null_id() -> None:
    """A JSON-RPC notification: A2A methods all have results, so it is answered anyway."""
    document = {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "missing"}}
    core = make_core()
    routed = core.handle_http(raw_request(json.dumps(document).encode()), Caller("alice"), BASE)
    assert isinstance(routed, Dispatch)
    assert routed.rpc_id is None


def test_batch_requests_say_so() -> None:
    body = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}]).encode()
    error = rpc_error(answer(make_core(), raw_request(body)))
    assert "Batch" in error["error"]["message"]


@pytest.mark.parametrize("rpc_id", [1, "abc", 2.5, None, 0, ""])
def test_ids_are_echoed(rpc_id: Any) -> None:
    core = make_core()
    error = rpc_error(answer(core, rpc_request("Nope", {}, rpc_id)))
    assert error["id"] == rpc_id
    routed = dispatch(core, rpc_request("GetTask", {"id": "t"}, rpc_id))
    assert routed.rpc_id == rpc_id


def test_unknown_method_is_method_not_found() -> None:
    error = rpc_error(answer(make_core(), rpc_request("message/send", {}, 9)))
    assert error["id"] == 9
    assert error["error"]["code"] == -32601
    info = error_info(error["error"])
    assert info["reason"] == "METHOD_NOT_FOUND"
    assert info["metadata"] == {"method": "message/send"}


def test_bad_params_name_the_wire_path() -> None:
    params = {"message": user_message_json() | {"messageId": 12}}
    error = rpc_error(answer(make_core(), rpc_request("SendMessage", params, "r1")))
    assert error["id"] == "r1"
    assert error["error"]["code"] == -32602
    assert error_info(error["error"])["reason"] == "INVALID_PARAMS"
    (bad_request,) = [d for d in error["error"]["data"] if d["@type"] == BAD_REQUEST]
    assert bad_request["fieldViolations"] == [
        {"field": "params.message.messageId", "description": "expected a string, got a number"}
    ]


def test_params_that_are_not_an_object_are_invalid_params() -> None:
    for params in (["t"], "t", 5):
        error = rpc_error(answer(make_core(), rpc_request("GetTask", params)))
        assert error["error"]["code"] == -32602
        (bad_request,) = [d for d in error["error"]["data"] if d["@type"] == BAD_REQUEST]
        assert bad_request["fieldViolations"][0]["field"] == "params"


def test_missing_params_decode_as_empty() -> None:
    routed = dispatch(make_core(), rpc_request("ListTasks"))
    assert routed.call.operation is Operation.LIST_TASKS
    error = rpc_error(answer(make_core(), rpc_request("GetTask")))
    assert error["error"]["code"] == -32602


# --- protocol version -------------------------------------------------------------------------


def test_missing_version_is_taken_as_0_3_and_refused() -> None:
    headers = {"content-type": "application/json"}
    error = rpc_error(answer(make_core(), rpc_request("GetTask", {"id": "t"}, 4, headers=headers)))
    assert error["id"] == 4
    assert error["error"]["code"] == -32009
    assert "0.3" in error["error"]["message"]
    info = error_info(error["error"])
    assert info["reason"] == "VERSION_NOT_SUPPORTED"
    assert info["metadata"] == {"requestedVersion": "0.3", "supportedVersions": "1.0"}


@pytest.mark.parametrize("version", ["2.0", "0.3", "1", "1.1", "v1.0", "1.x", "latest"])
def test_other_versions_are_refused(version: str) -> None:
    headers = {"content-type": "application/json", "a2a-version": version}
    error = rpc_error(answer(make_core(), rpc_request("GetTask", {"id": "t"}, headers=headers)))
    assert error["error"]["code"] == -32009
    assert error_info(error["error"])["metadata"]["requestedVersion"] == version


@pytest.mark.parametrize("version", ["1.0", "1.0.3", " 1.0 ", "1.0, 0.3"])
def test_version_1_0_is_accepted_whatever_the_patch(version: str) -> None:
    headers = {"content-type": "application/json", "a2a-version": version}
    routed = dispatch(make_core(), rpc_request("GetTask", {"id": "t"}, headers=headers))
    assert routed.call == Call(Operation.GET_TASK, GetTaskRequest("t"), ALICE)


def test_version_may_come_in_the_query() -> None:
    headers = {"content-type": "application/json"}
    request = rpc_request("GetTask", {"id": "t"}, headers=headers, query="A2A-Version=1.0")
    assert isinstance(handle(make_core(), request), Dispatch)
    refused = rpc_request("GetTask", {"id": "t"}, headers=headers, query="A2A-Version=0.3")
    assert rpc_error(answer(make_core(), refused))["error"]["code"] == -32009


def test_invalid_json_is_reported_before_the_version() -> None:
    error = rpc_error(answer(make_core(), raw_request(b"{", {})))
    assert error["error"]["code"] == -32700


# --- content type and size --------------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "multipart/form-data"])
def test_wrong_content_type_is_refused_with_the_id(content_type: str) -> None:
    headers = {"content-type": content_type, "a2a-version": "1.0"}
    error = rpc_error(answer(make_core(), rpc_request("GetTask", {"id": "t"}, 77, headers=headers)))
    assert error["id"] == 77
    assert error["error"]["code"] == -32005
    assert error_info(error["error"])["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
    # Without a readable id, the error goes to null.
    refused = answer(make_core(), raw_request(b"<xml/>", headers))
    assert rpc_error(refused)["id"] is None


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/a2a+json",
        "",
    ],
)
def test_json_content_types_are_accepted(content_type: str) -> None:
    headers = {"a2a-version": "1.0"}
    if content_type:
        headers["content-type"] = content_type
    assert isinstance(
        handle(make_core(), rpc_request("GetTask", {"id": "t"}, headers=headers)), Dispatch
    )


def test_oversized_body_is_413_before_parsing() -> None:
    core = make_core(max_body_bytes=64)
    body = b"{" * 65  # not even JSON: the size is checked first
    error = rpc_error(answer(core, raw_request(body)), status=413)
    assert error["id"] is None
    assert error["error"]["code"] == -32600
    assert error_info(error["error"])["reason"] == "PAYLOAD_TOO_LARGE"
    assert "64" in error["error"]["message"]
    # Exactly at the limit is fine.
    assert rpc_error(answer(core, raw_request(b"[" + b" " * 62 + b"]")))["error"]["code"] == -32600


def test_declared_content_length_over_the_limit_is_413() -> None:
    core = make_core(max_body_bytes=1000)
    request = rpc_request("GetTask", {"id": "t"}, headers={**RPC_HEADERS, "content-length": "1001"})
    error = rpc_error(answer(core, request), status=413)
    assert error["error"]["code"] == -32600
    ok = rpc_request("GetTask", {"id": "t"}, headers={**RPC_HEADERS, "content-length": "1000"})
    assert isinstance(handle(core, ok), Dispatch)


def test_too_large_answer_for_adapters() -> None:
    response = make_core(max_body_bytes=10).too_large()
    error = rpc_error(response, status=413)
    assert error["id"] is None
    assert error["error"]["code"] == -32600
    assert error_info(error["error"])["reason"] == "PAYLOAD_TOO_LARGE"


# --- dispatch and render ----------------------------------------------------------------------


def test_a_valid_send_is_dispatched_with_its_caller() -> None:
    core = make_core()
    routed = core.handle_http(
        rpc_request("SendMessage", {"message": user_message_json()}, "s-1"), Caller("bob"), BASE
    )
    assert routed == Dispatch(
        Call(
            Operation.SEND_MESSAGE,
            SendMessageRequest(Message("m-1", Role.USER, (Part(text="hi"),))),
            Caller("bob"),
        ),
        "s-1",
    )


@pytest.mark.parametrize("method", [m for m in METHODS if m != "GetExtendedAgentCard"])
def test_every_v1_method_is_routed(method: str) -> None:
    all_params: dict[str, dict[str, Any]] = {
        "SendMessage": {"message": user_message_json()},
        "SendStreamingMessage": {"message": user_message_json()},
        "GetTask": {"id": "t"},
        "ListTasks": {},
        "CancelTask": {"id": "t"},
        "SubscribeToTask": {"id": "t"},
        "CreateTaskPushNotificationConfig": {"taskId": "t", "url": "https://hook"},
        "GetTaskPushNotificationConfig": {"taskId": "t", "id": "c"},
        "ListTaskPushNotificationConfigs": {"taskId": "t"},
        "DeleteTaskPushNotificationConfig": {"taskId": "t", "id": "c"},
        "GetExtendedAgentCard": {},
    }
    params = all_params[method]
    routed = dispatch(make_core(), rpc_request(method, params))
    assert routed.call.operation.value == method


def test_the_extended_card_is_answered_by_the_front_alone() -> None:
    """Configuration, not task state: nothing is read or decided for it."""
    request = rpc_request("GetExtendedAgentCard", {})
    unconfigured = answer(make_core(), request)
    assert rpc_error(unconfigured)["error"]["code"] == -32004
    extended = attrs.evolve(CARD, name="Extended")
    core = make_core(extended_card=extended)
    anonymous = core.handle_http(request, ANONYMOUS, BASE)
    assert isinstance(anonymous, HttpResponse)
    assert rpc_error(anonymous)["error"]["code"] == -32004  # refused
    served = answer(core, request)  # Alice, authenticated
    assert isinstance(served, HttpResponse)
    assert json.loads(served.body)["result"]["name"] == "Extended"


def test_with_the_old_dialects_off_only_v1_is_spoken() -> None:
    core = make_core(v03=False)
    old = rpc_request(
        "message/send",
        {"message": user_message_json()},
        headers={"content-type": "application/json"},
    )
    assert rpc_error(answer(core, old))["error"]["code"] == -32009
    legacy = rpc_request("tasks/get", {"id": "t"}, headers={**RPC_HEADERS, "a2a-version": "0.1"})
    assert rpc_error(answer(core, legacy))["error"]["code"] == -32009
    assert isinstance(handle(core, rpc_request("GetTask", {"id": "t"})), Dispatch)
    unknown = rpc_error(answer(core, rpc_request("GetTasks", {"id": "t"})))
    assert unknown["error"]["code"] == -32601
    assert unknown["error"]["message"] == "Method not found: 'GetTasks' is not an A2A 1.0 method"


def test_a_v03_client_gets_the_extended_card_with_no_params() -> None:
    """``agent/getAuthenticatedExtendedCard`` takes no params: whatever it is sent is ignored."""
    core = make_core(extended_card=attrs.evolve(CARD, name="Extended"))
    request = rpc_request(
        "agent/getAuthenticatedExtendedCard",
        {"ignored": True},
        headers={"content-type": "application/json"},  # no A2A-Version: 0.3
    )
    served = answer(core, request)
    assert isinstance(served, HttpResponse)
    card = json.loads(served.body)["result"]
    assert card["name"] == "Extended"
    assert card["protocolVersion"] == "0.3.0"  # the card as a v0.3 client reads it


def test_send_results_are_wrapped_in_their_oneof_key() -> None:
    core = make_core()
    routed = dispatch(core, rpc_request("SendMessage", {"message": user_message_json()}, 1))
    task = Task("t", TaskStatus(TaskState.COMPLETED), context_id="c")
    body = json.loads(core.render(routed, Respond(task)).body)
    assert body == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}
        },
    }
    message = Message("r", Role.AGENT, (Part(text="hey"),))
    body = json.loads(core.render(routed, Respond(message)).body)
    assert body["result"] == {
        "message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "hey"}]}
    }


def test_other_results_are_bare() -> None:
    core = make_core()
    routed = dispatch(core, rpc_request("GetTask", {"id": "t"}, "g"))
    task = Task("t", TaskStatus(TaskState.WORKING))
    response = core.render(routed, Respond(task))
    assert response.status == 200
    assert json.loads(response.body)["result"] == {
        "id": "t",
        "status": {"state": "TASK_STATE_WORKING"},
    }


def test_failures_render_as_json_rpc_errors_with_error_info() -> None:
    core = make_core()
    routed = dispatch(core, rpc_request("GetTask", {"id": "t"}, "g"))
    response = core.render(
        routed, Fail(TaskNotFoundError("Task t not found", metadata={"taskId": "t"}))
    )
    error = rpc_error(response)
    assert error["id"] == "g"
    assert error["error"] == {
        "code": -32001,
        "message": "Task t not found",
        "data": [
            {
                "@type": ERROR_INFO,
                "reason": "TASK_NOT_FOUND",
                "domain": "a2a-protocol.org",
                "metadata": {"taskId": "t"},
            }
        ],
    }


def test_a_whole_request_through_front_reducer_and_render() -> None:
    harness = Harness()
    core = harness.core
    send = dispatch(core, rpc_request("SendMessage", {"message": user_message_json("go")}, 1))
    decision = harness.decide(send.call)
    assert isinstance(decision.reply, AwaitTask)
    task_id = decision.reply.task_id
    harness.decide(AgentDone(task_id, 1, "done"))
    reply = core.settled_reply(decision.reply, harness.record(task_id))
    result = json.loads(core.render(send, reply).body)["result"]["task"]
    assert result["status"]["state"] == "TASK_STATE_COMPLETED"
    assert result["history"][0]["parts"] == [{"text": "go"}]

    get = dispatch(core, rpc_request("GetTask", {"id": task_id, "historyLength": 0}, 2))
    decided = harness.decide(get.call)
    assert isinstance(decided.reply, Respond)
    body = json.loads(core.render(get, decided.reply).body)
    assert body["result"]["id"] == task_id
    assert "history" not in body["result"]

    foreign = core.handle_http(rpc_request("GetTask", {"id": task_id}, 3), Caller("eve"), BASE)
    assert isinstance(foreign, Dispatch)
    decided = harness.decide(foreign.call)
    assert isinstance(decided.reply, Fail)
    assert rpc_error(core.render(foreign, decided.reply))["error"]["code"] == -32001


# --- suspected bugs: inputs that make handle_http raise or answer invalid JSON ----------------


@pytest.mark.parametrize(
    ("body", "content_type", "status", "code"),
    [
        # Past the item limit: refused before parsing, as too large.
        (b"[" * 50_000, "application/json", 413, -32600),
        (b'{"a":' * 50_000, "application/json", 413, -32600),
        (b"[" * 50_000, "text/plain", 200, -32005),
        # Within it, but deeper than the parser goes.
        (b"[" * 5_000, "application/json", 200, -32600),
    ],
)
def test_deeply_nested_json_is_an_error_reply(
    body: bytes, content_type: str, status: int, code: int
) -> None:
    headers = {"content-type": content_type, "a2a-version": "1.0"}
    core = make_core(max_json_items=20_000)
    error = rpc_error(answer(core, raw_request(body, headers)), status)
    assert error["error"]["code"] == code


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_non_json_number_ids_never_produce_invalid_json(literal: bytes) -> None:
    body = b'{"jsonrpc":"2.0","id":' + literal + b',"method":"Nope"}'
    rpc_error(answer(make_core(), raw_request(body)))


@pytest.mark.parametrize("length", ["\u00b2", "9" * 5000])
def test_odd_content_length_never_raises(length: str) -> None:
    request = rpc_request("GetTask", {"id": "t"}, headers={**RPC_HEADERS, "content-length": length})
    handle(make_core(), request)


@pytest.mark.parametrize(
    ("headers", "query"),
    [
        ({"a2a-version": "\u00b2.0"}, ""),
        ({"a2a-version": "1" * 5000 + ".0"}, ""),
        ({}, "A2A-Version=%C2%B2.0"),
    ],
)
def test_odd_versions_never_raise(headers: dict[str, str], query: str) -> None:
    request = rpc_request("GetTask", {"id": "t"}, headers=headers, query=query)
    response = answer(make_core(), request)
    assert rpc_error(response)["error"]["code"] == -32009


@pytest.mark.parametrize("value", ["\u00b2", "9" * 5000])
def test_odd_last_event_ids_never_raise(value: str) -> None:
    request = rpc_request(
        "SubscribeToTask", {"id": "t"}, headers={**RPC_HEADERS, "last-event-id": value}
    )
    response = answer(make_core(streaming=True), request)
    assert rpc_error(response)["error"]["code"] == -32602


@pytest.mark.parametrize("error_type", list(ERROR_CODES), ids=lambda t: t.__name__)
def test_every_error_renders_with_error_info(error_type: type[A2AError]) -> None:
    core = make_core()
    routed = dispatch(core, rpc_request("GetTask", {"id": "t"}, "e"))
    response = core.render(routed, Fail(error_type(metadata={"k": "v"})))
    codes = ERROR_CODES[error_type]
    # JSON-RPC answers 200, except where HTTP itself must say it (size, credentials, busy:
    # what proxies and retry logic act on).
    says_http = codes.http in (401, 413) or error_type is BusyError
    error = rpc_error(response, codes.http if says_http else 200)
    assert error["id"] == "e"
    assert error["error"]["code"] == codes.jsonrpc
    assert error["error"]["message"] == codes.message
    assert error_info(error["error"]) == {
        "@type": ERROR_INFO,
        "reason": codes.reason,
        "domain": "a2a-protocol.org",
        "metadata": {"k": "v"},
    }


@pytest.mark.parametrize(
    ("request_", "kind"),
    [
        (HttpRequest("POST", "/", {"content-type": "application/json"}, b"{not read"), "rpc"),
        (HttpRequest("GET", "/tasks/t-1", {"a2a-version": "1.0"}), "rest"),
    ],
)
def test_the_401_is_rendered_in_the_requests_binding(request_: HttpRequest, kind: str) -> None:
    response = make_core().unauthenticated(request_, ('Bearer realm="a2a"', "ApiKey"))
    assert response.status == 401
    assert [v for k, v in response.headers if k == "www-authenticate"] == [
        'Bearer realm="a2a"',
        "ApiKey",
    ]
    body = strict_json(response.body)
    if kind == "rpc":
        assert body["id"] is None  # the body was not parsed
        assert error_info(body["error"])["reason"] == "UNAUTHENTICATED"
    else:
        assert body["error"]["status"] == "UNAUTHENTICATED"
        assert body["error"]["code"] == 401


# --- fuzz -------------------------------------------------------------------------------------


def check_answer(routed: HttpResponse | Dispatch) -> None:
    """A fuzzed request either dispatches or gets a well-formed JSON-RPC error."""
    if isinstance(routed, Dispatch):
        assert routed.call.operation.value in METHODS
        event(f"dispatched {routed.call.operation.value}")
        return
    assert routed.status in (200, 413)
    error = rpc_error(routed, routed.status)
    event(f"error {error['error']['code']}")
    assert error["error"]["code"] in KNOWN_CODES
    info = error_info(error["error"])
    assert info["domain"] == "a2a-protocol.org"
    assert info["reason"]
    assert type(error["id"]) in (str, int, float, type(None))


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_fuzz_arbitrary_bytes_never_raise(body: bytes) -> None:
    check_answer(handle(FUZZ_CORE, raw_request(body)))


rpc_ids = (
    st.none()
    | st.integers()
    | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False)
)
garbage: st.SearchStrategy[Any] = json_values | st.lists(st.integers(), max_size=2) | st.just({})
#: Ids the harness's seed task uses ("id-1" is alice's task, "id-2" its context).
task_ids = st.sampled_from(["id-1", "id-2", "nope", ""]) | st.text(max_size=4)
small_ints = st.integers(min_value=-2, max_value=120)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Absent (None, dropped below) or a value."""
    return st.none() | strategy


def fields(**members: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(members).map(
        lambda d: {key: value for key, value in d.items() if value is not None}
    )


wire_parts = st.one_of(
    fields(text=st.text(max_size=5), mediaType=maybe(st.sampled_from(["text/plain", "image/png"]))),
    fields(data=json_values),
    fields(raw=st.sampled_from(["aGk=", "@@", ""])),
    fields(url=st.text(max_size=5), filename=maybe(st.text(max_size=3))),
)
wire_messages = fields(
    messageId=st.text(min_size=1, max_size=4) | st.just(""),
    role=st.sampled_from(["ROLE_USER", "ROLE_USER", 1, "ROLE_AGENT", "ROLE_UNSPECIFIED"]),
    parts=st.lists(wire_parts, min_size=1, max_size=2) | st.just([]),
    taskId=maybe(task_ids),
    contextId=maybe(task_ids),
)
#: Mostly well-formed params per method, so fuzzing reaches the decoder and the reducer.
METHOD_PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "SendMessage": fields(
        message=wire_messages,
        configuration=maybe(
            fields(historyLength=maybe(small_ints), returnImmediately=maybe(st.booleans()))
        ),
        metadata=maybe(st.dictionaries(st.text(max_size=3), json_values, max_size=2)),
    ),
    "GetTask": fields(id=task_ids, historyLength=maybe(small_ints)),
    "ListTasks": fields(
        pageSize=maybe(small_ints),
        pageToken=maybe(st.text(max_size=8)),
        status=maybe(st.sampled_from([s.value for s in TaskState]) | small_ints),
        contextId=maybe(task_ids),
        includeArtifacts=maybe(st.booleans()),
        historyLength=maybe(small_ints),
        statusTimestampAfter=maybe(st.sampled_from(["2025-01-01T00:00:00Z", "x"])),
    ),
    "CancelTask": fields(id=task_ids),
    "SubscribeToTask": fields(id=task_ids),
    "CreateTaskPushNotificationConfig": fields(taskId=task_ids, url=maybe(st.text(max_size=4))),
    "GetTaskPushNotificationConfig": fields(taskId=task_ids, id=maybe(task_ids)),
    "ListTaskPushNotificationConfigs": fields(taskId=task_ids),
    "DeleteTaskPushNotificationConfig": fields(taskId=task_ids, id=maybe(task_ids)),
    "GetExtendedAgentCard": fields(tenant=maybe(st.text(max_size=3))),
}
METHOD_PARAMS["SendStreamingMessage"] = METHOD_PARAMS["SendMessage"]


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one member, somewhere inside, replaced by garbage or dropped."""
    if not isinstance(value, dict) or not value or draw(st.integers(0, 3)) == 0:
        return draw(garbage)
    key = draw(st.sampled_from(sorted(value)))
    copy = dict(value)
    action = draw(st.sampled_from(["replace", "drop", "descend", "snake"]))
    if action == "replace":
        copy[key] = draw(garbage)
    elif action == "drop":
        del copy[key]
    elif action == "snake":
        copy["_".join(key.split("I")) if "I" in key else key + "_"] = copy.pop(key)
    else:
        copy[key] = draw(mutated(copy[key]))
    return copy


@st.composite
def envelopes(draw: st.DrawFn) -> bytes:
    """A JSON-RPC request that is usually well formed, with garbage in random places."""
    # Hypothesis leans towards 0 for integers, so 0 is the well-formed branch everywhere.
    method = draw(st.sampled_from(METHODS)) if draw(st.integers(0, 7)) < 7 else draw(st.text())
    params = draw(METHOD_PARAMS.get(method, fields(id=maybe(task_ids))))
    if draw(st.integers(0, 3)) == 3:
        params = draw(mutated(params))
    document: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(rpc_ids), "method": method}
    if params != {} or draw(st.booleans()):
        document["params"] = params
    if draw(st.integers(0, 9)) == 9:  # break the envelope itself
        key = draw(st.sampled_from(["jsonrpc", "id", "method", "params"]))
        if draw(st.booleans()):
            document.pop(key, None)
        else:
            document[key] = draw(garbage)
    return json.dumps(document).encode()


FUZZ_CORE = make_core()


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(envelopes())
def test_fuzz_envelopes_never_raise(body: bytes) -> None:
    check_answer(handle(FUZZ_CORE, raw_request(body)))


@settings(max_examples=200)
@given(json_values)
def test_fuzz_any_json_document_never_raises(document: Any) -> None:
    check_answer(handle(FUZZ_CORE, raw_request(json.dumps(document).encode())))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(envelopes(), st.sampled_from(["alice", "bob"]))
def test_fuzz_dispatched_calls_are_decided_and_rendered(body: bytes, principal: str) -> None:
    """Whatever dispatches also decides and renders without raising (the whole pipeline)."""
    harness = Harness()
    harness.create("seed")  # a task id-1 exists, owned by alice
    routed = harness.core.handle_http(raw_request(body), Caller(principal), BASE)
    if isinstance(routed, HttpResponse):
        check_answer(routed)
        return
    decision = harness.decide(routed.call)
    reply = decision.reply
    event(f"decided {type(reply).__name__}")
    if isinstance(reply, AwaitTask):
        reply = harness.core.settled_reply(reply, harness.record(reply.task_id))
    assert isinstance(reply, Respond | Fail)
    response = harness.core.render(routed, reply)
    body_json = strict_json(response.body)
    assert ("result" in body_json) != ("error" in body_json)
    assert body_json["id"] == routed.rpc_id


# --- webhook deliveries, rendered at the edge -----------------------------------------------


def _push(url: str, **config: Any) -> Any:
    status = TaskStatusUpdateEvent("t-1", "c-1", TaskStatus(TaskState.WORKING))
    return Push(
        "t-1", TaskPushNotificationConfig(url=url, id="p-1", **config), LoggedEvent(3, status)
    )


def test_a_notification_carries_the_event_and_the_credentials() -> None:
    push = _push(
        "https://hooks.example/a2a", token="tok", authentication=AuthenticationInfo("Bearer", "s3")
    )
    notify = make_core(push_notifications=True).notification(push)
    assert (notify.task_id, notify.config_id, notify.seq) == ("t-1", "p-1", 3)
    assert dict(notify.headers) == {
        "content-type": "application/a2a+json",
        "authorization": "Bearer s3",
        "x-a2a-notification-token": "tok",
        "x-a2a-notification-id": "t-1/p-1/3",  # the same on every attempt, restarts included
    }
    assert json.loads(notify.body)["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
    assert notify.guarded


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1/hook", "http://127.0.0.1./hook", "http://LOCALHOST/x"]
)
def test_one_allow_list_rule_for_creating_and_delivering(url: str) -> None:
    allowed = frozenset({"127.0.0.1", "localhost"})
    core = make_core(push_notifications=True, push_allow_hosts=allowed)
    assert url_problem(url, allowed) is None  # accepted when the config is created...
    assert not core.notification(_push(url)).guarded  # ...and delivered unguarded alike


def test_no_notification_goes_out_while_push_is_off() -> None:
    """A task whose configs were stored while push was on gets no deliveries once it is off."""
    tasks = MemoryTasks()
    on = Server(make_core(push_notifications=True), store=tasks, new_id=counting_ids())
    params = {
        "message": user_message_json(),
        "configuration": {
            "returnImmediately": True,
            "taskPushNotificationConfig": {"url": "https://hooks.example/a2a"},
        },
    }
    on.receive(rpc_request("SendMessage", params), datetime(2026, 1, 1, tzinfo=UTC))
    actions = on.take_actions()
    assert any(isinstance(a, Notify) for a in actions)
    (start,) = [a for a in actions if isinstance(a, StartRun)]
    off = Server(make_core(push_notifications=False), store=tasks, new_id=counting_ids())
    off.agent_done(start.task_id, start.run, datetime(2026, 1, 1, tzinfo=UTC), value="done")
    assert not any(isinstance(a, Notify) for a in off.take_actions())


def _said(text: str, **fields: Any) -> Message:
    return Message(message_id="m", role=Role.USER, parts=(Part(text=text),), **fields)


@pytest.mark.parametrize(
    ("request_", "value", "task_id"),
    [
        (
            SendMessageRequest(message=_said("hi")),
            Task(id="new", status=TaskStatus(TaskState.SUBMITTED)),
            "new",
        ),
        (SendMessageRequest(message=_said("hi")), _said("direct", task_id="t-1"), "t-1"),
        (SendMessageRequest(message=_said("hi")), _said("direct"), ""),
        (SendMessageRequest(message=_said("more", task_id="t-2")), None, "t-2"),
        (GetTaskRequest(id="t-3"), None, "t-3"),
        (CancelTaskRequest(id="t-4"), None, "t-4"),
        (SubscribeToTaskRequest(id="t-5"), None, "t-5"),
        (TaskPushNotificationConfig(url="https://hook.example", task_id="t-6"), None, "t-6"),
        (GetTaskPushNotificationConfigRequest(task_id="t-7", id="c"), None, "t-7"),
        (DeleteTaskPushNotificationConfigRequest(task_id="t-8", id="c"), None, "t-8"),
        (ListTaskPushNotificationConfigsRequest(task_id="t-9"), None, "t-9"),
        (ListTasksRequest(), None, ""),
        (GetExtendedAgentCardRequest(), None, ""),
    ],
)
def test_the_task_an_answer_concerns(request_: Any, value: object, task_id: str) -> None:
    assert task_concerned(request_, value) == task_id


def front(**options: Any) -> HttpFront:
    """The HTTP front alone, over the test card: what the machine routes and renders with."""
    return HttpFront(CoreConfig(card=CARD, **options), V1Codec())


def test_a_v03_client_asking_for_an_unconfigured_extended_card_gets_v03s_own_code() -> None:
    request = rpc_request(
        "agent/getAuthenticatedExtendedCard", {}, headers={"content-type": "application/json"}
    )
    answered = front().route(request, ALICE, BASE)
    assert isinstance(answered, HttpResponse)
    assert rpc_error(answered)["error"]["code"] == -32007  # AuthenticatedExtendedCardNotConfigured


def test_the_jwks_path_is_served_only_with_keys_configured() -> None:
    assert front(card_jwks=b'{"keys": []}').serves("GET", "/.well-known/jwks.json")
    assert not front().serves("GET", "/.well-known/jwks.json")


def test_an_sse_stream_ends_with_nothing_or_with_an_error_event_naming_the_request() -> None:
    http = front()
    request = rpc_request("SendStreamingMessage", {"message": user_message_json()}, rpc_id=9)
    routed = http.route(request, ALICE, BASE)
    assert isinstance(routed, Dispatch)
    assert http.stream_end(routed) == ((), ())
    (frame,), trailers = http.stream_end(routed, TaskNotFoundError("gone"))
    assert trailers == ()
    event, data = frame.decode().splitlines()[:2]
    assert event == "event: error"
    body = json.loads(data.removeprefix("data: "))
    assert (body["id"], body["error"]["code"], body["error"]["message"]) == (9, -32001, "gone")


def test_an_event_payload_is_the_json_rpc_response_an_sse_frame_would_hold() -> None:
    http = front()
    request = rpc_request("SubscribeToTask", {"id": "t"}, rpc_id="s")
    routed = http.route(request, ALICE, BASE)
    assert isinstance(routed, Dispatch)
    update = TaskStatusUpdateEvent("t", "c", TaskStatus(TaskState.WORKING))
    frame = LoggedEvent(3, update)
    payload = http.event_payload(routed, frame)
    assert json.loads(payload)["id"] == "s"
    assert json.loads(payload)["result"]["statusUpdate"]["taskId"] == "t"
    assert http.render_event(routed, frame) == b"id: 3\ndata: " + payload + b"\n\n"


def test_an_error_is_rendered_as_a_json_rpc_error_for_adapters() -> None:
    response = front().render_error("r", TaskNotFoundError("gone"))
    assert rpc_error(response) == {
        "jsonrpc": "2.0",
        "id": "r",
        "error": rpc_error(response)["error"],
    }
    assert rpc_error(response)["error"]["code"] == -32001


def test_a_body_too_large_on_a_rest_route_is_a_google_rpc_status() -> None:
    response = front(max_body_bytes=10).too_large("/message:send")
    assert response.status == 413
    assert json.loads(response.body)["error"]["status"] == "RESOURCE_EXHAUSTED"
    rpc = front(max_body_bytes=10).too_large("/")
    assert rpc_error(rpc, 413)["error"]["code"] == -32600


V03_HEADERS = {"content-type": "application/json"}  # no A2A-Version: a v0.3 client


@pytest.mark.parametrize(
    ("method", "params", "value", "result"),
    [
        (
            "tasks/get",
            {"id": "t"},
            Task("t", TaskStatus(TaskState.WORKING), context_id="c"),
            # (with the legacy sessionId beside contextId, for v0.1 clients)
            {
                "kind": "task",
                "id": "t",
                "contextId": "c",
                "sessionId": "c",
                "status": {"state": "working"},
            },
        ),
        (
            "tasks/pushNotificationConfig/get",
            {"id": "t", "pushNotificationConfigId": "p"},
            TaskPushNotificationConfig(url="https://hook", id="p", task_id="t"),
            {
                "taskId": "t",
                "id": "t",
                "pushNotificationConfig": {"url": "https://hook", "id": "p"},
            },
        ),
        (
            "tasks/pushNotificationConfig/list",
            {"id": "t"},
            ListTaskPushNotificationConfigsResponse(
                (TaskPushNotificationConfig(url="https://hook", id="p", task_id="t"),)
            ),
            [
                {
                    "taskId": "t",
                    "id": "t",
                    "pushNotificationConfig": {"url": "https://hook", "id": "p"},
                }
            ],
        ),
        (
            "tasks/pushNotificationConfig/delete",
            {"id": "t", "pushNotificationConfigId": "p"},
            None,
            None,
        ),
    ],
    ids=["task", "push-config", "push-configs", "deleted"],
)
def test_results_are_written_as_a_v03_client_reads_them(
    method: str, params: dict[str, Any], value: Any, result: Any
) -> None:
    http = front(push_notifications=True)
    routed = http.route(rpc_request(method, params, headers=V03_HEADERS), ALICE, BASE)
    assert isinstance(routed, Dispatch)
    answered = http.render(routed, Respond(value))
    assert json.loads(answered.body) == {"jsonrpc": "2.0", "id": 1, "result": result}
