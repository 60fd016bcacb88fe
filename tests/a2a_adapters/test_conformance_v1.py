"""What the official A2A conformance kit (a2aproject/a2a-tck, branch ``1.0-dev``) checks, as our
own black-box tests, so CI guards conformance on every commit without fetching the kit.

One test (or parametrized test) per requirement the kit checks against a server; the requirement
id is in the test's name and its docstring quotes the requirement. Every requirement that is not
specific to one binding runs over both bindings the card advertises, through one small
binding-neutral client (:class:`Binding`): JSON-RPC (``POST /`` with PascalCase methods) and
HTTP+JSON (``POST /message:send``, ``GET /tasks/{id}``…). Errors are compared by their
``google.rpc.ErrorInfo`` reason, which both bindings carry; each binding's own shape (the JSON-RPC
error object, the AIP-193 ``google.rpc.Status`` body) and its code for that reason (the kit's
v1.0.0 mapping table) are checked on *every* error this module sees.

The server is served as the kit's run is: ``examples/tck_agent.py`` (which the kit drives by the
``messageId`` prefix of each message, see the kit's ``scenarios/*.feature``) with streaming and
push notifications on, the v1.0.0 error-to-HTTP-status table, no deduplication of sends, a card
with v1.0 fields only, and webhooks allowed to reach 127.0.0.1. One server per adapter serves the
whole module: tests never depend on each other's tasks (fresh ids, fresh context ids).

Not covered, as the kit does not check them against this server: the gRPC binding (GRPC-*), card
signatures (CARD-SIGN-*), the extended card's auth (CARD-EXT-001/002: the kit skips them unless
the card declares ``extendedAgentCard``), and the capability errors of capabilities this server
has (CORE-CAP-001 push, CORE-CAP-002 streaming) or of an extension it does not require
(CORE-CAP-004); the kit skips those too.
"""

import itertools
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from examples import tck_agent
from tests import servers
from tests.a2a_adapters.sse import STREAM_RESPONSE_KEYS, SseStream, kind_of, state_in
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    CANCELED,
    COMPLETED,
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    HTTP_TIMEOUT,
    INPUT_REQUIRED,
    REJECTED,
    SUBMITTED,
    TERMINAL,
    TLS,
    WORKING,
    fetch_card,
    new_id,
    text_of,
    wait_until,
)
from tests.a2a_adapters.webhooks import DELIVERY_TIMEOUT, Delivery, Receiver, receiving
from tests.servers import running_server

#: Every test here runs against the asyncio and the trio adapter (see the ``adapter`` fixture).
pytestmark = pytest.mark.usefixtures("module_adapter")

JSONRPC = "JSONRPC"
HTTP_JSON = "HTTP+JSON"

#: The kit's error table (its ``ErrorBinding``s, spec v1.0.0 §5.4): ErrorInfo reason ->
#: (JSON-RPC code, HTTP status). The server runs with ``error_mapping="1.0.0"`` for this table.
A2A_ERRORS: Mapping[str, tuple[int, int]] = {
    "TASK_NOT_FOUND": (-32001, 404),
    "TASK_NOT_CANCELABLE": (-32002, 409),
    "PUSH_NOTIFICATION_NOT_SUPPORTED": (-32003, 400),
    "UNSUPPORTED_OPERATION": (-32004, 400),
    "CONTENT_TYPE_NOT_SUPPORTED": (-32005, 415),
    "INVALID_AGENT_RESPONSE": (-32006, 502),
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": (-32007, 400),
    "EXTENSION_SUPPORT_REQUIRED": (-32008, 400),
    "VERSION_NOT_SUPPORTED": (-32009, 400),
}
REASON_OF_CODE: Mapping[int, str] = {code: reason for reason, (code, _) in A2A_ERRORS.items()}
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"

#: The v1.0 TaskState and Role names (ProtoJSON enum names).
TASK_STATES = frozenset(
    {
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
    }
)
ROLES = frozenset({"ROLE_USER", "ROLE_AGENT"})
#: How far along the lifecycle a state is: states a stream reports must never go back.
STATE_ORDER: Mapping[str, int] = {
    SUBMITTED: 0,
    WORKING: 1,
    INPUT_REQUIRED: 1,
    "TASK_STATE_AUTH_REQUIRED": 1,
    **dict.fromkeys(TERMINAL, 2),
}

#: The options of the kit's run (``serve … --strict-v1-card --no-idempotency
#: --error-mapping 1.0.0 --push-allow-host 127.0.0.1``, streaming and push on).
TCK_SERVER_OPTIONS: Mapping[str, Any] = {
    "streaming": True,
    "push": True,
    "push_allow_hosts": ("127.0.0.1",),
    "error_mapping": "1.0.0",
    "idempotent_sends": False,
    "card_v03_fields": False,
}

ISO_8601_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
SNAKE_CASE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")

# --- servers ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tck_url(module_adapter: servers.Adapter) -> Iterator[str]:
    """The TCK agent, served as the kit's run serves it, on the current adapter."""
    with running_server(tck_agent.agent, card=tck_agent.card, **TCK_SERVER_OPTIONS) as url:
        yield url


@pytest.fixture(scope="module")
def http(tck_url: str) -> Iterator[httpx.Client]:
    """One HTTP client for the module, its connections kept alive; every read is bounded."""
    with httpx.Client(timeout=HTTP_TIMEOUT, verify=TLS) as client:
        yield client


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    """A real webhook receiver on 127.0.0.1; each test uses its own paths on it."""
    with receiving() as running:
        yield running


@pytest.fixture(params=[JSONRPC, HTTP_JSON], ids=["jsonrpc", "http_json"])
def binding(request: pytest.FixtureRequest, tck_url: str, http: httpx.Client) -> "Binding":
    """The server, through one of the two bindings its card advertises."""
    kind: str = request.param
    return JsonRpcBinding(http, tck_url) if kind == JSONRPC else RestBinding(http, tck_url)


@pytest.fixture
def jsonrpc(tck_url: str, http: httpx.Client) -> "JsonRpcBinding":
    return JsonRpcBinding(http, tck_url)


@pytest.fixture
def rest(tck_url: str, http: httpx.Client) -> "RestBinding":
    return RestBinding(http, tck_url)


# --- the binding-neutral client -----------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """An error answer, as either binding carries it; ``reason`` (ErrorInfo) names the error."""

    binding: str
    reason: str
    message: str
    metadata: Mapping[str, str]
    #: The binding's own code: the JSON-RPC error code, or the HTTP status.
    code: int
    #: The ``google.rpc.Status.status`` of an HTTP+JSON error ("" on JSON-RPC).
    status: str
    #: The fields a ``google.rpc.BadRequest`` detail names.
    fields: tuple[str, ...]

    @property
    def invalid_params(self) -> bool:
        """Whether this is the binding's "invalid parameters" error (-32602, or 400)."""
        if self.binding == JSONRPC:
            return self.code == -32602
        return self.code == 400 and self.status == "INVALID_ARGUMENT"


@dataclass(frozen=True)
class Reply:
    """One answer: a result, or a failure; and the HTTP response it came in."""

    response: httpx.Response
    result: Any = None
    failure: Failure | None = None

    def ok(self) -> Any:
        assert self.failure is None, f"expected a result, got {self.failure}"
        return self.result

    def error(self, reason: str) -> Failure:
        assert self.failure is not None, f"expected {reason}, got the result {self.result}"
        assert self.failure.reason == reason, self.failure
        return self.failure


def media_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.split(";", 1)[0].strip().lower()


def _details(details: Any) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """The ErrorInfo (checked) and the BadRequest fields of a ``data``/``details`` array."""
    assert isinstance(details, list), f"error details must be an array: {details!r}"
    assert all(isinstance(d, dict) and isinstance(d.get("@type"), str) for d in details), details
    infos = [d for d in details if d["@type"] == ERROR_INFO_TYPE]
    assert len(infos) <= 1, details
    fields = tuple(
        violation["field"]
        for d in details
        if d["@type"] == BAD_REQUEST_TYPE
        for violation in d["fieldViolations"]
    )
    if not infos:
        return None, fields
    info: dict[str, Any] = infos[0]
    assert info["domain"] == ERROR_DOMAIN, info
    assert UPPER_SNAKE.match(info["reason"]), info
    assert all(isinstance(v, str) for v in info.get("metadata", {}).values()), info
    return info, fields


def rpc_failure(error: Any) -> Failure:
    """A JSON-RPC error object, checked (JSONRPC-ERR-001..003, JSONRPC-SSE-002)."""
    assert isinstance(error, dict), error
    assert {"code", "message"} <= set(error) <= {"code", "message", "data"}, error
    code, message = error["code"], error["message"]
    assert isinstance(code, int), error
    assert not isinstance(code, bool), error
    assert isinstance(message, str), error
    assert message, error
    info, fields = _details(error.get("data", []))
    if -32099 <= code <= -32001:
        # An A2A error: the ErrorInfo is required, and names the error this code means.
        assert info is not None, f"an A2A error without ErrorInfo: {error}"
        assert info["reason"] == REASON_OF_CODE.get(code, info["reason"]), error
    else:
        assert -32700 <= code <= -32600, f"{code} is in neither JSON-RPC's nor A2A's range"
    reason = info["reason"] if info else ""
    if reason in A2A_ERRORS:
        assert code == A2A_ERRORS[reason][0], error
    metadata = info.get("metadata", {}) if info else {}
    return Failure(JSONRPC, reason, message, metadata, code, "", fields)


def rest_failure(body: Any, http_status: int) -> Failure:
    """An HTTP+JSON error body (AIP-193 ``google.rpc.Status``), checked against its HTTP status."""
    assert isinstance(body, dict), body
    assert set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error, dict), body
    assert error["code"] == http_status, body
    assert isinstance(error["status"], str), body
    assert UPPER_SNAKE.match(error["status"]), body
    assert isinstance(error["message"], str), body
    assert error["message"], body
    info, fields = _details(error.get("details", []))
    reason = info["reason"] if info else ""
    if reason in A2A_ERRORS:
        assert http_status == A2A_ERRORS[reason][1], f"{reason} answered {http_status}: {body}"
    metadata = info.get("metadata", {}) if info else {}
    return Failure(
        HTTP_JSON, reason, error["message"], metadata, http_status, error["status"], fields
    )


class Stream:
    """An open event stream of ``StreamResponse`` objects, or the error answered instead."""

    def __init__(self, binding: "Binding", response: httpx.Response, rpc_id: str | None) -> None:
        self.binding = binding
        self.response = response
        self.rpc_id = rpc_id
        #: The error that answered instead of a stream, or that ended the stream.
        self.failure: Failure | None = None
        #: The SSE ``id`` of every event read.
        self.ids: list[str | None] = []
        self._sse: SseStream | None = None
        if response.status_code == 200 and media_type(response) == "text/event-stream":
            self._sse = SseStream(response)
        else:
            response.read()
            reply = binding.reply_of(response, rpc_id)
            assert reply.failure is not None, f"a stream answered without a stream: {reply}"
            self.failure = reply.failure

    @property
    def is_open(self) -> bool:
        return self._sse is not None

    @property
    def ended(self) -> bool:
        """Whether the server ended the stream."""
        return self._sse is None or self._sse.ended

    def next(self) -> dict[str, Any] | None:
        """The next ``StreamResponse``; ``None`` once the server ended the stream (or failed it)."""
        assert self._sse is not None, f"no stream: {self.failure}"
        event = self._sse.next_event()
        if event is None:
            return None
        self.ids.append(event.id)
        document = event.json()
        if self.binding.name == JSONRPC:
            assert document["jsonrpc"] == "2.0", document
            assert document["id"] == self.rpc_id, document
            assert ("result" in document) != ("error" in document), document
            if "error" in document:
                self.failure = rpc_failure(document["error"])
                return None
            document = document["result"]
        elif "error" in document:
            self.failure = rest_failure(document, document["error"]["code"])
            return None
        assert isinstance(document, dict), document
        assert len(document) == 1, f"a StreamResponse holds exactly one payload: {document}"
        assert set(document) <= STREAM_RESPONSE_KEYS, document
        return document

    def rest(self) -> list[dict[str, Any]]:
        """Every remaining ``StreamResponse``, until the server ends the stream."""
        found: list[dict[str, Any]] = []
        while (item := self.next()) is not None:
            found.append(item)
        assert self.ended, "the stream was failed, not ended"
        return found


