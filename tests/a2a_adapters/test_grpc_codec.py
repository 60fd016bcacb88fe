"""The gRPC payload codec, round trip against the official SDK's own protobuf types.

A message the SDK writes is read by our codec into the model (through ProtoJSON and the same
v1.0 codec as every binding), written back, and read again by the SDK: it must come back equal.
Our messages live in a descriptor pool of their own, so the SDK's ``lf.a2a.v1`` (another
revision of the proto) loads beside them in one process: that is checked too.
"""

from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.types import a2a_pb2 as sdk
from google.protobuf import json_format, struct_pb2, timestamp_pb2
from google.protobuf.message import Message as ProtoMessage
from hypothesis import HealthCheck, given, settings

from a2a_adapters.grpc import METHODS, ProtoPayloads
from a2a_adapters.grpc._proto import a2a_pb2 as ours
from a2a_core import Core, CoreConfig
from a2a_core.card import AgentCard
from a2a_core.front._decoding import V1_METHODS
from a2a_core.grpc import PayloadError
from a2a_core.model._task import ListTaskPushNotificationConfigsResponse, ListTasksResponse, Task
from a2a_core.testing import strategies
from a2a_core.transport import V1Codec

CODEC = V1Codec()
PAYLOADS = ProtoPayloads()


def struct(**values: Any) -> struct_pb2.Struct:
    built = struct_pb2.Struct()
    built.update(values)
    return built


def stamp() -> timestamp_pb2.Timestamp:
    when = timestamp_pb2.Timestamp()
    when.FromDatetime(datetime(2026, 12, 1, 12, 30, 45, 123000, tzinfo=UTC))
    return when


def user_message() -> Any:
    return sdk.Message(
        message_id="m-1",
        context_id="c-1",
        task_id="t-1",
        role=sdk.ROLE_USER,
        parts=[
            sdk.Part(text="hello", metadata=struct(lang="en")),
            sdk.Part(raw=b"\x00\x01binary", media_type="application/octet-stream", filename="b"),
            sdk.Part(url="https://example.com/f.png", media_type="image/png"),
            sdk.Part(data=struct_pb2.Value(struct_value=struct(a=1, b=[True, None, "x"]))),
        ],
        metadata=struct(trace="abc", n=2.5),
        extensions=["urn:example:ext"],
        reference_task_ids=["t-0"],
    )


def task() -> Any:
    return sdk.Task(
        id="t-1",
        context_id="c-1",
        status=sdk.TaskStatus(
            state=sdk.TASK_STATE_WORKING,
            message=sdk.Message(
                message_id="m-2", role=sdk.ROLE_AGENT, parts=[sdk.Part(text="thinking")]
            ),
            timestamp=stamp(),
        ),
        artifacts=[
            sdk.Artifact(
                artifact_id="a-1",
                name="result",
                description="what came of it",
                parts=[sdk.Part(text="42")],
                metadata=struct(k="v"),
            )
        ],
        history=[user_message()],
        metadata=struct(owner="someone"),
    )


