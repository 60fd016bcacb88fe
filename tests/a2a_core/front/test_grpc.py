"""The gRPC binding of the core, with no event loop and no server.

The payload codec here writes each message as JSON (a real implementation of the core's
``PayloadCodec`` protocol, in another wire format), so these tests see exactly what the core
decides: framing, metadata, routing, status trailers and streams. The status details are
decoded with the real ``google.rpc`` protobuf modules, as a peer decodes them. The protobuf
codec itself is tested against the SDK's own types in ``tests/a2a_adapters/test_grpc_codec.py``.
"""

import base64
import gzip
import json
from datetime import timedelta
from typing import Any

import pytest
from google.rpc import error_details_pb2, status_pb2

from a2a_core import Core, CoreConfig, ErrorMapping, Task, TaskState, TaskStatus
from a2a_core._errors import (
    CompressionNotSupportedError,
    InvalidRequestError,
    PayloadTooLargeError,
    TaskNotFoundError,
)
from a2a_core.card import AgentCapabilities, AgentCard, AgentExtension
from a2a_core.decisions import Respond
from a2a_core.errors import FieldViolation, UsageError
from a2a_core.front._exchange import Binding, Dispatch
from a2a_core.front._http import HttpFront
from a2a_core.grpc import (
    GRPC_CODES,
    PayloadError,
    frame,
    grpc_timeout,
    percent_encode,
    status_details,
    unframe,
)
from a2a_core.store import MemoryTasks
from a2a_core.testing import counting_ids
from a2a_core.transport import (
    ANONYMOUS,
    Answer,
    Frames,
    HttpRequest,
    HttpResponse,
    Read,
    Server,
    StartRun,
    StreamOpened,
    V1Codec,
)
from tests.a2a_core.support import CARD, EPOCH

GRPC = {"content-type": "application/grpc", "te": "trailers", "a2a-version": "1.0"}
PATH = "/lf.a2a.v1.A2AService/"


class JsonPayloads:
    """Each message as its ProtoJSON, UTF-8: the core's side of the codec, without protobuf."""

    def decode(self, method: str, payload: bytes) -> Any:
        try:
            return json.loads(payload)
        except ValueError as error:
            raise PayloadError(str(error)) from None

    def encode(self, method: str, value: Any) -> bytes:
        return json.dumps(value).encode()


def core(**options: Any) -> Core:
    options.setdefault("card", CARD)
    return Core(CoreConfig(**options), grpc=JsonPayloads())


def call(method: str, message: Any, **headers: str) -> HttpRequest:
    return HttpRequest(
        "POST", PATH + method, {**GRPC, **headers}, frame(json.dumps(message).encode())
    )


def send_params(text: str = "hi", message_id: str = "m-1", **configuration: Any) -> Any:
    params: dict[str, Any] = {
        "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
    }
    if configuration:
        params["configuration"] = configuration
    return params


def trailers(response: HttpResponse) -> dict[str, str]:
    assert response.status == 200
    assert dict(response.headers)["content-type"] == "application/grpc"
    return dict(response.trailers)


def status(response_trailers: dict[str, str]) -> status_pb2.Status:
    """The ``google.rpc.Status`` of the details trailer, checked against the others."""
    decoded = status_pb2.Status.FromString(
        base64.b64decode(response_trailers["grpc-status-details-bin"])
    )
    assert decoded.code == int(response_trailers["grpc-status"])
    return decoded


def error_info(decoded: status_pb2.Status) -> error_details_pb2.ErrorInfo:
    (detail,) = [d for d in decoded.details if d.type_url.endswith("google.rpc.ErrorInfo")]
    info = error_details_pb2.ErrorInfo()
    assert detail.Unpack(info)
    assert info.domain == "a2a-protocol.org"
    return info


def refused(core_: Core, request: HttpRequest) -> tuple[int, error_details_pb2.ErrorInfo]:
    routed = core_.handle_http(request, ANONYMOUS, "http://host")
    assert isinstance(routed, HttpResponse), routed
    assert routed.body == b""
    found = trailers(routed)
    return int(found["grpc-status"]), error_info(status(found))


# --- framing, deadlines, messages ---------------------------------------------------------------


