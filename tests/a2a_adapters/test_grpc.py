"""The gRPC binding against real peers, on both adapters: a plain grpcio client (the stubs
the official SDK generates from the spec's proto) and the SDK's own gRPC client, over HTTP/2 on
127.0.0.1. On trio gRPC shares the HTTP port (h2c with prior knowledge); on asyncio it has a
port of its own (hypercorn beside uvicorn, in the same loop). A task made over one binding is
read over the others.
"""

import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import grpc
import httpx
import pytest
import trustme
from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc
from a2a.utils import errors as sdk_errors
from a2a.utils.constants import TransportProtocol
from google.protobuf import json_format
from google.rpc import error_details_pb2, status_pb2

from a2a_adapters import BearerTokens
from a2a_adapters._tls import TlsFiles
from a2a_core import (
    AgentContext,
    ArtifactChunk,
    MissingInput,
    Update,
    completed,
    text_artifact,
    working,
)
from tests import servers
from tests.a2a_adapters.sse import open_stream, result_of_event, results
from tests.a2a_adapters.support import (
    HTTP_TIMEOUT,
    cancel_task,
    get_task,
    new_id,
    send_task,
    state_of,
    wait_until,
)
from tests.servers import GrpcServer, running_grpc_server

pytestmark = pytest.mark.usefixtures("module_adapter")

V1 = (("a2a-version", "1.0"),)
#: Seconds any one call may take.
DEADLINE = 10.0


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    """Streams a status, an artifact and a completion; asks for more when told to wait."""
    if ctx.text.startswith("wait") and len(ctx.history) == 1:
        raise MissingInput("What else?")
    yield working("thinking")
    yield ArtifactChunk(text_artifact(f"artifact of {ctx.text}"))
    yield completed(f"done: {ctx.text}")


@pytest.fixture(scope="module")
def server(module_adapter: servers.Adapter) -> Iterator[GrpcServer]:
    with running_grpc_server(
        agent,
        same_port=module_adapter == "trio",
        streaming=True,
        push=True,
        error_mapping="1.0.0",
    ) as running:
        yield running


@pytest.fixture(scope="module")
def stub(server: GrpcServer) -> Iterator[Any]:
    with grpc.insecure_channel(server.target) as channel:
        yield stub_of(channel)


def stub_of(channel: grpc.Channel) -> Any:
    """The SDK's generated grpcio stub (the SDK ships it untyped)."""
    return a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]


def message(text: str, **ids: str) -> Any:
    return pb.Message(message_id=new_id(), role=pb.ROLE_USER, parts=[pb.Part(text=text)], **ids)


def send(stub: Any, text: str, **configuration: Any) -> Any:
    request = pb.SendMessageRequest(
        message=message(text), configuration=pb.SendMessageConfiguration(**configuration)
    )
    return stub.SendMessage(request, metadata=V1, timeout=DEADLINE)


def failure(call: Any) -> grpc.RpcError:
    try:
        call()
    except grpc.RpcError as error:
        return error
    raise AssertionError("the call succeeded")