#: JSON-RPC request ids: unique, so that echoing them back is checked for real.
_RPC_IDS = itertools.count(1)


class Binding:
    """The v1.0 operations over one binding; each answers a :class:`Reply` or an open
    :class:`Stream`. Operations take their JSON-RPC ``params`` (the proto request as ProtoJSON);
    the HTTP+JSON binding moves them into its path, query and body."""

    name: str

    def __init__(self, http: httpx.Client, url: str, tenant: str = "") -> None:
        self.http = http
        self.url = url
        self.tenant = tenant

    def in_tenant(self, tenant: str) -> "Binding":
        """The same binding, scoped to ``tenant``."""
        return type(self)(self.http, self.url, tenant)

    # --- what each binding defines ----------------------------------------------------------

    def build(
        self,
        method: str,
        params: Mapping[str, Any],
        headers: Mapping[str, str] | None,
        content_type: str,
    ) -> tuple[httpx.Request, str | None]:
        """The HTTP request for ``method`` (and the JSON-RPC id it carries, if any)."""
        raise NotImplementedError

    def reply_of(self, response: httpx.Response, rpc_id: str | None) -> Reply:
        """The answer in ``response``, checked against the binding's rules."""
        raise NotImplementedError

    # --- calling --------------------------------------------------------------------------------

    def call(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Reply:
        """One v1.0 operation; ``headers`` replace ``A2A-Version: 1.0`` when given."""
        request, rpc_id = self.build(method, params, headers, content_type)
        return self.reply_of(self.http.send(request), rpc_id)

    @contextmanager
    def open(self, method: str, params: Mapping[str, Any]) -> Iterator[Stream]:
        """A streaming operation: the open stream (or the error instead), closed on exit."""
        request, rpc_id = self.build(method, params, None, "application/json")
        request.headers["accept"] = "text/event-stream"
        response = self.http.send(request, stream=True)
        try:
            yield Stream(self, response, rpc_id)
        finally:
            response.close()

    # --- the operations -------------------------------------------------------------------------

    def send(self, params: Mapping[str, Any], **options: Any) -> Reply:
        return self.call("SendMessage", params, **options)

    def get(self, task_id: str, history_length: int | None = None) -> Reply:
        params: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return self.call("GetTask", params)

    def list(self, **query: Any) -> Reply:
        return self.call("ListTasks", query)

    def cancel(self, task_id: str) -> Reply:
        return self.call("CancelTask", {"id": task_id})

    def create_push(self, task_id: str, config: Mapping[str, Any]) -> Reply:
        return self.call("CreateTaskPushNotificationConfig", {"taskId": task_id, **config})

    def get_push(self, task_id: str, config_id: str) -> Reply:
        return self.call("GetTaskPushNotificationConfig", {"taskId": task_id, "id": config_id})

    def list_push(self, task_id: str) -> Reply:
        return self.call("ListTaskPushNotificationConfigs", {"taskId": task_id})

    def delete_push(self, task_id: str, config_id: str) -> Reply:
        return self.call("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": config_id})

    def extended_card(self) -> Reply:
        return self.call("GetExtendedAgentCard", {})

    def stream(self, params: Mapping[str, Any]) -> AbstractContextManager[Stream]:
        return self.open("SendStreamingMessage", params)

    def subscribe(self, task_id: str) -> AbstractContextManager[Stream]:
        return self.open("SubscribeToTask", {"id": task_id})


class JsonRpcBinding(Binding):
    """JSON-RPC 2.0: ``POST /``, the method by name, the request as ``params``."""

    name = JSONRPC

    def build(
        self,
        method: str,
        params: Mapping[str, Any],
        headers: Mapping[str, str] | None,
        content_type: str,
    ) -> tuple[httpx.Request, str | None]:
        rpc_id = f"conformance-{next(_RPC_IDS)}"
        if self.tenant:
            params = {**params, "tenant": self.tenant}
        body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
        sent = {**(A2A_HEADERS if headers is None else headers), "content-type": content_type}
        request = self.http.build_request(
            "POST", self.url + "/", content=json.dumps(body).encode(), headers=sent
        )
        return request, rpc_id

    def reply_of(self, response: httpx.Response, rpc_id: str | None) -> Reply:
        # JSON-RPC over HTTP answers 200, errors included (JSONRPC-FMT-001/002).
        assert response.status_code == 200, response.text
        assert media_type(response) == "application/json", response.headers
        document = response.json()
        assert document.get("jsonrpc") == "2.0", document
        assert document.get("id") == rpc_id, document
        assert ("result" in document) != ("error" in document), document
        if "error" in document:
            return Reply(response, failure=rpc_failure(document["error"]))
        return Reply(response, result=document["result"])


#: HTTP+JSON routes: v1.0 method -> (HTTP method, path; ``{name}`` comes from the params).
REST_ROUTES: Mapping[str, tuple[str, str]] = {
    "SendMessage": ("POST", "/message:send"),
    "SendStreamingMessage": ("POST", "/message:stream"),
    "GetTask": ("GET", "/tasks/{id}"),
    "ListTasks": ("GET", "/tasks"),
    "CancelTask": ("POST", "/tasks/{id}:cancel"),
    "SubscribeToTask": ("POST", "/tasks/{id}:subscribe"),
    "CreateTaskPushNotificationConfig": ("POST", "/tasks/{taskId}/pushNotificationConfigs"),
    "GetTaskPushNotificationConfig": ("GET", "/tasks/{taskId}/pushNotificationConfigs/{id}"),
    "ListTaskPushNotificationConfigs": ("GET", "/tasks/{taskId}/pushNotificationConfigs"),
    "DeleteTaskPushNotificationConfig": ("DELETE", "/tasks/{taskId}/pushNotificationConfigs/{id}"),
    "GetExtendedAgentCard": ("GET", "/extendedAgentCard"),
}


def query_value(value: Any) -> str:
    """A query parameter as ProtoJSON reads it from a string (booleans in lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class RestBinding(Binding):
    """HTTP+JSON: a route per operation, path parameters, the rest in the query (GET, DELETE) or
    the JSON body (POST), every route also below ``/{tenant}``."""

    name = HTTP_JSON

    def build(
        self,
        method: str,
        params: Mapping[str, Any],
        headers: Mapping[str, str] | None,
        content_type: str,
    ) -> tuple[httpx.Request, str | None]:
        verb, pattern = REST_ROUTES[method]
        remaining = dict(params)
        names = re.findall(r"\{(\w+)\}", pattern)
        path = pattern.format(**{name: quote(remaining.pop(name), safe="") for name in names})
        prefix = f"/{self.tenant}" if self.tenant else ""
        sent = dict(A2A_HEADERS if headers is None else headers)
        if verb == "POST":
            sent["content-type"] = content_type
            content = json.dumps(remaining).encode() if remaining else b""
            request = self.http.build_request(
                verb, self.url + prefix + path, content=content, headers=sent
            )
        else:
            query = {name: query_value(value) for name, value in remaining.items()}
            request = self.http.build_request(
                verb, self.url + prefix + path, params=query, headers=sent
            )
        return request, None

    def reply_of(self, response: httpx.Response, rpc_id: str | None) -> Reply:
        # Every answer is JSON, errors included (HTTP_JSON-SVC-001, HTTP_JSON-ERR-001).
        assert media_type(response) == "application/json", response.headers
        body = response.json()
        if response.status_code >= 400:
            return Reply(response, failure=rest_failure(body, response.status_code))
        assert 200 <= response.status_code < 300, response.status_code
        return Reply(response, result=body)


# --- shapes of the v1.0 data model (proto lf.a2a.v1, as ProtoJSON) ------------------------------

TASK_FIELDS = {"id", "contextId", "status", "artifacts", "history", "metadata"}
STATUS_FIELDS = {"state", "message", "timestamp"}
MESSAGE_FIELDS = {
    "messageId",
    "contextId",
    "taskId",
    "role",
    "parts",
    "metadata",
    "extensions",
    "referenceTaskIds",
}
PART_CONTENT = {"text", "raw", "url", "data"}
PART_FIELDS = PART_CONTENT | {"metadata", "filename", "mediaType"}
ARTIFACT_FIELDS = {"artifactId", "name", "description", "parts", "metadata", "extensions"}
STATUS_UPDATE_FIELDS = {"taskId", "contextId", "status", "metadata"}
ARTIFACT_UPDATE_FIELDS = {"taskId", "contextId", "artifact", "append", "lastChunk", "metadata"}


class Shapes:
    """Collects what is wrong with v1.0 objects, each problem named by its path."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def _fields(
        self, where: str, value: Any, allowed: set[str], required: Sequence[str]
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.problems.append(f"{where}: not an object: {value!r}")
            return {}
        for name in required:
            if name not in value:
                self.problems.append(f"{where}: the required field {name!r} is missing")
        for name in set(value) - allowed:
            self.problems.append(f"{where}: unknown field {name!r}")
        return value

    def _nonempty_string(self, where: str, value: Any) -> None:
        if not isinstance(value, str) or not value:
            self.problems.append(f"{where}: not a non-empty string: {value!r}")

    def task(self, where: str, value: Any) -> None:
        task = self._fields(where, value, TASK_FIELDS, ("id", "status"))
        if "id" in task:
            self._nonempty_string(f"{where}.id", task["id"])
        if "status" in task:
            self.status(f"{where}.status", task["status"])
        for i, artifact in enumerate(task.get("artifacts", [])):
            self.artifact(f"{where}.artifacts[{i}]", artifact)
        for i, message in enumerate(task.get("history", [])):
            self.message(f"{where}.history[{i}]", message)

    def status(self, where: str, value: Any) -> None:
        status = self._fields(where, value, STATUS_FIELDS, ("state",))
        if "state" in status and status["state"] not in TASK_STATES:
            self.problems.append(f"{where}.state: not a TaskState: {status['state']!r}")
        if "message" in status:
            self.message(f"{where}.message", status["message"])
        if "timestamp" in status:
            self.timestamp(f"{where}.timestamp", status["timestamp"])

    def timestamp(self, where: str, value: Any) -> None:
        if not isinstance(value, str) or not ISO_8601_UTC.match(value):
            self.problems.append(f"{where}: not an ISO 8601 UTC ('Z') timestamp: {value!r}")

    def message(self, where: str, value: Any) -> None:
        message = self._fields(where, value, MESSAGE_FIELDS, ("messageId", "role", "parts"))
        if "messageId" in message:
            self._nonempty_string(f"{where}.messageId", message["messageId"])
        if "role" in message and message["role"] not in ROLES:
            self.problems.append(f"{where}.role: not a Role: {message['role']!r}")
        self.parts(where, message.get("parts", [None]))

    def parts(self, where: str, parts: Any) -> None:
        if not isinstance(parts, list) or not parts:
            self.problems.append(f"{where}.parts: not a non-empty array: {parts!r}")
            return
        for i, part in enumerate(parts):
            fields = self._fields(f"{where}.parts[{i}]", part, PART_FIELDS, ())
            content = PART_CONTENT & set(fields)
            if len(content) != 1:
                self.problems.append(f"{where}.parts[{i}]: not exactly one content: {part!r}")

    def artifact(self, where: str, value: Any) -> None:
        artifact = self._fields(where, value, ARTIFACT_FIELDS, ("artifactId", "parts"))
        if "artifactId" in artifact:
            self._nonempty_string(f"{where}.artifactId", artifact["artifactId"])
        self.parts(where, artifact.get("parts", [None]))

    def stream_response(self, where: str, value: Any) -> None:
        if not isinstance(value, dict) or len(value) != 1 or not set(value) <= STREAM_RESPONSE_KEYS:
            self.problems.append(f"{where}: not a StreamResponse: {value!r}")
            return
        [(kind, payload)] = value.items()
        where = f"{where}.{kind}"
        match kind:
            case "task":
                self.task(where, payload)
            case "message":
                self.message(where, payload)
            case "statusUpdate":
                update = self._fields(
                    where, payload, STATUS_UPDATE_FIELDS, ("taskId", "contextId", "status")
                )
                if "status" in update:
                    self.status(f"{where}.status", update["status"])
            case "artifactUpdate":
                update = self._fields(
                    where, payload, ARTIFACT_UPDATE_FIELDS, ("taskId", "contextId", "artifact")
                )
                if "artifact" in update:
                    self.artifact(f"{where}.artifact", update["artifact"])


