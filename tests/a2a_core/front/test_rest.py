"""The HTTP+JSON (REST) binding: routes, parameters, ``google.rpc.Status`` errors, status tables.

Everything goes through the public ``Core.handle_http`` (and ``render``/``render_event`` for the
replies), the way an adapter drives it, plus the pure helpers of ``_rest`` on their own. No event
loop, no network: the whole request path is driven by :class:`~tests.a2a_core.support.Harness`.
"""

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import attrs
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from a2a_core import (
    ArtifactChunk,
    CancelTaskRequest,
    Core,
    CoreConfig,
    DeleteTaskPushNotificationConfigRequest,
    ErrorMapping,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
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
    text_artifact,
    working,
)
from a2a_core._errors import (
    CompressionNotSupportedError,
    ContentTypeNotSupportedError,
    DeadlineExceededError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PayloadTooLargeError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    VersionNotSupportedError,
)
from a2a_core.card import AgentCard
from a2a_core.decisions import (
    AgentDone,
    AgentOutput,
    AwaitTask,
    Call,
    Dispatch,
    Fail,
    FollowTask,
    Operation,
    Respond,
    advance,
    open_cursor,
)
from a2a_core.errors import (
    ERROR_CODES,
    A2AError,
    BusyError,
    FieldViolation,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    TaskNotFoundError,
    UnauthenticatedError,
    UnavailableError,
    UnsupportedOperationError,
)
from a2a_core.front._http import Binding
from a2a_core.front._rest import (
    REST_ROUTES,
    RestMatch,
    match_rest,
    rest_error_body,
    rest_params,
    status_of,
)
from a2a_core.testing import Driver
from a2a_core.transport import Caller, HttpRequest, HttpResponse
from tests.a2a_core.support import (
    Harness,
    json_values,
    make_core,
    start_of,
    strict_json,
    user_message_json,
)

BASE = "http://host"
ALICE = Caller("alice")
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
#: What every v1.0 REST request carries (no content type: GETs have no body).
V1: Mapping[str, str] = {"a2a-version": "1.0"}
JSON_V1: Mapping[str, str] = {**V1, "content-type": "application/json"}
HOOK = "https://hooks.example.com/a2a"


# --- helpers ----------------------------------------------------------------------------------


def rest(
    method: str,
    path: str,
    body: Any = None,
    *,
    query: str = "",
    headers: Mapping[str, str] = JSON_V1,
) -> HttpRequest:
    """A REST request; ``body`` is JSON-encoded unless it is already bytes."""
    raw = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
    return HttpRequest(method, path, dict(headers), raw, query)


def handle(core: Core, request: HttpRequest, caller: Caller = ALICE) -> HttpResponse | Dispatch:
    return core.handle_http(request, caller, BASE)


def answer(core: Core, request: HttpRequest) -> HttpResponse:
    routed = handle(core, request)
    assert isinstance(routed, HttpResponse), routed
    return routed


def dispatch(core: Core, request: HttpRequest) -> Dispatch:
    routed = handle(core, request)
    assert isinstance(routed, Dispatch), routed
    assert routed.binding is Binding.REST
    assert routed.rpc_id is None
    return routed


def header(response: HttpResponse, name: str) -> str | None:
    values = [value for key, value in response.headers if key == name]
    assert len(values) <= 1, f"{name} appears {len(values)} times"
    return values[0] if values else None


def status_error(response: HttpResponse, status: int) -> dict[str, Any]:
    """The ``error`` of a ``google.rpc.Status`` response, after checking its shape."""
    assert response.status == status, response.body
    assert header(response, "content-type") == "application/json"
    body = strict_json(response.body)
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert error["code"] == status
    assert type(error["status"]) is str
    assert error["status"].isupper()
    assert type(error["message"]) is str
    assert error["message"]
    return error


def error_info(error: Mapping[str, Any]) -> dict[str, Any]:
    """The one ErrorInfo detail (every A2A error carries it), domain checked."""
    infos = [d for d in error["details"] if d["@type"] == ERROR_INFO]
    assert len(infos) == 1, error
    info: dict[str, Any] = infos[0]
    assert info["domain"] == "a2a-protocol.org"
    return info


def bad_fields(error: Mapping[str, Any]) -> list[str]:
    (bad,) = [d for d in error["details"] if d["@type"] == BAD_REQUEST]
    return [v["field"] for v in bad["fieldViolations"]]


def settle(harness: Harness, request: HttpRequest, caller: Caller = ALICE) -> HttpResponse:
    """The whole adapter loop for one request: route, decide, let a started agent answer
    "done", and render the reply."""
    routed = harness.core.handle_http(request, caller, BASE)
    if isinstance(routed, HttpResponse):
        return routed
    decision = harness.decide(routed.call)
    reply = decision.reply
    if isinstance(reply, AwaitTask):
        harness.decide(AgentDone(reply.task_id, start_of(decision).run, "done"))
        reply = harness.core.settled_reply(reply, harness.record(reply.task_id))
    assert isinstance(reply, Respond | Fail), reply
    return harness.core.render(routed, reply)


def ok_json(response: HttpResponse) -> Any:
    assert response.status == 200, response.body
    assert header(response, "content-type") == "application/json"
    return strict_json(response.body)


def send_body(text: str = "hi", message_id: str = "m-1", **configuration: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"message": user_message_json(text, messageId=message_id)}
    if configuration:
        body["configuration"] = configuration
    return body


HI = SendMessageRequest(Message("m-1", Role.USER, (Part(text="hi"),)))

# --- the route table --------------------------------------------------------------------------

#: One request per (method, route) of the table, and the call it must become.
ROUTE_CASES: list[tuple[str, str, Any, Operation, Any]] = [
    ("POST", "/message:send", send_body(), Operation.SEND_MESSAGE, HI),
    ("POST", "/message:stream", send_body(), Operation.SEND_STREAMING_MESSAGE, HI),
    ("GET", "/tasks", None, Operation.LIST_TASKS, ListTasksRequest()),
    ("GET", "/tasks/t-1", None, Operation.GET_TASK, GetTaskRequest("t-1")),
    ("POST", "/tasks/t-1:cancel", None, Operation.CANCEL_TASK, CancelTaskRequest("t-1")),
    (
        "GET",
        "/tasks/t-1:subscribe",
        None,
        Operation.SUBSCRIBE_TO_TASK,
        SubscribeToTaskRequest("t-1"),
    ),
    (
        "POST",
        "/tasks/t-1:subscribe",
        None,
        Operation.SUBSCRIBE_TO_TASK,
        SubscribeToTaskRequest("t-1"),
    ),
    (
        "POST",
        "/tasks/t-1/pushNotificationConfigs",
        {"url": HOOK},
        Operation.CREATE_PUSH_CONFIG,
        TaskPushNotificationConfig(url=HOOK, task_id="t-1"),
    ),
    (
        "GET",
        "/tasks/t-1/pushNotificationConfigs",
        None,
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsRequest("t-1"),
    ),
    (
        "GET",
        "/tasks/t-1/pushNotificationConfigs/c-1",
        None,
        Operation.GET_PUSH_CONFIG,
        GetTaskPushNotificationConfigRequest("t-1", "c-1"),
    ),
    (
        "DELETE",
        "/tasks/t-1/pushNotificationConfigs/c-1",
        None,
        Operation.DELETE_PUSH_CONFIG,
        DeleteTaskPushNotificationConfigRequest("t-1", "c-1"),
    ),
    ("GET", "/extendedAgentCard", None, Operation.GET_EXTENDED_CARD, GetExtendedAgentCardRequest()),
]


