"""The v0.3 and legacy (v0.1) dialects as transforms of the v1.0 wire form (``_wire_v03``).

Each ``*_in`` reshapes what an old client sends into v1.0 JSON for the v1.0 codec; each ``*_out``
reshapes v1.0 JSON into what an old client reads. Besides exact examples, the properties check the
transforms against an independent reader and writer of v0.3: the official a2a-sdk's v0.3 models
(``a2a.compat.v0_3.types``) and its v0.3 <-> v1.0 conversions, which are what its v0.3 client
uses on the wire.
"""

import base64
import json
from datetime import UTC, datetime
from typing import Any

import attrs
import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import ParseDict
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core import (
    Artifact,
    ArtifactChunk,
    AuthenticationInfo,
    Core,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    text_artifact,
)
from a2a_core.card import AgentCard
from a2a_core.decisions import AgentDone, AgentOutput, Call, Dialect, Dispatch, Operation, Respond
from a2a_core.errors import InvalidParamsError
from a2a_core.model._card import (
    AgentCapabilities,
    APIKeySecurityScheme,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
)
from a2a_core.store import LoggedEvent
from a2a_core.transport import Caller, HttpRequest, V1Codec
from a2a_core.wire._v03 import (
    DEFAULT_PUSH_CONFIG_ID,
    card_v03_fields,
    event_out,
    legacy_push_in,
    legacy_send_in,
    merge_missing,
    message_in,
    message_out,
    part_in,
    part_out,
    push_get_in,
    push_id_in,
    push_list_out,
    push_out,
    push_set_in,
    send_in,
    task_out,
    value_out,
)
from tests.a2a_core.support import (
    Harness,
    ids,
    json_values,
    make_core,
    start_of,
    string_tuples,
    timestamps,
    words,
)

codec = V1Codec()

Json = dict[str, Any]


def decode_send(params: Any) -> SendMessageRequest:
    return codec.decode(SendMessageRequest, params, "params")


def refused(cls: type[Any], params: Any) -> InvalidParamsError:
    """The decoder's refusal of transformed ``params``: an error naming at least one field."""
    with pytest.raises(InvalidParamsError) as raised:
        codec.decode(cls, params, "params")
    assert raised.value.violations
    assert all(v.field.startswith("params") for v in raised.value.violations)
    return raised.value


def decoded_or_refused(cls: type[Any], params: Any) -> None:
    """Decoding ``params`` succeeds, or fails only with -32602 naming a field."""
    error: InvalidParamsError | None = None
    try:
        codec.decode(cls, params, "params")
    except InvalidParamsError as raised:
        error = raised
    assert error is None or error.violations


def v03_message(*parts: Any, **fields: Any) -> Json:
    """A v0.3 user message with ``parts`` (one text part by default)."""
    return {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": list(parts) or [{"kind": "text", "text": "hi"}],
        **fields,
    }


# --- out: v1.0 JSON -> v0.3 -------------------------------------------------------------------

STATE_NAMES = {
    TaskState.UNSPECIFIED: "unknown",
    TaskState.SUBMITTED: "submitted",
    TaskState.WORKING: "working",
    TaskState.COMPLETED: "completed",
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "canceled",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.REJECTED: "rejected",
    TaskState.AUTH_REQUIRED: "auth-required",
}


@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.value)
def test_states_are_written_in_lower_case_kebab(state: TaskState) -> None:
    task = codec.encode(Task("t", TaskStatus(state), context_id="c"))
    assert task_out(task)["status"]["state"] == STATE_NAMES[state]
    # ...and v0.3's own model knows every one of them.
    assert v03.TaskState(STATE_NAMES[state]).value == STATE_NAMES[state]


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (Part(text="hi"), {"kind": "text", "type": "text", "text": "hi"}),
        (Part(text=""), {"kind": "text", "type": "text", "text": ""}),
        (
            Part(text="hi", metadata={"a": 1}),
            {"kind": "text", "type": "text", "text": "hi", "metadata": {"a": 1}},
        ),
        (Part(data={"k": [1]}), {"kind": "data", "type": "data", "data": {"k": [1]}}),
        # v0.3's DataPart holds an object: other JSON values are wrapped.
        (Part(data=[1, 2]), {"kind": "data", "type": "data", "data": {"value": [1, 2]}}),
        (Part(data="s"), {"kind": "data", "type": "data", "data": {"value": "s"}}),
        (Part(data=False), {"kind": "data", "type": "data", "data": {"value": False}}),
        (
            Part(raw=b"tck", filename="a.txt", media_type="text/plain"),
            {
                "kind": "file",
                "type": "file",
                "file": {"bytes": "dGNr", "name": "a.txt", "mimeType": "text/plain"},
            },
        ),
        (Part(raw=b""), {"kind": "file", "type": "file", "file": {"bytes": ""}}),
        (
            Part(url="https://x/y", media_type="image/png"),
            {
                "kind": "file",
                "type": "file",
                "file": {"uri": "https://x/y", "mimeType": "image/png"},
            },
        ),
    ],
)
def test_part_out(part: Part, expected: Json) -> None:
    assert part_out(codec.encode(part)) == expected


def test_message_out() -> None:
    message = Message(
        "m-1",
        Role.AGENT,
        (Part(text="hi"),),
        context_id="c",
        task_id="t",
        metadata={"k": "v"},
        extensions=("urn:x",),
        reference_task_ids=("t0",),
    )
    assert message_out(codec.encode(message)) == {
        "kind": "message",
        "messageId": "m-1",
        "role": "agent",
        "parts": [{"kind": "text", "type": "text", "text": "hi"}],
        "contextId": "c",
        "taskId": "t",
        "metadata": {"k": "v"},
        "extensions": ["urn:x"],
        "referenceTaskIds": ["t0"],
    }
    user = codec.encode(Message("m-2", Role.USER, (Part(text="q"),)))
    assert message_out(user)["role"] == "user"


