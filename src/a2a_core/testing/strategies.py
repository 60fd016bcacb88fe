"""hypothesis strategies for A2A: the data model, and requests in every dialect and binding.

``pip install a2a-sansio[testing]`` brings hypothesis. Two families:

* **valid**: model objects (:func:`messages`, :func:`tasks`, stream events, agent cards…)
  and whole requests,
  :func:`requests` (an :class:`~a2a_core.transport.HttpRequest` for any method of a dialect: v1.0
  over JSON-RPC or HTTP+JSON, v0.3 or v0.1 "legacy" over JSON-RPC). They are written the way the
  protocol says, from the model through the core's own codec and dialect tables, so a server that
  refuses one is wrong;
* **near-valid**: :func:`near_valid` takes a valid JSON-RPC request and gets exactly one thing
  wrong (a field of the wrong JSON type, a required field missing, an unknown enum name, a bad
  envelope), and says where. A server must answer each with a protocol error, never a result,
  a crash or a 500.

Fuzz an agent with the first family through :class:`~a2a_core.testing.Driver`, or a transport
with both over the wire.
"""

import json
import string
from collections.abc import Callable
from datetime import UTC
from typing import Any, Literal
from urllib.parse import quote, urlencode

import attrs
from hypothesis import strategies as st

from a2a_core import (
    Artifact,
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.card import AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill
from a2a_core.transport import HttpRequest, V1Codec
from a2a_core.wire._v03 import message_out

__all__ = [
    "Dialect",
    "Hostile",
    "NearValid",
    "agent_cards",
    "artifact_updates",
    "artifacts",
    "hostile",
    "ids",
    "json_values",
    "messages",
    "near_valid",
    "parts",
    "push_configs",
    "requests",
    "send_requests",
    "status_updates",
    "stream_events",
    "task_statuses",
    "tasks",
    "v1_calls",
]

Dialect = Literal["1.0", "1.0-rest", "0.3", "legacy"]

_CODEC = V1Codec()

# --- the data model ----------------------------------------------------------------------------

#: Ids as clients write them: short, printable, sometimes with characters a path must escape.
ids = st.text(alphabet=string.ascii_letters + string.digits + "-_.:~ %/", min_size=1, max_size=24)
_texts = st.text(max_size=40)
_keys = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=8)

#: JSON values (no floats: JSON numbers and protobuf's doubles disagree on what an int is).
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | _texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=6,
)
_objects = st.dictionaries(_keys, json_values, max_size=3)
_metadata = st.none() | _objects
_media_types = st.sampled_from(["", "text/plain", "application/json", "image/png"])
_urls = st.builds(lambda path: f"https://files.example.com/{quote(path)}", _texts)


def parts() -> st.SearchStrategy[Part]:
    """Text, data (a JSON object), URL and raw-bytes parts."""
    return st.one_of(
        st.builds(Part, text=_texts, metadata=_metadata, media_type=_media_types),
        st.builds(Part, data=_objects, metadata=_metadata),
        st.builds(Part, url=_urls, filename=_texts, media_type=_media_types),
        st.builds(Part, raw=st.binary(min_size=1, max_size=24), filename=_texts),
    )


def messages(role: Role | None = None) -> st.SearchStrategy[Message]:
    """Messages (of ``role``, or either role), not tied to any task."""
    return st.builds(
        Message,
        message_id=ids,
        role=st.just(role) if role is not None else st.sampled_from([Role.USER, Role.AGENT]),
        parts=st.lists(parts(), min_size=1, max_size=3).map(tuple),
        metadata=_metadata,
        extensions=st.lists(_urls, max_size=1).map(tuple),
    )


def artifacts() -> st.SearchStrategy[Artifact]:
    return st.builds(
        Artifact,
        artifact_id=ids,
        parts=st.lists(parts(), min_size=1, max_size=3).map(tuple),
        name=_texts,
        description=_texts,
        metadata=_metadata,
    )


_STATES = [s for s in TaskState if s is not TaskState.UNSPECIFIED]
#: Times as the wire carries them: UTC, to the millisecond.
_timestamps = st.datetimes(timezones=st.just(UTC)).map(
    lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)
)


