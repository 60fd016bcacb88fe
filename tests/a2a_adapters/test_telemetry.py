"""OpenTelemetry over real HTTP, on both adapters, recorded by the SDK's in-memory exporters.

Each test builds its own tracer and meter providers and hands them to the engine
(``Telemetry(tracer_provider=..., meter_provider=...)``): the global providers can be set only
once per process, so the tests never touch them, except in a fresh interpreter.
"""

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import attrs
import grpc
import httpx
import pytest
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from a2a_adapters import PushSender, Telemetry, build_engine
from a2a_adapters import _telemetry as names
from a2a_adapters.stores import MemoryStore
from a2a_core import AgentContext, Update, completed, working
from a2a_core.store import Put, Reads, Write
from examples import echo
from tests import servers
from tests.a2a_adapters.sse import Gate, open_stream
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    error_of,
    new_id,
    result_of,
    rpc,
    send_params,
    wait_until,
)
from tests.a2a_adapters.webhooks import receiving
from tests.isolation import run_without
from tests.servers import running_grpc_server, serving

#: A caller's trace context (W3C Trace Context's own example).
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
SERVICE = "lf.a2a.v1.A2AService"


@attrs.define
class Recorded:
    """A telemetry object over SDK providers, and what they recorded."""

    telemetry: Telemetry
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    tracer: TracerProvider

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.finished() if span.name == name]

    def points(self, metric: str) -> list[Any]:
        """The data points of ``metric`` (cumulative), across every scope."""
        data = self.metrics.get_metrics_data()
        found: list[Any] = []
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                assert scope.scope.name == "a2a_adapters"
                for instrument in scope.metrics:
                    if instrument.name == metric:
                        found.extend(instrument.data.data_points)
        return found


@pytest.fixture
def otel() -> Iterator[Recorded]:
    spans = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader])
    yield Recorded(Telemetry(tracer_provider=tracer, meter_provider=meter), spans, reader, tracer)
    tracer.shutdown()
    meter.shutdown()