def route_params(tenant: str | None) -> list[Any]:
    params = []
    for method, path, body, operation, request in ROUTE_CASES:
        prefix = f"/{tenant}" if tenant else ""
        expected = attrs.evolve(request, tenant=tenant) if tenant else request
        params.append(
            pytest.param(method, prefix + path, body, operation, expected, id=f"{method} {path}")
        )
    return params


def test_the_cases_cover_every_route_and_method() -> None:
    def generic(path: str) -> str:
        return path.replace("{taskId}", "{id}").replace("t-1", "{id}").replace("c-1", "{id}")

    table = {(method, generic(route.pattern)) for route in REST_ROUTES for method in route.methods}
    assert {(method, generic(path)) for method, path, *_ in ROUTE_CASES} == table
    assert len(ROUTE_CASES) == len(table)


@pytest.mark.parametrize(("method", "path", "body", "operation", "request_"), route_params(None))
def test_every_route_is_dispatched(
    method: str, path: str, body: Any, operation: Operation, request_: Any
) -> None:
    if operation is Operation.GET_EXTENDED_CARD:  # configuration: the front answers itself
        error = status_error(answer(make_core(), rest(method, path, body)), 400)
        assert error_info(error)["reason"] == "UNSUPPORTED_OPERATION"
        return
    routed = dispatch(make_core(), rest(method, path, body))
    assert routed.call == Call(operation, request_, ALICE)


@pytest.mark.parametrize(("method", "path", "body", "operation", "request_"), route_params("acme"))
def test_every_route_works_below_a_tenant(
    method: str, path: str, body: Any, operation: Operation, request_: Any
) -> None:
    if operation is Operation.GET_EXTENDED_CARD:  # configuration: the front answers itself
        error = status_error(answer(make_core(), rest(method, path, body)), 400)
        assert error_info(error)["reason"] == "UNSUPPORTED_OPERATION"
        return
    routed = dispatch(make_core(), rest(method, path, body))
    assert routed.call == Call(operation, request_, ALICE)
    assert routed.call.request.tenant == "acme"


def test_match_rest_gives_the_route_and_path_parameters() -> None:
    found = match_rest("GET", "/acme/tasks/t-1/pushNotificationConfigs/c-1")
    assert isinstance(found, RestMatch)
    assert found.route.operation is Operation.GET_PUSH_CONFIG
    assert found.route.body is False
    assert dict(found.path_params) == {"tenant": "acme", "taskId": "t-1", "id": "c-1"}
    found = match_rest("POST", "/message:send")
    assert isinstance(found, RestMatch)
    assert found.route.body is True
    assert dict(found.path_params) == {}


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("POST", "/tasks", {"GET"}),
        ("DELETE", "/tasks/t-1", {"GET"}),
        ("GET", "/message:send", {"POST"}),
        ("PUT", "/message:stream", {"POST"}),
        # A custom verb is matched before a plain id, so this is no task named "t-1:cancel".
        ("GET", "/tasks/t-1:cancel", {"POST"}),
        ("GET", "/acme/tasks/t-1:cancel", {"POST"}),
        ("DELETE", "/tasks/t-1/pushNotificationConfigs", {"GET", "POST"}),
        ("POST", "/tasks/t-1/pushNotificationConfigs/c-1", {"GET", "DELETE"}),
        ("POST", "/extendedAgentCard", {"GET"}),
        ("PATCH", "/acme/tasks", {"GET"}),
    ],
)
def test_a_known_path_with_the_wrong_method_is_405_with_allow(
    method: str, path: str, allowed: set[str]
) -> None:
    found = match_rest(method, path)
    assert found == frozenset(allowed)
    response = answer(make_core(), rest(method, path, {}))
    assert response.status == 405
    assert header(response, "allow") == ", ".join(sorted(allowed))
    assert header(response, "content-type") == "application/json"
    assert strict_json(response.body)["error"]["code"] == 405


def test_wrong_method_on_subscribe_lists_both_methods() -> None:
    response = answer(make_core(), rest("DELETE", "/tasks/t-1:subscribe"))
    assert response.status == 405
    assert header(response, "allow") == "GET, POST"


UNKNOWN_PATHS = [
    "/nowhere",
    "/tasks/",
    "/tasks//pushNotificationConfigs",
    "/message:send/x",
    "/a/b/tasks",
    "/tasks/t/pushNotificationConfigs/c/x",
    "/message",
    "/card",
    "/v1/card",
]


@pytest.mark.parametrize("path", UNKNOWN_PATHS)
def test_unknown_paths_are_404(path: str) -> None:
    assert match_rest("GET", path) is None
    assert match_rest("POST", path) is None
    response = answer(make_core(), rest("GET", path))
    assert response.status == 404
    assert header(response, "content-type") == "application/json"
    assert strict_json(response.body) == {
        "error": {"code": 404, "status": "NOT_FOUND", "message": "No A2A endpoint at this path"}
    }
    # An adapter sharing its server with other routes leaves such paths to them.
    assert not make_core().serves("GET", path)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/"),
        ("GET", "/"),  # a wrong method still gets the core's 405
        ("GET", "/.well-known/agent-card.json"),
        ("HEAD", "/.well-known/agent.json"),
        ("POST", "/message:send"),
        ("DELETE", "/tasks/x:cancel"),
        ("GET", "/acme/tasks/t-1/pushNotificationConfigs/c-1"),
    ],
)
def test_the_core_says_which_paths_it_serves(method: str, path: str) -> None:
    assert make_core().serves(method, path)


def test_without_rest_only_the_card_and_json_rpc_are_served() -> None:
    core = make_core(rest=False)
    assert core.serves("POST", "/")
    assert core.serves("GET", "/.well-known/agent-card.json")
    assert not core.serves("POST", "/message:send")


