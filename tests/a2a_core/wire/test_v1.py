"""The v1.0 codec: round-trips of every model value, and strict decoding with wire paths."""

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from unittest import mock

import attrs
import pytest
from cattrs.errors import AttributeValidationNote, ClassValidationError
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core import (
    Artifact,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.card import AgentCard
from a2a_core.errors import FieldViolation, InvalidParamsError
from a2a_core.model._requests import GetTaskPushNotificationConfigRequest
from a2a_core.transport import V1Codec
from a2a_core.wire import _strict
from a2a_core.wire._strict import dumps, format_timestamp, parse_timestamp
from tests.a2a_core.support import (
    artifact_updates,
    cards,
    messages,
    status_updates,
    tasks,
    timestamps,
    user_message_json,
    wire_values,
)

codec = V1Codec()

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def decode_error(cls: type[Any], value: Any) -> InvalidParamsError:
    with pytest.raises(InvalidParamsError) as raised:
        codec.decode(cls, value, "params")
    assert raised.value.violations, "a decoding error names at least one field"
    return raised.value


def send_params(**message_fields: Any) -> dict[str, Any]:
    return {"message": user_message_json(**message_fields)}


# --- round trips ------------------------------------------------------------------------------


@settings(max_examples=300)
@given(wire_values)
def test_every_model_value_round_trips(value: Any) -> None:
    assert codec.decode(type(value), codec.encode(value), "params") == value


@settings(max_examples=100)
@given(wire_values)
def test_round_trip_survives_json_bytes(value: Any) -> None:
    """Through real JSON text, as a peer would see it (one line, no NaN)."""
    body = dumps(codec.encode(value))
    assert b"\n" not in body
    assert codec.decode(type(value), json.loads(body), "params") == value


PRECISE = V1Codec(precise=True)
#: Codecs whose attrs classes are written by cattrs' own generated functions, which the codec's
#: writers replaced: the reference they must agree with (see ``cattrs_encode``).
CATTRS_WRITTEN = {precise: V1Codec(precise=precise) for precise in (False, True)}


def cattrs_encode(value: Any, precise: bool) -> Any:
    def cattrs_only(conv: Any, cls: type[Any], enums: Any) -> Any:
        return _strict._cattrs_unstructure_attrs(conv, cls)

    # (Writers are made on a class's first use and kept: this codec's are all cattrs'.)
    with mock.patch.object(_strict, "_unstructure_attrs", cattrs_only):
        return CATTRS_WRITTEN[precise].encode(value)


@settings(max_examples=300)
@given(wire_values, st.booleans())
def test_values_are_written_as_cattrs_writes_them(value: Any, precise: bool) -> None:
    ours = (PRECISE if precise else codec).encode(value)
    # JSON text, not ==: key order, and 1 against 1.0 against true, count too.
    assert json.dumps(ours) == json.dumps(cattrs_encode(value, precise))


def test_unknown_shapes_are_left_to_cattrs() -> None:
    @attrs.frozen
    class Odd:
        items: list[int] = attrs.Factory(list)
        name: str = attrs.field(default="", converter=str)

    conv = codec.converter
    assert conv.unstructure(Odd([1], "n")) == {"items": [1], "name": "n"}
    assert conv.unstructure(Odd()) == {}


@given(st.one_of(tasks, messages, status_updates, artifact_updates))
def test_stream_events_are_wrapped_in_their_oneof_key(event: Any) -> None:
    key = {
        Task: "task",
        Message: "message",
        TaskStatusUpdateEvent: "statusUpdate",
        TaskArtifactUpdateEvent: "artifactUpdate",
    }[type(event)]
    assert codec.encode_event(event) == {key: codec.encode(event)}


@given(tasks)
def test_encoded_timestamps_are_utc_milliseconds(task: Task) -> None:
    encoded = codec.encode(task)
    stamp = encoded["status"].get("timestamp")
    if task.status.timestamp is None:
        assert stamp is None
    else:
        assert TIMESTAMP.match(stamp), stamp


@given(cards)
def test_card_required_fields_are_always_written(card: AgentCard) -> None:
    encoded = codec.encode(card)
    for key in (
        "name",
        "description",
        "version",
        "supportedInterfaces",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
    ):
        assert key in encoded


# --- output form ------------------------------------------------------------------------------


def test_minimal_card_writes_required_fields_even_when_default() -> None:
    card = AgentCard(name="n", description="d", version="1", default_input_modes=())
    assert codec.encode(card) == {
        "name": "n",
        "description": "d",
        "version": "1",
        "supportedInterfaces": [],
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


def test_default_values_are_omitted() -> None:
    message = Message("m", Role.USER, (Part(text="hi"),))
    assert codec.encode(message) == {
        "messageId": "m",
        "role": "ROLE_USER",
        "parts": [{"text": "hi"}],
    }
    event = TaskArtifactUpdateEvent("t", "c", Artifact("a", (Part(text=""),)))
    # append/lastChunk false are defaults; an empty text part is still a text part.
    assert codec.encode(event) == {
        "taskId": "t",
        "contextId": "c",
        "artifact": {"artifactId": "a", "parts": [{"text": ""}]},
    }
    assert codec.encode(ListTasksRequest()) == {}


def test_list_tasks_response_writes_every_field() -> None:
    assert codec.encode(ListTasksResponse((), "", 50, 0)) == {
        "tasks": [],
        "nextPageToken": "",
        "pageSize": 50,
        "totalSize": 0,
    }


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(2025, 3, 4, 5, 6, 7, 891234, tzinfo=UTC), "2025-03-04T05:06:07.891Z"),
        (
            datetime(2025, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1))),
            "2024-12-31T23:30:00.000Z",
        ),
        (datetime(2025, 1, 1, tzinfo=UTC), "2025-01-01T00:00:00.000Z"),
    ],
)
def test_timestamps_encode_as_utc_with_milliseconds(moment: datetime, text: str) -> None:
    status = TaskStatus(TaskState.WORKING, timestamp=moment)
    assert codec.encode(status)["timestamp"] == text