#: (method, the request the SDK sends) for every method that takes fields.
REQUESTS: list[tuple[str, ProtoMessage]] = [
    (
        "SendMessage",
        sdk.SendMessageRequest(
            message=user_message(),
            configuration=sdk.SendMessageConfiguration(
                accepted_output_modes=["text/plain"],
                history_length=3,
                return_immediately=True,
                task_push_notification_config=sdk.TaskPushNotificationConfig(
                    url="https://hooks.example.com/a2a",
                    token="tok",
                    authentication=sdk.AuthenticationInfo(scheme="Bearer", credentials="x"),
                ),
            ),
            metadata=struct(skillId="echo"),
        ),
    ),
    ("SendStreamingMessage", sdk.SendMessageRequest(message=user_message())),
    ("GetTask", sdk.GetTaskRequest(id="t-1", history_length=0)),
    (
        "ListTasks",
        sdk.ListTasksRequest(
            context_id="c-1",
            status=sdk.TASK_STATE_COMPLETED,
            page_size=10,
            page_token="abc",
            history_length=2,
            status_timestamp_after=stamp(),
            include_artifacts=True,
        ),
    ),
    ("CancelTask", sdk.CancelTaskRequest(id="t-1", metadata=struct(why="done"))),
    ("SubscribeToTask", sdk.SubscribeToTaskRequest(id="t-1")),
    (
        "CreateTaskPushNotificationConfig",
        sdk.TaskPushNotificationConfig(
            task_id="t-1", id="p-1", url="https://hooks.example.com/a2a", token="tok"
        ),
    ),
    (
        "GetTaskPushNotificationConfig",
        sdk.GetTaskPushNotificationConfigRequest(task_id="t-1", id="p-1"),
    ),
    (
        "ListTaskPushNotificationConfigs",
        sdk.ListTaskPushNotificationConfigsRequest(task_id="t-1", page_size=5, page_token="n"),
    ),
    (
        "DeleteTaskPushNotificationConfig",
        sdk.DeleteTaskPushNotificationConfigRequest(task_id="t-1", id="p-1"),
    ),
]


def test_every_method_of_the_service_is_in_the_table_and_the_core_knows_it() -> None:
    assert set(METHODS) == set(V1_METHODS)
    assert set(METHODS) == {m.name for m in sdk.DESCRIPTOR.services_by_name["A2AService"].methods}


@pytest.mark.parametrize(("method", "request_"), REQUESTS, ids=[m for m, _ in REQUESTS])
def test_a_request_the_sdk_writes_round_trips_through_the_model(
    method: str, request_: ProtoMessage
) -> None:
    params = PAYLOADS.decode(method, request_.SerializeToString())
    model = CODEC.decode(V1_METHODS[method][1], params, "")
    again = json_format.ParseDict(CODEC.encode(model), type(request_)())
    assert again == request_


#: The model type each unary method answers with.
ANSWERS: dict[str, type[Any]] = {
    "GetTask": Task,
    "CancelTask": Task,
    "ListTasks": ListTasksResponse,
    "ListTaskPushNotificationConfigs": ListTaskPushNotificationConfigsResponse,
}


def sdk_of(method: str, payload: bytes) -> ProtoMessage:
    """What the SDK reads from our response bytes for ``method``."""
    response_type = getattr(sdk, METHODS[method][1].DESCRIPTOR.name, None)
    assert response_type is not None
    return response_type.FromString(payload)


@pytest.mark.parametrize(
    ("method", "response"),
    [
        ("GetTask", task()),
        ("CancelTask", task()),
        ("SendMessage", sdk.SendMessageResponse(task=task())),
        ("SendMessage", sdk.SendMessageResponse(message=user_message())),
        ("SendStreamingMessage", sdk.StreamResponse(task=task())),
        (
            "SubscribeToTask",
            sdk.StreamResponse(
                status_update=sdk.TaskStatusUpdateEvent(
                    task_id="t-1",
                    context_id="c-1",
                    status=sdk.TaskStatus(state=sdk.TASK_STATE_COMPLETED, timestamp=stamp()),
                )
            ),
        ),
        (
            "SubscribeToTask",
            sdk.StreamResponse(
                artifact_update=sdk.TaskArtifactUpdateEvent(
                    task_id="t-1",
                    context_id="c-1",
                    artifact=sdk.Artifact(artifact_id="a", parts=[sdk.Part(text="chunk")]),
                    append=True,
                    last_chunk=True,
                )
            ),
        ),
        (
            "ListTasks",
            sdk.ListTasksResponse(tasks=[task()], next_page_token="n", page_size=1, total_size=7),
        ),
        (
            "ListTaskPushNotificationConfigs",
            sdk.ListTaskPushNotificationConfigsResponse(
                configs=[
                    sdk.TaskPushNotificationConfig(
                        task_id="t-1", id="p-1", url="https://hooks.example.com/a2a"
                    )
                ],
                next_page_token="",
            ),
        ),
    ],
)
def test_a_response_the_model_writes_is_read_by_the_sdk(
    method: str, response: ProtoMessage
) -> None:
    """The SDK's message, as ProtoJSON, into the model and out through our codec: the SDK
    reads back what it started with."""
    encoded = json_format.MessageToDict(response)
    if method in ("SendMessage", "SendStreamingMessage", "SubscribeToTask"):
        value = CODEC.encode_event(CODEC.decode_event(encoded, ""))
    else:
        value = CODEC.encode(CODEC.decode(ANSWERS[method], encoded, ""))
    assert sdk_of(method, PAYLOADS.encode(method, value)) == response