def shape_problems(kind: str, value: Any) -> list[str]:
    """What is wrong with ``value`` as a v1.0 ``kind`` ("task", "message", "stream_response"…)."""
    shapes = Shapes()
    getattr(shapes, kind)(kind, value)
    return shapes.problems


def keys_outside_content(value: Any) -> Iterator[str]:
    """Every object key of a protocol object, except inside agent content (data, metadata)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            if key not in ("data", "metadata"):
                yield from keys_outside_content(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys_outside_content(item)


def values_of(value: Any, key: str) -> Iterator[Any]:
    """Every value stored under ``key``, at any depth."""
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                yield item
            yield from values_of(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from values_of(item, key)


# --- the TCK agent's scripts --------------------------------------------------------------------


def tck_message(prefix: str, text: str = "TCK conformance", **fields: Any) -> dict[str, Any]:
    """A user message the TCK agent scripts by its ``messageId`` prefix."""
    return {
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "messageId": f"{prefix}-{new_id()}",
        **fields,
    }


def send_task(binding: Binding, prefix: str, text: str = "TCK conformance", **fields: Any) -> Any:
    """Send a scripted message answered by a task; the task."""
    result = binding.send({"message": tck_message(prefix, text, **fields)}).ok()
    assert set(result) == {"task"}, result
    return result["task"]


def completed_task(binding: Binding, **fields: Any) -> Any:
    task = send_task(binding, "tck-complete-task", **fields)
    assert task["status"]["state"] == COMPLETED, task
    return task


def waiting_task(binding: Binding, **fields: Any) -> Any:
    """A task the agent leaves waiting for input (not terminal, so cancelable)."""
    task = send_task(binding, "tck-input-required", **fields)
    assert task["status"]["state"] == INPUT_REQUIRED, task
    return task


def terminal_task(binding: Binding, state: str) -> Any:
    """A task in the terminal ``state`` (completed, canceled or rejected)."""
    if state == COMPLETED:
        return completed_task(binding)
    if state == REJECTED:
        task = send_task(binding, "tck-reject-task")
    else:
        task = binding.cancel(waiting_task(binding)["id"]).ok()
    assert task["status"]["state"] == state, task
    return task


def follow_up(
    binding: Binding,
    task: Mapping[str, Any],
    prefix: str,
    text: str = "TCK conformance",
    **fields: Any,
) -> Reply:
    """A message to an existing task (by its id only, unless ``fields`` add more)."""
    return binding.send({"message": tck_message(prefix, text, taskId=task["id"], **fields)})


TERMINAL_STATES = [
    pytest.param(COMPLETED, id="completed"),
    pytest.param(CANCELED, id="canceled"),
    pytest.param(REJECTED, id="rejected"),
]


# === Agent card (kit: tests/compatibility/agent_card) ===========================================

#: The fields of a v1.0 AgentCard (proto); the kit validates the card against the v1.0 schema.
CARD_FIELDS = {
    "name",
    "description",
    "supportedInterfaces",
    "provider",
    "version",
    "documentationUrl",
    "capabilities",
    "securitySchemes",
    "securityRequirements",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
    "signatures",
    "iconUrl",
}
CARD_REQUIRED = (
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)


@pytest.fixture
def card(tck_url: str) -> dict[str, Any]:
    response = fetch_card(tck_url)
    assert response.status_code == 200, response.text
    assert media_type(response) == "application/json"
    document: dict[str, Any] = response.json()
    return document


def test_card_disc_001_the_card_is_served(tck_url: str) -> None:
    """CARD-DISC-001: "A2A Servers MUST make an Agent Card available"."""
    response = fetch_card(tck_url)
    assert response.status_code == 200, response.text
    assert media_type(response) == "application/json"
    assert isinstance(response.json(), dict)
    assert response.json()["name"] == tck_agent.card.name


def test_card_proto_001_protocols_are_declared(card: dict[str, Any]) -> None:
    """CARD-PROTO-001: "The AgentCard MUST properly declare supported protocols"."""
    interfaces = card["supportedInterfaces"]
    assert isinstance(interfaces, list)
    assert interfaces
    for interface in interfaces:
        assert {"url", "protocolBinding", "protocolVersion"} <= set(interface), interface
        assert set(interface) <= {"url", "protocolBinding", "protocolVersion", "tenant"}


def test_card_proto_002_each_interface_serves_its_binding(
    card: dict[str, Any], http: httpx.Client
) -> None:
    """CARD-PROTO-002: each interface "MUST accurately declare its transport protocol and URL"."""
    v1 = [i for i in card["supportedInterfaces"] if i["protocolVersion"] == "1.0"]
    assert sorted(i["protocolBinding"] for i in v1) == [HTTP_JSON, JSONRPC]
    for interface in v1:
        url = interface["url"].rstrip("/")
        client = JsonRpcBinding if interface["protocolBinding"] == JSONRPC else RestBinding
        # A call through the declared URL, in the declared binding, is answered in that binding.
        client(http, url).get(f"unknown-{new_id()}").error("TASK_NOT_FOUND")
        assert client(http, url).list(pageSize=1).ok()["pageSize"] == 1


def test_card_struct_001_required_fields(card: dict[str, Any]) -> None:
    """CARD-STRUCT-001: "An AgentCard MUST contain all required fields"."""
    for name in CARD_REQUIRED:
        assert name in card, f"the card lacks {name!r}"
    # The kit validates against the v1.0 schema, which has no room for the v0.3 fields.
    assert set(card) <= CARD_FIELDS, set(card) - CARD_FIELDS
    assert isinstance(card["capabilities"], dict)
    assert card["defaultInputModes"]
    assert card["defaultOutputModes"]
    assert card["skills"]
    for skill in card["skills"]:
        assert {"id", "name", "description", "tags"} <= set(skill), skill
        assert skill["tags"], skill


def test_bind_field_001_every_binding_is_declared(card: dict[str, Any]) -> None:
    """BIND-FIELD-001: "Agents MUST declare all supported protocols in their AgentCard"."""
    declared = {(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]}
    # This server speaks JSON-RPC and HTTP+JSON (v1.0), and JSON-RPC v0.3; nothing else.
    assert declared == {(JSONRPC, "1.0"), (HTTP_JSON, "1.0"), (JSONRPC, "0.3")}


def test_card_cache_001_cache_control_with_max_age(tck_url: str) -> None:
    """CARD-CACHE-001 (SHOULD): the card endpoint sends "Cache-Control … with a max-age"."""
    cache_control = fetch_card(tck_url).headers.get("cache-control", "")
    assert re.search(r"(^|[ ,])max-age=\d+", cache_control), cache_control


def test_card_cache_002_etag(tck_url: str) -> None:
    """CARD-CACHE-002 (SHOULD): the card endpoint "SHOULD include an ETag response header"."""
    first, second = fetch_card(tck_url), fetch_card(tck_url)
    assert first.headers.get("etag"), first.headers
    assert first.headers["etag"] == second.headers["etag"]


def test_card_cache_003_last_modified(tck_url: str) -> None:
    """CARD-CACHE-003 (MAY): the card endpoint "MAY include a Last-Modified response header"."""
    assert fetch_card(tck_url).headers.get("last-modified")


# === Core operations (kit: core_operations, test_requirements) ==================================


@pytest.mark.parametrize(
    ("prefix", "kind"),
    [
        pytest.param("tck-complete-task", "task", id="task"),
        pytest.param("tck-message-response", "message", id="message"),
    ],
)
def test_core_send_001_returns_a_task_or_a_message(
    binding: Binding, prefix: str, kind: str
) -> None:
    """CORE-SEND-001: SendMessage "MUST return … either task information or a response message"."""
    result = binding.send({"message": tck_message(prefix)}).ok()
    assert list(result) == [kind], result
    assert not shape_problems(kind, result[kind])
    if kind == "task":
        assert result["task"]["status"]["state"] == COMPLETED
        assert text_of(result["task"]["status"]["message"]) == "Hello from TCK"
    else:
        assert result["message"]["role"] == "ROLE_AGENT"
        assert text_of(result["message"]) == "Direct message response"


@pytest.mark.parametrize("state", TERMINAL_STATES)
def test_core_send_002_terminal_tasks_take_no_messages(binding: Binding, state: str) -> None:
    """CORE-SEND-002: messages to terminal tasks "MUST return UnsupportedOperationError"."""
    task = terminal_task(binding, state)
    follow_up(binding, task, "tck-complete-task").error("UNSUPPORTED_OPERATION")
    assert binding.get(task["id"]).ok()["status"]["state"] == state


def test_core_send_003_accepted_media_types(binding: Binding, card: dict[str, Any]) -> None:
    """CORE-SEND-003: an unsupported media type "MUST result in ContentTypeNotSupportedError"."""
    # The TCK agent accepts every media type ("*/*"), so the kit's sample, a part of an unusual
    # type, is supported: it must be accepted, not refused.
    assert card["defaultInputModes"] == ["*/*"]
    part = {"raw": "dGNr", "mediaType": "application/x-unsupported-tck-type"}
    message = {**tck_message("tck-complete-task"), "parts": [part]}
    task = binding.send({"message": message}).ok()["task"]
    assert task["status"]["state"] == COMPLETED
    assert task["history"][0]["parts"] == [part]


def test_core_stream_001_streaming_send_streams_updates(binding: Binding) -> None:
    """CORE-STREAM-001: SendStreamingMessage "MUST establish a streaming connection"."""
    with binding.stream({"message": tck_message("tck-stream-001")}) as stream:
        assert stream.is_open, stream.failure
        assert media_type(stream.response) == "text/event-stream"
        events = stream.rest()
    assert [kind_of(e) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert [state_in(e) for e in events] == [SUBMITTED, WORKING, None, COMPLETED]
    assert text_of(events[2]["artifactUpdate"]["artifact"]) == "Stream hello from TCK"


def test_core_stream_002_a_message_stream_holds_one_message(binding: Binding) -> None:
    """CORE-STREAM-002: the stream "MUST contain exactly one Message object and then close"."""
    with binding.stream({"message": tck_message("tck-message-response")}) as stream:
        events = stream.rest()
    assert [kind_of(e) for e in events] == ["message"]
    assert text_of(events[0]["message"]) == "Direct message response"


def test_core_stream_003_task_stream_starts_with_the_task_and_ends_terminal(
    binding: Binding,
) -> None:
    """CORE-STREAM-003: the stream "MUST begin with the Task" and "MUST close" when terminal."""
    with binding.stream({"message": tck_message("tck-stream-003")}) as stream:
        first = stream.next()
        assert first is not None
        rest = stream.rest()
    assert kind_of(first) == "task"
    task_id = first["task"]["id"]
    assert rest
    assert all(kind_of(e) in ("statusUpdate", "artifactUpdate") for e in rest), rest
    assert all(next(iter(e.values()))["taskId"] == task_id for e in rest)
    assert state_in(rest[-1]) == COMPLETED
    assert stream.ended


def test_core_get_001_returns_the_current_state(binding: Binding) -> None:
    """CORE-GET-001: GetTask returns "the current state … including status, artifacts"."""
    sent = send_task(binding, "tck-artifact-text", "get me")
    task = binding.get(sent["id"]).ok()
    assert not shape_problems("task", task)
    assert task["id"] == sent["id"]
    assert task["contextId"] == sent["contextId"]
    assert task["status"] == sent["status"]
    assert task["artifacts"] == sent["artifacts"]
    assert [text_of(m) for m in task["history"]] == ["get me"]
    # A task still going on is read as it is now, and again once it moved on.
    waiting = waiting_task(binding)
    assert binding.get(waiting["id"]).ok()["status"]["state"] == INPUT_REQUIRED
    follow_up(binding, waiting, "tck-complete-task").ok()
    assert binding.get(waiting["id"]).ok()["status"]["state"] == COMPLETED


def test_core_get_002_unknown_task(binding: Binding) -> None:
    """CORE-GET-002: GetTask "MUST return TaskNotFoundError when the task ID does not exist"."""
    task_id = f"tck-nonexistent-{new_id()}"
    failure = binding.get(task_id).error("TASK_NOT_FOUND")
    assert failure.metadata.get("taskId") == task_id


def tasks_in_context(binding: Binding, count: int, prefix: str = "tck-complete-task") -> list[Any]:
    """``count`` tasks created one after the other in one fresh context, oldest first."""
    context_id = f"tck-context-{new_id()}"
    tasks = []
    for _ in range(count):
        tasks.append(send_task(binding, prefix, contextId=context_id))
        time.sleep(0.005)  # distinct status timestamps (they have millisecond precision)
    return tasks


def test_core_list_001_only_visible_tasks(binding: Binding) -> None:
    """CORE-LIST-001: ListTasks "MUST return only tasks visible to the authenticated client"."""
    mine = tasks_in_context(binding, 2)
    context_id = mine[0]["contextId"]
    other_tenant = binding.in_tenant(f"tenant-{new_id()[:8]}")
    theirs = send_task(other_tenant, "tck-complete-task", contextId=context_id)
    listing = binding.list(contextId=context_id).ok()
    assert {t["id"] for t in listing["tasks"]} == {t["id"] for t in mine}
    assert listing["totalSize"] == 2
    # The other tenant's task, in the same context, is only visible in its own scope.
    assert [t["id"] for t in other_tenant.list(contextId=context_id).ok()["tasks"]] == [
        theirs["id"]
    ]
    binding.get(theirs["id"]).error("TASK_NOT_FOUND")


def test_core_list_002_cursor_pagination(binding: Binding) -> None:
    """CORE-LIST-002: ListTasks "MUST use cursor-based pagination via pageToken/nextPageToken"."""
    created = tasks_in_context(binding, 3)
    context_id = created[0]["contextId"]
    first = binding.list(contextId=context_id, pageSize=2).ok()
    assert len(first["tasks"]) == 2
    assert first["pageSize"] == 2
    assert first["totalSize"] == 3
    assert first["nextPageToken"]
    second = binding.list(contextId=context_id, pageSize=2, pageToken=first["nextPageToken"]).ok()
    assert len(second["tasks"]) == 1
    assert second["nextPageToken"] == ""
    seen = [t["id"] for t in first["tasks"] + second["tasks"]]
    assert sorted(seen) == sorted(t["id"] for t in created)


def test_core_list_003_newest_first(binding: Binding) -> None:
    """CORE-LIST-003: tasks "MUST" be "sorted by their status timestamp in descending order"."""
    created = tasks_in_context(binding, 3)
    listed = binding.list(contextId=created[0]["contextId"]).ok()["tasks"]
    assert [t["id"] for t in listed] == [t["id"] for t in reversed(created)]
    stamps = [t["status"]["timestamp"] for t in listed]
    assert stamps == sorted(stamps, reverse=True)
    # A task that changes moves to the front.
    waiting = waiting_task(binding, contextId=created[0]["contextId"])
    time.sleep(0.005)
    follow_up(binding, waiting, "tck-complete-task").ok()
    listed = binding.list(contextId=created[0]["contextId"]).ok()["tasks"]
    assert listed[0]["id"] == waiting["id"]


def test_core_list_004_next_page_token_always_present(binding: Binding) -> None:
    """CORE-LIST-004: nextPageToken "MUST always be present"; "" when there are no more results."""
    context_id = tasks_in_context(binding, 1)[0]["contextId"]
    listing = binding.list(contextId=context_id, pageSize=100).ok()
    assert listing["nextPageToken"] == ""
    assert len(listing["tasks"]) == 1
    empty = binding.list(contextId=f"tck-empty-{new_id()}").ok()
    assert empty["tasks"] == []
    assert empty["nextPageToken"] == ""
    assert empty["totalSize"] == 0


def test_core_list_005_artifacts_omitted_unless_asked(binding: Binding) -> None:
    """CORE-LIST-005: includeArtifacts false: "the artifacts field MUST be omitted entirely"."""
    context_id = tasks_in_context(binding, 2, "tck-artifact-text")[0]["contextId"]
    for query in ({}, {"includeArtifacts": False}):
        for task in binding.list(contextId=context_id, **query).ok()["tasks"]:
            assert "artifacts" not in task, task
    asked = binding.list(contextId=context_id, includeArtifacts=True).ok()["tasks"]
    assert [text_of(t["artifacts"][0]) for t in asked] == ["Generated text content"] * 2


def test_core_cancel_001_cancel_returns_the_canceled_task(binding: Binding) -> None:
    """CORE-CANCEL-001: CancelTask "attempts to cancel the … task and returns its updated state"."""
    waiting = waiting_task(binding)
    task = binding.cancel(waiting["id"]).ok()
    assert not shape_problems("task", task)
    assert task["id"] == waiting["id"]
    assert task["status"]["state"] == CANCELED
    assert binding.get(waiting["id"]).ok()["status"]["state"] == CANCELED


@pytest.mark.parametrize("state", TERMINAL_STATES)
def test_core_cancel_002_terminal_tasks_are_not_cancelable(binding: Binding, state: str) -> None:
    """CORE-CANCEL-002: CancelTask "MUST return TaskNotCancelableError" for a terminal task."""
    task = terminal_task(binding, state)
    failure = binding.cancel(task["id"]).error("TASK_NOT_CANCELABLE")
    assert failure.metadata.get("taskId") == task["id"]
    assert binding.get(task["id"]).ok()["status"]["state"] == state


def test_core_cancel_003_unknown_task(binding: Binding) -> None:
    """CORE-CANCEL-003: CancelTask "MUST return TaskNotFoundError when the task ID does not
    exist"."""
    binding.cancel(f"tck-nonexistent-{new_id()}").error("TASK_NOT_FOUND")