@pytest.mark.parametrize("message", [b"", b"x", bytes(range(256)) * 300])
def test_a_framed_message_unframes_to_itself(message: bytes) -> None:
    framed = frame(message)
    assert framed[0] == 0
    assert int.from_bytes(framed[1:5], "big") == len(message)
    assert unframe(framed, "", 1 << 20) == message


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"\x00\x00\x00", "less than the 5-byte"),
        (b"\x02\x00\x00\x00\x00", "compressed flag is 2"),
        (b"\x00\x00\x00\x00\x05abc", "prefix says 5 bytes and 3 follow"),
        (frame(b"a") + frame(b"b"), "must be one message"),
        (b"\x01\x00\x00\x00\x01x", "no grpc-encoding was sent"),
    ],
)
def test_bad_framing_is_invalid_request(body: bytes, says: str) -> None:
    with pytest.raises(InvalidRequestError, match=says):
        unframe(body, "", 1 << 20)


def compressed(message: bytes) -> bytes:
    data = gzip.compress(message)
    return b"\x01" + len(data).to_bytes(4, "big") + data


def test_a_gzip_message_is_decompressed() -> None:
    assert unframe(compressed(b"hello" * 100), "gzip", 1 << 20) == b"hello" * 100


def test_a_gzip_message_is_never_inflated_past_the_limit() -> None:
    with pytest.raises(PayloadTooLargeError):
        unframe(compressed(b"\x00" * 1_000_000), "gzip", 1000)


def test_a_broken_gzip_message_is_invalid() -> None:
    with pytest.raises(InvalidRequestError, match="gzip"):
        unframe(b"\x01\x00\x00\x00\x03abc", "gzip", 1000)
    truncated = gzip.compress(b"hello" * 100)[:-12]
    with pytest.raises(InvalidRequestError, match="ends before"):
        unframe(b"\x01" + len(truncated).to_bytes(4, "big") + truncated, "gzip", 1000)


def test_other_compression_is_refused_saying_what_is_accepted() -> None:
    with pytest.raises(CompressionNotSupportedError, match="'snappy'") as caught:
        unframe(b"\x01\x00\x00\x00\x01x", "snappy", 1000)
    assert caught.value.metadata["acceptedEncodings"] == "identity, gzip"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", None),
        ("1S", timedelta(seconds=1)),
        ("30S", timedelta(seconds=30)),
        ("2H", timedelta(hours=2)),
        ("3M", timedelta(minutes=3)),
        ("250m", timedelta(milliseconds=250)),
        ("5u", timedelta(microseconds=5)),
        ("1500000n", timedelta(milliseconds=1.5)),
        ("99999999S", timedelta(seconds=99_999_999)),
    ],
)
def test_grpc_timeout_is_parsed(value: str, expected: timedelta | None) -> None:
    assert grpc_timeout(value) == expected


@pytest.mark.parametrize("value", ["1", "S", "1s", "1.5S", "-1S", "123456789S", "1 S"])
def test_a_bad_grpc_timeout_is_invalid(value: str) -> None:
    with pytest.raises(InvalidRequestError, match="grpc-timeout"):
        grpc_timeout(value)


@pytest.mark.parametrize(
    ("message", "encoded"),
    [
        ("Task not found", "Task not found"),
        ("100% done", "100%25 done"),
        ("café", "caf%C3%A9"),
        ("two\nlines", "two%0Alines"),
    ],
)
def test_grpc_message_is_percent_encoded(message: str, encoded: str) -> None:
    assert percent_encode(message) == encoded


def test_status_details_are_a_google_rpc_status_with_error_info() -> None:
    error = TaskNotFoundError("Task not found: t-1", metadata={"taskId": "t-1", "z": "é"})
    decoded = status_pb2.Status.FromString(status_details(5, error))
    assert decoded.code == 5
    assert decoded.message == "Task not found: t-1"
    info = error_info(decoded)
    assert info.reason == "TASK_NOT_FOUND"
    assert dict(info.metadata) == {"taskId": "t-1", "z": "é"}