def test_task_out() -> None:
    task = Task(
        "t-1",
        TaskStatus(
            TaskState.INPUT_REQUIRED,
            Message("m-2", Role.AGENT, (Part(text="which?"),)),
            datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
        ),
        context_id="c-1",
        artifacts=(
            Artifact("a-1", (Part(text="one"),), name="first"),
            Artifact("a-2", (Part(url="https://x"),)),
        ),
        history=(Message("m-1", Role.USER, (Part(text="hello"),)),),
        metadata={"k": 1},
    )
    assert task_out(codec.encode(task)) == {
        "kind": "task",
        "id": "t-1",
        "contextId": "c-1",
        "sessionId": "c-1",  # v0.1's name of the context
        "status": {
            "state": "input-required",
            "message": {
                "kind": "message",
                "messageId": "m-2",
                "role": "agent",
                "parts": [{"kind": "text", "type": "text", "text": "which?"}],
            },
            "timestamp": "2025-01-02T03:04:05.678Z",
        },
        "artifacts": [
            {
                "artifactId": "a-1",
                "name": "first",
                "parts": [{"kind": "text", "type": "text", "text": "one"}],
                "index": 0,
            },
            {
                "artifactId": "a-2",
                "parts": [{"kind": "file", "type": "file", "file": {"uri": "https://x"}}],
                "index": 1,
            },
        ],
        "history": [
            {
                "kind": "message",
                "messageId": "m-1",
                "role": "user",
                "parts": [{"kind": "text", "type": "text", "text": "hello"}],
            }
        ],
        "metadata": {"k": 1},
    }


def test_task_out_always_has_a_context_id() -> None:
    """v0.3 requires ``contextId``; v1.0 omits an empty one."""
    bare = codec.encode(Task("t", TaskStatus(TaskState.SUBMITTED)))
    assert "contextId" not in bare
    out = task_out(bare)
    assert out["contextId"] == ""
    assert out["sessionId"] == ""
    assert "history" not in out
    assert "artifacts" not in out
    assert bare == {"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}, "input unchanged"


@pytest.mark.parametrize("final", [True, False])
def test_status_events_carry_final_and_the_v01_id(final: bool) -> None:
    event = TaskStatusUpdateEvent("t", "c", TaskStatus(TaskState.COMPLETED), metadata={"a": 1})
    assert event_out(codec.encode_event(event), final=final) == {
        "kind": "status-update",
        "id": "t",
        "taskId": "t",
        "contextId": "c",
        "status": {"state": "completed"},
        "final": final,
        "metadata": {"a": 1},
    }


def test_artifact_events_carry_their_flags_explicitly() -> None:
    artifact = Artifact("a", (Part(text="chunk"),))
    event = TaskArtifactUpdateEvent("t", "c", artifact)
    assert event_out(codec.encode_event(event), final=True) == {
        "kind": "artifact-update",
        "id": "t",
        "taskId": "t",
        "contextId": "c",
        "artifact": {
            "artifactId": "a",
            "parts": [{"kind": "text", "type": "text", "text": "chunk"}],
            "index": 0,
        },
        "append": False,
        "lastChunk": False,
    }
    flagged = TaskArtifactUpdateEvent("t", "c", artifact, append=True, last_chunk=True)
    out = event_out(codec.encode_event(flagged), final=False)
    assert (out["append"], out["lastChunk"]) == (True, True)
    assert "final" not in out


def test_event_out_and_value_out_unwrap_tasks_and_messages() -> None:
    task = Task("t", TaskStatus(TaskState.WORKING), context_id="c")
    message = Message("m", Role.AGENT, (Part(text="x"),))
    for wrapped, expected in (
        (codec.encode_event(task), task_out(codec.encode(task))),
        (codec.encode_event(message), message_out(codec.encode(message))),
    ):
        assert value_out(wrapped) == expected
        assert event_out(wrapped, final=True) == expected
    status = TaskStatusUpdateEvent("t", "c", TaskStatus(TaskState.COMPLETED))
    assert value_out(codec.encode_event(status))["final"] is False


def test_push_out_nests_the_config_under_its_task() -> None:
    config = TaskPushNotificationConfig(
        url="https://hook",
        tenant="acme",
        id="c-1",
        task_id="t-1",
        token="tok",
        authentication=AuthenticationInfo("Bearer", "secret"),
    )
    assert push_out(codec.encode(config)) == {
        "taskId": "t-1",
        "id": "t-1",  # v0.1 named the task "id"
        "pushNotificationConfig": {
            "id": "c-1",
            "url": "https://hook",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
    }
    minimal = push_out(codec.encode(TaskPushNotificationConfig(url="u", task_id="t")))
    assert minimal == {"taskId": "t", "id": "t", "pushNotificationConfig": {"url": "u"}}
    scheme_only = TaskPushNotificationConfig(url="u", authentication=AuthenticationInfo("Basic"))
    assert push_out(codec.encode(scheme_only))["pushNotificationConfig"]["authentication"] == {
        "schemes": ["Basic"]
    }


def test_push_list_out_is_a_bare_array() -> None:
    configs = [
        TaskPushNotificationConfig(url=f"https://h/{n}", id=str(n), task_id="t") for n in (1, 2)
    ]
    listing = {"configs": [codec.encode(c) for c in configs], "nextPageToken": ""}
    assert push_list_out(listing) == [push_out(codec.encode(c)) for c in configs]
    assert push_list_out({"configs": []}) == []
    assert push_list_out({}) == []


# --- in: v0.3 / v0.1 JSON -> v1.0 ------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ({"kind": "text", "text": "hi"}, {"text": "hi"}),
        (
            {"kind": "text", "text": "hi", "metadata": {"a": 1}},
            {"text": "hi", "metadata": {"a": 1}},
        ),
        ({"kind": "data", "data": {"k": 1}}, {"data": {"k": 1}}),
        (
            {"kind": "file", "file": {"bytes": "dGNr", "name": "a.txt", "mimeType": "text/plain"}},
            {"raw": "dGNr", "filename": "a.txt", "mediaType": "text/plain"},
        ),
        ({"kind": "file", "file": {"uri": "https://x"}}, {"url": "https://x"}),
        # v0.1 discriminates by "type"; "kind" wins when both are there.
        ({"type": "text", "text": "old"}, {"text": "old"}),
        ({"type": "file", "file": {"uri": "u"}}, {"url": "u"}),
        ({"kind": "text", "type": "data", "text": "k"}, {"text": "k"}),
        # No discriminator: already a v1.0 part.
        ({"text": "new", "mediaType": "text/plain"}, {"text": "new", "mediaType": "text/plain"}),
        # Not a part at all: passed on for the decoder to refuse.
        ("text", "text"),
        (None, None),
        # A file that is no object is kept, so the decoder names it.
        ({"kind": "file", "file": "x"}, {"file": "x"}),
        # An unknown kind has no content (the decoder refuses it by its path).
        ({"kind": "image", "url": "x"}, {}),
        ({"type": "video", "text": "x"}, {}),
    ],
)
def test_part_in(part: Any, expected: Any) -> None:
    assert part_in(part) == expected


