"""Hostile gRPC calls, on both loops: frames that are not one well-formed message, and values
protobuf's wire can carry but ProtoJSON (and so A2A) cannot. Each gets a gRPC status that says
what was wrong (INVALID_ARGUMENT naming the field, UNIMPLEMENTED, RESOURCE_EXHAUSTED), never
INTERNAL or UNKNOWN, a response without a status, or a traceback in the log.

Frames go over a raw HTTP/2 connection (``h2``), since a gRPC client only sends well-formed
ones; values go through grpcio with messages built from the spec's proto.
"""

import gzip
import math
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import attrs
import grpc
import pytest
from a2a.types import a2a_pb2 as pb
from google.protobuf.message import Message as ProtoMessage

from a2a_core import AgentContext, Update, completed
from tests import servers
from tests.a2a_adapters.hostile.support import (
    SERVICE,
    code_of,
    grpc_call,
    grpc_status,
    h2_call,
    quiet_log,
)
from tests.servers import GrpcServer, running_grpc_server

pytestmark = pytest.mark.usefixtures("module_adapter")

#: gRPC status codes by name, as they travel in ``grpc-status``.
INVALID_ARGUMENT, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, UNIMPLEMENTED = "3", "8", "9", "12"


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    yield completed()


@pytest.fixture(scope="module")
def server(module_adapter: servers.Adapter) -> Iterator[GrpcServer]:
    with running_grpc_server(agent, same_port=module_adapter == "trio", streaming=True) as running:
        yield running


def framed(message: bytes, *, flag: int = 0, length: int | None = None) -> bytes:
    size = len(message) if length is None else length
    return bytes([flag]) + size.to_bytes(4, "big") + message


def a_send(**message: Any) -> bytes:
    fields: dict[str, Any] = {"message_id": "m-1", "role": pb.ROLE_USER}
    fields["parts"] = [pb.Part(text="hi")]
    fields.update(message)
    data: bytes = pb.SendMessageRequest(message=pb.Message(**fields)).SerializeToString()
    return data


GET = pb.GetTaskRequest(id="t-1").SerializeToString()


@attrs.frozen
class Frame:
    name: str
    method: str
    body: bytes
    status: str
    headers: tuple[tuple[str, str], ...] = ()


FRAMES = [
    Frame("no body", "GetTask", b"", INVALID_ARGUMENT),
    Frame("half a prefix", "GetTask", b"\x00\x00\x00", INVALID_ARGUMENT),
    Frame("a compressed flag of 2", "GetTask", framed(GET, flag=2), INVALID_ARGUMENT),
    Frame("a prefix longer than the body", "GetTask", framed(GET, length=100), INVALID_ARGUMENT),
    Frame("a prefix shorter than the body", "GetTask", framed(GET, length=1), INVALID_ARGUMENT),
    Frame("two messages", "GetTask", framed(GET) + framed(GET), INVALID_ARGUMENT),
    Frame("a prefix of 4 GiB", "GetTask", framed(GET, length=2**32 - 1), INVALID_ARGUMENT),
    Frame("compressed, no grpc-encoding", "GetTask", framed(GET, flag=1), INVALID_ARGUMENT),
    Frame(
        "compressed with brotli",
        "GetTask",
        framed(GET, flag=1),
        UNIMPLEMENTED,
        (("grpc-encoding", "br"),),
    ),
    Frame(
        "gzip that is not gzip",
        "GetTask",
        framed(b"not gzip", flag=1),
        INVALID_ARGUMENT,
        (("grpc-encoding", "gzip"),),
    ),
    Frame(
        "gzip cut short",
        "GetTask",
        framed(gzip.compress(GET)[:-6], flag=1),
        INVALID_ARGUMENT,
        (("grpc-encoding", "gzip"),),
    ),
    Frame(
        "a gzip bomb (64 MiB of zeros)",
        "GetTask",
        framed(gzip.compress(b"\x00" * 64 * 1024 * 1024), flag=1),
        RESOURCE_EXHAUSTED,
        (("grpc-encoding", "gzip"),),
    ),
    Frame("bytes that are no message", "GetTask", framed(b"\xff" * 40), INVALID_ARGUMENT),
    Frame("a string field not UTF-8", "GetTask", framed(b"\x0a\x02\xc3\x28"), INVALID_ARGUMENT),
    Frame("a method nobody has", "Frobnicate", framed(GET), UNIMPLEMENTED),
    Frame(
        "a version nobody speaks",
        "GetTask",
        framed(GET),
        FAILED_PRECONDITION,
        (("a2a-version", "9.9"),),
    ),
    Frame(
        "a grpc-timeout that is not one",
        "GetTask",
        framed(GET),
        INVALID_ARGUMENT,
        (("grpc-timeout", "soon"),),
    ),
]