def test_status_details_carry_bad_fields_as_bad_request() -> None:
    error = InvalidRequestError(
        "bad", violations=(FieldViolation("message.parts", "is required"), FieldViolation("x", ""))
    )
    decoded = status_pb2.Status.FromString(status_details(3, error))
    (detail,) = [d for d in decoded.details if d.type_url.endswith("google.rpc.BadRequest")]
    bad = error_details_pb2.BadRequest()
    assert detail.Unpack(bad)
    assert [(v.field, v.description) for v in bad.field_violations] == [
        ("message.parts", "is required"),
        ("x", ""),
    ]


def test_a_large_status_code_and_long_message_encode() -> None:
    error = InvalidRequestError("m" * 1000)
    decoded = status_pb2.Status.FromString(status_details(300, error))
    assert (decoded.code, decoded.message) == (300, "m" * 1000)


# --- routing ------------------------------------------------------------------------------------


def test_a_call_is_routed_like_the_other_bindings() -> None:
    routed = core().handle_http(
        call("SendMessage", send_params(), **{"grpc-timeout": "5S"}), ANONYMOUS, "http://host"
    )
    assert isinstance(routed, Dispatch)
    assert routed.binding is Binding.GRPC
    assert routed.call.operation.value == "SendMessage"
    assert routed.timeout == timedelta(seconds=5)


def test_a_call_without_a2a_version_is_taken_as_1_0() -> None:
    request = call("GetTask", {"id": "t"})
    headers = {k: v for k, v in request.headers.items() if k != "a2a-version"}
    routed = core().handle_http(
        HttpRequest("POST", request.path, headers, request.body), ANONYMOUS, "h"
    )
    assert isinstance(routed, Dispatch)


def test_the_core_serves_grpc_paths_only_with_a_codec() -> None:
    assert core().serves("POST", PATH + "SendMessage")
    assert core().serves("POST", PATH + "Nope")
    assert not Core(CoreConfig(card=CARD)).serves("POST", PATH + "SendMessage")


def test_grpc_port_without_a_codec_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="payload codec"):
        Core(CoreConfig(card=CARD, grpc_port=50051))


def codes(name: str) -> int:
    return GRPC_CODES[name]


def test_an_unknown_method_is_unimplemented() -> None:
    code, info = refused(core(), call("Frobnicate", {}))
    assert code == codes("UNIMPLEMENTED")
    assert info.reason == "METHOD_NOT_FOUND"
    assert info.metadata["method"] == "Frobnicate"


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [(ErrorMapping.V1_0_0, "UNIMPLEMENTED"), (ErrorMapping.V1_0_1, "FAILED_PRECONDITION")],
)
def test_an_unsupported_version_is_refused(mapping: ErrorMapping, expected: str) -> None:
    code, info = refused(
        core(error_mapping=mapping), call("GetTask", {"id": "t"}, **{"a2a-version": "2.0"})
    )
    assert code == codes(expected)
    assert info.reason == "VERSION_NOT_SUPPORTED"
    assert info.metadata["requestedVersion"] == "2.0"


def test_a_wrong_media_type_is_415_and_a_grpc_flavour_we_lack_is_invalid() -> None:
    request = call("GetTask", {"id": "t"}, **{"content-type": "application/json"})
    routed = core().handle_http(request, ANONYMOUS, "h")
    assert isinstance(routed, HttpResponse)
    assert routed.status == 415
    assert dict(routed.trailers)["grpc-status"] == str(codes("INVALID_ARGUMENT"))
    code, info = refused(
        core(), call("GetTask", {"id": "t"}, **{"content-type": "application/grpc+json"})
    )
    assert (code, info.reason) == (codes("INVALID_ARGUMENT"), "CONTENT_TYPE_NOT_SUPPORTED")


def test_a_get_is_405() -> None:
    request = call("GetTask", {"id": "t"})
    routed = core().handle_http(HttpRequest("GET", request.path, request.headers), ANONYMOUS, "h")
    assert isinstance(routed, HttpResponse)
    assert routed.status == 405


def test_compression_we_lack_is_unimplemented_and_gzip_works() -> None:
    request = call("GetTask", {"id": "t"}, **{"grpc-encoding": "br"})
    body = b"\x01" + request.body[1:]
    code, info = refused(core(), HttpRequest("POST", request.path, request.headers, body))
    assert (code, info.reason) == (codes("UNIMPLEMENTED"), "COMPRESSION_NOT_SUPPORTED")
    zipped = HttpRequest(
        "POST",
        request.path,
        {**request.headers, "grpc-encoding": "gzip"},
        compressed(json.dumps({"id": "t"}).encode()),
    )
    assert isinstance(core().handle_http(zipped, ANONYMOUS, "h"), Dispatch)