def test_message_in() -> None:
    assert message_in(v03_message(taskId="t", contextId="c")) == {
        "messageId": "m-1",
        "role": "ROLE_USER",
        "parts": [{"text": "hi"}],
        "taskId": "t",
        "contextId": "c",
    }
    assert message_in({"role": "agent", "parts": []})["role"] == "ROLE_AGENT"
    # v1.0 spellings and unknown roles pass unchanged; so does a parts value that is no list.
    assert message_in({"role": "ROLE_USER", "parts": "x"}) == {"role": "ROLE_USER", "parts": "x"}
    assert message_in({"role": "robot"})["role"] == "robot"
    assert message_in(["not", "a", "message"]) == ["not", "a", "message"]


@pytest.mark.parametrize(
    ("configuration", "return_immediately"),
    [
        ({"blocking": True}, False),
        ({"blocking": False}, True),
        ({}, False),
        ({"historyLength": 2}, False),
        (None, False),
    ],
)
def test_send_blocks_unless_blocking_is_false(
    configuration: Json | None, return_immediately: bool
) -> None:
    params: Json = {"message": v03_message()}
    if configuration is not None:
        params["configuration"] = configuration
    request = decode_send(send_in(params))
    assert request.configuration is not None
    assert request.configuration.return_immediately is return_immediately
    assert request.message == Message("m-1", Role.USER, (Part(text="hi"),))


def test_send_in_carries_the_whole_configuration() -> None:
    params = {
        "message": v03_message(),
        "configuration": {
            "blocking": True,
            "acceptedOutputModes": ["text/plain"],
            "historyLength": 3,
            "pushNotificationConfig": {
                "id": "c-1",
                "url": "https://hook",
                "token": "tok",
                "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "s"},
            },
        },
        "metadata": {"k": "v"},
    }
    assert send_in(params) == {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {
            "acceptedOutputModes": ["text/plain"],
            "historyLength": 3,
            "returnImmediately": False,
            "taskPushNotificationConfig": {
                "id": "c-1",
                "url": "https://hook",
                "token": "tok",
                # v1.0 has one scheme: the first is used.
                "authentication": {"scheme": "Bearer", "credentials": "s"},
            },
        },
        "metadata": {"k": "v"},
    }
    request = decode_send(send_in(params))
    assert request.configuration == SendMessageConfiguration(
        accepted_output_modes=("text/plain",),
        task_push_notification_config=TaskPushNotificationConfig(
            url="https://hook",
            id="c-1",
            token="tok",
            authentication=AuthenticationInfo("Bearer", "s"),
        ),
        history_length=3,
        return_immediately=False,
    )
    assert params["message"]["kind"] == "message", "input unchanged"


def test_send_in_passes_misshapen_values_on() -> None:
    assert send_in(None) is None
    assert send_in([1]) == [1]
    assert send_in({"message": v03_message(), "configuration": 5})["configuration"] == 5
    error = refused(SendMessageRequest, send_in({"message": v03_message(), "configuration": 5}))
    assert error.violations[0].field == "params.configuration"


@pytest.mark.parametrize("blocking", ["true", 1, {"x": 1}, [True]])
def test_a_blocking_flag_of_the_wrong_type_is_refused(blocking: Any) -> None:
    params = {"message": v03_message(), "configuration": {"blocking": blocking}}
    refused(SendMessageRequest, send_in(params))