def error_info(error: Any) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo in ``grpc-status-details-bin``, decoded as a peer decodes it."""
    (raw,) = [v for k, v in error.trailing_metadata() if k == "grpc-status-details-bin"]
    status = status_pb2.Status.FromString(raw)
    assert status.code == error.code().value[0]
    assert status.message == error.details()
    info = error_details_pb2.ErrorInfo()
    (detail,) = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    assert detail.Unpack(info)
    assert info.domain == "a2a-protocol.org"
    return info


# --- the card -----------------------------------------------------------------------------------


def test_the_card_lists_the_grpc_interface(server: GrpcServer) -> None:
    card = httpx.get(server.url + "/.well-known/agent-card.json", timeout=HTTP_TIMEOUT).json()
    grpc_interfaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert grpc_interfaces == [
        {"url": server.target, "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    ]


# --- a plain grpcio client ----------------------------------------------------------------------


def test_send_get_and_list(stub: Any) -> None:
    sent = send(stub, "hello")
    assert sent.WhichOneof("payload") == "task"
    task = sent.task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "artifact of hello"
    got = stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=V1, timeout=DEADLINE)
    assert got.id == task.id
    assert got.history[0].parts[0].text == "hello"
    listed = stub.ListTasks(
        pb.ListTasksRequest(context_id=task.context_id), metadata=V1, timeout=DEADLINE
    )
    assert [t.id for t in listed.tasks] == [task.id]


def test_a_stream_carries_the_events_in_order_then_ends_ok(stub: Any) -> None:
    request = pb.SendMessageRequest(message=message("streamed"))
    events = list(stub.SendStreamingMessage(request, metadata=V1, timeout=DEADLINE))
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds == ["task", "status_update", "artifact_update", "status_update"]
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert (
        len({e.task.id or e.status_update.task_id or e.artifact_update.task_id for e in events})
        == 1
    )


def test_cancel_and_subscribe(stub: Any, server: GrpcServer) -> None:
    waiting = send(stub, "wait, then go").task
    assert waiting.status.state == pb.TASK_STATE_INPUT_REQUIRED
    # Subscribe, then answer the task over JSON-RPC: the gRPC stream carries what follows.
    stream = stub.SubscribeToTask(
        pb.SubscribeToTaskRequest(id=waiting.id), metadata=V1, timeout=DEADLINE
    )
    first = next(stream)
    assert first.WhichOneof("payload") == "task"
    assert first.task.id == waiting.id
    send_task(server.url, "more", task_id=waiting.id, context_id=waiting.context_id)
    rest = list(stream)
    assert rest[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    # A task that waits again is canceled over gRPC, and then is not cancelable.
    other = send(stub, "wait again").task
    canceled = stub.CancelTask(pb.CancelTaskRequest(id=other.id), metadata=V1, timeout=DEADLINE)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    again = failure(
        lambda: stub.CancelTask(pb.CancelTaskRequest(id=other.id), metadata=V1, timeout=DEADLINE)
    )
    assert again.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(again).reason == "TASK_NOT_CANCELABLE"


def test_a_grpc_stream_carries_what_an_sse_stream_of_the_same_task_does(
    stub: Any, server: GrpcServer
) -> None:
    waiting = send(stub, "wait, then compare").task
    params = {"id": waiting.id}
    with open_stream(server.url, "SubscribeToTask", params) as sse:
        over_sse = [result_of_event(sse.events(1)[0])]
        over_grpc = stub.SubscribeToTask(
            pb.SubscribeToTaskRequest(id=waiting.id), metadata=V1, timeout=DEADLINE
        )
        first = next(over_grpc)
        send_task(server.url, "go on", task_id=waiting.id, context_id=waiting.context_id)
        over_sse += results(sse.events())
    grpc_events = [first, *over_grpc]
    assert len(grpc_events) == len(over_sse) >= 4
    # The same StreamResponse, event for event, once each is read as the SDK reads it.
    assert grpc_events == [json_format.ParseDict(r, pb.StreamResponse()) for r in over_sse]


def test_a_client_that_cancels_its_stream_stops_it(stub: Any, server: GrpcServer) -> None:
    waiting = send(stub, "wait forever").task
    stream = stub.SubscribeToTask(
        pb.SubscribeToTaskRequest(id=waiting.id), metadata=V1, timeout=DEADLINE
    )
    assert next(stream).task.id == waiting.id
    assert wait_until(lambda: server.engine.server.following(waiting.id) == 1)
    stream.cancel()
    assert wait_until(lambda: server.engine.server.following(waiting.id) == 0)


def test_push_config_crud(stub: Any) -> None:
    task = send(stub, "wait for push").task
    config = pb.TaskPushNotificationConfig(
        task_id=task.id, url="https://hooks.example.com/a2a", token="secret"
    )
    created = stub.CreateTaskPushNotificationConfig(config, metadata=V1, timeout=DEADLINE)
    assert created.id
    assert (created.task_id, created.token) == (task.id, "secret")
    fetched = stub.GetTaskPushNotificationConfig(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id),
        metadata=V1,
        timeout=DEADLINE,
    )
    assert fetched.url == "https://hooks.example.com/a2a"
    listed = stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id), metadata=V1, timeout=DEADLINE
    )
    assert [c.id for c in listed.configs] == [created.id]
    stub.DeleteTaskPushNotificationConfig(
        pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id),
        metadata=V1,
        timeout=DEADLINE,
    )
    gone = failure(
        lambda: stub.GetTaskPushNotificationConfig(
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id),
            metadata=V1,
            timeout=DEADLINE,
        )
    )
    assert gone.code() == grpc.StatusCode.NOT_FOUND


def test_errors_carry_their_status_and_error_info(stub: Any) -> None:
    missing = failure(
        lambda: stub.GetTask(pb.GetTaskRequest(id="nope"), metadata=V1, timeout=DEADLINE)
    )
    assert missing.code() == grpc.StatusCode.NOT_FOUND
    assert error_info(missing).reason == "TASK_NOT_FOUND"
    invalid = failure(
        lambda: stub.SendMessage(
            pb.SendMessageRequest(message=pb.Message(role=pb.ROLE_USER)),
            metadata=V1,
            timeout=DEADLINE,
        )
    )
    assert invalid.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(invalid).reason == "INVALID_PARAMS"


def test_an_unsupported_version_is_unimplemented(stub: Any) -> None:
    refused = failure(
        lambda: stub.GetTask(
            pb.GetTaskRequest(id="x"), metadata=(("a2a-version", "0.3"),), timeout=DEADLINE
        )
    )
    assert refused.code() == grpc.StatusCode.UNIMPLEMENTED
    info = error_info(refused)
    assert info.reason == "VERSION_NOT_SUPPORTED"
    assert info.metadata["requestedVersion"] == "0.3"


def test_an_unknown_method_is_unimplemented(server: GrpcServer) -> None:
    with grpc.insecure_channel(server.target) as channel:
        call = channel.unary_unary("/lf.a2a.v1.A2AService/Frobnicate")
        refused = failure(lambda: call(b"", metadata=V1, timeout=DEADLINE))
    assert refused.code() == grpc.StatusCode.UNIMPLEMENTED
    assert error_info(refused).reason == "METHOD_NOT_FOUND"


def test_gzip_requests_are_accepted(server: GrpcServer) -> None:
    with grpc.insecure_channel(server.target, compression=grpc.Compression.Gzip) as channel:
        sent = stub_of(channel).SendMessage(
            pb.SendMessageRequest(message=message("zipped " * 50)), metadata=V1, timeout=DEADLINE
        )
    assert sent.task.status.state == pb.TASK_STATE_COMPLETED


def test_one_channel_carries_more_calls_than_hypercorns_default(stub: Any) -> None:
    """hypercorn closes a connection after ``keep_alive_max_requests`` (1,000 by default):
    over gRPC that would fail the channel's 1,001st call."""
    task = send(stub, "many").task
    request = pb.GetTaskRequest(id=task.id, history_length=0)
    for _ in range(1100):
        assert stub.GetTask(request, metadata=V1, timeout=DEADLINE).id == task.id