def test_bad_bytes_and_bad_fields_are_invalid_argument() -> None:
    request = call("GetTask", {})
    garbage = HttpRequest("POST", request.path, request.headers, frame(b"\xff not json"))
    code, info = refused(core(), garbage)
    assert (code, info.reason) == (codes("INVALID_ARGUMENT"), "INVALID_PARAMS")
    code, info = refused(core(), call("SendMessage", {"message": {"role": "ROLE_USER"}}))
    assert (code, info.reason) == (codes("INVALID_ARGUMENT"), "INVALID_PARAMS")


def test_a_body_over_the_limit_is_resource_exhausted() -> None:
    small = core(max_body_bytes=100)
    code, info = refused(small, call("SendMessage", send_params("x" * 200)))
    assert (code, info.reason) == (codes("RESOURCE_EXHAUSTED"), "PAYLOAD_TOO_LARGE")
    too_large = small.too_large(PATH + "SendMessage")
    assert dict(too_large.trailers)["grpc-status"] == str(codes("RESOURCE_EXHAUSTED"))


def test_unauthenticated_and_internal_errors_are_in_trailers() -> None:
    request = call("GetTask", {"id": "t"})
    unauth = core().unauthenticated(request, ('Bearer realm="a2a"',))
    assert dict(unauth.trailers)["grpc-status"] == str(codes("UNAUTHENTICATED"))
    assert ("www-authenticate", 'Bearer realm="a2a"') in unauth.headers
    internal = core().internal_error(request.path, "boom")
    assert dict(internal.trailers)["grpc-status"] == str(codes("INTERNAL"))


def test_the_card_lists_grpc_only_when_served() -> None:
    def bindings(c: Core, base: str = "http://127.0.0.1:9999") -> dict[str, str]:
        return {i.protocol_binding: i.url for i in c.card(base).supported_interfaces}

    assert "GRPC" not in bindings(core())
    served = Core(CoreConfig(card=CARD, grpc_port=50051), grpc=JsonPayloads())
    assert bindings(served)["GRPC"] == "127.0.0.1:50051"
    assert bindings(served, "http://[::1]:9999")["GRPC"] == "[::1]:50051"
    public = Core(
        CoreConfig(card=CARD, grpc_port=443, public_url="https://agent.example.com"),
        grpc=JsonPayloads(),
    )
    assert bindings(public)["GRPC"] == "agent.example.com:443"


# --- the machine: unary calls and streams -------------------------------------------------------