def task_statuses() -> st.SearchStrategy[TaskStatus]:
    return st.builds(
        TaskStatus,
        state=st.sampled_from(_STATES),
        message=st.none() | messages(Role.AGENT),
        timestamp=st.none() | _timestamps,
    )


def tasks() -> st.SearchStrategy[Task]:
    return st.builds(
        Task,
        id=ids,
        status=task_statuses(),
        context_id=ids,
        artifacts=st.lists(artifacts(), max_size=2).map(tuple),
        history=st.lists(messages(), max_size=3).map(tuple),
        metadata=_metadata,
    )


def status_updates() -> st.SearchStrategy[TaskStatusUpdateEvent]:
    return st.builds(
        TaskStatusUpdateEvent,
        task_id=ids,
        context_id=ids,
        status=task_statuses(),
        metadata=_metadata,
    )


def artifact_updates() -> st.SearchStrategy[TaskArtifactUpdateEvent]:
    return st.builds(
        TaskArtifactUpdateEvent,
        task_id=ids,
        context_id=ids,
        artifact=artifacts(),
        append=st.booleans(),
        last_chunk=st.booleans(),
        metadata=_metadata,
    )


StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent


def stream_events() -> st.SearchStrategy[StreamEvent]:
    """What a stream (or a webhook) carries: a task, a message, or an update of either kind."""
    return st.one_of(tasks(), messages(Role.AGENT), status_updates(), artifact_updates())


def agent_cards() -> st.SearchStrategy[AgentCard]:
    """Agent cards with skills, capabilities and interfaces (no security schemes)."""
    skills = st.builds(
        AgentSkill,
        id=ids,
        name=_texts,
        description=_texts,
        tags=st.lists(_keys, max_size=3).map(tuple),
        examples=st.lists(_texts, max_size=2).map(tuple),
    )
    interfaces = st.builds(
        AgentInterface,
        url=st.just("https://agents.example.com/a2a"),
        protocol_binding=st.sampled_from(["JSONRPC", "HTTP+JSON", "GRPC"]),
        protocol_version=st.sampled_from(["1.0", "0.3"]),
    )
    capabilities = st.builds(
        AgentCapabilities,
        streaming=st.none() | st.booleans(),
        push_notifications=st.none() | st.booleans(),
        extended_agent_card=st.none() | st.booleans(),
    )
    return st.builds(
        AgentCard,
        name=_texts.filter(bool),
        description=_texts,
        version=st.sampled_from(["1.0.0", "0.1", "2026.11"]),
        supported_interfaces=st.lists(interfaces, max_size=2).map(tuple),
        capabilities=capabilities,
        skills=st.lists(skills, max_size=3).map(tuple),
        provider=st.none()
        | st.builds(AgentProvider, url=st.just("https://example.com"), organization=_texts),
        documentation_url=st.none() | st.just("https://example.com/docs"),
    )