# --- across bindings ----------------------------------------------------------------------------


def test_a_task_made_over_grpc_is_read_over_jsonrpc_and_rest(stub: Any, server: GrpcServer) -> None:
    task = send(stub, "across").task
    over_jsonrpc = get_task(server.url, task.id)
    assert state_of(over_jsonrpc) == "TASK_STATE_COMPLETED"
    over_rest = httpx.get(
        f"{server.url}/tasks/{task.id}", headers={"A2A-Version": "1.0"}, timeout=HTTP_TIMEOUT
    ).json()
    assert over_rest["id"] == over_jsonrpc["id"] == task.id
    assert over_rest["artifacts"] == over_jsonrpc["artifacts"]


def test_a_task_made_over_jsonrpc_is_read_and_canceled_over_grpc(
    stub: Any, server: GrpcServer
) -> None:
    made = send_task(server.url, "wait over json-rpc")
    got = stub.GetTask(pb.GetTaskRequest(id=made["id"]), metadata=V1, timeout=DEADLINE)
    assert got.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert got.context_id == made["contextId"]
    stub.CancelTask(pb.CancelTaskRequest(id=made["id"]), metadata=V1, timeout=DEADLINE)
    assert state_of(get_task(server.url, made["id"])) == "TASK_STATE_CANCELED"
    with pytest.raises(AssertionError):
        cancel_task(server.url, made["id"])  # terminal now, over JSON-RPC too


# --- the official SDK's gRPC client -------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # grpc.aio, which the SDK's gRPC client is written on, runs on asyncio