def test_rest_can_be_switched_off() -> None:
    core = make_core(rest=False)
    assert answer(core, rest("GET", "/tasks")).status == 404
    assert answer(core, rest("POST", "/message:send", send_body())).status == 404
    bindings = [i.protocol_binding for i in core.card(BASE).supported_interfaces]
    assert "HTTP+JSON" not in bindings
    assert "HTTP+JSON" in [i.protocol_binding for i in make_core().card(BASE).supported_interfaces]


@pytest.mark.parametrize(
    ("path", "operation", "params"),
    [
        # Routes without a tenant win: these are tasks, not tenants called "tasks".
        ("/tasks/tasks", Operation.GET_TASK, {"id": "tasks"}),
        ("/tasks/extendedAgentCard", Operation.GET_TASK, {"id": "extendedAgentCard"}),
        # ...but a path that only fits with a tenant has one.
        ("/tasks/tasks/t-1", Operation.GET_TASK, {"tenant": "tasks", "id": "t-1"}),
        ("/message:send/tasks", Operation.LIST_TASKS, {"tenant": "message:send"}),
        # v0.3's REST prefix is no route of its own: "v1" is a tenant.
        ("/v1/tasks/t-1", Operation.GET_TASK, {"tenant": "v1", "id": "t-1"}),
        # Path segments are percent-decoded, tenant included.
        ("/tasks/a%2Fb", Operation.GET_TASK, {"id": "a/b"}),
        ("/my%20org/tasks/x%3Ay", Operation.GET_TASK, {"tenant": "my org", "id": "x:y"}),
        ("/tasks/t%C3%A9", Operation.GET_TASK, {"id": "t\u00e9"}),
    ],
)
def test_path_resolution(path: str, operation: Operation, params: dict[str, str]) -> None:
    found = match_rest("GET", path)
    assert isinstance(found, RestMatch)
    assert found.route.operation is operation
    assert dict(found.path_params) == params


def test_a_path_tenant_wins_over_body_and_query() -> None:
    body = send_body() | {"tenant": "from-body"}
    routed = dispatch(make_core(), rest("POST", "/acme/message:send", body, query="tenant=q"))
    assert routed.call.request.tenant == "acme"
    # Without a path tenant, the request's own field is used (query over body).
    routed = dispatch(make_core(), rest("POST", "/message:send", body, query="tenant=q"))
    assert routed.call.request.tenant == "q"
    routed = dispatch(make_core(), rest("POST", "/message:send", body))
    assert routed.call.request.tenant == "from-body"


def test_path_ids_win_over_body_ids() -> None:
    body = {"id": "other", "metadata": {"why": "done"}}
    routed = dispatch(make_core(), rest("POST", "/tasks/t-1:cancel", body))
    assert routed.call.request == CancelTaskRequest("t-1", metadata={"why": "done"})
    body = {"url": HOOK, "taskId": "other", "id": "c-9", "token": "tok"}
    routed = dispatch(make_core(), rest("POST", "/tasks/t-1/pushNotificationConfigs", body))
    assert routed.call.request == TaskPushNotificationConfig(
        url=HOOK, task_id="t-1", id="c-9", token="tok"
    )


# --- properties of the matcher ----------------------------------------------------------------

methods = st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"]) | st.text(
    max_size=6
)
PATH_PIECES = [
    *("", "tasks", "message:send", "message:stream", "t-1", "t-1:cancel", "t-1:subscribe"),
    *("pushNotificationConfigs", "c-1", "extendedAgentCard", "acme", "%2F", "%FF", ":", "%"),
]
path_pieces = st.sampled_from(PATH_PIECES) | st.text(max_size=6)
paths = st.lists(path_pieces, max_size=6).map(lambda pieces: "/" + "/".join(pieces)) | st.text()


@settings(max_examples=500)
@given(methods, paths)
def test_match_rest_never_raises_and_is_consistent(method: str, path: str) -> None:
    found = match_rest(method, path)
    if found is None:
        event("no route")
    elif isinstance(found, frozenset):
        event("wrong method")
        assert found
        assert method not in found
        assert found <= {"GET", "POST", "DELETE"}
    else:
        event(f"matched {found.route.operation.value}")
        assert method in found.route.methods
        assert all(type(v) is str and v for v in found.path_params.values())


segments = st.text(min_size=1, max_size=10)


@st.composite
def routed_paths(draw: st.DrawFn) -> tuple[str, str, Any, dict[str, str]]:
    """A route, one of its methods, and a path built from it with random (encoded) values."""
    route = draw(st.sampled_from(REST_ROUTES))
    method = draw(st.sampled_from(sorted(route.methods)))
    params: dict[str, str] = {}
    path = route.pattern
    for name in ("taskId", "id"):
        if "{" + name + "}" in path:
            params[name] = draw(segments)
            path = path.replace("{" + name + "}", quote(params[name], safe=""))
    tenant = draw(st.none() | segments)
    if tenant is not None:
        # A tenant called "tasks" is read as the start of a route without tenant (documented).
        assume(quote(tenant, safe="") != "tasks")
        params["tenant"] = tenant
        path = "/" + quote(tenant, safe="") + path
    return method, path, route, params


@settings(max_examples=400)
@given(routed_paths())
def test_every_generated_path_matches_its_route(case: tuple[str, str, Any, dict[str, str]]) -> None:
    method, path, route, params = case
    found = match_rest(method, path)
    assert isinstance(found, RestMatch), (method, path)
    assert found.route == route
    assert dict(found.path_params) == params


# --- parameters -------------------------------------------------------------------------------


def test_rest_params_merges_body_then_query_then_path() -> None:
    found = match_rest("GET", "/acme/tasks/t-1")
    assert isinstance(found, RestMatch)
    body = {"id": "b", "historyLength": 1, "tenant": "b", "extra": True}
    query = "id=q&historyLength=2&A2A-Version=1.0&contextId=a%20b+c&empty="
    assert rest_params(found, query, body) == {
        "id": "t-1",
        "tenant": "acme",
        "historyLength": "2",
        "extra": True,
        "contextId": "a b c",
        "empty": "",
    }
    assert body == {"id": "b", "historyLength": 1, "tenant": "b", "extra": True}, "not mutated"


@pytest.mark.parametrize("body", [None, [1, 2], "text", 5])
def test_rest_params_ignores_a_body_that_is_no_object(body: Any) -> None:
    found = match_rest("GET", "/tasks/t-1")
    assert isinstance(found, RestMatch)
    assert rest_params(found, "", body) == {"id": "t-1"}


@pytest.mark.parametrize(
    ("value", "converted"),
    [("true", True), ("false", False), ("True", "True"), ("1", "1"), ("", ""), ("yes", "yes")],
)
def test_only_true_and_false_become_booleans(value: str, converted: Any) -> None:
    found = match_rest("GET", "/tasks")
    assert isinstance(found, RestMatch)
    params = rest_params(found, f"includeArtifacts={value}&historyLength=true", None)
    assert params == {"includeArtifacts": converted, "historyLength": "true"}