@pytest.mark.parametrize(
    ("prefix", "configuration", "state"),
    [
        pytest.param("tck-complete-task", None, COMPLETED, id="unset-terminal"),
        pytest.param("tck-complete-task", {"returnImmediately": False}, COMPLETED, id="terminal"),
        pytest.param("tck-reject-task", {"returnImmediately": False}, REJECTED, id="rejected"),
        pytest.param("tck-input-required", None, INPUT_REQUIRED, id="unset-interrupted"),
    ],
)
def test_core_execution_mode_001_blocking_waits(
    binding: Binding, prefix: str, configuration: dict[str, Any] | None, state: str
) -> None:
    """CORE-EXECUTION-MODE-001: blocking sends "MUST wait until … terminal … or interrupted"."""
    params: dict[str, Any] = {"message": tck_message(prefix)}
    if configuration is not None:
        params["configuration"] = configuration
    task = binding.send(params).ok()["task"]
    assert task["status"]["state"] == state


def test_core_execution_mode_002_return_immediately(binding: Binding) -> None:
    """CORE-EXECUTION-MODE-002: return_immediately: "MUST return immediately after creating"."""
    # A message without a script: the agent works on it for a second.
    params = {
        "message": tck_message("conformance-slow"),
        "configuration": {"returnImmediately": True},
    }
    started = time.monotonic()
    task = binding.send(params).ok()["task"]
    elapsed = time.monotonic() - started
    assert task["status"]["state"] in (SUBMITTED, WORKING), task
    assert elapsed < tck_agent.DEFAULT_SECONDS / 2
    assert binding.get(task["id"]).ok()["status"]["state"] not in TERMINAL


def test_core_err_001_errors_are_actionable(binding: Binding) -> None:
    """CORE-ERR-001: "Servers MUST return appropriate errors" with "actionable information"."""
    task_id = f"tck-nonexistent-{new_id()}"
    failure = binding.get(task_id).error("TASK_NOT_FOUND")
    assert task_id in failure.message
    assert failure.metadata == {"taskId": task_id}
    completed = completed_task(binding)
    failure = binding.cancel(completed["id"]).error("TASK_NOT_CANCELABLE")
    assert "TASK_STATE_COMPLETED" in failure.message


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(None, "message", id="no-message"),
        pytest.param({"parts": []}, "message.parts", id="no-parts"),
        pytest.param({"role": "ROLE_BOSS"}, "message.role", id="role"),
        pytest.param({"messageId": None}, "message.messageId", id="no-message-id"),
        pytest.param({"parts": [{"text": "a", "data": {}}]}, "message.parts[0]", id="two-contents"),
        pytest.param({"parts": [{"mediaType": "text/plain"}]}, "message.parts[0]", id="no-content"),
        pytest.param(
            {"configuration": {"historyLength": -1}},
            "configuration.historyLength",
            id="history-length",
        ),
    ],
)
def test_core_err_002_invalid_params_are_rejected(
    binding: Binding, change: dict[str, Any] | None, field: str
) -> None:
    """CORE-ERR-002: "Servers MUST validate all input parameters before processing"."""
    context_id = f"tck-context-{new_id()}"
    message = tck_message("tck-complete-task", contextId=context_id)
    params: dict[str, Any] = {}
    if change is not None:
        configuration = change.get("configuration")
        message.update({k: v for k, v in change.items() if k != "configuration"})
        params["message"] = {k: v for k, v in message.items() if v is not None}
        if configuration is not None:
            params["configuration"] = configuration
    failure = binding.send(params).failure
    assert failure is not None
    assert failure.invalid_params, failure
    # The error names the field, by its path in the request.
    prefix = "params." if binding.name == JSONRPC else ""
    assert any(f.startswith(prefix + field) for f in failure.fields), failure.fields
    # Nothing was processed: no task was created for the message.
    assert binding.list(contextId=context_id).ok()["tasks"] == []


def test_core_cap_003_no_extended_card(binding: Binding, card: dict[str, Any]) -> None:
    """CORE-CAP-003: without extendedAgentCard, GetExtendedAgentCard "MUST return
    UnsupportedOperationError"."""
    assert not card["capabilities"].get("extendedAgentCard")
    binding.extended_card().error("UNSUPPORTED_OPERATION")


@pytest.mark.parametrize("prefix", ["tck-complete-task", "tck-message-response"])
def test_core_multi_001_context_generated(binding: Binding, prefix: str) -> None:
    """CORE-MULTI-001 (MAY): "Agents MAY generate a new contextId" when the message has none."""
    results = [binding.send({"message": tck_message(prefix)}).ok() for _ in range(2)]
    contexts = [next(iter(r.values()))["contextId"] for r in results]
    assert all(contexts)
    assert contexts[0] != contexts[1]


@pytest.mark.parametrize("prefix", ["tck-complete-task", "tck-message-response"])
def test_core_multi_001a_generated_context_in_response(binding: Binding, prefix: str) -> None:
    """CORE-MULTI-001a: a generated contextId "MUST be included in the response"."""
    result = binding.send({"message": tck_message(prefix)}).ok()
    payload = next(iter(result.values()))
    assert isinstance(payload["contextId"], str)
    assert payload["contextId"]
    if "task" in result:
        task = result["task"]
        assert task["history"][0]["contextId"] == task["contextId"]
        assert task["status"]["message"]["contextId"] == task["contextId"]


def test_core_multi_002_client_context_accepted(binding: Binding) -> None:
    """CORE-MULTI-002 (MAY): "Agents MAY accept and preserve client-provided contextId values"."""
    context_id = f"tck-client-context-{new_id()}"
    first = completed_task(binding, contextId=context_id)
    second = completed_task(binding, contextId=context_id)
    assert first["contextId"] == second["contextId"] == context_id
    assert first["id"] != second["id"]


def test_core_multi_002a_client_context_never_replaced(binding: Binding) -> None:
    """CORE-MULTI-002a: a contextId it cannot accept: reject, and "MUST NOT generate a new"."""
    for prefix in ("tck-complete-task", "tck-message-response", "tck-input-required"):
        context_id = f"tck-client-context-{new_id()}"
        result = binding.send({"message": tck_message(prefix, contextId=context_id)}).ok()
        assert next(iter(result.values()))["contextId"] == context_id