class Machine:
    """The server machine over a memory store, its agent runs completed by the test."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("streaming", True)
        self.server = Server(core(**options), store=MemoryTasks(), new_id=counting_ids())
        self.now = EPOCH

    def receive(self, request: HttpRequest) -> tuple[int, list[Any]]:
        number = self.server.receive(request, self.now)
        return number, self.server.take_actions()

    def finish(self, start: StartRun, value: Any = "done") -> list[Any]:
        self.server.agent_done(start.task_id, start.run, self.now, value=value)
        return self.server.take_actions()


def messages(frames: tuple[bytes, ...]) -> list[Any]:
    return [json.loads(unframe(f, "", 1 << 20)) for f in frames]


def test_a_unary_send_answers_a_message_and_ok() -> None:
    machine = Machine()
    _, actions = machine.receive(call("SendMessage", send_params()))
    (start,) = [a for a in actions if isinstance(a, StartRun)]
    (answer,) = [a for a in machine.finish(start) if isinstance(a, Answer)]
    assert trailers(answer.response) == {"grpc-status": "0"}
    (result,) = messages((answer.response.body,))
    assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_missing_task_is_not_found_with_error_info() -> None:
    _, actions = Machine().receive(call("GetTask", {"id": "nope"}))
    (answer,) = [a for a in actions if isinstance(a, Answer)]
    found = trailers(answer.response)
    assert found["grpc-status"] == str(codes("NOT_FOUND"))
    assert error_info(status(found)).reason == "TASK_NOT_FOUND"
    assert answer.response.body == b""


def test_a_stream_carries_messages_then_ok_and_no_keepalive() -> None:
    machine = Machine()
    _, actions = machine.receive(call("SendStreamingMessage", send_params()))
    (opened,) = [a for a in actions if isinstance(a, StreamOpened)]
    assert dict(opened.headers)["content-type"] == "application/grpc"
    assert opened.keepalive == b""
    (start,) = [a for a in actions if isinstance(a, StartRun)]
    machine.now += timedelta(seconds=1)
    machine.server.tick(machine.now)  # the direct-reply window passes: the task goes out
    frames = list(opened.frames)
    ended: Frames | None = None
    for action in machine.server.take_actions() + machine.finish(start):
        if isinstance(action, Frames):
            frames.extend(action.frames)
            ended = action if action.ended else ended
    assert ended is not None
    assert ended.trailers == (("grpc-status", "0"),)
    events = messages(tuple(frames))
    assert list(events[0]) == ["task"]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_shutdown_ends_a_grpc_stream_unavailable() -> None:
    machine = Machine()
    _, actions = machine.receive(call("SendStreamingMessage", send_params()))
    assert any(isinstance(a, StreamOpened) for a in actions)
    machine.server.begin_shutdown(machine.now)
    (ended,) = [a for a in machine.server.take_actions() if isinstance(a, Frames) and a.ended]
    found = dict(ended.trailers)
    assert found["grpc-status"] == str(codes("UNAVAILABLE"))
    assert "subscribe" in found["grpc-message"]


def test_subscribing_to_a_missing_task_is_not_found() -> None:
    _, actions = Machine().receive(call("SubscribeToTask", {"id": "nope"}))
    (answer,) = [a for a in actions if isinstance(a, Answer)]
    assert trailers(answer.response)["grpc-status"] == str(codes("NOT_FOUND"))


def test_a_blocking_send_past_its_deadline_is_deadline_exceeded() -> None:
    machine = Machine()
    number, actions = machine.receive(call("SendMessage", send_params(), **{"grpc-timeout": "1S"}))
    assert any(isinstance(a, StartRun) for a in actions)
    assert machine.server.next_deadline() == machine.now + timedelta(seconds=1)
    machine.server.tick(machine.now + timedelta(milliseconds=999))
    assert not [a for a in machine.server.take_actions() if isinstance(a, Answer)]
    machine.server.tick(machine.now + timedelta(seconds=1))
    (answer,) = [a for a in machine.server.take_actions() if isinstance(a, Answer)]
    assert answer.exchange == number
    found = trailers(answer.response)
    assert found["grpc-status"] == str(codes("DEADLINE_EXCEEDED"))
    assert error_info(status(found)).reason == "DEADLINE_EXCEEDED"
    assert machine.server.waiting == 0
    assert machine.server.next_deadline() is None


def test_a_call_answered_in_time_forgets_its_deadline() -> None:
    machine = Machine()
    _, actions = machine.receive(call("GetTask", {"id": "nope"}, **{"grpc-timeout": "5S"}))
    assert any(isinstance(a, Answer) for a in actions)
    assert machine.server.next_deadline() is None


def test_a_stream_past_its_deadline_ends_deadline_exceeded() -> None:
    machine = Machine()
    _, actions = machine.receive(
        call("SendStreamingMessage", send_params(), **{"grpc-timeout": "2S"})
    )
    assert any(isinstance(a, StreamOpened) for a in actions)
    machine.server.tick(machine.now + timedelta(seconds=2))
    (ended,) = [a for a in machine.server.take_actions() if isinstance(a, Frames) and a.ended]
    assert dict(ended.trailers)["grpc-status"] == str(codes("DEADLINE_EXCEEDED"))
    assert machine.server.open_streams == 0


def test_a_deadline_that_passes_while_the_call_is_decided_is_dropped() -> None:
    """Over a store that has not answered yet, the call is still being decided when its
    deadline passes: the deadline goes (the call is answered once decided), so the machine
    never asks to be woken at a time already past."""
    # No store of its own: reads wait for the test.
    server = Server(core(streaming=True), new_id=counting_ids())
    number = server.receive(call("GetTask", {"id": "t"}, **{"grpc-timeout": "1S"}), EPOCH)
    (read,) = [a for a in server.take_actions() if isinstance(a, Read)]
    later = EPOCH + timedelta(seconds=2)
    server.tick(later)
    assert server.next_deadline() is None
    server.read_done(read.op, MemoryTasks().read(read.reads), later)
    (answer,) = [a for a in server.take_actions() if isinstance(a, Answer)]
    assert answer.exchange == number
    assert trailers(answer.response)["grpc-status"] == str(codes("NOT_FOUND"))


@pytest.mark.parametrize("path", ["/tasks/t", "/"])
def test_internal_errors_of_the_other_bindings_keep_their_form(path: str) -> None:
    response = core().internal_error(path, "boom")
    assert response.trailers == ()
    assert b"boom" in response.body


REQUIRED = "https://example.com/ext/required"
EXTENDED = AgentCard(
    name="ext",
    description="requires an extension",
    version="1.0.0",
    capabilities=AgentCapabilities(
        extensions=(AgentExtension(uri=REQUIRED, description="must be spoken", required=True),)
    ),
)


def test_a2a_extensions_metadata_is_the_same_service_parameter() -> None:
    extended = Core(CoreConfig(card=EXTENDED), grpc=JsonPayloads())
    code, info = refused(extended, call("GetTask", {"id": "t"}))
    assert (code, info.reason) == (codes("FAILED_PRECONDITION"), "EXTENSION_SUPPORT_REQUIRED")
    assert info.metadata["extensions"] == REQUIRED
    machine = Server(extended, store=MemoryTasks(), new_id=counting_ids())
    machine.receive(call("GetTask", {"id": "nope"}, **{"a2a-extensions": REQUIRED}), EPOCH)
    (answer,) = [a for a in machine.take_actions() if isinstance(a, Answer)]
    # Declared, it passes (to the task's own answer), and the answer names it as active.
    assert trailers(answer.response)["grpc-status"] == str(codes("NOT_FOUND"))
    assert ("a2a-extensions", REQUIRED) in answer.response.headers


class NoNaN(JsonPayloads):
    """A codec that refuses a value it cannot write, naming where (as the protobuf one does
    for a NaN, which protobuf's wire carries and ProtoJSON cannot)."""

    def decode(self, method: str, payload: bytes) -> Any:
        if b"NaN" in payload:
            raise PayloadError("nan is not a number JSON can carry", field="metadata.k")
        return super().decode(method, payload)


def test_a_value_the_codec_cannot_carry_is_invalid_argument_naming_its_field() -> None:
    front = Core(CoreConfig(card=CARD), grpc=NoNaN())
    request = HttpRequest("POST", PATH + "SendMessage", GRPC, frame(b'{"metadata": {"k": NaN}}'))
    code, info = refused(front, request)
    assert code == 3  # INVALID_ARGUMENT
    routed = front.handle_http(request, ANONYMOUS, "http://host")
    assert isinstance(routed, HttpResponse)
    found = status(trailers(routed))
    assert found.message == "Invalid parameters: metadata.k: nan is not a number JSON can carry"
    assert info.reason == "INVALID_PARAMS"


@pytest.mark.parametrize(
    ("method", "message", "value", "answered"),
    [
        (
            "GetTask",
            {"id": "t"},
            Task("t", TaskStatus(TaskState.WORKING), context_id="c"),
            {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}},
        ),
        ("DeleteTaskPushNotificationConfig", {"taskId": "t", "id": "p"}, None, {}),
    ],
    ids=["a-message", "empty"],
)
def test_a_unary_reply_is_its_message_then_ok(
    method: str, message: Any, value: Any, answered: Any
) -> None:
    """What the core answers is the method's response message (``google.protobuf.Empty`` for
    nothing), framed, with an OK status in the trailers."""
    front = HttpFront(CoreConfig(card=CARD, push_notifications=True), V1Codec(), JsonPayloads())
    routed = front.route(call(method, message), ANONYMOUS, "http://host")
    assert isinstance(routed, Dispatch)
    response = front.render(routed, Respond(value))
    assert trailers(response)["grpc-status"] == "0"
    assert json.loads(unframe(response.body, "", 1 << 20)) == answered