def test_get_task_history_length_from_the_query() -> None:
    routed = dispatch(make_core(), rest("GET", "/tasks/t-1", query="historyLength=3"))
    assert routed.call.request == GetTaskRequest("t-1", history_length=3)
    routed = dispatch(make_core(), rest("GET", "/tasks/t-1", query="historyLength=0"))
    assert routed.call.request == GetTaskRequest("t-1", history_length=0)


def test_list_tasks_reads_every_filter_from_the_query() -> None:
    query = (
        "contextId=ctx-1&status=TASK_STATE_WORKING&pageSize=7&pageToken=tok%3D%3D"
        "&historyLength=2&statusTimestampAfter=2025-01-01T10:00:00.000Z&includeArtifacts=true"
    )
    routed = dispatch(make_core(), rest("GET", "/tasks", query=query))
    request = routed.call.request
    assert isinstance(request, ListTasksRequest)
    assert request == ListTasksRequest(
        context_id="ctx-1",
        status=TaskState.WORKING,
        page_size=7,
        page_token="tok==",
        history_length=2,
        status_timestamp_after=request.status_timestamp_after,
        include_artifacts=True,
    )
    after = request.status_timestamp_after
    assert after is not None
    assert after.isoformat() == "2025-01-01T10:00:00+00:00"
    off = dispatch(make_core(), rest("GET", "/tasks", query="includeArtifacts=false"))
    assert off.call.request == ListTasksRequest(include_artifacts=False)


def test_push_config_listing_reads_paging_from_the_query() -> None:
    path = "/tasks/t-1/pushNotificationConfigs"
    routed = dispatch(make_core(), rest("GET", path, query="pageSize=3&pageToken=p"))
    assert routed.call.request == ListTaskPushNotificationConfigsRequest(
        "t-1", page_size=3, page_token="p"
    )


def test_unknown_query_parameters_are_ignored() -> None:
    routed = dispatch(make_core(), rest("GET", "/tasks/t-1", query="key=secret&x=1&&=&y"))
    assert routed.call.request == GetTaskRequest("t-1")


@pytest.mark.parametrize(
    ("path", "query", "field"),
    [
        ("/tasks/t-1", "historyLength=x", "historyLength"),
        ("/tasks/t-1", "historyLength=", "historyLength"),
        ("/tasks/t-1", "historyLength=1.5", "historyLength"),
        ("/tasks/t-1", "historyLength=%C2%B2", "historyLength"),
        ("/tasks/t-1", "historyLength=--5", "historyLength"),
        ("/tasks/t-1", "historyLength=99999999999", "historyLength"),
        ("/tasks/t-1", "historyLength=" + "9" * 5000, "historyLength"),
        ("/tasks", "pageSize=abc", "pageSize"),
        ("/tasks", "pageSize=ten", "pageSize"),
        ("/tasks", "status=BOGUS", "status"),
        ("/tasks", "status=working", "status"),
        ("/tasks", "includeArtifacts=yes", "includeArtifacts"),
        ("/tasks", "includeArtifacts=", "includeArtifacts"),
        ("/tasks", "statusTimestampAfter=yesterday", "statusTimestampAfter"),
        ("/tasks", "historyLength=many", "historyLength"),
        ("/tasks/t-1/pushNotificationConfigs", "pageSize=x", "pageSize"),
    ],
)
def test_bad_query_values_are_400_naming_the_field(path: str, query: str, field: str) -> None:
    response = answer(make_core(), rest("GET", path, query=query))
    error = status_error(response, 400)
    assert error["status"] == "INVALID_ARGUMENT"
    assert error_info(error)["reason"] == "INVALID_PARAMS"
    assert bad_fields(error) == [field]
    assert field in error["message"]
    assert b"params." not in response.body


@pytest.mark.parametrize(
    ("path", "query", "field"),
    [
        ("/tasks", "pageSize=0", "pageSize"),
        ("/tasks", "pageSize=101", "pageSize"),
        ("/tasks", "pageSize=-3", "pageSize"),
        ("/tasks", "historyLength=-1", "historyLength"),
        ("/tasks", "pageToken=not-a-cursor", "pageToken"),
        ("/tasks/id-1", "historyLength=-1", "historyLength"),
    ],
)
def test_values_the_reducer_refuses_name_the_field_without_params(
    path: str, query: str, field: str
) -> None:
    harness = Harness()
    harness.create("seed")  # id-1
    response = settle(harness, rest("GET", path, query=query))
    error = status_error(response, 400)
    assert error_info(error)["reason"] == "INVALID_PARAMS"
    assert bad_fields(error) == [field]
    assert error["message"].startswith("Invalid parameters: " + field)
    assert b"params." not in response.body


def test_body_field_errors_are_named_from_the_root() -> None:
    body = {"message": user_message_json() | {"messageId": 12}}
    response = answer(make_core(), rest("POST", "/message:send", body))
    error = status_error(response, 400)
    assert bad_fields(error) == ["message.messageId"]
    harness = Harness()
    response = settle(harness, rest("POST", "/message:send", send_body(message_id="")))
    error = status_error(response, 400)
    assert bad_fields(error) == ["message.messageId"]
    assert "params." not in error["message"]
    # JSON-RPC keeps its "params." root: only REST renames.
    routed = dispatch(make_core(), rest("POST", "/message:send", send_body(message_id="")))
    decided = Harness().decide(routed.call)
    assert isinstance(decided.reply, Fail)
    assert decided.reply.error.violations[0].field == "params.message.messageId"


# --- protocol version, content type, body -----------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "1.0.3", " 1.0 ", "1.0, 0.3"])
def test_version_1_0_is_accepted(version: str) -> None:
    routed = dispatch(make_core(), rest("GET", "/tasks/t-1", headers={"a2a-version": version}))
    assert routed.call.request == GetTaskRequest("t-1")


def test_version_may_come_in_the_query_and_is_no_parameter() -> None:
    routed = dispatch(make_core(), rest("GET", "/tasks/t-1", query="A2A-Version=1.0", headers={}))
    assert routed.call.request == GetTaskRequest("t-1")