def push_configs(
    *, task_id: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[TaskPushNotificationConfig]:
    """Webhook configs with public https URLs (what the SSRF guard lets through)."""
    return st.builds(
        TaskPushNotificationConfig,
        url=st.builds(lambda path: f"https://hooks.example.com/{quote(path)}", _texts),
        id=st.just("") | ids,
        task_id=task_id if task_id is not None else ids,
        token=st.just("") | _texts.filter(str.isprintable),
        authentication=st.none()
        | st.builds(AuthenticationInfo, scheme=st.just("Bearer"), credentials=_keys),
    )


# --- requests: v1.0 ------------------------------------------------------------------------------

_history = st.none() | st.integers(0, 20)


def send_requests(
    message: st.SearchStrategy[Message] | None = None,
) -> st.SearchStrategy[SendMessageRequest]:
    """SendMessage requests of a user message (``message`` chooses it)."""
    configuration = st.builds(
        SendMessageConfiguration,
        accepted_output_modes=st.lists(_media_types.filter(bool), max_size=2).map(tuple),
        history_length=_history,
        return_immediately=st.booleans(),
        task_push_notification_config=st.none() | push_configs(task_id=st.just("")),
    )
    return st.builds(
        SendMessageRequest,
        message=message if message is not None else messages(Role.USER),
        configuration=st.none() | configuration,
        metadata=_metadata,
    )


def v1_calls() -> st.SearchStrategy[tuple[str, Any]]:
    """(v1.0 method name, request object) for every method of v1.0."""
    listing = st.builds(
        ListTasksRequest,
        context_id=st.just("") | ids,
        status=st.sampled_from(list(TaskState)),
        page_size=st.none() | st.integers(1, 100),
        history_length=_history,
        include_artifacts=st.none() | st.booleans(),
    )
    config_id = {"task_id": ids, "id": ids}
    return st.one_of(
        st.tuples(st.just("SendMessage"), send_requests()),
        st.tuples(st.just("SendStreamingMessage"), send_requests()),
        st.tuples(st.just("GetTask"), st.builds(GetTaskRequest, id=ids, history_length=_history)),
        st.tuples(st.just("ListTasks"), listing),
        st.tuples(st.just("CancelTask"), st.builds(CancelTaskRequest, id=ids)),
        st.tuples(st.just("SubscribeToTask"), st.builds(SubscribeToTaskRequest, id=ids)),
        st.tuples(st.just("CreateTaskPushNotificationConfig"), push_configs()),
        st.tuples(
            st.just("GetTaskPushNotificationConfig"),
            st.builds(GetTaskPushNotificationConfigRequest, **config_id),
        ),
        st.tuples(
            st.just("ListTaskPushNotificationConfigs"),
            st.builds(ListTaskPushNotificationConfigsRequest, task_id=ids),
        ),
        st.tuples(
            st.just("DeleteTaskPushNotificationConfig"),
            st.builds(DeleteTaskPushNotificationConfigRequest, **config_id),
        ),
        st.tuples(st.just("GetExtendedAgentCard"), st.just(GetExtendedAgentCardRequest())),
    )


def _rpc(method: str, params: Any, rpc_id: int | str, version: str | None) -> HttpRequest:
    headers = {"content-type": "application/json"}
    if version is not None:
        headers["a2a-version"] = version
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    return HttpRequest("POST", "/", headers, json.dumps(body).encode())


def _query(params: dict[str, Any]) -> str:
    """Query parameters as the binding writes them (booleans as JSON does)."""
    return urlencode({k: json.dumps(v) if isinstance(v, bool) else v for k, v in params.items()})


def _rest(method: str, request: Any) -> HttpRequest:
    """The HTTP+JSON form of a v1.0 call (routes of the spec's binding)."""
    params = _CODEC.encode(request)
    json_headers = {"content-type": "application/json", "a2a-version": "1.0"}
    plain = {"a2a-version": "1.0"}

    def path_id(name: str) -> str:
        return quote(str(params.pop(name)), safe="")

    match method:
        case "SendMessage" | "SendStreamingMessage":
            verb = "send" if method == "SendMessage" else "stream"
            return HttpRequest(
                "POST", f"/message:{verb}", json_headers, json.dumps(params).encode()
            )
        case "GetTask":
            path = f"/tasks/{path_id('id')}"
            return HttpRequest("GET", path, plain, b"", _query(params))
        case "ListTasks":
            return HttpRequest("GET", "/tasks", plain, b"", _query(params))
        case "CancelTask":
            path = f"/tasks/{path_id('id')}:cancel"
            return HttpRequest("POST", path, json_headers, json.dumps(params).encode())
        case "SubscribeToTask":
            return HttpRequest("GET", f"/tasks/{path_id('id')}:subscribe", plain)
        case "CreateTaskPushNotificationConfig":
            path = f"/tasks/{path_id('taskId')}/pushNotificationConfigs"
            return HttpRequest("POST", path, json_headers, json.dumps(params).encode())
        case "GetTaskPushNotificationConfig" | "DeleteTaskPushNotificationConfig":
            verb = "GET" if method.startswith("Get") else "DELETE"
            path = f"/tasks/{path_id('taskId')}/pushNotificationConfigs/{path_id('id')}"
            return HttpRequest(verb, path, plain)
        case "ListTaskPushNotificationConfigs":
            return HttpRequest("GET", f"/tasks/{path_id('taskId')}/pushNotificationConfigs", plain)
    return HttpRequest("GET", "/extendedAgentCard", plain)


# --- requests: v0.3 and v0.1 ---------------------------------------------------------------------

#: v0.3 keeps only JSON objects in data parts, so those are what old dialects get.
_V03_MESSAGES = messages(Role.USER)


def _v03_message(message: Message) -> dict[str, Any]:
    """A v0.3 message: ``kind`` discriminators (v0.1's ``type`` is for the legacy dialect)."""
    wire = message_out(_CODEC.encode(message))
    wire["parts"] = [{k: v for k, v in p.items() if k != "type"} for p in wire["parts"]]
    return wire


def _v03_send(request: SendMessageRequest) -> dict[str, Any]:
    params: dict[str, Any] = {"message": _v03_message(request.message)}
    configuration: dict[str, Any] = {}
    if request.configuration is not None:
        config = request.configuration
        configuration["blocking"] = not config.return_immediately
        if config.history_length is not None:
            configuration["historyLength"] = config.history_length
        if config.accepted_output_modes:
            configuration["acceptedOutputModes"] = list(config.accepted_output_modes)
    if configuration:
        params["configuration"] = configuration
    if request.metadata is not None:
        params["metadata"] = request.metadata
    return params


def _v03_push(config: TaskPushNotificationConfig) -> dict[str, Any]:
    inner = {k: v for k, v in _CODEC.encode(config).items() if k in ("id", "url", "token")}
    return {"taskId": config.task_id, "pushNotificationConfig": inner}


def _v03_calls() -> st.SearchStrategy[tuple[str, Any]]:
    task = st.fixed_dictionaries({"id": ids}, optional={"historyLength": st.integers(0, 20)})
    config_ref = st.fixed_dictionaries({"id": ids}, optional={"pushNotificationConfigId": ids})
    sends = send_requests(_V03_MESSAGES).map(_v03_send)
    return st.one_of(
        st.tuples(st.just("message/send"), sends),
        st.tuples(st.just("message/stream"), sends),
        st.tuples(st.just("tasks/get"), task),
        st.tuples(st.just("tasks/cancel"), st.fixed_dictionaries({"id": ids})),
        st.tuples(st.just("tasks/resubscribe"), st.fixed_dictionaries({"id": ids})),
        st.tuples(st.just("tasks/pushNotificationConfig/set"), push_configs().map(_v03_push)),
        st.tuples(st.just("tasks/pushNotificationConfig/get"), config_ref),
        st.tuples(st.just("tasks/pushNotificationConfig/list"), st.fixed_dictionaries({"id": ids})),
        st.tuples(st.just("tasks/pushNotificationConfig/delete"), config_ref),
    )


def _legacy_message(message: Message) -> dict[str, Any]:
    """A v0.1 message: a role and ``type``d parts, no message id."""
    wire = message_out(_CODEC.encode(message))
    return {
        "role": wire["role"],
        "parts": [{k: v for k, v in p.items() if k != "kind"} for p in wire["parts"]],
    }


def _legacy_calls() -> st.SearchStrategy[tuple[str, Any]]:
    send = st.fixed_dictionaries(
        {"id": ids, "message": _V03_MESSAGES.map(_legacy_message)},
        optional={"sessionId": ids, "historyLength": st.integers(0, 20), "metadata": _objects},
    )
    return st.one_of(
        st.tuples(st.just("tasks/send"), send),
        st.tuples(st.just("tasks/sendSubscribe"), send),
        st.tuples(st.just("tasks/get"), st.fixed_dictionaries({"id": ids})),
        st.tuples(st.just("tasks/cancel"), st.fixed_dictionaries({"id": ids})),
        st.tuples(
            st.just("tasks/pushNotification/set"),
            push_configs().map(
                lambda c: {
                    "id": c.task_id,
                    "pushNotificationConfig": _v03_push(c)["pushNotificationConfig"],
                }
            ),
        ),
        st.tuples(st.just("tasks/pushNotification/get"), st.fixed_dictionaries({"id": ids})),
    )


_rpc_ids = st.integers(0, 2**31) | ids


def requests(dialect: Dialect = "1.0") -> st.SearchStrategy[HttpRequest]:
    """Valid requests of ``dialect``: "1.0" (JSON-RPC), "1.0-rest" (HTTP+JSON), "0.3" or
    "legacy" (v0.1; JSON-RPC without ``A2A-Version``)."""
    if dialect == "1.0":
        return st.builds(
            lambda call, rpc_id: _rpc(call[0], _CODEC.encode(call[1]), rpc_id, "1.0"),
            v1_calls(),
            _rpc_ids,
        )
    if dialect == "1.0-rest":
        return v1_calls().map(lambda call: _rest(*call))
    calls = _v03_calls() if dialect == "0.3" else _legacy_calls()
    version = st.sampled_from(["0.3", None]) if dialect == "0.3" else st.just(None)
    return st.builds(
        lambda call, rpc_id, v: _rpc(call[0], call[1], rpc_id, v), calls, _rpc_ids, version
    )


# --- near-valid requests -------------------------------------------------------------------------


@attrs.frozen
class NearValid:
    """A request with exactly one thing wrong: ``path`` (a wire path such as
    ``params.message.parts``, or ``body``) and what was done to it (``change``)."""

    request: HttpRequest
    path: str
    change: str


#: Wrong JSON types, keyed by the type a field should have.
_WRONG: dict[type, list[Any]] = {
    str: [17, {"a": 1}, ["x"], True],
    int: ["seven", {"n": 1}, [1], 1.5],
    bool: ["yes", 1, {"b": True}],
    list: ["not a list", {"a": 1}, 3],
    dict: ["not an object", [1, 2], 3],
}


def _fields(value: Any, path: str) -> list[tuple[str, Any]]:
    """Every (path, value) inside ``value``, depth first."""
    found = [(path, value)]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _fields(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _fields(inner, f"{path}[{index}]")
    return found


#: Fields whose type the wire does not fix (free-form JSON), where any value is valid, and
#: v0.3's message ``kind``, which says what the field says already and is not checked.
_FREE = ("metadata", ".data", "params.message.kind")


def _mutations(body: dict[str, Any]) -> list[tuple[str, str, Callable[[dict[str, Any]], Any]]]:
    """(path, change, a function that returns the changed body) for every way of breaking it."""
    found: list[tuple[str, str, Callable[[dict[str, Any]], Any]]] = [
        ("body", "not JSON", lambda b: b"{not json"),
        ("body", "a JSON array, not an object", lambda b: json.dumps([b]).encode()),
        ("jsonrpc", "version 1.0", lambda b: {**b, "jsonrpc": "1.0"}),
        ("method", "no such method", lambda b: {**b, "method": "NoSuchMethod"}),
        ("method", "not a string", lambda b: {**b, "method": 42}),
        ("id", "an object", lambda b: {**b, "id": {"x": 1}}),
        ("params", "not an object", lambda b: {**b, "params": ["x"]}),
    ]
    for path, value in _fields(body.get("params"), "params"):
        if path == "params" or any(free in path for free in _FREE):
            continue
        for kind, wrong in _WRONG.items():
            if type(value) is kind:
                for bad in wrong[:2]:
                    found.append(
                        (path, f"{bad!r} where a {kind.__name__} belongs", _setter(path, bad))
                    )
        if isinstance(value, str) and path.endswith((".role", ".state", "status")):
            found.append((path, "an unknown enum name", _setter(path, "NOT_A_VALUE")))
    for required in _REQUIRED.get(body.get("method"), ()):
        if _get(body, required) is not _MISSING:
            found.append((required, "missing", _deleter(required)))
    return found


_SENDS = ("params.message", "params.message.parts")
_BY_ID = ("params.id",)
#: Fields each method cannot do without (v0.1's sends may leave the task id to the server).
_REQUIRED: dict[Any, tuple[str, ...]] = {
    **dict.fromkeys(
        ["SendMessage", "SendStreamingMessage", "message/send", "message/stream"], _SENDS
    ),
    **dict.fromkeys(["tasks/send", "tasks/sendSubscribe"], _SENDS),
    **dict.fromkeys(["GetTask", "CancelTask", "SubscribeToTask"], _BY_ID),
    **dict.fromkeys(["tasks/get", "tasks/cancel", "tasks/resubscribe"], _BY_ID),
}


_MISSING = object()


def _steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    for piece in path.replace("]", "").replace("[", ".").split("."):
        steps.append(int(piece) if piece.isdigit() else piece)
    return steps


def _get(body: Any, path: str) -> Any:
    for step in _steps(path):
        try:
            body = body[step]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return body


def _setter(path: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    def change(body: dict[str, Any]) -> Any:
        copy = json.loads(json.dumps(body))
        *parents, last = _steps(path)
        target = copy
        for step in parents:
            target = target[step]
        target[last] = value
        return copy

    return change


def _deleter(path: str) -> Callable[[dict[str, Any]], Any]:
    def change(body: dict[str, Any]) -> Any:
        copy = json.loads(json.dumps(body))
        *parents, last = _steps(path)
        target = copy
        for step in parents:
            target = target[step]
        del target[last]
        return copy

    return change


@st.composite
def near_valid(draw: st.DrawFn, dialect: Dialect = "1.0") -> NearValid:
    """A JSON-RPC request of ``dialect`` ("1.0", "0.3" or "legacy") with one thing wrong."""
    valid = draw(requests(dialect))
    body = json.loads(valid.body)
    path, change, apply = draw(st.sampled_from(_mutations(body)))
    changed = apply(body)
    raw = changed if isinstance(changed, bytes) else json.dumps(changed).encode()
    return NearValid(attrs.evolve(valid, body=raw), path, change)


# --- hostile requests ----------------------------------------------------------------------------


@attrs.frozen
class Hostile:
    """A request built to hurt: a valid one with one field (``path``, or ``body`` for the bytes
    themselves) replaced by something a careless server chokes on (``change`` says what).

    What a server owes every one of them: a protocol error or a success, never a 5xx, a
    traceback or a server that stops answering; and nothing it stores may break a later read.
    """

    request: HttpRequest
    path: str
    change: str


#: A placeholder put where the hostile bytes go: the bytes are spliced in after encoding, so
#: that they can be what no JSON encoder would write (a lone surrogate escape, nesting deeper
#: than the encoder goes, ``NaN``, invalid UTF-8).
_SPLICE = "\u0000hostile\u0000"
_SPLICED = json.dumps(_SPLICE).encode()


def _nested(depth: int, opener: bytes, closer: bytes) -> bytes:
    return opener * depth + b"0" + closer * depth


def _hostile_fragments() -> st.SearchStrategy[tuple[str, bytes]]:
    """(what it is, its raw JSON bytes)."""
    text = st.text(st.characters(codec=None), max_size=12)  # lone surrogates included
    return st.one_of(
        st.sampled_from(
            [
                ("a lone high surrogate escape", b'"\\ud800"'),
                ("a lone low surrogate escape", b'"x\\udfffy"'),
                ("surrogates in the wrong order", b'"\\udc00\\ud800"'),
                ("CESU-8 surrogate bytes", b'"\xed\xa0\x80"'),
                ("an invalid UTF-8 byte", b'"\xff"'),
                ("an overlong UTF-8 form", b'"\xc0\xaf"'),
                ("NaN", b"NaN"),
                ("Infinity", b"-Infinity"),
                ("a number too large for a double", b"1e999"),
                ("an integer of 5,000 digits", b"9" * 5000),
                ("an integer of 400 digits", b"1" + b"0" * 400),
                ("negative zero", b"-0.0"),
                ("a duplicate key", b'{"a":1,"a":{"b":2}}'),
                ("a NUL character", b'"\\u0000"'),
                ("control characters", b'"\\r\\n\\t\\b\\f"'),
                ("an empty key", b'{"":""}'),
                ("null", b"null"),
                ("an empty array", b"[]"),
                ("an empty object", b"{}"),
            ]
        ),
        st.builds(
            lambda depth, kind: (f"{kind} nested {depth} deep", _nested(depth, *_BRACKETS[kind])),
            st.sampled_from([40, 63, 64, 65, 100, 322, 323, 400, 999, 1000, 5000, 60_000]),
            st.sampled_from(sorted(_BRACKETS)),
        ),
        st.builds(
            lambda size: (f"a string of {size} characters", json.dumps("é" * size).encode()),
            st.sampled_from([10_000, 300_000]),
        ),
        st.builds(
            lambda count: (f"an array of {count} items", b"[" + b"0," * (count - 1) + b"0]"),
            st.sampled_from([1_000, 10_001, 200_000]),
        ),
        st.builds(
            lambda count: (
                f"an object of {count} keys",
                json.dumps({f"k{i}": i for i in range(count)}).encode(),
            ),
            st.sampled_from([100, 20_000]),
        ),
        st.builds(lambda value: ("any text", json.dumps(value).encode()), text),
        st.builds(lambda value: ("any JSON value", json.dumps(value).encode()), json_values),
    )


_LONE_KEY = "(a lone surrogate)"
_BRACKETS = {"arrays": (b"[", b"]"), "objects": (b'{"a":', b"}")}


def _byte_mutations(raw: bytes) -> st.SearchStrategy[tuple[str, bytes]]:
    """Damage to the bytes of a whole body."""
    cut = st.integers(0, max(len(raw) - 1, 0))
    return st.one_of(
        st.builds(lambda at: (f"cut at byte {at}", raw[:at]), cut),
        st.builds(
            lambda at, byte: (
                f"byte {at} set to 0x{byte:02X}",
                raw[:at] + bytes([byte]) + raw[at + 1 :],
            ),
            cut,
            st.integers(0, 255),
        ),
        st.builds(
            lambda at: (f"CESU-8 surrogate bytes at {at}", raw[:at] + b"\xed\xb0\x80" + raw[at:]),
            cut,
        ),
        st.just(("a UTF-16 body", raw.decode("utf-8", "replace").encode("utf-16"))),
        st.just(("a UTF-8 byte order mark", b"\xef\xbb\xbf" + raw)),
        st.just(("10,000 spaces of padding", b" " * 10_000 + raw)),
        st.binary(max_size=64).map(lambda junk: ("random bytes", junk)),
    )


def _with_fragment(body: Any, path: str) -> bytes:
    """``body`` encoded with the value at ``path`` replaced by :data:`_SPLICE`."""
    return json.dumps(_setter(path, _SPLICE)(body)).encode()


@st.composite
def hostile(draw: st.DrawFn, dialect: Dialect = "1.0") -> Hostile:
    """A request of ``dialect`` ("1.0", "1.0-rest", "0.3" or "legacy") built to hurt: any field
    (free-form ones such as metadata and data included, and the envelope) replaced by a hostile
    value, a field added beside the real ones, or the body's bytes damaged."""
    valid = draw(requests(dialect))
    if not valid.body:
        # A REST request without a body (GET, DELETE): its path and query are the input.
        segment = draw(st.sampled_from(["%ED%A0%80", "%FF", "%00", "..%2F..", "%", "x" * 5000]))
        where = draw(st.sampled_from(["path", "query"]))
        if where == "path":
            damaged = attrs.evolve(valid, path=valid.path.rstrip("/") + "/" + segment)
        else:
            damaged = attrs.evolve(valid, query=f"{valid.query}&historyLength={segment}")
        return Hostile(damaged, where, f"{segment[:20]!r} in the {where}")
    body = json.loads(valid.body)
    how = draw(st.sampled_from(["replace", "add", "bytes"]))
    if how == "bytes":
        change, raw = draw(_byte_mutations(valid.body))
        return Hostile(attrs.evolve(valid, body=raw), "body", change)
    paths = [path for path, _ in _fields(body, "")]
    path = draw(st.sampled_from(paths)).lstrip(".")
    what, fragment = draw(_hostile_fragments())
    if how == "add" or not path:
        parent = draw(st.sampled_from([p for p, v in _fields(body, "") if isinstance(v, dict)]))
        key = draw(st.sampled_from(["metadata", "extra", "data", "__proto__", _LONE_KEY]))
        if key == _LONE_KEY:  # a key that is itself a lone surrogate, beside the real ones
            path = "body"
            encoded = json.dumps(body).encode()[:-1] + b',"\\ud800":' + _SPLICED + b"}"
        else:
            path = f"{parent.lstrip('.')}.{key}".lstrip(".")
            encoded = _with_fragment(body, path)
    else:
        encoded = _with_fragment(body, path)
    raw = encoded.replace(_SPLICED, fragment, 1)
    return Hostile(attrs.evolve(valid, body=raw), path or "body", what)