def test_push_set_in_flattens_the_config() -> None:
    params = {
        "taskId": "t-1",
        "pushNotificationConfig": {
            "id": "c-1",
            "url": "https://hook",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "s"},
        },
    }
    assert push_set_in(params) == {
        "id": "c-1",
        "url": "https://hook",
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "s"},
        "taskId": "t-1",
    }
    assert codec.decode(TaskPushNotificationConfig, push_set_in(params), "params") == (
        TaskPushNotificationConfig(
            url="https://hook",
            id="c-1",
            task_id="t-1",
            token="tok",
            authentication=AuthenticationInfo("Bearer", "s"),
        )
    )
    unnamed = {"taskId": "t-1", "pushNotificationConfig": {"url": "https://hook", "id": ""}}
    assert push_set_in(unnamed) == {"url": "https://hook", "id": "default", "taskId": "t-1"}
    # Misshapen: passed on, and refused.
    assert push_set_in({"taskId": "t", "pushNotificationConfig": "x"}) == "x"
    assert push_set_in(7) == 7
    odd = {"taskId": "t", "pushNotificationConfig": {"url": "https://hook", "authentication": "s"}}
    assert push_set_in(odd)["authentication"] == "s"
    refused(TaskPushNotificationConfig, push_set_in(odd))
    refused(TaskPushNotificationConfig, push_set_in({"taskId": "t"}))


def test_an_authentication_without_schemes_is_refused() -> None:
    def params(authentication: Json) -> Json:
        return {
            "taskId": "t",
            "pushNotificationConfig": {"url": "u", "authentication": authentication},
        }

    missing: list[Json] = [{}, {"schemes": []}, {"schemes": "Bearer"}]
    for authentication in missing:
        error = refused(TaskPushNotificationConfig, push_set_in(params(authentication)))
        assert error.violations[0].field == "params.authentication.scheme"
    # An empty list falls back to a v1.0-style single scheme, if there is one.
    fallback = params({"schemes": [], "scheme": "Basic"})
    decoded = codec.decode(TaskPushNotificationConfig, push_set_in(fallback), "params")
    assert decoded.authentication == AuthenticationInfo("Basic")


def test_push_get_in_and_push_id_in() -> None:
    assert push_get_in({"id": "t", "pushNotificationConfigId": "c"}) == {"taskId": "t", "id": "c"}
    # Without a config id, the task's (first) config is meant.
    assert push_get_in({"id": "t"}) == {"taskId": "t", "id": ""}
    assert push_id_in({"id": "t"}) == {"taskId": "t"}
    decoded = codec.decode(GetTaskPushNotificationConfigRequest, push_get_in({"id": "t"}), "params")
    assert decoded == GetTaskPushNotificationConfigRequest("t", "")
    assert push_get_in("x") == "x"
    assert push_id_in(None) is None
    error = refused(ListTaskPushNotificationConfigsRequest, push_id_in({"id": 5}))
    assert error.violations[0].field == "params.taskId"


def test_legacy_send_in() -> None:
    params = {
        "id": "client-task",
        "sessionId": "s-1",
        "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
        "historyLength": 2,
        "pushNotification": {"url": "https://hook", "authentication": {"schemes": ["Bearer"]}},
        "metadata": {"owner": "mallory", "k": "v"},
        "skillId": "s",
    }
    assert legacy_send_in(params) == {
        "message": {
            "role": "ROLE_USER",
            "parts": [{"text": "hi"}],
            "messageId": "",  # v0.1 messages have no id
            "taskId": "client-task",
            "contextId": "s-1",
        },
        "configuration": {
            "returnImmediately": True,  # v0.1 sends are always acknowledged at once
            "historyLength": 2,
            "taskPushNotificationConfig": {
                "url": "https://hook",
                "authentication": {"scheme": "Bearer"},
            },
        },
        # The owner is the caller, never what the request says; the skill routes.
        "metadata": {"k": "v", "skillId": "s"},
    }
    assert params["metadata"] == {"owner": "mallory", "k": "v"}, "input unchanged"
    request = decode_send(legacy_send_in(params))
    assert request.message.task_id == "client-task"
    assert request.message.context_id == "s-1"
    assert request.metadata == {"k": "v", "skillId": "s"}


def test_legacy_send_in_keeps_a_message_id_and_passes_bad_metadata_on() -> None:
    message = {"messageId": "m", "role": "user", "parts": [{"type": "text", "text": "x"}]}
    out = legacy_send_in({"message": message, "metadata": "nope"})
    assert out["message"]["messageId"] == "m"
    assert "taskId" not in out["message"]
    assert out["metadata"] == "nope"
    assert refused(SendMessageRequest, out).violations[0].field == "params.metadata"
    only_skill = legacy_send_in({"message": message, "skillId": "s"})
    assert only_skill["metadata"] == {"skillId": "s"}
    assert "metadata" not in legacy_send_in({"message": message})
    assert legacy_send_in("x") == "x"


def test_legacy_push_in() -> None:
    params = {"id": "t", "pushNotificationConfig": {"url": "https://hook", "token": "tok"}}
    # An un-named config is "the task's config": it gets the default id.
    assert legacy_push_in(params) == {
        "url": "https://hook",
        "token": "tok",
        "taskId": "t",
        "id": DEFAULT_PUSH_CONFIG_ID,
    }
    named = {"id": "t", "pushNotificationConfig": {"url": "https://hook", "id": "mine"}}
    assert legacy_push_in(named)["id"] == "mine"
    assert legacy_push_in([]) == []


# --- refusals: never a crash, always a field --------------------------------------------------