@pytest.mark.parametrize(
    ("headers", "query", "requested"),
    [
        ({}, "", "0.3"),
        ({"a2a-version": "0.3"}, "", "0.3"),
        ({"a2a-version": "2.0"}, "", "2.0"),
        ({"a2a-version": "1"}, "", "1"),
        ({}, "A2A-Version=0.3", "0.3"),
    ],
)
def test_other_versions_are_refused_on_rest(
    headers: dict[str, str], query: str, requested: str
) -> None:
    response = answer(make_core(), rest("GET", "/tasks/t-1", query=query, headers=headers))
    error = status_error(response, 400)
    assert error["status"] == "FAILED_PRECONDITION"
    info = error_info(error)
    assert info["reason"] == "VERSION_NOT_SUPPORTED"
    assert info["metadata"] == {"requestedVersion": requested, "supportedVersions": "1.0"}


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/a2a+json",
        "application/a2a+json; charset=utf-8",
        "Application/JSON",
        "",
    ],
)
def test_json_content_types_are_accepted(content_type: str) -> None:
    headers = dict(V1)
    if content_type:
        headers["content-type"] = content_type
    routed = dispatch(make_core(), rest("POST", "/message:send", send_body(), headers=headers))
    assert routed.call.request == HI


@pytest.mark.parametrize(
    ("mapping", "status"), [(ErrorMapping.V1_0_1, 400), (ErrorMapping.V1_0_0, 415)]
)
@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "multipart/form-data"])
def test_other_content_types_are_refused(
    content_type: str, mapping: ErrorMapping, status: int
) -> None:
    core = make_core(error_mapping=mapping)
    headers = {**V1, "content-type": content_type}
    response = answer(core, rest("POST", "/message:send", send_body(), headers=headers))
    error = status_error(response, status)
    assert error["status"] == "INVALID_ARGUMENT"
    assert error_info(error)["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
    assert content_type in error["message"]


def test_content_type_and_body_of_bodiless_routes_are_ignored() -> None:
    headers = {**V1, "content-type": "text/plain"}
    routed = dispatch(make_core(), rest("GET", "/tasks/t-1", b"<not json>", headers=headers))
    assert routed.call.request == GetTaskRequest("t-1")
    routed = dispatch(make_core(), rest("POST", "/tasks/t-1:subscribe", b"{", headers=headers))
    assert routed.call.request == SubscribeToTaskRequest("t-1")


@pytest.mark.parametrize("body", [b"", b"  \r\n\t "])
def test_an_empty_body_is_no_body(body: bytes) -> None:
    headers = {**V1, "content-type": "text/plain"}  # not checked without a body
    routed = dispatch(make_core(), rest("POST", "/tasks/t-1:cancel", body, headers=headers))
    assert routed.call.request == CancelTaskRequest("t-1")
    error = status_error(answer(make_core(), rest("POST", "/message:send", body)), 400)
    assert bad_fields(error) == ["message"]


@pytest.mark.parametrize(
    "body",
    [b"{", b"not json", b'{"message":}', b"\xff\xfe", b"[" * 50, b'{"a":NaN}', b"1e999"],
)
def test_invalid_json_bodies_are_400_invalid_json(body: bytes) -> None:
    error = status_error(answer(make_core(), rest("POST", "/message:send", body)), 400)
    assert error["status"] == "INVALID_ARGUMENT"
    assert error_info(error)["reason"] == "INVALID_JSON"
    assert error["message"].startswith("Invalid JSON payload")


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"5", b"null", b"true"])
def test_a_body_that_is_no_object_is_400_invalid_params(body: bytes) -> None:
    error = status_error(answer(make_core(), rest("POST", "/message:send", body)), 400)
    assert error_info(error)["reason"] == "INVALID_PARAMS"
    assert "JSON object" in error["message"]


def test_an_oversized_body_is_413_before_anything_else() -> None:
    core = make_core(max_body_bytes=64)
    # Not JSON, not a JSON content type, no version: the size is checked first.
    request = rest("POST", "/message:send", b"{" * 65, headers={"content-type": "text/plain"})
    response = answer(core, request)
    error = status_error(response, 413)
    assert error["status"] == "RESOURCE_EXHAUSTED"
    assert error_info(error)["reason"] == "PAYLOAD_TOO_LARGE"
    assert "64" in error["message"]
    # At the limit the body is read (and here refused for what it is).
    at_limit = rest("POST", "/message:send", b"[" + b" " * 62 + b"]")
    assert status_error(answer(core, at_limit), 400)["message"].endswith("a JSON object")


def test_a_declared_length_over_the_limit_is_413_even_without_a_body() -> None:
    core = make_core(max_body_bytes=1000)
    headers = {**V1, "content-length": "1001"}
    error = status_error(answer(core, rest("GET", "/tasks", headers=headers)), 413)
    assert error_info(error)["reason"] == "PAYLOAD_TOO_LARGE"
    headers = {**V1, "content-length": "1000"}
    assert isinstance(handle(core, rest("GET", "/tasks", headers=headers)), Dispatch)


@pytest.mark.parametrize("length", ["\u00b2", "9" * 5000, "-1", "abc"])
def test_odd_content_lengths_never_raise(length: str) -> None:
    routed = handle(make_core(), rest("GET", "/tasks", headers={**V1, "content-length": length}))
    assert isinstance(routed, Dispatch)


def test_checks_run_in_order_json_before_version() -> None:
    request = rest("POST", "/message:send", b"{", headers={"content-type": "application/json"})
    assert error_info(status_error(answer(make_core(), request), 400))["reason"] == "INVALID_JSON"
    request = rest("POST", "/message:send", {"message": 5}, headers={})
    reason = error_info(status_error(answer(make_core(), request), 400))["reason"]
    assert reason == "VERSION_NOT_SUPPORTED"


@pytest.mark.parametrize("value", ["\u00b2", "9" * 5000, "x"])
def test_a_bad_last_event_id_is_400_naming_the_header(value: str) -> None:
    headers = {**V1, "last-event-id": value}
    response = answer(make_core(), rest("POST", "/tasks/t-1:subscribe", headers=headers))
    error = status_error(response, 400)
    assert bad_fields(error) == ["Last-Event-ID"]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_subscribe_takes_get_as_the_proto_and_post_as_the_spec_text(method: str) -> None:
    headers = {**V1, "last-event-id": "3"}
    for path, tenant in (("/tasks/t-1:subscribe", ""), ("/acme/tasks/t-1:subscribe", "acme")):
        routed = dispatch(make_core(), rest(method, path, headers=headers))
        assert routed.call == Call(
            Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest("t-1", tenant), ALICE, 3
        )


def test_last_event_id_is_passed_on_for_streams_only() -> None:
    headers = {**V1, "last-event-id": "7"}
    routed = dispatch(make_core(), rest("POST", "/tasks/t-1:subscribe", headers=headers))
    assert routed.call.last_event_id == 7
    body = send_body()
    routed = dispatch(make_core(), rest("POST", "/message:stream", body, headers=headers))
    assert routed.call.last_event_id == 7
    routed = dispatch(make_core(), rest("GET", "/tasks/t-1", headers=headers))
    assert routed.call.last_event_id is None