def test_the_card_the_core_serves_is_an_agent_card_to_the_sdk() -> None:
    card = AgentCard(name="card", description="a card", version="1.0.0")
    core = Core(CoreConfig(card=card, grpc_port=50051), grpc=PAYLOADS)
    served = CODEC.encode(core.card("http://127.0.0.1:9999"))
    read = sdk.AgentCard.FromString(PAYLOADS.encode("GetExtendedAgentCard", served))
    assert read.name == "card"
    assert [i.protocol_binding for i in read.supported_interfaces] == [
        "JSONRPC",
        "HTTP+JSON",
        "GRPC",
        "JSONRPC",
    ]


def test_unknown_fields_of_ours_are_dropped_not_fatal() -> None:
    payload = PAYLOADS.encode(
        "GetTask", {"id": "t", "status": {"state": "TASK_STATE_WORKING"}, "kind": "task"}
    )
    assert sdk.Task.FromString(payload).id == "t"


def test_bytes_that_are_not_the_message_are_a_payload_error() -> None:
    with pytest.raises(PayloadError):
        PAYLOADS.decode("GetTask", b"\xff\xff\xff")


def test_our_pool_and_the_sdks_live_side_by_side() -> None:
    our_task = METHODS["GetTask"][1]
    assert our_task.DESCRIPTOR.file is ours.DESCRIPTOR
    assert our_task.DESCRIPTOR.full_name == sdk.Task.DESCRIPTOR.full_name == "lf.a2a.v1.Task"
    assert our_task.DESCRIPTOR.file.pool is not sdk.Task.DESCRIPTOR.file.pool
    assert sdk.Task.FromString(our_task(id="x").SerializeToString()).id == "x"


# --- property round trips: anything the model can hold --------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.v1_calls())
def test_every_request_an_sdk_client_sends_decodes_to_the_same_request(call: Any) -> None:
    method, request_ = call
    sdk_request = METHODS[method][0].DESCRIPTOR.name
    sent = json_format.ParseDict(CODEC.encode(request_), getattr(sdk, sdk_request)())
    params = PAYLOADS.decode(method, sent.SerializeToString())
    assert CODEC.decode(V1_METHODS[method][1], params, "") == request_


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.stream_events())
def test_every_stream_event_reaches_an_sdk_client_unchanged(event: Any) -> None:
    payload = PAYLOADS.encode("SubscribeToTask", CODEC.encode_event(event))
    read = sdk.StreamResponse.FromString(payload)
    assert CODEC.decode_event(json_format.MessageToDict(read), "") == event


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.agent_cards())
def test_every_card_reaches_an_sdk_client_as_its_json_does(card: AgentCard) -> None:
    """Compared as the SDK reads it: the bytes mean what the card's ProtoJSON means. (Decoding
    back is no test here: proto3 cannot tell an empty required string, which our cards may
    hold, from a missing one, which our strict decoder refuses.)"""
    encoded = CODEC.encode(card)
    read = sdk.AgentCard.FromString(PAYLOADS.encode("GetExtendedAgentCard", encoded))
    assert read == json_format.ParseDict(encoded, sdk.AgentCard(), ignore_unknown_fields=True)