def test_core_multi_003_unique_task_ids(binding: Binding) -> None:
    """CORE-MULTI-003: "Agents MUST generate a unique taskId for each new task they create"."""
    context_id = f"tck-context-{new_id()}"
    tasks = [completed_task(binding, contextId=context_id) for _ in range(3)]
    ids = [t["id"] for t in tasks]
    assert all(isinstance(i, str) and i for i in ids)
    assert len(set(ids)) == 3
    for task in tasks:
        assert task["history"][0]["taskId"] == task["id"]


def test_core_multi_004_unknown_task_id_in_a_message(binding: Binding) -> None:
    """CORE-MULTI-004: a message with an unknown taskId: "agents MUST return TaskNotFoundError"."""
    task_id = f"tck-nonexistent-{new_id()}"
    message = tck_message("tck-complete-task", taskId=task_id)
    binding.send({"message": message}).error("TASK_NOT_FOUND")
    # It did not create a task under that id either.
    binding.get(task_id).error("TASK_NOT_FOUND")


def test_core_multi_005_context_inferred_from_the_task(binding: Binding) -> None:
    """CORE-MULTI-005: "Agents MUST infer contextId from the task if only taskId is provided"."""
    waiting = waiting_task(binding)
    task = follow_up(binding, waiting, "tck-complete-task", "more").ok()["task"]
    assert task["id"] == waiting["id"]
    assert task["contextId"] == waiting["contextId"]
    assert task["status"]["state"] == COMPLETED
    assert task["history"][-1]["contextId"] == waiting["contextId"]


@pytest.mark.parametrize("state", [INPUT_REQUIRED, COMPLETED])
def test_core_multi_006_mismatching_context_rejected(binding: Binding, state: str) -> None:
    """CORE-MULTI-006: agents "MUST reject messages containing mismatching contextId and taskId"."""
    task = waiting_task(binding) if state == INPUT_REQUIRED else completed_task(binding)
    reply = follow_up(binding, task, "tck-complete-task", contextId=f"tck-wrong-{new_id()}")
    assert reply.failure is not None, reply.result
    # The task did not take the message.
    after = binding.get(task["id"]).ok()
    assert after["status"]["state"] == state
    assert len(after["history"]) == len(task["history"])


# --- task history (kit: test_task_history) ------------------------------------------------------

HISTORY_TEXTS = ["TCK history message 1", "TCK history message 2"]


def multi_turn_task(binding: Binding) -> Any:
    """A task that asked for input twice, got it, and completed (history of four user turns)."""
    task = waiting_task(binding)
    for text in HISTORY_TEXTS:
        assert follow_up(binding, task, "tck-input-required", text).ok()["task"]["status"][
            "state"
        ] == (INPUT_REQUIRED)
    follow_up(binding, task, "tck-complete-task", "TCK complete after history").ok()
    return binding.get(task["id"]).ok()


def test_core_hist_001_history_length_zero_on_get(binding: Binding) -> None:
    """CORE-HIST-001 (SHOULD): with historyLength 0, "the history field SHOULD be omitted"."""
    task = multi_turn_task(binding)
    assert task["history"]
    assert "history" not in binding.get(task["id"], history_length=0).ok()


def test_core_hist_002_history_length_is_an_upper_bound(binding: Binding) -> None:
    """CORE-HIST-002: "The server MUST NOT return more messages than the provided historyLength"."""
    task = multi_turn_task(binding)
    full = task["history"]
    for length in (1, 2, 3):
        history = binding.get(task["id"], history_length=length).ok().get("history", [])
        assert len(history) <= length
        # What it returns are the most recent messages.
        assert history == full[len(full) - len(history) :]


def test_core_hist_003_history_length_zero_on_send(binding: Binding) -> None:
    """CORE-HIST-003 (SHOULD): SendMessage with historyLength 0: "history SHOULD be omitted"."""
    waiting = waiting_task(binding)
    message = tck_message("tck-complete-task", taskId=waiting["id"])
    task = binding.send({"message": message, "configuration": {"historyLength": 0}}).ok()["task"]
    assert task["status"]["state"] == COMPLETED
    assert "history" not in task


def test_core_hist_004_messages_are_persisted(binding: Binding) -> None:
    """CORE-HIST-004 (MAY): "Agents MAY choose to persist all Messages … in the Task history"."""
    task = multi_turn_task(binding)
    history = binding.get(task["id"], history_length=10).ok()["history"]
    assert [m["role"] for m in history] == ["ROLE_USER"] * 4


def test_core_hist_005_history_is_chronological(binding: Binding) -> None:
    """CORE-HIST-005 (SHOULD): history "SHOULD contain Messages in the order they were
    exchanged"."""
    task = multi_turn_task(binding)
    texts = [text_of(m) for m in binding.get(task["id"], history_length=10).ok()["history"]]
    assert texts == ["TCK conformance", *HISTORY_TEXTS, "TCK complete after history"]


def test_core_hist_006_history_matches_the_messages(binding: Binding) -> None:
    """CORE-HIST-006 (SHOULD): history entries "SHOULD match the message … originally
    exchanged"."""
    waiting = waiting_task(binding)
    sent = tck_message(
        "tck-complete-task",
        taskId=waiting["id"],
        parts=[{"text": "hello"}, {"data": {"k": [1, 2]}}, {"url": "https://example.com/f"}],
        metadata={"tck": "history"},
    )
    binding.send({"message": sent}).ok()
    stored = binding.get(waiting["id"]).ok()["history"][-1]
    assert stored == {**sent, "contextId": waiting["contextId"]}


# === Data model (kit: test_data_model, test_artifacts) ==========================================

#: Every script of the TCK agent a plain send runs.
SEND_SCRIPTS = (
    "tck-complete-task",
    "tck-artifact-text",
    "tck-artifact-file",
    "tck-artifact-file-url",
    "tck-artifact-data",
    "tck-message-response",
    "tck-input-required",
    "tck-reject-task",
)
#: (kind, object): what the server answered, for the data-model checks.
Sample = tuple[str, Any]


@pytest.fixture(scope="module")
def sample_cache(tck_url: str) -> dict[str, list[Sample]]:
    """Samples per binding, gathered once per server."""
    return {}


@pytest.fixture
def samples(binding: Binding, sample_cache: dict[str, list[Sample]]) -> list[Sample]:
    """What the server answers through ``binding``: every script's send result, the tasks read
    back (get, list, cancel), and the events of a streamed send and of a subscription."""
    if binding.name in sample_cache:
        return sample_cache[binding.name]
    found: list[Sample] = []
    context_id = f"tck-samples-{new_id()}"
    task_ids = []
    for prefix in SEND_SCRIPTS:
        result = binding.send({"message": tck_message(prefix, contextId=context_id)}).ok()
        [(kind, payload)] = result.items()
        found.append((kind, payload))
        if kind == "task":
            task_ids.append(payload["id"])
    found += [("task", binding.get(task_id).ok()) for task_id in task_ids]
    listing = binding.list(contextId=context_id, includeArtifacts=True).ok()
    found += [("task", task) for task in listing["tasks"]]
    waiting = waiting_task(binding)
    with binding.subscribe(waiting["id"]) as stream:
        first = stream.next()
        assert first is not None
        found.append(("stream_response", first))
    found.append(("task", binding.cancel(waiting["id"]).ok()))
    for prefix in ("tck-stream-artifact-file", "tck-stream-artifact-chunked"):
        with binding.stream({"message": tck_message(prefix)}) as stream:
            found += [("stream_response", event) for event in stream.rest()]
    sample_cache[binding.name] = found
    return found


PAYLOAD_KINDS = {"statusUpdate": "status_update", "artifactUpdate": "artifact_update"}


def walk(kind: str, value: Any) -> Iterator[tuple[str, Any]]:
    """``(kind, object)`` for ``value`` and every protocol object inside it."""
    yield kind, value
    children: list[tuple[str, Any]] = []
    match kind:
        case "stream_response":
            [(name, payload)] = value.items()
            children = [(PAYLOAD_KINDS.get(name, name), payload)]
        case "task":
            children = [("status", value["status"])]
            children += [("artifact", a) for a in value.get("artifacts", [])]
            children += [("message", m) for m in value.get("history", [])]
        case "status":
            children = [("message", value["message"])] if "message" in value else []
        case "message" | "artifact":
            children = [("part", p) for p in value["parts"]]
        case "status_update":
            children = [("status", value["status"])]
        case "artifact_update":
            children = [("artifact", value["artifact"])]
    for child_kind, child in children:
        yield from walk(child_kind, child)


def objects(samples: list[Sample], wanted: str) -> list[Any]:
    """Every object of kind ``wanted`` in the samples (fails if there is none)."""
    found = [value for kind, sample in samples for k, value in walk(kind, sample) if k == wanted]
    assert found, f"no {wanted} in the samples"
    return found


def test_dm_task_001_tasks_have_id_and_status(samples: list[Sample]) -> None:
    """DM-TASK-001: "A Task object MUST contain required fields: id and status"."""
    for task in objects(samples, "task"):
        assert isinstance(task.get("id"), str), task
        assert task["id"], task
        assert isinstance(task.get("status"), dict), task


def test_dm_task_002_task_states_are_enum_values(samples: list[Sample]) -> None:
    """DM-TASK-002: "TaskState values MUST be one of the defined enumeration values"."""
    states = {status["state"] for status in objects(samples, "status")}
    assert states <= TASK_STATES, states - TASK_STATES
    # Each state the TCK scripts reach is seen, spelled as the proto spells it.
    assert {SUBMITTED, WORKING, INPUT_REQUIRED, COMPLETED, REJECTED, CANCELED} <= states


def test_dm_msg_001_messages_have_required_fields(binding: Binding, samples: list[Sample]) -> None:
    """DM-MSG-001: "A Message object MUST contain required fields: role, parts, and messageId"."""
    for message in objects(samples, "message"):
        assert isinstance(message.get("messageId"), str), message
        assert message["messageId"], message
        assert message.get("role") in ROLES, message
        assert isinstance(message.get("parts"), list), message
        assert message["parts"], message
    reply = binding.send({"message": tck_message("tck-message-response")}).ok()["message"]
    assert reply["parts"] == [{"text": "Direct message response"}]


def test_dm_msg_002_roles_are_enum_values(samples: list[Sample]) -> None:
    """DM-MSG-002: "Role values MUST be one of the defined values: user or agent"."""
    for kind, sample in samples:
        for k, task in walk(kind, sample):
            if k != "task":
                continue
            for message in task.get("history", []):
                assert message["role"] == "ROLE_USER", message
            if "message" in task["status"]:
                assert task["status"]["message"]["role"] == "ROLE_AGENT", task
    assert {m["role"] for m in objects(samples, "message")} == ROLES


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        pytest.param("tck-artifact-text", {"text": "Generated text content"}, id="text"),
        pytest.param(
            "tck-artifact-file",
            {"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"},
            id="file",
        ),
        pytest.param(
            "tck-artifact-file-url",
            {
                "url": "https://example.com/output.txt",
                "filename": "output.txt",
                "mediaType": "text/plain",
            },
            id="file-url",
        ),
        pytest.param("tck-artifact-data", {"data": {"key": "value", "count": 42}}, id="data"),
    ],
)
def test_dm_part_001_a_part_holds_exactly_one_content(
    binding: Binding, samples: list[Sample], prefix: str, expected: dict[str, Any]
) -> None:
    """DM-PART-001: "A Part object MUST contain exactly one of: text, file …, or data"."""
    task = send_task(binding, prefix)
    [artifact] = task["artifacts"]
    assert artifact["parts"] == [expected]
    for part in objects(samples, "part"):
        assert len(PART_CONTENT & set(part)) == 1, part


def test_dm_art_001_artifacts_have_id_and_parts(samples: list[Sample]) -> None:
    """DM-ART-001: "An Artifact object MUST contain required fields: artifactId and parts"."""
    for artifact in objects(samples, "artifact"):
        assert isinstance(artifact.get("artifactId"), str), artifact
        assert artifact["artifactId"], artifact
        assert isinstance(artifact.get("parts"), list), artifact
        assert artifact["parts"], artifact
    for task in objects(samples, "task"):
        ids = [a["artifactId"] for a in task.get("artifacts", [])]
        assert len(ids) == len(set(ids)), task