# --- replies ----------------------------------------------------------------------------------


def test_a_blocking_send_answers_with_the_task_in_its_oneof_key() -> None:
    harness = Harness()
    body = ok_json(settle(harness, rest("POST", "/message:send", send_body("go"))))
    assert set(body) == {"task"}
    task = body["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"] == [{"text": "done"}]
    assert task["history"] == [
        {
            "messageId": "m-1",
            "role": "ROLE_USER",
            "parts": [{"text": "go"}],
            "contextId": task["contextId"],
            "taskId": task["id"],
        }
    ]


def test_replies_are_bare_json_as_application_json() -> None:
    harness = Harness(make_core(push_notifications=True))
    task_id = harness.create("seed", blocking=False)
    task = ok_json(settle(harness, rest("GET", f"/tasks/{task_id}", query="historyLength=0")))
    assert task["id"] == task_id
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert "history" not in task
    listing = ok_json(settle(harness, rest("GET", "/tasks")))
    assert listing["totalSize"] == 1
    assert listing["nextPageToken"] == ""
    assert [t["id"] for t in listing["tasks"]] == [task_id]
    path = f"/tasks/{task_id}/pushNotificationConfigs"
    created = ok_json(settle(harness, rest("POST", path, {"url": HOOK, "id": "c-1"})))
    assert created == {"id": "c-1", "taskId": task_id, "url": HOOK}
    assert ok_json(settle(harness, rest("GET", f"{path}/c-1"))) == created
    assert ok_json(settle(harness, rest("GET", path))) == {
        "configs": [created],
        "nextPageToken": "",
    }
    # google.protobuf.Empty is {} on REST (JSON-RPC answers null).
    assert ok_json(settle(harness, rest("DELETE", f"{path}/c-1"))) == {}
    assert ok_json(settle(harness, rest("GET", path))) == {"configs": [], "nextPageToken": ""}
    canceled = ok_json(settle(harness, rest("POST", f"/tasks/{task_id}:cancel")))
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


def test_a_direct_message_reply_is_wrapped_in_message() -> None:
    core = make_core()
    routed = dispatch(core, rest("POST", "/message:send", send_body()))
    reply = Message("r", Role.AGENT, (Part(text="hey"),))
    assert ok_json(core.render(routed, Respond(reply))) == {
        "message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "hey"}]}
    }


def test_tenants_scope_tasks() -> None:
    harness = Harness()
    created = ok_json(settle(harness, rest("POST", "/acme/message:send", send_body())))
    task_id = created["task"]["id"]
    assert ok_json(settle(harness, rest("GET", f"/acme/tasks/{task_id}")))["id"] == task_id
    for path in (f"/tasks/{task_id}", f"/other/tasks/{task_id}"):
        error = status_error(settle(harness, rest("GET", path)), 404)
        assert error["status"] == "NOT_FOUND"
        info = error_info(error)
        assert info["reason"] == "TASK_NOT_FOUND"
        assert info["metadata"] == {"taskId": task_id}
    assert ok_json(settle(harness, rest("GET", "/acme/tasks")))["totalSize"] == 1
    assert ok_json(settle(harness, rest("GET", "/tasks")))["totalSize"] == 0


def test_the_extended_card_over_rest() -> None:
    extended = AgentCard("Secret agent", "more", "2")
    core = make_core(extended_card=extended)
    routed = core.handle_http(rest("GET", "/extendedAgentCard"), Caller("alice"), BASE)
    assert isinstance(routed, HttpResponse)
    assert ok_json(routed)["name"] == "Secret agent"
    # An anonymous caller, or a server without one, is told the operation is unsupported.
    anonymous = Caller("anonymous", authenticated=False)
    for served, caller in ((core, anonymous), (make_core(), ALICE)):
        harness = Harness(served)
        response = settle(harness, rest("GET", "/extendedAgentCard"), caller)
        assert error_info(status_error(response, 400))["reason"] == "UNSUPPORTED_OPERATION"


# --- errors and their HTTP status -------------------------------------------------------------

#: PROTOCOL.md §6.3 (A2A errors) and the standard codes, per mapping: (v1.0.1, v1.0.0).
HTTP_STATUS: dict[type[A2AError], tuple[int, int]] = {
    TaskNotFoundError: (404, 404),
    TaskNotCancelableError: (400, 409),
    PushNotificationNotSupportedError: (400, 400),
    UnsupportedOperationError: (400, 400),
    ContentTypeNotSupportedError: (400, 415),
    InvalidAgentResponseError: (500, 502),
    ExtendedAgentCardNotConfiguredError: (400, 400),
    ExtensionSupportRequiredError: (400, 400),
    VersionNotSupportedError: (400, 400),
    ParseError: (400, 400),
    InvalidRequestError: (400, 400),
    InvalidParamsError: (400, 400),
    MethodNotFoundError: (404, 404),
    InternalError: (500, 500),
    UnavailableError: (503, 503),
    BusyError: (503, 503),
    PayloadTooLargeError: (413, 413),
    UnauthenticatedError: (401, 401),
    CompressionNotSupportedError: (415, 415),
    DeadlineExceededError: (504, 504),
}
#: ErrorInfo reasons of the A2A errors (spec v1.0 §5.4).
A2A_REASONS: dict[type[A2AError], str] = {
    TaskNotFoundError: "TASK_NOT_FOUND",
    TaskNotCancelableError: "TASK_NOT_CANCELABLE",
    PushNotificationNotSupportedError: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    UnsupportedOperationError: "UNSUPPORTED_OPERATION",
    ContentTypeNotSupportedError: "CONTENT_TYPE_NOT_SUPPORTED",
    InvalidAgentResponseError: "INVALID_AGENT_RESPONSE",
    ExtendedAgentCardNotConfiguredError: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ExtensionSupportRequiredError: "EXTENSION_SUPPORT_REQUIRED",
    VersionNotSupportedError: "VERSION_NOT_SUPPORTED",
}


def test_the_status_table_covers_every_error() -> None:
    assert set(HTTP_STATUS) == set(ERROR_CODES)