BAD_PARTS: list[tuple[Any, str]] = [
    ({"kind": "image", "url": "x"}, "params.message.parts[1]"),
    ({"kind": "TEXT", "text": "x"}, "params.message.parts[1]"),
    ({"kind": 5}, "params.message.parts[1]"),
    ({"type": "video"}, "params.message.parts[1]"),
    ({"kind": "text"}, "params.message.parts[1]"),
    ({"kind": "text", "text": 5}, "params.message.parts[1].text"),
    ({"kind": "data"}, "params.message.parts[1]"),
    ({"kind": "file"}, "params.message.parts[1]"),
    ({"kind": "file", "file": {}}, "params.message.parts[1]"),
    ({"kind": "file", "file": "x"}, "params.message.parts[1]"),
    ({"kind": "file", "file": {"bytes": "!!"}}, "params.message.parts[1].raw"),
    ({"kind": "file", "file": {"bytes": "aGk=", "uri": "u"}}, "params.message.parts[1]"),
    (7, "params.message.parts[1]"),
    ([], "params.message.parts[1]"),
]


@pytest.mark.parametrize(("part", "field"), BAD_PARTS)
def test_bad_parts_are_refused_naming_the_part(part: Any, field: str) -> None:
    params = {"message": v03_message({"kind": "text", "text": "ok"}, part)}
    error = refused(SendMessageRequest, send_in(params))
    assert [v.field for v in error.violations] == [field]
    assert error.message.startswith("Invalid parameters: " + field)
    assert error.codes.jsonrpc == -32602


def test_an_unknown_part_kind_over_json_rpc_is_invalid_params() -> None:
    """The whole way: a v0.3 ``message/send`` with an image part gets -32602, not a crash."""
    params = {"message": v03_message({"kind": "image", "url": "https://x/y.png"})}
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "message/send", "params": params})
    request = HttpRequest(
        "POST", "/", {"content-type": "application/json"}, body.encode()
    )  # no A2A-Version: a v0.3 client
    response = make_core().handle_http(request, Caller("alice"), "http://host")
    assert not isinstance(response, Dispatch)
    error = json.loads(response.body)
    assert error["id"] == 3
    assert error["error"]["code"] == -32602
    (bad,) = [d for d in error["error"]["data"] if "fieldViolations" in d]
    assert bad["fieldViolations"][0]["field"] == "params.message.parts[0]"


any_json: st.SearchStrategy[Any] = json_values | st.fixed_dictionaries(
    {
        "message": st.one_of(
            json_values,
            st.fixed_dictionaries(
                {"role": json_values, "parts": st.lists(json_values, max_size=2) | json_values}
            ),
        ),
        "configuration": json_values,
        "pushNotificationConfig": json_values,
        "pushNotification": json_values,
        "id": json_values,
        "sessionId": json_values,
        "metadata": json_values,
    }
)
TRANSFORMS = [
    (send_in, SendMessageRequest),
    (legacy_send_in, SendMessageRequest),
    (push_set_in, TaskPushNotificationConfig),
    (legacy_push_in, TaskPushNotificationConfig),
    (push_get_in, GetTaskPushNotificationConfigRequest),
    (push_id_in, ListTaskPushNotificationConfigsRequest),
]


@settings(max_examples=300)
@given(st.sampled_from(TRANSFORMS), any_json)
def test_any_json_is_transformed_and_decoded_or_refused_never_crashing(
    transform: tuple[Any, type[Any]], params: Any
) -> None:
    function, cls = transform
    decoded_or_refused(cls, function(params))


@settings(max_examples=300)
@given(json_values)
def test_any_part_is_transformed_and_decoded_or_refused(part: Any) -> None:
    for candidate in (part, {"kind": "file", "file": part}, {"kind": "text", "text": part}):
        decoded_or_refused(Part, part_in(candidate))


# --- properties against the a2a-sdk's v0.3 reader and writer ---------------------------------

#: JSON the sdk's protobuf Struct carries exactly (small ints; a Struct makes numbers floats).
plain_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=5,
)
objects = st.dictionaries(st.text(max_size=4), plain_json, min_size=1, max_size=3)
maybe_objects = st.none() | objects
media_types = st.sampled_from(["", "text/plain", "image/png"])

#: Parts v0.3 can express: text parts have no filename or media type; data is an object.
v03_parts = st.one_of(
    st.builds(lambda t, m: Part(text=t, metadata=m), words, maybe_objects),
    st.builds(
        lambda b, f, t, m: Part(raw=b, filename=f, media_type=t, metadata=m),
        st.binary(max_size=8),
        words,
        media_types,
        maybe_objects,
    ),
    st.builds(
        lambda u, f, t, m: Part(url=u, filename=f, media_type=t, metadata=m),
        words,
        words,
        media_types,
        maybe_objects,
    ),
    st.builds(lambda d, m: Part(data=d, metadata=m), objects, maybe_objects),
)


def v03_messages(roles: tuple[Role, ...] = (Role.USER, Role.AGENT)) -> st.SearchStrategy[Message]:
    return st.builds(
        Message,
        message_id=ids,
        role=st.sampled_from(roles),
        parts=st.lists(v03_parts, min_size=1, max_size=3).map(tuple),
        context_id=words,
        task_id=words,
        metadata=maybe_objects,
        extensions=string_tuples,
        reference_task_ids=string_tuples,
    )