@given(timestamps)
def test_timestamp_text_round_trips(moment: datetime) -> None:
    text = format_timestamp(moment)
    assert TIMESTAMP.match(text)
    assert parse_timestamp(text) == moment


def test_timestamps_before_year_1000_are_zero_padded() -> None:
    moment = datetime(5, 1, 1, tzinfo=UTC)
    text = format_timestamp(moment)
    assert text == "0005-01-01T00:00:00.000Z"
    assert parse_timestamp(text) == moment


def test_bytes_encode_as_base64() -> None:
    assert codec.encode(Part(raw=b"\x00\xff\xfe")) == {"raw": "AP/+"}


@pytest.mark.parametrize("text", ["AP/+", "AP_-", "AP8"])
def test_bytes_decode_from_standard_or_url_safe_base64(text: str) -> None:
    part = codec.decode(Part, {"raw": text}, "params")
    assert part.raw is not None
    assert part.raw.startswith(b"\x00\xff")


def test_invalid_base64_is_a_field_error() -> None:
    error = decode_error(SendMessageRequest, send_params(parts=[{"raw": "@@@"}]))
    assert error.violations[0] == FieldViolation(
        "params.message.parts[0].raw", "expected base64-encoded bytes"
    )


# --- strict decoding --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        # A number for a string.
        (send_params(messageId=7), "params.message.messageId"),
        (send_params(parts=[{"text": 7}]), "params.message.parts[0].text"),
        # "false" for a boolean.
        (
            {"message": user_message_json(), "configuration": {"returnImmediately": "false"}},
            "params.configuration.returnImmediately",
        ),
        # A string for an array.
        (send_params(parts="hi"), "params.message.parts"),
        (
            {"message": user_message_json(), "configuration": {"acceptedOutputModes": "text"}},
            "params.configuration.acceptedOutputModes",
        ),
        # An object where a string goes, and null for a required string.
        (send_params(messageId={"a": 1}), "params.message.messageId"),
        (send_params(messageId=None), "params.message.messageId"),
        # A Part with two content members, or none.
        (send_params(parts=[{"text": "a"}, {"text": "b", "url": "u"}]), "params.message.parts[1]"),
        (send_params(parts=[{}]), "params.message.parts[0]"),
        # A bad enum name, a non-object metadata.
        (send_params(role="user"), "params.message.role"),
        (send_params(metadata=[1]), "params.message.metadata"),
        # The message itself of the wrong type; params not an object at all.
        ({"message": "hi"}, "params.message"),
        ("hi", "params"),
        ([], "params"),
        (None, "params"),
        (3, "params"),
    ],
)
def test_wrong_json_types_name_the_wire_path(params: Any, field: str) -> None:
    error = decode_error(SendMessageRequest, params)
    assert error.violations[0].field == field
    assert error.codes.jsonrpc == -32602
    assert field in error.message