@pytest.mark.parametrize("mapping", list(ErrorMapping), ids=lambda m: m.value)
@pytest.mark.parametrize("error_type", list(HTTP_STATUS), ids=lambda t: t.__name__)
def test_http_status_of_every_error(error_type: type[A2AError], mapping: ErrorMapping) -> None:
    v1_0_1, v1_0_0 = HTTP_STATUS[error_type]
    expected = v1_0_0 if mapping is ErrorMapping.V1_0_0 else v1_0_1
    error = error_type(metadata={"taskId": "t-1"})
    assert status_of(error, mapping) == expected
    # ...and as the front renders it for a REST call.
    core = make_core(error_mapping=mapping)
    routed = dispatch(core, rest("GET", "/tasks/t-1"))
    response = core.render(routed, Fail(error))
    rendered = status_error(response, expected)
    codes = ERROR_CODES[error_type]
    assert rendered == {
        "code": expected,
        "status": codes.grpc,
        "message": codes.message,
        "details": [
            {
                "@type": ERROR_INFO,
                "reason": codes.reason,
                "domain": "a2a-protocol.org",
                "metadata": {"taskId": "t-1"},
            }
        ],
    }
    if error_type in A2A_REASONS:
        assert codes.reason == A2A_REASONS[error_type]


def test_the_default_mapping_is_v1_0_1() -> None:
    core = make_core()
    assert core.config.error_mapping is ErrorMapping.V1_0_1
    routed = dispatch(core, rest("POST", "/tasks/t-1:cancel"))
    assert core.render(routed, Fail(TaskNotCancelableError())).status == 400


@given(
    st.sampled_from(list(ERROR_CODES)),
    st.sampled_from(list(ErrorMapping)),
    st.text(max_size=20),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)
def test_every_error_is_a_4xx_or_5xx_status_body(
    error_type: type[A2AError], mapping: ErrorMapping, message: str, metadata: dict[str, str]
) -> None:
    error = error_type(message, metadata=metadata)
    status = status_of(error, mapping)
    assert 400 <= status <= 599
    core = make_core(error_mapping=mapping)
    routed = dispatch(core, rest("GET", "/tasks/t-1"))
    rendered = status_error(core.render(routed, Fail(error)), status)
    assert rendered["message"] == (message or ERROR_CODES[error_type].message)
    info = error_info(rendered)
    assert info["reason"] == ERROR_CODES[error_type].reason
    assert info.get("metadata", {}) == metadata


def test_rest_error_body_is_a_google_rpc_status() -> None:
    error = TaskNotFoundError("Task t not found", metadata={"taskId": "t"})
    details = [{"@type": ERROR_INFO, "reason": "TASK_NOT_FOUND"}]
    assert rest_error_body(error, 404, details) == {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "Task t not found",
            "details": details,
        }
    }


def test_field_violations_lose_their_params_prefix_on_rest() -> None:
    core = make_core()
    routed = dispatch(core, rest("POST", "/message:send", send_body()))
    error = InvalidParamsError(
        "Invalid parameters: params.message.parts: must hold a part; params.metadata: bad",
        metadata={"k": "v"},
        violations=(
            FieldViolation("params.message.parts", "must hold a part"),
            FieldViolation("params.metadata", "bad"),
            FieldViolation("Last-Event-ID", "unchanged"),
        ),
    )
    rendered = status_error(core.render(routed, Fail(error)), 400)
    assert (
        rendered["message"] == "Invalid parameters: message.parts: must hold a part; metadata: bad"
    )
    assert rendered["details"] == [
        {
            "@type": ERROR_INFO,
            "reason": "INVALID_PARAMS",
            "domain": "a2a-protocol.org",
            "metadata": {"k": "v"},
        },
        {
            "@type": BAD_REQUEST,
            "fieldViolations": [
                {"field": "message.parts", "description": "must hold a part"},
                {"field": "metadata", "description": "bad"},
                {"field": "Last-Event-ID", "description": "unchanged"},
            ],
        },
    ]


def test_a_failed_stream_call_is_a_plain_json_error_on_rest() -> None:
    """Before a REST stream starts, its errors are ordinary responses (not SSE)."""
    harness = Harness()  # streaming is off
    response = settle(harness, rest("POST", "/message:stream", send_body()))
    error = status_error(response, 400)
    assert error_info(error)["reason"] == "UNSUPPORTED_OPERATION"
    response = settle(harness, rest("POST", "/tasks/t-1:subscribe"))
    assert error_info(status_error(response, 400))["reason"] == "UNSUPPORTED_OPERATION"


# --- event streams ----------------------------------------------------------------------------


def sse_frames(raw: bytes) -> list[dict[str, str]]:
    """Parse SSE frames into their fields (one ``data:`` line each, as the server writes)."""
    assert raw.endswith(b"\n\n")
    frames = []
    for block in raw.decode().split("\n\n")[:-1]:
        fields = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            assert name not in fields
            fields[name] = value
        frames.append(fields)
    return frames