async def sdk_grpc_client(server: GrpcServer) -> Any:
    config = ClientConfig(
        streaming=True,
        supported_protocol_bindings=[TransportProtocol.GRPC],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    return await ClientFactory(config).create_from_url(server.url)


@pytest.mark.anyio
async def test_the_sdk_grpc_client_sends_streams_gets_cancels_and_subscribes(
    server: GrpcServer,
) -> None:
    client = await sdk_grpc_client(server)
    try:
        request = pb.SendMessageRequest(message=message("from the sdk"))
        events = [event async for event in client.send_message(request)]
        assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        task_id = events[0].task.id
        got = await client.get_task(pb.GetTaskRequest(id=task_id))
        assert got.status.state == pb.TASK_STATE_COMPLETED
        waiting = [
            event
            async for event in client.send_message(
                pb.SendMessageRequest(message=message("wait sdk"))
            )
        ]
        waiting_id = waiting[0].task.id
        with anyio.fail_after(DEADLINE):
            subscribed = client.subscribe(pb.SubscribeToTaskRequest(id=waiting_id))
            first = await subscribed.__anext__()
            assert first.task.id == waiting_id
            canceled = await client.cancel_task(pb.CancelTaskRequest(id=waiting_id))
            assert canceled.status.state == pb.TASK_STATE_CANCELED
            rest = [event async for event in subscribed]
        assert rest[-1].status_update.status.state == pb.TASK_STATE_CANCELED
        # The SDK reads the ErrorInfo's reason into its own error type.
        with pytest.raises(sdk_errors.TaskNotFoundError):
            await client.get_task(pb.GetTaskRequest(id="nope"))
    finally:
        await client.close()


@pytest.mark.anyio
async def test_the_sdk_grpc_client_lists_and_configures_push_and_is_told_of_versions(
    server: GrpcServer,
) -> None:
    client = await sdk_grpc_client(server)
    try:
        events = [
            e async for e in client.send_message(pb.SendMessageRequest(message=message("wait l")))
        ]
        task = events[0].task
        listed = await client.list_tasks(pb.ListTasksRequest(context_id=task.context_id))
        assert [t.id for t in listed.tasks] == [task.id]
        config = pb.TaskPushNotificationConfig(task_id=task.id, url="https://hooks.example.com/x")
        created = await client.create_task_push_notification_config(config)
        fetched = await client.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
        )
        assert fetched.url == "https://hooks.example.com/x"
        configs = await client.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert [c.id for c in configs.configs] == [created.id]
        await client.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id)
        )
        # Its service parameters travel as metadata: an a2a-version we do not speak is refused
        # (UNIMPLEMENTED, the v1.0.0 table), and the SDK reads the reason into its own error.
        old = ClientCallContext(service_parameters={"A2A-Version": "0.3"})
        with pytest.raises(sdk_errors.VersionNotSupportedError):
            await client.get_task(pb.GetTaskRequest(id=task.id), context=old)
    finally:
        await client.close()


def test_credentials_travel_as_metadata(module_adapter: servers.Adapter) -> None:
    with (
        running_grpc_server(
            agent, same_port=module_adapter == "trio", auth=[BearerTokens({"t0ken": "alice"})]
        ) as running,
        grpc.insecure_channel(running.target) as channel,
    ):
        stub = stub_of(channel)
        request = pb.SendMessageRequest(message=message("who"))
        # A body the server never reads: refused on the head alone, the channel stays usable.
        refused = failure(lambda: stub.SendMessage(request, metadata=V1, timeout=DEADLINE))
        assert refused.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(refused).reason == "UNAUTHENTICATED"
        authorized = (*V1, ("authorization", "Bearer t0ken"))
        sent = stub.SendMessage(request, metadata=authorized, timeout=DEADLINE)
    assert sent.task.status.state == pb.TASK_STATE_COMPLETED


def test_grpc_and_https_over_tls(module_adapter: servers.Adapter, tmp_path: Path) -> None:
    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1", "localhost")
    tls = TlsFiles(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))
    for pem in issued.cert_chain_pems:
        pem.write_to_path(tls.certfile, append=True)
    issued.private_key_pem.write_to_path(tls.keyfile)
    trusted = grpc.ssl_channel_credentials(root_certificates=authority.cert_pem.bytes())
    with running_grpc_server(agent, same_port=module_adapter == "trio", tls=tls) as running:
        assert running.url.startswith("https://")
        context = ssl.create_default_context()
        authority.configure_trust(context)
        card = httpx.get(
            running.url + "/.well-known/agent-card.json", verify=context, timeout=HTTP_TIMEOUT
        ).json()
        assert {"url": running.target, "protocolBinding": "GRPC", "protocolVersion": "1.0"} in card[
            "supportedInterfaces"
        ]
        with grpc.secure_channel(running.target, trusted) as channel:
            sent = stub_of(channel).SendMessage(
                pb.SendMessageRequest(message=message("secret")), metadata=V1, timeout=DEADLINE
            )
    assert sent.task.status.state == pb.TASK_STATE_COMPLETED


def test_a_trio_server_serves_grpc_on_a_port_of_its_own_too() -> None:
    if servers.ADAPTER != "trio":
        pytest.skip("the asyncio adapter always serves gRPC on a port of its own")
    with running_grpc_server(agent) as running:
        assert running.target != running.url.removeprefix("http://")
        with grpc.insecure_channel(running.target) as channel:
            sent = stub_of(channel).SendMessage(
                pb.SendMessageRequest(message=message("own port")), metadata=V1, timeout=DEADLINE
            )
    assert sent.task.status.state == pb.TASK_STATE_COMPLETED