def test_dm_status_001_statuses_have_a_state(samples: list[Sample]) -> None:
    """DM-STATUS-001: "A TaskStatus object MUST contain the state field with a valid TaskState"."""
    for status in objects(samples, "status"):
        assert status.get("state") in TASK_STATES, status


def test_dm_serial_001_camel_case_field_names(samples: list[Sample]) -> None:
    """DM-SERIAL-001: JSON field names "MUST use camelCase naming …, not snake_case"."""
    keys = {key for _, sample in samples for key in keys_outside_content(sample)}
    assert not {key for key in keys if SNAKE_CASE.match(key)}, keys


def test_dm_serial_002_enums_are_proto_names(samples: list[Sample]) -> None:
    """DM-SERIAL-002: enum values MUST be "their string names as defined in the Protocol Buffer"."""
    states = [s for _, sample in samples for s in values_of(sample, "state")]
    roles = [r for _, sample in samples for r in values_of(sample, "role")]
    assert states
    assert roles
    assert all(isinstance(s, str) and s in TASK_STATES for s in states), states
    assert all(isinstance(r, str) and r in ROLES for r in roles), roles


def test_dm_serial_003_timestamps_are_iso_8601_utc(samples: list[Sample]) -> None:
    """DM-SERIAL-003: timestamps "MUST be … ISO 8601 … in UTC", with no offset other than 'Z'."""
    stamps = [t for _, sample in samples for t in values_of(sample, "timestamp")]
    assert stamps
    for stamp in stamps:
        assert isinstance(stamp, str), stamp
        assert ISO_8601_UTC.match(stamp), stamp


def test_dm_serial_004_required_fields_are_present(samples: list[Sample]) -> None:
    """DM-SERIAL-004: REQUIRED fields "MUST be present and set"; required arrays not empty."""
    for kind, sample in samples:
        assert not shape_problems(kind, sample), (kind, sample)


def test_dm_serial_005_unknown_fields_are_ignored(binding: Binding) -> None:
    """DM-SERIAL-005 (SHOULD): "Implementations SHOULD ignore unrecognized fields in messages"."""
    message = {**tck_message("tck-complete-task"), "tckUnknownField": "should-be-ignored"}
    result = binding.send({"message": message, "tckExtraParam": 42}).ok()
    assert result["task"]["status"]["state"] == COMPLETED
    assert "tckUnknownField" not in result["task"]["history"][0]


# === Streaming (kit: test_stream_ordering, test_multi_stream, test_task_lifecycle) =============