def hex_id(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def server_spans(otel: Recorded, count: int) -> list[ReadableSpan]:
    """The first ``count`` request spans, once they have ended (a span ends as its response
    goes, a moment after the client may have it)."""
    assert wait_until(
        lambda: len([s for s in otel.finished() if s.kind is SpanKind.SERVER]) >= count
    ), [s.name for s in otel.finished()]
    return [s for s in otel.finished() if s.kind is SpanKind.SERVER][:count]


@pytest.mark.usefixtures("adapter")
def test_a_span_per_operation_continuing_the_callers_trace(otel: Recorded) -> None:
    engine = build_engine(echo.agent, card=echo.card, telemetry=otel.telemetry)
    with serving(engine) as url:
        headers = {**A2A_HEADERS, "traceparent": TRACEPARENT}
        params = send_params("hi")
        context_id = params["message"]["contextId"] = "conversation-1"
        task = result_of(rpc(url, "SendMessage", params, headers=headers))["task"]
        missing = rpc(url, "GetTask", {"id": "no-such-task"}, rpc_id="get-7")
        error_of(missing, -32001, rpc_id="get-7")
        rest = httpx.get(f"{url}/tasks/{task['id']}", headers=A2A_HEADERS)
        assert rest.status_code == 200
        send, get, fetched = server_spans(otel, 3)
    assert send.name == f"{SERVICE}/SendMessage"
    assert send.kind is SpanKind.SERVER
    assert send.instrumentation_scope is not None
    assert send.instrumentation_scope.name == "a2a_adapters"
    # The caller's trace goes on: same trace, the caller's span as parent.
    assert hex_id(send.context.trace_id, 32) == TRACE_ID
    assert send.parent is not None
    assert hex_id(send.parent.span_id, 16) == PARENT_ID
    assert send.parent.is_remote
    assert dict(send.attributes or {}) == {
        "http.request.method": "POST",
        "http.response.status_code": 200,
        "rpc.system.name": "a2a",
        "rpc.method": f"{SERVICE}/SendMessage",
        "rpc.response.status_code": "OK",
        "a2a.protocol.binding": "JSONRPC",
        "a2a.protocol.version": "1.0",
        "a2a.task_id": task["id"],
        "a2a.context_id": context_id,
        "jsonrpc.request.id": "1",
    }
    assert send.status.status_code is StatusCode.UNSET
    # Without a traceparent, a request starts a trace of its own.
    assert get.parent is None
    assert hex_id(get.context.trace_id, 32) != TRACE_ID
    assert get.name == f"{SERVICE}/GetTask"
    attributes = dict(get.attributes or {})
    assert attributes["rpc.response.status_code"] == "NOT_FOUND"
    assert attributes["error.type"] == "TASK_NOT_FOUND"
    assert attributes["jsonrpc.request.id"] == "get-7"
    # A client's mistake is no error of the server's (the RPC conventions).
    assert get.status.status_code is StatusCode.UNSET
    assert fetched.name == f"{SERVICE}/GetTask"
    assert fetched.attributes is not None
    assert fetched.attributes["a2a.protocol.binding"] == "HTTP+JSON"
    assert fetched.attributes["a2a.task_id"] == task["id"]
    assert fetched.attributes["http.request.method"] == "GET"


@pytest.mark.usefixtures("adapter")
def test_a_server_fault_marks_its_span_as_an_error(otel: Recorded) -> None:
    gate = Gate()

    async def waits(ctx: AgentContext) -> str:
        await gate.wait()
        return "done"

    engine = build_engine(waits, max_runs=1, telemetry=otel.telemetry)
    with serving(engine) as url:
        first = send_params("one", return_immediately=True)
        assert rpc(url, "SendMessage", first).status_code == 200
        busy = rpc(url, "SendMessage", send_params("two", return_immediately=True))
        error_of(busy, -32603, http_status=busy.status_code)
        gate.open()
        _, refused = server_spans(otel, 2)
    attributes = dict(refused.attributes or {})
    assert attributes["error.type"] == "SERVER_BUSY"
    assert attributes["rpc.response.status_code"] == "UNAVAILABLE"
    assert refused.status.status_code is StatusCode.ERROR
    assert refused.status.description == "SERVER_BUSY"


@pytest.mark.usefixtures("adapter")
def test_the_agent_run_is_a_child_of_its_request_and_linked_to_it(otel: Recorded) -> None:
    """Its context is the run's: what the agent traces itself is the run's child."""
    own = otel.tracer.get_tracer("the agent's own")

    async def traced(ctx: AgentContext) -> AsyncIterator[Update]:
        with own.start_as_current_span("thinking"):
            yield working("thinking")
        yield completed("done")

    engine = build_engine(traced, telemetry=otel.telemetry)
    with serving(engine) as url:
        headers = {**A2A_HEADERS, "traceparent": TRACEPARENT}
        params = send_params("go", return_immediately=True)
        task = result_of(rpc(url, "SendMessage", params, headers=headers))["task"]
        assert wait_until(lambda: len(otel.named(names.RUN_SPAN)) == 1)
        [request] = server_spans(otel, 1)
    [run] = otel.named(names.RUN_SPAN)
    [thinking] = otel.named("thinking")
    assert run.kind is SpanKind.INTERNAL
    assert run.parent is not None
    assert run.parent.span_id == request.context.span_id
    assert run.context.trace_id == request.context.trace_id
    assert hex_id(run.context.trace_id, 32) == TRACE_ID
    [link] = run.links
    assert link.context.span_id == request.context.span_id
    assert link.context.trace_id == request.context.trace_id
    assert dict(run.attributes or {}) == {
        "a2a.task_id": task["id"],
        "a2a.context_id": task["contextId"],
        "a2a.run": 1,
    }
    assert run.status.status_code is StatusCode.UNSET
    assert thinking.parent is not None
    assert thinking.parent.span_id == run.context.span_id


@pytest.mark.usefixtures("adapter")
def test_a_failing_agent_marks_its_run_span(otel: Recorded) -> None:
    async def broken(ctx: AgentContext) -> str:
        raise RuntimeError("the model is down")

    engine = build_engine(broken, telemetry=otel.telemetry)
    with serving(engine) as url:
        task = result_of(rpc(url, "SendMessage", send_params("go")))["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert wait_until(lambda: len(otel.named(names.RUN_SPAN)) == 1)
    [run] = otel.named(names.RUN_SPAN)
    assert run.status.status_code is StatusCode.ERROR
    assert run.attributes is not None
    assert run.attributes["error.type"] == "RuntimeError"
    [event] = run.events
    assert event.name == "exception"
    assert event.attributes is not None
    assert event.attributes["exception.message"] == "the model is down"


@pytest.mark.usefixtures("adapter")
def test_a_run_stopped_by_a_cancel_says_so(otel: Recorded) -> None:
    gate = Gate()

    async def waits(ctx: AgentContext) -> AsyncIterator[Update]:
        yield working()
        await gate.wait()
        yield completed("too late")

    engine = build_engine(waits, telemetry=otel.telemetry)
    with serving(engine) as url:
        params = send_params("go", return_immediately=True)
        task = result_of(rpc(url, "SendMessage", params))["task"]
        canceled = result_of(rpc(url, "CancelTask", {"id": task["id"]}))
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        assert wait_until(lambda: len(otel.named(names.RUN_SPAN)) == 1)
        gate.open()
    [run] = otel.named(names.RUN_SPAN)
    assert (run.attributes or {})["a2a.run.stopped"] is True
    assert run.status.status_code is StatusCode.UNSET


async def three_steps(ctx: AgentContext) -> AsyncIterator[Update]:
    yield working()
    yield completed("all done")


@pytest.mark.usefixtures("adapter")
def test_each_push_delivery_is_a_client_span_whose_context_the_webhook_gets(
    otel: Recorded,
) -> None:
    sender = PushSender(first_backoff=0.01, max_backoff=0.05, timeout=2.0)
    with receiving() as receiver:
        receiver.script("/hook", 503)  # the first attempt fails, and is tried again
        engine = build_engine(
            three_steps,
            push=sender,
            push_allow_hosts=["127.0.0.1"],
            telemetry=otel.telemetry,
        )
        with serving(engine) as url:
            params = send_params("go")
            params["configuration"] = {
                "taskPushNotificationConfig": {"url": receiver.url + "/hook"}
            }
            headers = {**A2A_HEADERS, "traceparent": TRACEPARENT}
            task = result_of(rpc(url, "SendMessage", params, headers=headers))["task"]
            # The task, working, completed: three notifications, one of them twice.
            assert wait_until(lambda: len(otel.named(names.PUSH_SPAN)) == 4)
            deliveries = receiver.deliveries("/hook")
    pushes = otel.named(names.PUSH_SPAN)
    assert len(deliveries) == 4
    # The webhook got each attempt's own span as its parent, in the caller's trace.
    sent = {d.headers["traceparent"] for d in deliveries}
    assert sent == {f"00-{TRACE_ID}-{hex_id(span.context.span_id, 16)}-01" for span in pushes}
    assert all(span.kind is SpanKind.CLIENT for span in pushes)
    outcomes = sorted(str((span.attributes or {})["a2a.push.outcome"]) for span in pushes)
    assert outcomes == ["delivered", "delivered", "delivered", "retry"]
    [retried] = [s for s in pushes if (s.attributes or {})["a2a.push.outcome"] == "retry"]
    assert retried.status.status_code is StatusCode.ERROR
    assert dict(retried.attributes or {}) == {
        "http.request.method": "POST",
        "a2a.task_id": task["id"],
        "a2a.push.config_id": (retried.attributes or {})["a2a.push.config_id"],
        "a2a.push.event_seq": 1,
        "a2a.push.attempt": 1,
        "server.address": "127.0.0.1",
        "server.port": receiver.port,
        "http.response.status_code": 503,
        "error.type": "503",
        "a2a.push.outcome": "retry",
    }
    counted = {
        point.attributes["a2a.push.outcome"]: point.value
        for point in otel.points(names.PUSH_ATTEMPTS)
    }
    assert counted == {"delivered": 3, "retry": 1}
    # The pushes of the run's events are the run's children.
    [run] = otel.named(names.RUN_SPAN)
    parents = {span.parent.span_id for span in pushes if span.parent is not None}
    assert run.context.span_id in parents


@pytest.mark.usefixtures("adapter")
def test_the_last_attempt_of_a_failing_webhook_is_counted_failed(otel: Recorded) -> None:
    sender = PushSender(first_backoff=0.01, max_backoff=0.05, timeout=2.0, max_attempts=2)
    with receiving() as receiver:
        receiver.always("/down", 500)
        engine = build_engine(
            echo.agent, push=sender, push_allow_hosts=["127.0.0.1"], telemetry=otel.telemetry
        )
        with serving(engine) as url:
            params = send_params("go", return_immediately=True)
            hook = {"url": receiver.url + "/down"}
            params["configuration"] = {
                "taskPushNotificationConfig": hook,
                **params["configuration"],
            }
            result_of(rpc(url, "SendMessage", params))
            # Every notification of the task, tried twice.
            assert wait_until(lambda: sender.given_up >= 1 and len(receiver.deliveries()) >= 2)
            assert wait_until(lambda: len(otel.named(names.PUSH_SPAN)) == 2 * sender.given_up)
    counted = {
        point.attributes["a2a.push.outcome"]: point.value
        for point in otel.points(names.PUSH_ATTEMPTS)
    }
    assert counted == {"retry": sender.given_up, "failed": sender.given_up}
    assert all(s.status.status_code is StatusCode.ERROR for s in otel.named(names.PUSH_SPAN))


def duration_counts(otel: Recorded) -> dict[tuple[Any, ...], int]:
    keys = (
        "rpc.method",
        "a2a.protocol.binding",
        "rpc.response.status_code",
        "error.type",
    )
    return {
        tuple(point.attributes.get(key) for key in keys): point.count
        for point in otel.points(names.REQUEST_DURATION)
    }


@pytest.mark.usefixtures("adapter")
def test_request_durations_by_method_binding_and_status(otel: Recorded) -> None:
    engine = build_engine(echo.agent, card=echo.card, telemetry=otel.telemetry)
    with serving(engine) as url:
        for _ in range(2):
            result_of(rpc(url, "SendMessage", send_params("hi")))
        error_of(rpc(url, "GetTask", {"id": "missing"}), -32001)
        assert httpx.get(f"{url}/tasks/missing", headers=A2A_HEADERS).status_code == 404
        assert httpx.post(url, content=b"{", headers=A2A_HEADERS).status_code == 200
        server_spans(otel, 5)
    assert duration_counts(otel) == {
        (f"{SERVICE}/SendMessage", "JSONRPC", "OK", None): 2,
        (f"{SERVICE}/GetTask", "JSONRPC", "NOT_FOUND", "TASK_NOT_FOUND"): 1,
        (f"{SERVICE}/GetTask", "HTTP+JSON", "NOT_FOUND", "TASK_NOT_FOUND"): 1,
        # Not understood far enough to name an operation.
        ("_OTHER", "JSONRPC", "INVALID_ARGUMENT", "INVALID_JSON"): 1,
    }
    [histogram] = [p for p in otel.points(names.REQUEST_DURATION) if p.count == 2]
    assert 0 < histogram.sum < 5


@pytest.mark.usefixtures("adapter")
def test_task_transitions_are_counted_by_state(otel: Recorded) -> None:
    engine = build_engine(three_steps, telemetry=otel.telemetry)
    with serving(engine) as url:
        result_of(rpc(url, "SendMessage", send_params("one")))
        result_of(rpc(url, "SendMessage", send_params("two")))
    counted = {
        point.attributes["a2a.task.state"]: point.value for point in otel.points(names.TRANSITIONS)
    }
    assert counted == {
        "TASK_STATE_SUBMITTED": 2,
        "TASK_STATE_WORKING": 2,
        "TASK_STATE_COMPLETED": 2,
    }


@pytest.mark.usefixtures("adapter")
def test_streams_are_counted_while_open_and_traced_until_they_end(otel: Recorded) -> None:
    gate = Gate()

    async def gated(ctx: AgentContext) -> AsyncIterator[Update]:
        yield working()
        await gate.wait()
        yield completed("done")

    engine = build_engine(gated, streaming=True, telemetry=otel.telemetry)
    with serving(engine) as url:
        with open_stream(url, "SendStreamingMessage", send_params("go")) as stream:
            stream.next_event()
            [open_now] = otel.points(names.ACTIVE_STREAMS)
            assert open_now.value == 1
            assert dict(open_now.attributes) == {
                "rpc.method": f"{SERVICE}/SendStreamingMessage",
                "a2a.protocol.binding": "JSONRPC",
            }
            assert otel.finished() == [], "the stream's span lasts as long as the stream"
            gate.open()
            stream.events()
        [span] = server_spans(otel, 1)
    [after] = otel.points(names.ACTIVE_STREAMS)
    assert after.value == 0
    assert span.name == f"{SERVICE}/SendStreamingMessage"
    assert span.end_time is not None
    assert span.start_time is not None
    [run] = otel.named(names.RUN_SPAN)
    assert run.end_time is not None
    assert span.end_time >= run.end_time


class RivalStore(MemoryStore):
    """The memory store, with another writer that changes a task just before this server's
    first update of it commits: that commit loses the compare-and-set race (a real one, on the
    real store), and the machine decides again."""

    def __init__(self) -> None:
        super().__init__()
        self.raced = 0

    async def commit(self, writes: Sequence[Write]) -> bool:
        for write in writes:
            if isinstance(write, Put) and write.expected and not self.raced:
                self.raced += 1
                stored = self._tasks.read(Reads(task_id=write.record.id)).task
                assert stored is not None
                rival = attrs.evolve(stored, version=stored.version + 1)
                assert self._tasks.commit([Put(rival, expected=stored.version)])
        return await super().commit(writes)


@pytest.mark.usefixtures("adapter")
def test_version_conflicts_are_counted(otel: Recorded) -> None:
    store = RivalStore()
    engine = build_engine(three_steps, store=store, telemetry=otel.telemetry)
    with serving(engine) as url:
        task = result_of(rpc(url, "SendMessage", send_params("go")))["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert store.raced == 1
    [conflicts] = otel.points(names.CONFLICTS)
    assert conflicts.value == 1
    # Its transitions are counted once each: the commit that lost counts none.
    counted = {p.attributes["a2a.task.state"]: p.value for p in otel.points(names.TRANSITIONS)}
    assert counted == {
        "TASK_STATE_SUBMITTED": 1,
        "TASK_STATE_WORKING": 1,
        "TASK_STATE_COMPLETED": 1,
    }


@pytest.mark.usefixtures("adapter")
def test_grpc_calls_continue_the_trace_in_their_metadata(otel: Recorded) -> None:
    on_trio = servers.ADAPTER == "trio"
    with (
        running_grpc_server(
            echo.agent, same_port=on_trio, streaming=True, telemetry=otel.telemetry
        ) as server,
        grpc.insecure_channel(server.target) as channel,
    ):
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        message = pb.Message(message_id=new_id(), role=pb.ROLE_USER, parts=[pb.Part(text="hi")])
        metadata = (("a2a-version", "1.0"), ("traceparent", TRACEPARENT))
        sent = stub.SendMessage(pb.SendMessageRequest(message=message), metadata=metadata)
        with pytest.raises(grpc.RpcError) as missing:
            stub.GetTask(pb.GetTaskRequest(id="no-such-task"), metadata=metadata[:1])
        assert missing.value.code() is grpc.StatusCode.NOT_FOUND
        message = pb.Message(message_id=new_id(), role=pb.ROLE_USER, parts=[pb.Part(text="s")])
        streamed = stub.SendStreamingMessage(
            pb.SendMessageRequest(message=message), metadata=metadata[:1]
        )
        assert len(list(streamed)) >= 2
        send, get, stream = server_spans(otel, 3)
    assert send.name == f"{SERVICE}/SendMessage"
    assert hex_id(send.context.trace_id, 32) == TRACE_ID
    assert send.parent is not None
    assert hex_id(send.parent.span_id, 16) == PARENT_ID
    attributes = dict(send.attributes or {})
    assert attributes["a2a.protocol.binding"] == "GRPC"
    assert attributes["a2a.task_id"] == sent.task.id
    assert attributes["rpc.response.status_code"] == "OK"
    assert "jsonrpc.request.id" not in attributes
    assert get.name == f"{SERVICE}/GetTask"
    assert (get.attributes or {})["rpc.response.status_code"] == "NOT_FOUND"
    assert get.parent is None
    assert stream.name == f"{SERVICE}/SendStreamingMessage"
    assert (stream.attributes or {})["a2a.protocol.binding"] == "GRPC"
    assert (stream.attributes or {})["rpc.response.status_code"] == "OK"
    [closed] = otel.points(names.ACTIVE_STREAMS)
    assert dict(closed.attributes) == {
        "rpc.method": f"{SERVICE}/SendStreamingMessage",
        "a2a.protocol.binding": "GRPC",
    }
    assert closed.value == 0


#: Serves one blocking send through an engine (no sockets), then prints what it answered.
ONE_SEND = """
import json
import anyio
from a2a_adapters import build_engine
from a2a_core.transport import HttpRequest

async def echo(ctx):
    return ctx.text

BODY = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
    "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}).encode()
HEAD = {"content-type": "application/json", "a2a-version": "1.0", "traceparent": "TRACEPARENT"}

async def send(engine):
    async with anyio.create_task_group() as group:
        await group.start(engine.run)
        response = await engine.handle(HttpRequest("POST", "/", HEAD, BODY), "http://test")
        await engine.aclose()
    return json.loads(response.body)["result"]["task"]["status"]["state"]
""".replace("TRACEPARENT", TRACEPARENT)


def test_without_opentelemetry_everything_works_and_nothing_is_emitted() -> None:
    code = ONE_SEND + (
        "from a2a_adapters import _telemetry\n"
        "engine = build_engine(echo)\n"
        "print(anyio.run(send, engine), _telemetry.OTEL, engine.telemetry.active)\n"
    )
    ran = run_without(code, refused=("opentelemetry",))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "TASK_STATE_COMPLETED False False\n"


def test_the_global_providers_are_used_once_an_application_sets_them() -> None:
    """Off (and costing nothing) while the API's placeholders are the providers, on from the
    moment an application sets one, even after the server started."""
    code = ONE_SEND + (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import "
        "InMemorySpanExporter\n"
        "engine = build_engine(echo)\n"
        "before = engine.telemetry.active\n"
        "anyio.run(send, engine)\n"
        "spans = InMemorySpanExporter()\n"
        "provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(spans))\n"
        "trace.set_tracer_provider(provider)\n"
        "anyio.run(send, build_engine(echo))\n"
        "names = sorted(span.name for span in spans.get_finished_spans())\n"
        "print(before, engine.telemetry.active, names)\n"
    )
    ran = run_without(code)
    assert ran.returncode == 0, ran.stderr
    # Engine.handle is below the entries that make request spans (the ASGI application's): of
    # this send, only the run is traced, in a trace of its own.
    assert ran.stdout == "False True ['a2a.agent.run']\n"