def test_a_rest_stream_sends_bare_stream_responses_with_event_ids() -> None:
    harness = Harness(make_core(streaming=True))
    core = harness.core
    routed = dispatch(core, rest("POST", "/message:stream", send_body("go")))
    decision = harness.decide(routed.call)
    stream = decision.reply
    assert isinstance(stream, FollowTask)
    run = start_of(decision).run
    opened = open_cursor(stream)
    harness.decide(AgentOutput(stream.task_id, run, working()))
    harness.decide(AgentOutput(stream.task_id, run, ArtifactChunk(text_artifact("art"))))
    harness.decide(AgentDone(stream.task_id, run, "done"))
    more = advance(opened.cursor, harness.store.logs[stream.task_id])
    assert more.cursor.done
    raw = b"".join(core.render_event(routed, f) for f in (*opened.frames, *more.frames))
    frames = sse_frames(raw)
    assert [set(f) for f in frames] == [{"id", "data"}] * 4
    assert [f["id"] for f in frames] == ["1", "2", "3", "4"]
    events = [strict_json(f["data"].encode()) for f in frames]
    assert [next(iter(e)) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert all(len(e) == 1 for e in events)
    assert "jsonrpc" not in raw.decode()
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert events[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
    assert events[2]["artifactUpdate"]["artifact"]["parts"] == [{"text": "art"}]
    assert events[3]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "final" not in events[3]["statusUpdate"]
    assert dict(core.stream_headers())["content-type"] == "text/event-stream"


@pytest.mark.parametrize(
    ("mapping", "error", "status"),
    [
        (ErrorMapping.V1_0_1, InternalError("The stream failed"), 500),
        (ErrorMapping.V1_0_1, InvalidAgentResponseError(), 500),
        (ErrorMapping.V1_0_0, InvalidAgentResponseError(), 502),
        (ErrorMapping.V1_0_0, TaskNotFoundError(metadata={"taskId": "t-1"}), 404),
    ],
)
def test_a_rest_stream_error_is_a_status_in_an_error_event(
    mapping: ErrorMapping, error: A2AError, status: int
) -> None:
    core = make_core(streaming=True, error_mapping=mapping)
    routed = dispatch(core, rest("POST", "/tasks/t-1:subscribe"))
    (frame,) = sse_frames(core.render_stream_error(routed, error))
    assert set(frame) == {"event", "data"}
    assert frame["event"] == "error"
    body = strict_json(frame["data"].encode())
    assert body["error"]["code"] == status
    assert body["error"]["status"] == error.codes.grpc
    assert body["error"]["message"] == error.message
    info = [d for d in body["error"]["details"] if d["@type"] == ERROR_INFO]
    assert info[0]["reason"] == error.codes.reason


def test_the_same_task_reads_the_same_on_both_bindings() -> None:
    """Functional equivalence (§5.1): a REST GetTask and a JSON-RPC GetTask agree."""
    harness = Harness()
    task_id = harness.create("seed")
    via_rest = ok_json(settle(harness, rest("GET", f"/tasks/{task_id}")))
    rpc = HttpRequest(
        "POST",
        "/",
        dict(JSON_V1),
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
        ).encode(),
    )
    via_rpc = ok_json(settle(harness, rpc))["result"]
    assert via_rest == via_rpc


# --- fuzz -------------------------------------------------------------------------------------

query_pieces = st.sampled_from(
    [
        "historyLength=2",
        "historyLength=x",
        "pageSize=5",
        "pageSize=0",
        "pageToken=abc",
        "status=TASK_STATE_WORKING",
        "status=nope",
        "contextId=id-2",
        "includeArtifacts=true",
        "includeArtifacts=1",
        "statusTimestampAfter=2025-01-01T00:00:00Z",
        "statusTimestampAfter=x",
        "A2A-Version=1.0",
        "tenant=acme",
    ]
) | st.text(max_size=8)
queries = st.lists(query_pieces, max_size=4).map("&".join)
fuzz_bodies = (
    st.none()
    | st.binary(max_size=30)
    | st.builds(lambda: send_body())
    | json_values
    | st.fixed_dictionaries({"url": st.sampled_from([HOOK, "http://127.0.0.1/", "x"])})
)
fuzz_headers = st.sampled_from(
    [dict(JSON_V1), {}, {**V1, "content-type": "text/plain"}, {"a2a-version": "0.3"}]
)
#: Requests the seeded harness can answer ("id-1" is alice's task, "id-2" its context).
FUZZ_TARGETS = [
    ("POST", "/message:send"),
    ("POST", "/message:stream"),
    ("GET", "/tasks"),
    ("GET", "/tasks/id-1"),
    ("GET", "/tasks/nope"),
    ("POST", "/tasks/id-1:cancel"),
    ("POST", "/tasks/id-1:subscribe"),
    ("POST", "/tasks/id-1/pushNotificationConfigs"),
    ("GET", "/tasks/id-1/pushNotificationConfigs"),
    ("GET", "/tasks/id-1/pushNotificationConfigs/c"),
    ("DELETE", "/tasks/id-1/pushNotificationConfigs/c"),
    ("GET", "/extendedAgentCard"),
    ("GET", "/acme/tasks"),
    ("GET", "/acme/tasks/id-1"),
]


@st.composite
def fuzz_targets(draw: st.DrawFn) -> tuple[str, str]:
    """Mostly a route's own method and path (0 is the well-formed branch), else anything."""
    if draw(st.integers(0, 3)) < 3:
        return draw(st.sampled_from(FUZZ_TARGETS))
    return draw(st.sampled_from(["GET", "POST", "DELETE", "PUT"])), draw(paths)


def check_rest_response(response: HttpResponse) -> None:
    """Every REST answer is JSON; every error a ``google.rpc.Status`` with a matching code."""
    assert header(response, "content-type") == "application/json"
    body = strict_json(response.body)
    if response.status == 200:
        event("200")
        return
    event(f"{response.status}")
    assert 400 <= response.status <= 599
    assert body["error"]["code"] == response.status
    if response.status not in (404, 405) or body["error"].get("details"):
        info = error_info(body["error"])
        assert info["reason"] == info["reason"].upper()


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(
    fuzz_targets(),
    queries,
    fuzz_bodies,
    fuzz_headers,
    st.sampled_from(list(ErrorMapping)),
)
def test_fuzz_rest_requests_through_the_whole_pipeline(
    target: tuple[str, str],
    query: str,
    body: Any,
    headers: dict[str, str],
    mapping: ErrorMapping,
) -> None:
    harness = Harness(make_core(error_mapping=mapping, push_notifications=True, streaming=True))
    harness.create("seed", blocking=False)  # id-1, owned by alice
    method, path = target
    request = rest(method, path, body, query=query, headers=headers)
    routed = harness.core.handle_http(request, ALICE, BASE)
    if isinstance(routed, HttpResponse):
        check_rest_response(routed)
        return
    assert routed.binding is Binding.REST
    decision = harness.decide(routed.call)
    reply = decision.reply
    if isinstance(reply, FollowTask):
        event("stream")
        for frame in open_cursor(reply).frames:
            data = sse_frames(harness.core.render_event(routed, frame))[0]["data"]
            assert len(strict_json(data.encode())) == 1
        return
    if isinstance(reply, AwaitTask):
        reply = harness.core.settled_reply(reply, harness.record(reply.task_id))
    assert isinstance(reply, Respond | Fail)
    check_rest_response(harness.core.render(routed, reply))


def test_a_sample_task_renders_the_same_after_a_round_trip() -> None:
    """The bare REST form of a task decodes back into it (what a REST client reads)."""
    core = make_core()
    task = Task("t", TaskStatus(TaskState.COMPLETED), context_id="c")
    routed = dispatch(core, rest("GET", "/tasks/t"))
    body = ok_json(core.render(routed, Respond(task)))
    assert core.codec.decode(Task, body, "") == task


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        (
            "POST",
            "/message:send",
            {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}},
        ),
        ("GET", "/tasks/t-1", None),
        ("GET", "/tasks", None),
    ],
)
def test_a_rest_call_without_a2a_version_is_told_which_header_to_send(
    method: str, path: str, body: Any
) -> None:
    """HTTP+JSON exists in A2A 1.0 only, and no header means 0.3: the refusal says what to send."""
    driver = Driver(config=CoreConfig(card=AgentCard(name="rest", description="-", version="1")))
    raw = json.dumps(body).encode() if body is not None else b""
    headers = {"content-type": "application/json"} if body is not None else {}
    answer = driver.request(HttpRequest(method, path, headers, raw)).response
    assert answer is not None
    assert answer.status == 400
    message = json.loads(answer.body)["error"]["message"]
    assert "send A2A-Version: 1.0" in message
    assert "no A2A-Version header was sent" in message
    headers = {**headers, "a2a-version": "1"}
    answer = driver.request(HttpRequest(method, path, headers, raw)).response
    assert answer is not None
    assert "'1'; this server speaks 1.0 (send A2A-Version: 1.0)" in answer.body.decode()