def test_stream_order_001_events_in_generation_order(binding: Binding) -> None:
    """STREAM-ORDER-001: events "MUST" be delivered "in the order they were generated"."""
    with binding.stream({"message": tck_message("tck-stream-ordering-001")}) as stream:
        events = stream.rest()
    for event in events:
        assert not shape_problems("stream_response", event)
    # The agent's script: working, an artifact, completed, after the task itself.
    assert [kind_of(e) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert text_of(events[2]["artifactUpdate"]["artifact"]) == "Ordered output"
    orders = [STATE_ORDER[state] for e in events if (state := state_in(e)) is not None]
    assert orders == sorted(orders), [state_in(e) for e in events]
    assert state_in(events[-1]) == COMPLETED
    # The SSE ids number them in that order, too.
    numbers = [int(i) for i in stream.ids if i is not None]
    assert numbers == sorted(numbers)
    assert len(set(numbers)) == len(numbers)


@contextmanager
def subscriptions(binding: Binding, task_id: str, count: int) -> Iterator[list[Stream]]:
    """``count`` subscriptions to one task, each past its first event (the task snapshot)."""
    with ExitStack() as stack:
        streams = [stack.enter_context(binding.subscribe(task_id)) for _ in range(count)]
        for stream in streams:
            first = stream.next()
            assert first is not None, stream.failure
            assert kind_of(first) == "task"
        yield streams


def without_rpc_envelope(events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(event, sort_keys=True) for event in events]


def test_stream_order_002_events_reach_every_stream(binding: Binding) -> None:
    """STREAM-ORDER-002: events "MUST be broadcast to all active streams for that task"."""
    waiting = waiting_task(binding)
    with subscriptions(binding, waiting["id"], 3) as streams:
        follow_up(binding, waiting, "tck-complete-task").ok()
        for stream in streams:
            events = stream.rest()
            assert events, "a stream got nothing"
            assert state_in(events[-1]) == COMPLETED


def test_stream_order_003_same_events_in_the_same_order(binding: Binding) -> None:
    """STREAM-ORDER-003: "Each stream MUST receive the same events in the same order"."""
    waiting = waiting_task(binding)
    with subscriptions(binding, waiting["id"], 2) as (one, two):
        follow_up(binding, waiting, "tck-complete-task").ok()
        first, second = one.rest(), two.rest()
    assert len(first) >= 2  # working, then completed
    assert without_rpc_envelope(first) == without_rpc_envelope(second)
    assert one.ids == two.ids


def test_stream_order_004_closing_one_stream_leaves_the_others(binding: Binding) -> None:
    """STREAM-ORDER-004: "Closing one stream MUST NOT affect other active streams"."""
    waiting = waiting_task(binding)
    with subscriptions(binding, waiting["id"], 1) as (staying,):
        with subscriptions(binding, waiting["id"], 1):
            pass  # the client closes this one at once
        follow_up(binding, waiting, "tck-complete-task").ok()
        events = staying.rest()
    assert state_in(events[-1]) == COMPLETED
    # Nor did it affect the task.
    assert binding.get(waiting["id"]).ok()["status"]["state"] == COMPLETED


def test_stream_sub_001_the_first_event_is_the_task(binding: Binding) -> None:
    """STREAM-SUB-001: SubscribeToTask "MUST return a Task object as the first event"."""
    waiting = waiting_task(binding)
    with binding.subscribe(waiting["id"]) as stream:
        first = stream.next()
    assert first is not None, stream.failure
    assert kind_of(first) == "task"
    task = first["task"]
    assert not shape_problems("task", task)
    assert task["id"] == waiting["id"]
    assert task["status"] == binding.get(waiting["id"]).ok()["status"]


def test_stream_sub_002_the_stream_ends_when_the_task_does(binding: Binding) -> None:
    """STREAM-SUB-002: the SubscribeToTask stream "MUST terminate when the task reaches a
    terminal state"."""
    waiting = waiting_task(binding)
    with subscriptions(binding, waiting["id"], 1) as (stream,):
        follow_up(binding, waiting, "tck-complete-task").ok()
        events = stream.rest()
        assert stream.ended
    assert state_in(events[-1]) == COMPLETED
    assert all(state_in(e) not in TERMINAL for e in events[:-1])


@pytest.mark.parametrize("state", TERMINAL_STATES)
def test_stream_sub_003_terminal_tasks_cannot_be_subscribed(binding: Binding, state: str) -> None:
    """STREAM-SUB-003: SubscribeToTask "MUST return UnsupportedOperationError" if terminal."""
    task = terminal_task(binding, state)
    with binding.subscribe(task["id"]) as stream:
        assert not stream.is_open
        assert stream.failure is not None
        assert stream.failure.reason == "UNSUPPORTED_OPERATION", stream.failure


def test_stream_sub_004_unknown_task(binding: Binding) -> None:
    """STREAM-SUB-004: SubscribeToTask "MUST return TaskNotFoundError" for an unknown task."""
    with binding.subscribe(f"tck-nonexistent-{new_id()}") as stream:
        assert not stream.is_open
        assert stream.failure is not None
        assert stream.failure.reason == "TASK_NOT_FOUND", stream.failure


# === Push notifications (kit: test_push_notifications) ==========================================

AUTH_SCHEME = "Bearer"


def webhook(receiver: Receiver, **fields: Any) -> dict[str, Any]:
    """A push config aimed at a fresh path of the receiver."""
    return {"id": f"tck-push-{new_id()}", "url": f"{receiver.url}/{new_id()}", **fields}


def path_of(config: Mapping[str, Any]) -> str:
    path: str = httpx.URL(config["url"]).path
    return path


def delivered_until_terminal(receiver: Receiver, path: str) -> list[Delivery]:
    """The deliveries to ``path``, once the one reporting a terminal state is in."""

    def reached() -> bool:
        return any(state_in(d.json()) in TERMINAL for d in receiver.deliveries(path))

    assert wait_until(reached, timeout=DELIVERY_TIMEOUT), receiver.deliveries(path)
    return receiver.deliveries(path)


def test_push_create_001_create_returns_the_config(binding: Binding, receiver: Receiver) -> None:
    """PUSH-CREATE-001: CreatePushNotificationConfig "MUST establish a webhook endpoint"."""
    for task in (completed_task(binding), waiting_task(binding)):
        config = webhook(receiver)
        created = binding.create_push(task["id"], config).ok()
        assert created["id"] == config["id"]
        assert created["url"] == config["url"]
        assert created["taskId"] == task["id"]
        # Without an id, the server assigns one.
        anonymous = binding.create_push(task["id"], {"url": config["url"]}).ok()
        assert isinstance(anonymous["id"], str)
        assert anonymous["id"]
        assert anonymous["id"] != config["id"]


def test_push_create_002_the_config_persists(binding: Binding, receiver: Receiver) -> None:
    """PUSH-CREATE-002: the config "MUST persist until task completion or explicit deletion"."""
    waiting = waiting_task(binding)
    config = webhook(receiver)
    created = binding.create_push(waiting["id"], config).ok()
    assert binding.get_push(waiting["id"], config["id"]).ok() == created
    # It is still there for the task's next updates: they reach the webhook.
    follow_up(binding, waiting, "tck-input-required").ok()
    assert binding.get_push(waiting["id"], config["id"]).ok() == created
    follow_up(binding, waiting, "tck-complete-task").ok()
    states = [state_in(d.json()) for d in delivered_until_terminal(receiver, path_of(config))]
    assert states[-1] == COMPLETED
    assert INPUT_REQUIRED in states


def test_push_get_001_get_returns_the_details(binding: Binding, receiver: Receiver) -> None:
    """PUSH-GET-001: GetPushNotificationConfig "MUST return configuration details"."""
    waiting = waiting_task(binding)
    auth = {"scheme": AUTH_SCHEME, "credentials": f"tck-secret-{new_id()}"}
    config = webhook(receiver, token=f"tck-token-{new_id()}", authentication=auth)
    binding.create_push(waiting["id"], config).ok()
    found = binding.get_push(waiting["id"], config["id"]).ok()
    assert found["id"] == config["id"]
    assert found["taskId"] == waiting["id"]
    assert found["url"] == config["url"]
    assert found["token"] == config["token"]
    assert found["authentication"]["scheme"] == AUTH_SCHEME


def test_push_get_002_unknown_config(binding: Binding, receiver: Receiver) -> None:
    """PUSH-GET-002: GetPushNotificationConfig "MUST fail if the configuration does not exist"."""
    task = completed_task(binding)
    binding.create_push(task["id"], webhook(receiver)).ok()
    binding.get_push(task["id"], f"tck-nonexistent-{new_id()}").error("TASK_NOT_FOUND")
    binding.get_push(f"tck-nonexistent-{new_id()}", "any").error("TASK_NOT_FOUND")


def test_push_list_001_list_returns_every_config(binding: Binding, receiver: Receiver) -> None:
    """PUSH-LIST-001: the list "MUST return all active push notification configurations"."""
    waiting = waiting_task(binding)
    assert binding.list_push(waiting["id"]).ok().get("configs", []) == []
    configs = [binding.create_push(waiting["id"], webhook(receiver)).ok() for _ in range(3)]
    listing = binding.list_push(waiting["id"]).ok()
    assert sorted(listing["configs"], key=lambda c: c["id"]) == sorted(
        configs, key=lambda c: c["id"]
    )
    assert listing.get("nextPageToken", "") == ""
    # Another task's configs are not listed.
    assert binding.list_push(completed_task(binding)["id"]).ok().get("configs", []) == []


def test_push_del_001_delete_removes_the_config(binding: Binding, receiver: Receiver) -> None:
    """PUSH-DEL-001: DeletePushNotificationConfig "MUST permanently remove" the configuration."""
    waiting = waiting_task(binding)
    kept, deleted = webhook(receiver), webhook(receiver)
    binding.create_push(waiting["id"], kept).ok()
    binding.create_push(waiting["id"], deleted).ok()
    assert binding.delete_push(waiting["id"], deleted["id"]).ok() in (None, {})
    binding.get_push(waiting["id"], deleted["id"]).error("TASK_NOT_FOUND")
    listed = binding.list_push(waiting["id"]).ok()["configs"]
    assert [c["id"] for c in listed] == [kept["id"]]
    # No notification goes to it any more (the kept one shows when they would have).
    follow_up(binding, waiting, "tck-complete-task").ok()
    delivered_until_terminal(receiver, path_of(kept))
    assert receiver.deliveries(path_of(deleted)) == []


def test_push_del_002_delete_is_idempotent(binding: Binding, receiver: Receiver) -> None:
    """PUSH-DEL-002: DeletePushNotificationConfig "MUST be idempotent"."""
    task = completed_task(binding)
    config = webhook(receiver)
    binding.create_push(task["id"], config).ok()
    for _ in range(3):
        assert binding.delete_push(task["id"], config["id"]).ok() in (None, {})
    assert binding.list_push(task["id"]).ok().get("configs", []) == []


def push_and_complete(
    binding: Binding, receiver: Receiver, **fields: Any
) -> tuple[Any, dict[str, Any]]:
    """A task given a webhook with its first message (as the kit does), then completed."""
    config = webhook(receiver, **fields)
    params = {
        "message": tck_message("tck-input-required"),
        "configuration": {"taskPushNotificationConfig": config},
    }
    task = binding.send(params).ok()["task"]
    assert task["status"]["state"] == INPUT_REQUIRED
    follow_up(binding, task, "tck-complete-task").ok()
    return task, config


def test_push_deliver_001_webhooks_get_the_credentials(
    binding: Binding, receiver: Receiver
) -> None:
    """PUSH-DELIVER-001: the agent "MUST include authentication credentials in the webhook
    request headers" as the config's authentication says."""
    credentials = f"tck-test-token-{new_id()}"
    auth = {"scheme": AUTH_SCHEME, "credentials": credentials}
    _, config = push_and_complete(binding, receiver, authentication=auth)
    for delivery in delivered_until_terminal(receiver, path_of(config)):
        assert delivery.headers.get("authorization") == f"{AUTH_SCHEME} {credentials}"


def test_push_deliver_002_every_webhook_gets_a_delivery(
    binding: Binding, receiver: Receiver
) -> None:
    """PUSH-DELIVER-002: "Agents MUST attempt delivery at least once for each configured
    webhook"."""
    config = webhook(receiver)
    params = {
        "message": tck_message("tck-input-required"),
        "configuration": {"taskPushNotificationConfig": config},
    }
    task = binding.send(params).ok()["task"]
    second = webhook(receiver)
    binding.create_push(task["id"], second).ok()
    follow_up(binding, task, "tck-complete-task").ok()
    for each in (config, second):
        delivered = delivered_until_terminal(receiver, path_of(each))
        assert all(d.method == "POST" for d in delivered)


def test_push_deliver_003_payloads_are_stream_responses(
    binding: Binding, receiver: Receiver
) -> None:
    """PUSH-DELIVER-003: the webhook payload "MUST use the StreamResponse format"."""
    task, config = push_and_complete(binding, receiver)
    delivered = delivered_until_terminal(receiver, path_of(config))
    for delivery in delivered:
        assert delivery.headers["content-type"].split(";")[0] in (
            "application/json",
            "application/a2a+json",
        )
        payload = delivery.json()
        assert not shape_problems("stream_response", payload)
        [body] = payload.values()
        assert body.get("taskId", body.get("id")) == task["id"], payload
    assert kind_of(delivered[-1].json()) == "statusUpdate"


# === Errors, as both bindings map them (kit: jsonrpc/test_error_codes, http_json/test_http_status)


def unknown_task(binding: Binding) -> Reply:
    return binding.get(f"tck-nonexistent-{new_id()}")


def cancel_unknown_task(binding: Binding) -> Reply:
    return binding.cancel(f"tck-nonexistent-{new_id()}")


def cancel_completed_task(binding: Binding) -> Reply:
    return binding.cancel(completed_task(binding)["id"])


def message_to_completed_task(binding: Binding) -> Reply:
    return follow_up(binding, completed_task(binding), "tck-complete-task")


def wrong_content_type(binding: Binding) -> Reply:
    return binding.send({"message": tck_message("tck-complete-task")}, content_type="text/plain")


def unsupported_version(binding: Binding) -> Reply:
    message = tck_message("tck-complete-task")
    return binding.send({"message": message}, headers={"A2A-Version": "99.0"})


#: What makes the server answer each A2A error the TCK agent can be driven to.
ERROR_TRIGGERS = [
    pytest.param(unknown_task, "TASK_NOT_FOUND", id="TaskNotFound"),
    # The kit takes TaskNotFound or TaskNotCancelable for an unknown task: not found is right.
    pytest.param(cancel_unknown_task, "TASK_NOT_FOUND", id="TaskNotFound-cancel"),
    pytest.param(cancel_completed_task, "TASK_NOT_CANCELABLE", id="TaskNotCancelable"),
    pytest.param(message_to_completed_task, "UNSUPPORTED_OPERATION", id="UnsupportedOperation"),
    pytest.param(wrong_content_type, "CONTENT_TYPE_NOT_SUPPORTED", id="ContentTypeNotSupported"),
    pytest.param(unsupported_version, "VERSION_NOT_SUPPORTED", id="VersionNotSupported"),
]

#: Makes the server answer one error.
Trigger = Callable[[Binding], Reply]


# === JSON-RPC binding (kit: jsonrpc/*, test_transport_behavior, test_error_handling) ============


def raw_rpc(http: httpx.Client, url: str, body: bytes, **headers: str) -> httpx.Response:
    sent = {**A2A_HEADERS, "content-type": "application/json", **headers}
    return http.post(url + "/", content=body, headers=sent)


def test_jsonrpc_fmt_001_json_rpc_2_0_envelopes(
    jsonrpc: JsonRpcBinding, http: httpx.Client, tck_url: str
) -> None:
    """JSONRPC-FMT-001: requests "MUST follow the standard JSON-RPC 2.0 format"."""
    reply = jsonrpc.send({"message": tck_message("tck-complete-task")})
    assert set(reply.response.json()) == {"jsonrpc", "id", "result"}
    reply = unknown_task(jsonrpc)
    assert set(reply.response.json()) == {"jsonrpc", "id", "error"}
    # Numeric ids are echoed as numbers.
    body = {"jsonrpc": "2.0", "id": 7, "method": "ListTasks", "params": {"pageSize": 1}}
    assert raw_rpc(http, tck_url, json.dumps(body).encode()).json()["id"] == 7
    # A request that is not JSON-RPC 2.0 is refused as such (-32600), with its id.
    for broken in (
        {"id": 8, "method": "GetTask", "params": {"id": "x"}},
        {"jsonrpc": "1.0", "id": 8, "method": "GetTask", "params": {"id": "x"}},
        {"jsonrpc": "2.0", "id": 8, "params": {"id": "x"}},
    ):
        document = raw_rpc(http, tck_url, json.dumps(broken).encode()).json()
        assert document["id"] == 8, document
        assert rpc_failure(document["error"]).code == -32600, document
    # So is a body that is not JSON (-32700, id null).
    document = raw_rpc(http, tck_url, b"{not json").json()
    assert document["id"] is None
    assert rpc_failure(document["error"]).code == -32700


def test_jsonrpc_fmt_002_content_type_is_application_json(
    jsonrpc: JsonRpcBinding, http: httpx.Client, tck_url: str
) -> None:
    """JSONRPC-FMT-002: "JSON-RPC requests and responses MUST use Content-Type
    application/json"."""
    for reply in (
        jsonrpc.send({"message": tck_message("tck-complete-task")}),
        unknown_task(jsonrpc),
    ):
        assert reply.response.headers["content-type"].startswith("application/json")
    # A request in another content type is refused, in JSON.
    refused = wrong_content_type(jsonrpc)
    assert media_type(refused.response) == "application/json"
    refused.error("CONTENT_TYPE_NOT_SUPPORTED")


#: The v1.0 JSON-RPC methods, each with params that reach the method (errors included).
V1_METHODS: Mapping[str, Mapping[str, Any]] = {
    "SendMessage": {"message": {}},
    "SendStreamingMessage": {"message": {}},
    "GetTask": {"id": "tck-nonexistent"},
    "ListTasks": {"pageSize": 1},
    "CancelTask": {"id": "tck-nonexistent"},
    "SubscribeToTask": {"id": "tck-nonexistent"},
    "CreateTaskPushNotificationConfig": {"taskId": "tck-nonexistent", "url": "https://a.example"},
    "GetTaskPushNotificationConfig": {"taskId": "tck-nonexistent", "id": "x"},
    "ListTaskPushNotificationConfigs": {"taskId": "tck-nonexistent"},
    "DeleteTaskPushNotificationConfig": {"taskId": "tck-nonexistent", "id": "x"},
    "GetExtendedAgentCard": {},
}


def test_jsonrpc_svc_001_pascal_case_method_names(jsonrpc: JsonRpcBinding) -> None:
    """JSONRPC-SVC-001: method names "MUST use PascalCase matching gRPC conventions"."""
    for method, params in V1_METHODS.items():
        reply = jsonrpc.call(method, params)
        assert reply.failure is None or reply.failure.code != -32601, (method, reply.failure)
    # Other spellings are not v1.0 methods: the v0.3 names, camelCase.
    for method in ("message/send", "tasks/get", "sendMessage", "get_task"):
        failure = jsonrpc.call(method, {"id": "x"}).failure
        assert failure is not None
        assert failure.code == -32601, (method, failure)


def test_jsonrpc_svc_002_service_parameters_are_headers(jsonrpc: JsonRpcBinding) -> None:
    """JSONRPC-SVC-002: service parameters "MUST be transmitted using standard HTTP request
    headers"."""
    extensions = "https://example.com/ext/v1,https://example.com/ext/v2"
    headers = {**A2A_HEADERS, "A2A-Extensions": extensions}
    task = jsonrpc.send({"message": tck_message("tck-complete-task")}, headers=headers).ok()
    assert task["task"]["status"]["state"] == COMPLETED
    # The version travels as a header too: the server reads it there.
    unsupported_version(jsonrpc).error("VERSION_NOT_SUPPORTED")


def test_jsonrpc_err_001_error_object(jsonrpc: JsonRpcBinding) -> None:
    """JSONRPC-ERR-001: errors use "the standard JSON-RPC 2.0 error object"; data is an array."""
    for reply in (unknown_task(jsonrpc), jsonrpc.call("NonExistentMethod", {})):
        error = reply.response.json()["error"]
        assert set(error) <= {"code", "message", "data"}, error
        assert isinstance(error["code"], int)
        assert isinstance(error["message"], str)
        assert isinstance(error.get("data", []), list)


@pytest.mark.parametrize(("trigger", "reason"), ERROR_TRIGGERS)
def test_jsonrpc_err_002_a2a_error_codes_range(
    jsonrpc: JsonRpcBinding, trigger: Trigger, reason: str
) -> None:
    """JSONRPC-ERR-002: A2A-specific errors "MUST use error codes in the range -32001 to
    -32099"."""
    code = trigger(jsonrpc).error(reason).code
    assert -32099 <= code <= -32001


@pytest.mark.parametrize(("trigger", "reason"), ERROR_TRIGGERS)
def test_jsonrpc_err_003_error_info_in_data(
    jsonrpc: JsonRpcBinding, trigger: Trigger, reason: str
) -> None:
    """JSONRPC-ERR-003: A2A errors "MUST include a google.rpc.ErrorInfo message in the data
    array"."""
    data = trigger(jsonrpc).response.json()["error"]["data"]
    [info] = [item for item in data if item["@type"] == ERROR_INFO_TYPE]
    assert info["reason"] == reason
    assert info["domain"] == ERROR_DOMAIN


def test_jsonrpc_sse_001_events_are_json_rpc_responses(jsonrpc: JsonRpcBinding) -> None:
    """JSONRPC-SSE-001: streaming "MUST use Server-Sent Events with Content-Type
    text/event-stream", each data a JSON-RPC response wrapping a StreamResponse."""
    # (The envelope of every event, with the request's id, is checked as it is read.)
    for prefix in ("tck-stream-001", "tck-message-response"):
        with jsonrpc.stream({"message": tck_message(prefix)}) as stream:
            assert stream.response.headers["content-type"].startswith("text/event-stream")
            events = stream.rest()
        assert events
        for event in events:
            assert not shape_problems("stream_response", event)


@pytest.mark.parametrize(("trigger", "reason"), ERROR_TRIGGERS)
def test_jsonrpc_sse_002_error_codes(
    jsonrpc: JsonRpcBinding, trigger: Trigger, reason: str
) -> None:
    """JSONRPC-SSE-002: "All A2A-specific error types MUST be mapped to their specified
    JSON-RPC error codes"."""
    failure = trigger(jsonrpc).error(reason)
    assert failure.code == A2A_ERRORS[reason][0]


# === HTTP+JSON binding (kit: http_json/*, test_transport_behavior, test_error_handling) =========

TENANTS = [pytest.param("", id="root"), pytest.param("tck-tenant", id="tenant")]


@pytest.mark.parametrize("tenant", TENANTS)
def test_http_json_url_001_every_route(rest: RestBinding, receiver: Receiver, tenant: str) -> None:
    """HTTP_JSON-URL-001: the binding "MUST use the specified RESTful resource-based URL
    patterns for all operations"."""
    client = rest.in_tenant(f"{tenant}-{new_id()[:8]}") if tenant else rest
    waiting = waiting_task(client)  # POST /message:send
    task_id = waiting["id"]
    assert client.get(task_id).ok()["id"] == task_id  # GET /tasks/{id}
    assert [t["id"] for t in client.list(contextId=waiting["contextId"]).ok()["tasks"]] == [
        task_id
    ]  # GET /tasks
    config = webhook(receiver)
    client.create_push(task_id, config).ok()  # POST /tasks/{id}/pushNotificationConfigs
    assert client.get_push(task_id, config["id"]).ok()["id"] == config["id"]  # GET …/{id}
    assert [c["id"] for c in client.list_push(task_id).ok()["configs"]] == [config["id"]]
    client.delete_push(task_id, config["id"]).ok()  # DELETE …/{id}
    with client.subscribe(task_id) as stream:  # POST /tasks/{id}:subscribe
        first = stream.next()
        assert first is not None
        assert first["task"]["id"] == task_id
    assert client.cancel(task_id).ok()["status"]["state"] == CANCELED  # POST /tasks/{id}:cancel
    with client.stream({"message": tck_message("tck-message-response")}) as stream:
        assert [kind_of(e) for e in stream.rest()] == ["message"]  # POST /message:stream
    client.extended_card().error("UNSUPPORTED_OPERATION")  # GET /extendedAgentCard


@pytest.mark.parametrize("tenant", TENANTS)
def test_http_json_url_001_subscribe_by_get(
    rest: RestBinding, http: httpx.Client, tenant: str
) -> None:
    """HTTP_JSON-URL-001: SubscribeToTask is ``GET /tasks/{id}:subscribe`` in the proto's
    HTTP annotation (the spec text says POST; this server accepts both)."""
    client = rest.in_tenant(f"{tenant}-{new_id()[:8]}") if tenant else rest
    waiting = waiting_task(client)
    prefix = f"/{client.tenant}" if client.tenant else ""
    url = f"{rest.url}{prefix}/tasks/{waiting['id']}:subscribe"
    with http.stream("GET", url, headers=dict(A2A_HEADERS)) as response:
        assert response.status_code == 200, response.read()
        assert media_type(response) == "text/event-stream"
        stream = Stream(client, response, None)
        first = stream.next()
    assert first is not None
    assert first["task"]["id"] == waiting["id"]


#: Each route and the HTTP methods it takes.
ROUTE_METHODS = [
    ("/message:send", "POST"),
    ("/message:stream", "POST"),
    ("/tasks", "GET"),
    ("/tasks/tck-some-task", "GET"),
    ("/tasks/tck-some-task:cancel", "POST"),
    ("/tasks/tck-some-task:subscribe", "GET, POST"),
    ("/tasks/tck-some-task/pushNotificationConfigs", "GET, POST"),
    ("/tasks/tck-some-task/pushNotificationConfigs/tck-config", "DELETE, GET"),
    ("/extendedAgentCard", "GET"),
]


@pytest.mark.parametrize(
    ("verb", "path", "allowed"),
    [
        pytest.param(
            verb,
            path,
            allowed,
            id=f"{verb} {path.replace('tck-some-task', '{id}')}",
        )
        for path, allowed in ROUTE_METHODS
        for verb in ("GET", "POST", "DELETE", "PUT")
        if verb not in allowed
    ],
)
def test_http_json_url_002_standard_http_methods(
    http: httpx.Client, tck_url: str, verb: str, path: str, allowed: str
) -> None:
    """HTTP_JSON-URL-002: the binding "MUST use standard HTTP verbs: GET for retrieval, POST
    for creation/actions, DELETE for removal"."""
    response = http.request(verb, tck_url + path, headers=dict(A2A_HEADERS))
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == allowed


def test_http_json_svc_001_content_type_is_application_json(rest: RestBinding) -> None:
    """HTTP_JSON-SVC-001: the binding "MUST use Content-Type application/json for requests and
    responses"."""
    for reply in (rest.send({"message": tck_message("tck-complete-task")}), unknown_task(rest)):
        assert media_type(reply.response) == "application/json"
    # The v1.0.1 media type for requests is accepted too; others are refused.
    params = {"message": tck_message("tck-complete-task")}
    assert rest.send(params, content_type="application/a2a+json").ok()["task"]
    wrong_content_type(rest).error("CONTENT_TYPE_NOT_SUPPORTED")


def test_http_json_svc_002_service_parameters_are_headers(rest: RestBinding) -> None:
    """HTTP_JSON-SVC-002: service parameters "MUST be transmitted using standard HTTP request
    headers"."""
    extensions = "https://example.com/ext/v1,https://example.com/ext/v2"
    headers = {**A2A_HEADERS, "A2A-Extensions": extensions}
    task = rest.send({"message": tck_message("tck-complete-task")}, headers=headers).ok()
    assert task["task"]["status"]["state"] == COMPLETED
    unsupported_version(rest).error("VERSION_NOT_SUPPORTED")


def test_http_json_qp_001_camel_case_query_parameters(rest: RestBinding) -> None:
    """HTTP_JSON-QP-001: "Query parameter names MUST use camelCase"."""
    created = tasks_in_context(rest, 2, "tck-artifact-text")
    rejected = send_task(rest, "tck-reject-task", contextId=created[0]["contextId"])
    query = {"contextId": created[0]["contextId"], "status": COMPLETED}
    listing = rest.list(**query, pageSize=1, historyLength=0, includeArtifacts=True).ok()
    [task] = listing["tasks"]
    assert task["id"] == created[-1]["id"]
    assert "history" not in task
    assert task["artifacts"]
    assert listing["pageSize"] == 1
    assert listing["totalSize"] == 2
    following = rest.list(**query, pageSize=1, pageToken=listing["nextPageToken"]).ok()
    assert [t["id"] for t in following["tasks"]] == [created[0]["id"]]
    assert len(rest.get(rejected["id"], history_length=1).ok()["history"]) == 1


def test_http_json_err_001_google_rpc_status_errors(rest: RestBinding) -> None:
    """HTTP_JSON-ERR-001: errors "MUST use the AIP-193 representation" (code, status, message,
    details)."""
    task_id = f"tck-nonexistent-{new_id()}"
    response = rest.get(task_id).response
    assert response.status_code == 404
    assert media_type(response) == "application/json"
    error = response.json()["error"]
    assert set(error) == {"code", "status", "message", "details"}
    assert error["code"] == 404
    assert error["status"] == "NOT_FOUND"
    assert task_id in error["message"]
    assert isinstance(error["details"], list)


@pytest.mark.parametrize(("trigger", "reason"), ERROR_TRIGGERS)
def test_http_json_err_002_error_info_in_details(
    rest: RestBinding, trigger: Trigger, reason: str
) -> None:
    """HTTP_JSON-ERR-002: A2A errors "MUST include a google.rpc.ErrorInfo message in the details
    array"."""
    details = trigger(rest).response.json()["error"]["details"]
    [info] = [item for item in details if item["@type"] == ERROR_INFO_TYPE]
    assert info["reason"] == reason
    assert info["domain"] == ERROR_DOMAIN


@pytest.mark.parametrize(("trigger", "reason"), ERROR_TRIGGERS)
def test_http_json_status_001_http_status_codes(
    rest: RestBinding, trigger: Trigger, reason: str
) -> None:
    """HTTP_JSON-STATUS-001: "Each A2A error type MUST map to the HTTP status code specified"."""
    reply = trigger(rest)
    reply.error(reason)
    assert reply.response.status_code == A2A_ERRORS[reason][1]


def test_http_json_status_001_success_is_2xx(rest: RestBinding) -> None:
    """HTTP_JSON-STATUS-001: successful operations answer a 2xx status."""
    reply = rest.send({"message": tck_message("tck-complete-task")})
    assert reply.response.status_code == 200
    assert rest.get(reply.ok()["task"]["id"]).response.status_code == 200


def test_http_json_sse_001_events_are_stream_responses(rest: RestBinding) -> None:
    """HTTP_JSON-SSE-001: REST streaming "MUST use Server-Sent Events" whose data are
    StreamResponse JSON."""
    with rest.stream({"message": tck_message("tck-stream-001")}) as stream:
        assert stream.response.headers["content-type"].startswith("text/event-stream")
        events = stream.rest()  # bare StreamResponse objects, no JSON-RPC envelope
    assert [kind_of(e) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    for event in events:
        assert not shape_problems("stream_response", event)


# === Versioning (kit: test_error_handling, jsonrpc/test_error_codes) ============================


@pytest.mark.parametrize("version", ["99.0", "2.0", "1.1", "one"])
def test_ver_server_002_unsupported_versions_are_refused(binding: Binding, version: str) -> None:
    """VER-SERVER-002: an unsupported version: "agents MUST return a VersionNotSupportedError"."""
    message = tck_message("tck-complete-task")
    failure = binding.send({"message": message}, headers={"A2A-Version": version}).error(
        "VERSION_NOT_SUPPORTED"
    )
    assert failure.metadata.get("requestedVersion") == version


@pytest.mark.parametrize("headers", [{"A2A-Version": ""}, {}], ids=["empty", "absent"])
def test_ver_server_003_empty_version_means_0_3(
    binding: Binding, http: httpx.Client, tck_url: str, headers: dict[str, str]
) -> None:
    """VER-SERVER-003: "Agents MUST interpret an empty A2A-Version value as version 0.3"."""
    # A v1.0 request asked as 0.3 is refused as a version this interface does not serve…
    message = tck_message("tck-complete-task")
    failure = binding.send({"message": message}, headers=headers).error("VERSION_NOT_SUPPORTED")
    assert failure.metadata.get("requestedVersion") == "0.3"
    if binding.name == JSONRPC:
        # …while a v0.3 request is served, with v0.3 semantics (its kinds, its state names).
        legacy = {
            "kind": "message",
            "role": "user",
            "parts": [{"kind": "text", "text": "v0.3"}],
            "messageId": f"tck-complete-task-{new_id()}",
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": legacy}}
        sent = {"content-type": "application/json", **headers}
        document = http.post(tck_url + "/", content=json.dumps(body).encode(), headers=sent).json()
        assert document["result"]["kind"] == "task", document
        assert document["result"]["status"]["state"] in ("submitted", "working", "completed")


# === Beyond the kit: rules it does not check, next to the ones it does ==========================


@pytest.mark.parametrize("version", ["1.0", "1.0.0", "1.0.7"])
def test_ver_client_002_patch_versions_do_not_matter(binding: Binding, version: str) -> None:
    """VER-CLIENT-002: "Patch version numbers MUST NOT be considered when … servers negotiate"."""
    message = tck_message("tck-complete-task")
    task = binding.send({"message": message}, headers={"A2A-Version": version}).ok()["task"]
    assert task["status"]["state"] == COMPLETED