@pytest.mark.parametrize("case", FRAMES, ids=lambda case: case.name)
def test_a_hostile_frame_gets_a_status_that_says_what_was_wrong(
    server: GrpcServer, case: Frame, caplog: pytest.LogCaptureFixture
) -> None:
    with quiet_log(caplog):
        head, trailers = h2_call(server.target, SERVICE + case.method, case.body, case.headers)
    assert head.get(":status") == "200", head
    assert grpc_status(head, trailers) == case.status, (head, trailers)
    assert (trailers or head).get("grpc-message")


@attrs.frozen
class Value:
    name: str
    method: str
    message: Callable[[], ProtoMessage]
    #: The ProtoJSON path the refusal names.
    field: str


def data_part(value: Any) -> pb.Part:
    found = pb.Part()
    found.data.struct_value.update({"x": value})
    return found


def with_metadata(value: Any) -> pb.SendMessageRequest:
    request: pb.SendMessageRequest = pb.SendMessageRequest.FromString(a_send())
    request.metadata.update({"k": value})
    return request


def listing(seconds: int, nanos: int = 0) -> pb.ListTasksRequest:
    request = pb.ListTasksRequest()
    request.status_timestamp_after.seconds = seconds
    request.status_timestamp_after.nanos = nanos
    return request


def sent(**message: Any) -> pb.SendMessageRequest:
    request: pb.SendMessageRequest = pb.SendMessageRequest.FromString(a_send(**message))
    return request


VALUES = [
    Value(
        "NaN in a data part",
        "SendMessage",
        lambda: sent(parts=[data_part(math.nan)]),
        "message.parts[0].data.x",
    ),
    Value(
        "Infinity in a data part",
        "SendMessage",
        lambda: sent(parts=[data_part(math.inf)]),
        "message.parts[0].data.x",
    ),
    Value(
        "-Infinity deep in a data part",
        "SendMessage",
        lambda: sent(parts=[data_part([1, {"y": -math.inf}])]),
        "message.parts[0].data.x[1].y",
    ),
    Value(
        "NaN in the send's metadata", "SendMessage", lambda: with_metadata(math.nan), "metadata.k"
    ),
    Value(
        "NaN in the message's metadata",
        "SendMessage",
        lambda: message_metadata(math.nan),
        "message.metadata.k",
    ),
    Value("a timestamp at 2^62 s", "ListTasks", lambda: listing(2**62), "statusTimestampAfter"),
    Value(
        "a timestamp in year 10000",
        "ListTasks",
        lambda: listing(253_402_300_800),
        "statusTimestampAfter",
    ),
    Value(
        "a timestamp before year 1",
        "ListTasks",
        lambda: listing(-62_135_596_801),
        "statusTimestampAfter",
    ),
    Value("negative nanoseconds", "ListTasks", lambda: listing(10, -5), "statusTimestampAfter"),
    Value(
        "a second of nanoseconds", "ListTasks", lambda: listing(10, 10**9), "statusTimestampAfter"
    ),
]


def message_metadata(value: Any) -> pb.SendMessageRequest:
    request = sent()
    request.message.metadata.update({"k": value})
    return request


@pytest.mark.parametrize("case", VALUES, ids=lambda case: case.name)
def test_a_value_json_cannot_carry_is_invalid_argument_naming_its_field(
    server: GrpcServer, case: Value, caplog: pytest.LogCaptureFixture
) -> None:
    with quiet_log(caplog):
        answer = grpc_call(server.target, case.method, case.message().SerializeToString())
    assert code_of(answer) == grpc.StatusCode.INVALID_ARGUMENT
    assert f"{case.field}:" in answer.details()  # type: ignore[union-attr]


def test_the_same_values_in_range_are_served(server: GrpcServer) -> None:
    """The cases' values at their limits pass: what is refused is the value, not the field."""
    for message in (
        sent(parts=[data_part(1.5e308)]),
        listing(253_402_300_799, 999_999_999),
        listing(-62_135_596_800),
    ):
        method = "ListTasks" if isinstance(message, pb.ListTasksRequest) else "SendMessage"
        answer = grpc_call(server.target, method, message.SerializeToString())
        assert isinstance(answer, bytes), answer