@pytest.mark.parametrize(
    ("cls", "params", "field"),
    [
        (SendMessageRequest, {}, "params.message"),
        (
            SendMessageRequest,
            {"message": {"role": "ROLE_USER", "parts": []}},
            "params.message.messageId",
        ),
        (SendMessageRequest, {"message": {"messageId": "m", "parts": []}}, "params.message.role"),
        (SendMessageRequest, {"message": {"messageId": "m", "role": 1}}, "params.message.parts"),
        (GetTaskRequest, {}, "params.id"),
        (TaskPushNotificationConfig, {"taskId": "t"}, "params.url"),
    ],
)
def test_missing_required_fields_say_so(cls: type[Any], params: Any, field: str) -> None:
    error = decode_error(cls, params)
    assert FieldViolation(field, "required field is missing") in error.violations


def test_every_bad_field_is_reported() -> None:
    error = decode_error(
        SendMessageRequest, {"message": {"messageId": 1, "role": "nope", "parts": [{"text": 2}]}}
    )
    fields = {v.field for v in error.violations}
    assert fields == {
        "params.message.messageId",
        "params.message.role",
        "params.message.parts[0].text",
    }


@pytest.mark.parametrize("value", [1.5, True, 2**31, -(2**31) - 1, "1.0", "x", "", [1]])
def test_integers_are_strict_int32(value: Any) -> None:
    error = decode_error(GetTaskRequest, {"id": "t", "historyLength": value})
    assert error.violations[0].field == "params.historyLength"


@pytest.mark.parametrize(
    ("value", "number"), [("12", 12), ("-3", -3), (7, 7), (2**31 - 1, 2**31 - 1)]
)
def test_integers_may_be_decimal_strings(value: Any, number: int) -> None:
    # ProtoJSON writes 64-bit integers as strings and accepts a string for any integer field.
    request = codec.decode(GetTaskRequest, {"id": "t", "historyLength": value}, "params")
    assert request.history_length == number


def test_integral_floats_are_integers() -> None:
    request = codec.decode(GetTaskRequest, {"id": "t", "historyLength": 3.0}, "p")
    assert request.history_length == 3
    assert type(request.history_length) is int


def test_snake_case_keys_are_accepted_like_camel_case() -> None:
    snake = {
        "message": {
            "message_id": "m",
            "role": "ROLE_USER",
            "parts": [{"text": "hi", "media_type": "text/plain"}],
            "task_id": "t",
            "context_id": "c",
            "reference_task_ids": ["r"],
        },
        "configuration": {"history_length": 2, "return_immediately": True},
    }
    camel = {
        "message": {
            "messageId": "m",
            "role": "ROLE_USER",
            "parts": [{"text": "hi", "mediaType": "text/plain"}],
            "taskId": "t",
            "contextId": "c",
            "referenceTaskIds": ["r"],
        },
        "configuration": {"historyLength": 2, "returnImmediately": True},
    }
    decoded = codec.decode(SendMessageRequest, snake, "params")
    assert decoded == codec.decode(SendMessageRequest, camel, "params")
    assert decoded.message.message_id == "m"
    assert decoded.message.task_id == "t"
    assert decoded.configuration is not None
    assert decoded.configuration.return_immediately is True
    push = codec.decode(GetTaskPushNotificationConfigRequest, {"task_id": "t", "id": "c"}, "p")
    assert push == GetTaskPushNotificationConfigRequest(task_id="t", id="c")


def test_snake_case_errors_are_reported_under_the_camel_case_name() -> None:
    error = decode_error(SendMessageRequest, {"message": user_message_json() | {"task_id": 5}})
    assert error.violations[0].field == "params.message.taskId"


@pytest.mark.parametrize(("number", "state"), list(enumerate(TaskState)))
def test_task_state_numbers_are_the_proto_numbers(number: int, state: TaskState) -> None:
    request = codec.decode(ListTasksRequest, {"status": number}, "params")
    assert request.status is state
    expected = {
        0: "TASK_STATE_UNSPECIFIED",
        1: "TASK_STATE_SUBMITTED",
        2: "TASK_STATE_WORKING",
        3: "TASK_STATE_COMPLETED",
        4: "TASK_STATE_FAILED",
        5: "TASK_STATE_CANCELED",
        6: "TASK_STATE_INPUT_REQUIRED",
        7: "TASK_STATE_REJECTED",
        8: "TASK_STATE_AUTH_REQUIRED",
    }
    assert state.value == expected[number]