v03_artifacts = st.builds(
    Artifact,
    artifact_id=ids,
    parts=st.lists(v03_parts, min_size=1, max_size=2).map(tuple),
    name=words,
    description=words,
    metadata=maybe_objects,
    extensions=string_tuples,
)
v03_statuses = st.builds(
    TaskStatus,
    state=st.sampled_from(TaskState),
    message=st.none() | v03_messages(),
    timestamp=st.none() | timestamps,
)
v03_tasks = st.builds(
    Task,
    id=ids,
    status=v03_statuses,
    context_id=words,
    artifacts=st.lists(v03_artifacts, max_size=2).map(tuple),
    history=st.lists(v03_messages(), max_size=2).map(tuple),
    metadata=maybe_objects,
)
v03_events = st.one_of(
    v03_tasks,
    v03_messages(),
    st.builds(
        TaskStatusUpdateEvent,
        task_id=ids,
        context_id=ids,
        status=v03_statuses,
        metadata=maybe_objects,
    ),
    st.builds(
        TaskArtifactUpdateEvent,
        task_id=ids,
        context_id=ids,
        artifact=v03_artifacts,
        append=st.booleans(),
        last_chunk=st.booleans(),
        metadata=maybe_objects,
    ),
)
#: A scheme is never empty (the reducer refuses one, and v0.3 writes none for it).
authentications = st.none() | st.builds(AuthenticationInfo, scheme=ids, credentials=words)


def as_pb(value: Any, message: Any) -> Any:
    """What the sdk makes of our v1.0 JSON of ``value`` (a protobuf ``message``)."""
    return ParseDict(codec.encode(value), message)


@settings(max_examples=200)
@given(v03_tasks)
def test_task_out_reads_in_v03_as_the_same_task(task: Task) -> None:
    v1 = codec.encode(task)
    out = task_out(v1)
    read = v03.Task.model_validate(out)
    assert read.kind == "task"
    assert read.id == task.id
    assert read.context_id == task.context_id
    assert read.status.state.value == STATE_NAMES[task.status.state]
    assert [m.message_id for m in read.history or []] == [m.message_id for m in task.history]
    # Everything v0.3 can say survives: the sdk's v1.0 view of it is our task.
    assert conversions.to_core_task(read) == ParseDict(v1, pb.Task())


@settings(max_examples=200)
@given(v03_events, st.booleans())
def test_stream_events_read_in_v03_as_the_same_events(event: Any, final: bool) -> None:
    v1 = codec.encode_event(event)
    out = event_out(v1, final=final)
    response = v03.SendStreamingMessageSuccessResponse.model_validate(
        {"jsonrpc": "2.0", "id": 1, "result": out}
    )
    kinds = {
        Task: "task",
        Message: "message",
        TaskStatusUpdateEvent: "status-update",
        TaskArtifactUpdateEvent: "artifact-update",
    }
    result = response.result
    assert result.kind == kinds[type(event)]
    if isinstance(event, TaskStatusUpdateEvent):
        assert isinstance(result, v03.TaskStatusUpdateEvent)
        assert result.final is final
    assert conversions.to_core_stream_response(response) == ParseDict(v1, pb.StreamResponse())


@settings(max_examples=100)
@given(st.one_of(v03_tasks, v03_messages()))
def test_send_results_read_in_v03_as_the_same_values(value: Task | Message) -> None:
    v1 = codec.encode_event(value)  # SendMessageResponse: {"task": …} or {"message": …}
    response = v03.SendMessageResponse.model_validate(
        {"jsonrpc": "2.0", "id": 1, "result": value_out(v1)}
    )
    assert conversions.to_core_send_message_response(response) == ParseDict(
        v1, pb.SendMessageResponse()
    )


push_configs_v03 = st.builds(
    TaskPushNotificationConfig,
    url=words,
    tenant=words,
    id=words,
    task_id=words,
    token=words,
    authentication=authentications,
)


@settings(max_examples=200)
@given(push_configs_v03)
def test_push_out_reads_in_v03_as_the_same_config(config: TaskPushNotificationConfig) -> None:
    out = push_out(codec.encode(config))
    read = v03.TaskPushNotificationConfig.model_validate(out)
    assert read.task_id == config.task_id
    assert read.push_notification_config.url == config.url
    # v0.3 has no tenants; everything else is kept.
    expected = as_pb(attrs.evolve(config, tenant=""), pb.TaskPushNotificationConfig())
    assert conversions.to_core_task_push_notification_config(read) == expected
    # ...and what v0.3 writes back comes in as the same config (an un-named one as the default).
    decoded = codec.decode(TaskPushNotificationConfig, push_set_in(out), "params")
    assert decoded == attrs.evolve(config, tenant="", id=config.id or DEFAULT_PUSH_CONFIG_ID)


def dumped(request: Any) -> Any:
    """The ``params`` of a v0.3 JSON-RPC request, as the sdk's v0.3 client serialises them."""
    return request.params.model_dump(by_alias=True, exclude_none=True, mode="json")


v03_configurations = st.builds(
    SendMessageConfiguration,
    accepted_output_modes=string_tuples,
    task_push_notification_config=st.none()
    | st.builds(
        TaskPushNotificationConfig,
        url=words,
        id=words,
        token=words,
        authentication=authentications,
    ),
    history_length=st.none() | st.integers(0, 1000),
    return_immediately=st.booleans(),
)
v03_send_requests = st.builds(
    SendMessageRequest,
    message=v03_messages((Role.USER,)),
    configuration=st.none() | v03_configurations,
    metadata=maybe_objects,
)


@settings(max_examples=200)
@given(v03_send_requests)
def test_a_v03_clients_send_decodes_to_the_same_request(request: SendMessageRequest) -> None:
    pb_request = as_pb(request, pb.SendMessageRequest())
    params = dumped(conversions.to_compat_send_message_request(pb_request, request_id=0))
    decoded = decode_send(send_in(params))
    if request.configuration is None:
        # No configuration: the send blocks, as the SDK's own server makes it.
        request = attrs.evolve(
            request, configuration=SendMessageConfiguration(return_immediately=False)
        )
    assert decoded == request


@settings(max_examples=100)
@given(v03_messages((Role.USER,)))
def test_messages_survive_out_and_back_in(message: Message) -> None:
    back = codec.decode(Message, message_in(message_out(codec.encode(message))), "params")
    assert back == message


@settings(max_examples=100)
@given(ids, ids, words)
def test_a_v03_clients_push_requests_decode_to_the_same_requests(
    task_id: str, config_id: str, url: str
) -> None:
    config = TaskPushNotificationConfig(url=url, id=config_id, task_id=task_id, token="t")
    pb_config = as_pb(config, pb.TaskPushNotificationConfig())
    set_params = dumped(
        conversions.to_compat_create_task_push_notification_config_request(pb_config, 0)
    )
    assert codec.decode(TaskPushNotificationConfig, push_set_in(set_params), "params") == config
    get = pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
    get_params = dumped(conversions.to_compat_get_task_push_notification_config_request(get, 0))
    assert codec.decode(GetTaskPushNotificationConfigRequest, push_get_in(get_params), "p") == (
        GetTaskPushNotificationConfigRequest(task_id, config_id)
    )
    listing = pb.ListTaskPushNotificationConfigsRequest(task_id=task_id)
    list_params = dumped(
        conversions.to_compat_list_task_push_notification_config_request(listing, 0)
    )
    assert codec.decode(ListTaskPushNotificationConfigsRequest, push_id_in(list_params), "p") == (
        ListTaskPushNotificationConfigsRequest(task_id)
    )


def test_raw_bytes_travel_as_base64_both_ways() -> None:
    raw = bytes(range(256))
    out = part_out(codec.encode(Part(raw=raw)))
    assert base64.b64decode(out["file"]["bytes"]) == raw
    assert codec.decode(Part, part_in(out), "params") == Part(raw=raw)


# --- how the front uses them: v0.3 calls, and "final" --------------------------------------


def v03_dispatch(method: str, params: Json) -> Dispatch:
    body = json.dumps({"jsonrpc": "2.0", "id": "r", "method": method, "params": params}).encode()
    headers = {"content-type": "application/json"}  # no A2A-Version: 0.3
    routed = make_core(streaming=True).handle_http(
        HttpRequest("POST", "/", headers, body), Caller("alice"), "http://host"
    )
    assert isinstance(routed, Dispatch), routed
    assert routed.call.dialect is Dialect.V0_3
    return routed


def test_a_v03_send_is_dispatched_as_the_v1_call() -> None:
    routed = v03_dispatch(
        "message/send", {"message": v03_message(), "configuration": {"blocking": True}}
    )
    assert routed.call == Call(
        Operation.SEND_MESSAGE,
        SendMessageRequest(
            Message("m-1", Role.USER, (Part(text="hi"),)),
            configuration=SendMessageConfiguration(return_immediately=False),
        ),
        Caller("alice"),
        dialect=Dialect.V0_3,
    )


STATUS = {state: TaskStatusUpdateEvent("t", "c", TaskStatus(state)) for state in TaskState}


@pytest.mark.parametrize(
    ("method", "params", "final_states"),
    [
        # A streamed send ends when the task settles: terminal or interrupted.
        (
            "message/stream",
            {"message": v03_message()},
            {"completed", "failed", "canceled", "rejected", "input-required", "auth-required"},
        ),
        # A resubscription stays open across interruptions.
        ("tasks/resubscribe", {"id": "t"}, {"completed", "failed", "canceled", "rejected"}),
    ],
)
def test_final_marks_the_status_event_that_ends_the_stream(
    method: str, params: Json, final_states: set[str]
) -> None:
    routed = v03_dispatch(method, params)
    core = make_core(streaming=True)
    finals = set()
    for seq, event in enumerate(STATUS.values(), start=1):
        frame = core.render_event(routed, LoggedEvent(seq, event))
        data = frame.decode().split("data: ", 1)[1]
        result = json.loads(data)["result"]
        assert result["kind"] == "status-update"
        if result["final"]:
            finals.add(result["status"]["state"])
    assert finals == final_states
    task = Task("t", TaskStatus(TaskState.COMPLETED), context_id="c")
    frame = core.render_event(routed, LoggedEvent(9, task))
    assert json.loads(frame.decode().split("data: ", 1)[1])["result"]["kind"] == "task"


def test_a_v01_stream_carries_only_updates() -> None:
    params = {"id": "t", "message": {"role": "user", "parts": [{"type": "text", "text": "x"}]}}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/sendSubscribe", "params": params}
    )
    core = make_core(streaming=True)
    routed = core.handle_http(
        HttpRequest("POST", "/", {"content-type": "application/json"}, body.encode()),
        Caller("alice"),
        "http://host",
    )
    assert isinstance(routed, Dispatch)
    assert routed.call.dialect is Dialect.LEGACY
    task = Task("t", TaskStatus(TaskState.SUBMITTED), context_id="c")
    assert core.render_event(routed, LoggedEvent(1, task)) == b""
    frame = core.render_event(routed, LoggedEvent(2, STATUS[TaskState.COMPLETED]))
    result = json.loads(frame.decode().split("data: ", 1)[1])["result"]
    assert result["id"] == "t"  # v0.1 names the task "id"
    assert result["final"] is True