@pytest.mark.parametrize(
    ("number", "role"), [(0, Role.UNSPECIFIED), (1, Role.USER), (2, Role.AGENT)]
)
def test_role_numbers_are_accepted(number: int, role: Role) -> None:
    message = codec.decode(Message, user_message_json() | {"role": number}, "params")
    assert message.role is role


@pytest.mark.parametrize("value", [9, -1, True, "2", "TASK_STATE_DONE", "working"])
def test_unknown_enum_values_are_refused(value: Any) -> None:
    error = decode_error(ListTasksRequest, {"status": value})
    assert error.violations[0].field == "params.status"


def test_unknown_fields_are_ignored() -> None:
    params = {
        "message": user_message_json() | {"kind": "message", "surprise": {"deep": [1]}},
        "futureField": True,
    }
    decoded = codec.decode(SendMessageRequest, params, "params")
    assert decoded == SendMessageRequest(Message("m-1", Role.USER, (Part(text="hi"),)))


def test_part_data_is_any_json_value() -> None:
    for value in [0, False, "", [], {}, {"nested": [None, 1.5]}]:
        part = codec.decode(Part, {"data": value}, "params")
        assert part.data == value
        assert codec.encode(part) == {"data": value}


def test_timestamps_with_offsets_are_taken_to_utc() -> None:
    request = codec.decode(
        ListTasksRequest, {"statusTimestampAfter": "2025-01-01T02:00:00+02:00"}, "params"
    )
    assert request.status_timestamp_after == datetime(2025, 1, 1, tzinfo=UTC)
    assert request.status_timestamp_after.tzinfo is not None


@pytest.mark.parametrize("value", ["yesterday", "2025-13-01T00:00:00Z", 1700000000, ""])
def test_bad_timestamps_are_field_errors(value: Any) -> None:
    error = decode_error(ListTasksRequest, {"statusTimestampAfter": value})
    assert error.violations[0].field == "params.statusTimestampAfter"


def test_security_scheme_oneof_needs_exactly_one_member() -> None:
    card = {"name": "n", "description": "d", "version": "1"}
    both = {
        "a": {"apiKeySecurityScheme": {"location": "header", "name": "k"}, "mtlsSecurityScheme": {}}
    }
    with pytest.raises(InvalidParamsError):
        codec.decode(AgentCard, card | {"securitySchemes": both}, "card")
    none: dict[str, Any] = {"a": {}}
    with pytest.raises(InvalidParamsError):
        codec.decode(AgentCard, card | {"securitySchemes": none}, "card")
    with pytest.raises(InvalidParamsError) as raised:
        codec.decode(AgentCard, card | {"securitySchemes": {"a": "apiKey"}}, "card")
    (violation,) = raised.value.violations
    assert violation.field.startswith("card.securitySchemes")
    assert violation.description == "expected a JSON object holding one security scheme"


def test_error_details_carry_error_info_and_bad_request() -> None:
    error = decode_error(SendMessageRequest, send_params(messageId=7))
    details = codec.encode_error_details(error)
    assert details[0] == {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "INVALID_PARAMS",
        "domain": "a2a-protocol.org",
    }
    assert details[1] == {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [
            {"field": "params.message.messageId", "description": "expected a string, got a number"}
        ],
    }


def test_a_timestamp_without_an_offset_is_utc() -> None:
    assert parse_timestamp("2026-01-02T03:04:05") == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert parse_timestamp("2026-01-02T04:04:05+01:00") == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_oauth_scopes_are_strings_to_strings() -> None:
    flows = {"clientCredentials": {"tokenUrl": "https://t", "scopes": {"read": 5}}}
    card = codec.encode(AgentCard("n", "d", "1"))
    card["securitySchemes"] = {"o": {"oauth2SecurityScheme": {"flows": flows}}}
    with pytest.raises(InvalidParamsError) as raised:
        codec.decode(AgentCard, card, "card")
    (violation,) = raised.value.violations
    assert violation.field.startswith("card.securitySchemes")
    assert violation.description == "expected string values, got a number for 'read'"


def test_notes_that_are_not_cattrs_paths_do_not_change_the_path() -> None:
    """An exception may carry notes of its own (Python's, a library's) beside cattrs' notes:
    only cattrs' say where the value was."""
    inner = ValueError("bad")
    inner.add_note("a note that is not a path")
    inner.add_note(AttributeValidationNote("Structuring field", "task_id", str))
    error = ClassValidationError("While structuring", [inner], GetTaskRequest)
    assert _strict.violations(error, "params") == [FieldViolation("params.taskId", "bad")]