def legacy_call(core: Core, method: str, params: Json) -> Dispatch:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = {"content-type": "application/json"}  # no A2A-Version: an old client
    routed = core.handle_http(HttpRequest("POST", "/", headers, body), Caller("alice"), "http://h")
    assert isinstance(routed, Dispatch), routed
    return routed


def test_the_artifact_index_is_the_servers_own_never_on_the_v1_wire() -> None:
    codec = V1Codec()
    event = TaskArtifactUpdateEvent("t", "c", text_artifact("x", artifact_id="a"), index=3)
    wire = codec.encode(event)
    assert "index" not in wire
    assert codec.decode(TaskArtifactUpdateEvent, {**wire, "index": 7}, "event").index is None


def test_a_v01_stream_numbers_artifacts_as_tasks_get_does() -> None:
    # A v0.1 client tells artifacts apart only by index: the stream must number them as the
    # task does (it once numbered them all 0).
    harness = Harness(make_core(streaming=True))
    core = harness.core
    message = {"role": "user", "parts": [{"type": "text", "text": "x"}]}
    stream = legacy_call(core, "tasks/sendSubscribe", {"id": "client-task", "message": message})
    decision = harness.decide(stream.call)
    start = start_of(decision)
    key, run = start.task_id, start.run  # where the task the client named is kept
    for text in ("one", "two"):
        harness.decide(AgentOutput(key, run, ArtifactChunk(text_artifact(text))))
    harness.decide(AgentDone(key, run, "done"))
    streamed = []
    for frame in harness.store.logs[key]:
        raw = core.render_event(stream, frame)
        if raw:
            result = json.loads(raw.decode().split("data: ", 1)[1])["result"]
            if result["kind"] == "artifact-update":
                streamed.append(
                    (result["artifact"]["parts"][0]["text"], result["artifact"]["index"])
                )
    get = legacy_call(core, "tasks/get", {"id": "client-task"})
    reply = harness.decide(get.call).reply
    assert isinstance(reply, Respond)
    task = json.loads(core.render(get, reply).body)["result"]
    stored = [(a["parts"][0]["text"], a["index"]) for a in task["artifacts"]]
    assert stored == [("one", 0), ("two", 1)]
    assert streamed == stored


# --- the card's v0.3 fields -------------------------------------------------------------------


def test_card_v03_fields_of_a_plain_card() -> None:
    card = codec.encode(make_core().card("http://host"))
    assert card_v03_fields(card, "http://host/") == {
        "protocolVersion": "0.3.0",
        "url": "http://host/",
        "preferredTransport": "JSONRPC",
        # Only JSON-RPC: the HTTP+JSON routes speak v1.0, which a v0.3 REST client cannot read.
        "additionalInterfaces": [{"url": "http://host/", "transport": "JSONRPC"}],
        "capabilities": {"stateTransitionHistory": False},
    }


def test_card_v03_fields_describe_security_in_openapi_terms() -> None:
    card = AgentCard(
        "n",
        "d",
        "1",
        capabilities=AgentCapabilities(extended_agent_card=True),
        security_schemes={
            "key": APIKeySecurityScheme(location="header", name="X-Key", description="k"),
            "bearer": HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT"),
            "basic": HTTPAuthSecurityScheme(scheme="Basic"),
            "oauth": OAuth2SecurityScheme(
                flows=ClientCredentialsOAuthFlow(token_url="https://t", scopes={"r": "read"})
            ),
            "oidc": OpenIdConnectSecurityScheme(open_id_connect_url="https://o"),
            "mtls": MutualTlsSecurityScheme(),
        },
        security_requirements=(SecurityRequirement({"oauth": ("r",), "key": ()}),),
    )
    extra = card_v03_fields(codec.encode(card), "http://host/")
    assert extra["supportsAuthenticatedExtendedCard"] is True
    assert extra["securitySchemes"] == {
        "key": {"type": "apiKey", "in": "header", "name": "X-Key", "description": "k"},
        "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
        "basic": {"type": "http", "scheme": "Basic"},
        "oauth": {
            "type": "oauth2",
            "flows": {"clientCredentials": {"tokenUrl": "https://t", "scopes": {"r": "read"}}},
        },
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://o"},
        "mtls": {"type": "mutualTLS"},
    }
    assert extra["security"] == [{"oauth": ["r"], "key": []}]


def test_the_merged_card_reads_as_a_v03_card() -> None:
    """What a v0.3 client fetches is a valid v0.3 ``AgentCard``, pointing at JSON-RPC."""
    core = make_core(streaming=True, push_notifications=True)
    card = codec.encode(core.card("http://host"))
    merged = merge_missing(card, card_v03_fields(card, "http://host/"))
    read = v03.AgentCard.model_validate(merged)
    assert read.url == "http://host/"
    assert read.protocol_version == "0.3.0"
    assert read.preferred_transport == "JSONRPC"
    assert read.capabilities.streaming is True
    assert read.capabilities.push_notifications is True
    assert read.capabilities.state_transition_history is False


def test_merge_missing_keeps_what_the_base_has() -> None:
    base: Json = {"a": 1, "nested": {"x": 1}, "list": [1]}
    extra: Json = {"a": 2, "b": 3, "nested": {"x": 2, "y": 3}, "list": [2]}
    assert merge_missing(base, extra) == {
        "a": 1,
        "b": 3,
        "nested": {"x": 1, "y": 3},
        "list": [1],
    }
    assert base["b"] == 3, "merged in place"
    assert merge_missing({"a": "scalar"}, {"a": {"deep": 1}}) == {"a": "scalar"}
