"""Streaming (SSE) over real HTTP: SendStreamingMessage and SubscribeToTask, end to end.

Every test runs a real server on 127.0.0.1 and reads its event streams off the wire: the
official a2a-sdk client for the shapes it accepts, and raw ``httpx`` streams parsed line by line
(``tests/a2a_adapters/sse.py``) for ids, framing, resumption and timing. A few tests also look at
the engine they built (``serving``) to check that a stream's buffer is bounded and freed.

The rules under test (PROTOCOL.md §2.3, §3.2, §3.6; ``a2a_core.decide._streams``): each ``data:`` is
a JSON-RPC response with the request's id holding a v1.0 ``StreamResponse``; each event's ``id:`` is
its number in the task's event log, so a client that reconnects with ``Last-Event-ID`` misses
nothing and gets nothing twice; a streamed send ends when the task settles (terminal or
interrupted), a subscription only when it is terminal; errors found before the first event are
plain JSON-RPC errors.
"""

import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio.lowlevel
import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb

from a2a_adapters import MemoryStore, build_engine
from a2a_adapters._engine import MAX_BUFFERED_BATCHES
from a2a_core import AgentContext, ArtifactChunk, Update, completed, text_artifact, working
from a2a_core.store import Reads, Snapshot
from examples import echo, tck_agent
from tests.a2a_adapters.sse import (
    Event,
    Gate,
    SseStream,
    consecutive,
    ids_of,
    kinds,
    open_stream,
    read_stream,
    result_of_event,
    results,
    rpc_body,
    state_in,
    states_of,
)
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    COMPLETED,
    HTTP_TIMEOUT,
    INPUT_REQUIRED,
    SUBMITTED,
    WORKING,
    error_info,
    error_of,
    get_task,
    new_id,
    result_of,
    rpc,
    sdk_message,
    send_params,
    state_of,
    text_of,
    user_message,
    violated_fields,
    wait_for_state,
    wait_until,
)
from tests.servers import running_server, serving

#: Every test here runs against the asyncio and the trio adapter.
pytestmark = pytest.mark.usefixtures("adapter")

#: How long a test may wait for the server to free a closed stream.
FREE_TIMEOUT = 3.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tck_url() -> Iterator[str]:
    with running_server(tck_agent.agent, card=tck_agent.card, streaming=True) as url:
        yield url


def tck_params(prefix: str, text: str = "tck") -> dict[str, Any]:
    return send_params(text, message_id=f"{prefix}-{new_id()}")


def start_task(url: str, text: str = "go") -> str:
    """A task started with ``returnImmediately``; its id."""
    result = result_of(rpc(url, "SendMessage", send_params(text, return_immediately=True)))
    task_id: str = result["task"]["id"]
    return task_id


def subscribe_error(url: str, task_id: str, last_event_id: str | int | None = None) -> Any:
    headers = dict(A2A_HEADERS)
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    return rpc(url, "SubscribeToTask", {"id": task_id}, headers=headers)


def full_log(url: str, task_id: str) -> list[Event]:
    """Every event of a task's log, read by resuming a subscription after event 0."""
    events, _ = read_stream(url, "SubscribeToTask", {"id": task_id}, last_event_id=0)
    return events


def payloads(events: list[Event]) -> list[dict[str, Any]]:
    return results(events)


# --- agents -------------------------------------------------------------------------------------


async def briefly_working(ctx: AgentContext) -> AsyncIterator[Update]:
    """Working for half a second, then done."""
    yield working()
    await anyio.sleep(0.5)
    yield completed(f"done: {ctx.text}")


#: How many artifact chunks :func:`chunky` streams.
CHUNKS = 30
#: The number of events in a :func:`chunky` task's log: created, working, the chunks, completed.
CHUNKY_EVENTS = 1 + 1 + CHUNKS + 1


async def chunky(ctx: AgentContext) -> AsyncIterator[Update]:
    """Thirty artifact chunks, 10 ms apart."""
    yield working()
    for index in range(CHUNKS):
        await anyio.sleep(0.01)
        yield ArtifactChunk(text_artifact(f"chunk {index}", artifact_id=f"chunk-{index}"))
    yield completed()


def gated(gate: Gate, *, chunks: int = 0, size: int = 16, pause: bool = False) -> Any:
    """An agent that works, waits for ``gate``, then streams ``chunks`` artifacts at once
    (pausing between them if told to: each is then decided and published on its own, where
    chunks yielded in a row go to the machine in batches)."""

    async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
        yield working()
        await gate.wait()
        for index in range(chunks):
            text = f"{index:05d}:" + "x" * size
            yield ArtifactChunk(text_artifact(text, artifact_id=f"part-{index}"))
            if pause:
                await anyio.lowlevel.checkpoint()
        yield completed()

    return agent


# --- the official sdk client --------------------------------------------------------------------


@contextlib.asynccontextmanager
async def streaming_client(url: str) -> AsyncIterator[Any]:
    """An a2a-sdk client with streaming on, resolved from ``url``'s card."""
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=True))
        client = await factory.create_from_url(url)
        try:
            yield client
        finally:
            await client.close()


@pytest.mark.anyio
async def test_sdk_streams_a_send_in_order(tck_url: str) -> None:
    message = sdk_message("hello", message_id=f"tck-stream-001-{new_id()}")
    async with streaming_client(tck_url) as client:
        with anyio.fail_after(5):
            events = [e async for e in client.send_message(pb.SendMessageRequest(message=message))]
    assert [e.WhichOneof("payload") for e in events] == [
        "task",
        "status_update",
        "artifact_update",
        "status_update",
    ]
    task, working_update, artifact, done = events
    assert task.task.status.state == pb.TASK_STATE_SUBMITTED
    assert working_update.status_update.status.state == pb.TASK_STATE_WORKING
    assert [p.text for p in artifact.artifact_update.artifact.parts] == ["Stream hello from TCK"]
    assert done.status_update.status.state == pb.TASK_STATE_COMPLETED
    task_id = task.task.id
    assert working_update.status_update.task_id == task_id
    assert artifact.artifact_update.task_id == task_id
    assert done.status_update.task_id == task_id


@pytest.mark.anyio
async def test_sdk_subscribe_gets_the_snapshot_then_the_end() -> None:
    with running_server(briefly_working, streaming=True) as url:
        task_id = start_task(url, "sub")
        wait_for_state(url, task_id, {WORKING})
        async with streaming_client(url) as client:
            with anyio.fail_after(5):
                request = pb.SubscribeToTaskRequest(id=task_id)
                events = [e async for e in client.subscribe(request)]
    first, *_, last = events
    assert first.WhichOneof("payload") == "task"
    assert first.task.id == task_id
    assert first.task.status.state == pb.TASK_STATE_WORKING
    assert last.WhichOneof("payload") == "status_update"
    assert last.status_update.status.state == pb.TASK_STATE_COMPLETED
    assert text_of_pb(last.status_update.status.message) == "done: sub"
    middle = [e.WhichOneof("payload") for e in events[1:-1]]
    assert middle == [], f"nothing happened between the snapshot and the end: {middle}"


@pytest.mark.anyio
async def test_sdk_streams_text_holding_unicode_line_separators_whole() -> None:
    """JSON leaves U+2028, U+2029 and NEL raw in strings; the SDK's client (httpx's line
    reader) splits lines at them, so a server that sent them raw cut its events in two."""
    text = "one\u2028two\u2029three\x85four"
    with running_server(echo.agent, card=echo.card, streaming=True) as url:
        async with streaming_client(url) as client:
            with anyio.fail_after(5):
                message = sdk_message(text, message_id=new_id())
                events = [
                    e async for e in client.send_message(pb.SendMessageRequest(message=message))
                ]
    last = events[-1]
    assert last.WhichOneof("payload") == "status_update"
    assert last.status_update.status.state == pb.TASK_STATE_COMPLETED
    assert text_of_pb(last.status_update.status.message) == f"Echo: {text}"


def text_of_pb(message: Any) -> str:
    return "".join(part.text for part in message.parts)


# --- framing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("rpc_id", ["req-42", 7])
def test_every_frame_is_a_jsonrpc_response_numbered_in_order(
    tck_url: str, rpc_id: str | int
) -> None:
    with open_stream(
        tck_url, "SendStreamingMessage", tck_params("tck-stream-003"), rpc_id=rpc_id
    ) as stream:
        assert stream.response.headers["cache-control"] == "no-cache"
        events = stream.events()
        assert stream.ended
    frames = results(events, rpc_id=rpc_id)  # each checks jsonrpc, id and one payload key
    assert kinds(events, rpc_id=rpc_id) == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert ids_of(events) == [1, 2, 3, 4]
    assert all(event.event is None for event in events), "success frames carry no event name"
    assert states_of(events, rpc_id=rpc_id) == [SUBMITTED, WORKING, None, COMPLETED]
    task_id = frames[0]["task"]["id"]
    assert frames[1]["statusUpdate"]["taskId"] == task_id
    assert frames[2]["artifactUpdate"]["taskId"] == task_id
    assert frames[2]["artifactUpdate"]["artifact"]["parts"] == [{"text": "Stream task lifecycle"}]


def test_frames_are_single_line_json(tck_url: str) -> None:
    body = rpc_body("SendStreamingMessage", tck_params("tck-stream-001"))
    with httpx.stream(
        "POST", tck_url + "/", json=body, headers=dict(A2A_HEADERS), timeout=HTTP_TIMEOUT
    ) as response:
        raw = response.read().decode()
    blocks = [block for block in raw.split("\n\n") if block]
    assert len(blocks) == 4, raw
    for block in blocks:
        lines = block.split("\n")
        assert [line.split(":", 1)[0] for line in lines] == ["id", "data"], block
        json.loads(lines[1].removeprefix("data: "))
    assert raw.endswith("\n\n")


def test_a_message_reply_is_exactly_one_message_event(tck_url: str) -> None:
    with open_stream(tck_url, "SendStreamingMessage", tck_params("tck-message-response")) as stream:
        events = stream.events()
        assert stream.ended
    assert kinds(events) == ["message"]
    message = result_of_event(events[0])["message"]
    assert message["role"] == "ROLE_AGENT"
    assert text_of(message) == "Direct message response"


async def slow_thinker(ctx: AgentContext) -> str:
    await anyio.sleep(2.0)  # thinks before its first word
    return f"thought about {ctx.text}"


def test_a_slow_agents_stream_shows_the_task_at_once() -> None:
    """The client learns the task id (to cancel, to show progress) long before the agent
    says anything: the snapshot is held for a direct reply only briefly."""
    with (
        running_server(slow_thinker, streaming=True) as url,
        open_stream(url, "SendStreamingMessage", {"message": user_message("hm")}) as stream,
    ):
        opened = time.monotonic()
        [first] = stream.events(1)
        waited = time.monotonic() - opened
        assert kinds([first]) == ["task"]
        assert state_in(result_of_event(first)) == SUBMITTED
        assert waited < 1.0, f"the task came after {waited:.2f} s"
        rest = stream.events()
        assert stream.ended
    assert kinds(rest) == ["statusUpdate"]
    assert states_of(rest) == [COMPLETED]


def test_a_send_stream_ends_at_input_required_but_a_subscription_waits_for_the_end(
    tck_url: str,
) -> None:
    # TCK STREAM-SUB-002: the send's stream closes when the task needs input...
    with open_stream(
        tck_url, "SendStreamingMessage", tck_params("tck-input-required"), timeout=3.0
    ) as stream:
        sent = stream.events()
        assert stream.ended
    assert states_of(sent) == [SUBMITTED, INPUT_REQUIRED]
    task_id = result_of_event(sent[0])["task"]["id"]
    assert ids_of(sent) == [1, 2]

    # ...while a subscription to that task stays open across the interruption...
    with open_stream(tck_url, "SubscribeToTask", {"id": task_id}) as subscription:
        [snapshot] = subscription.events(1)
        assert kinds([snapshot]) == ["task"]
        assert state_in(result_of_event(snapshot)) == INPUT_REQUIRED
        assert snapshot.id == "2", "the snapshot is numbered as the last event it includes"
        assert not subscription.ended

        # ...and ends only once a follow-up message completes the task.
        follow_up = send_params(
            "here is the input", task_id=task_id, message_id=f"tck-complete-task-{new_id()}"
        )
        done = result_of(rpc(tck_url, "SendMessage", follow_up))["task"]
        assert state_of(done) == COMPLETED
        rest = subscription.events()
        assert subscription.ended
    assert states_of(rest)[-1] == COMPLETED
    assert ids_of([snapshot, *rest]) == list(range(2, 3 + len(rest)))
    assert ids_of(full_log(tck_url, task_id))[-1] == ids_of(rest)[-1]


# --- Last-Event-ID --------------------------------------------------------------------------------


def test_a_resumed_subscription_misses_nothing_and_repeats_nothing() -> None:
    with running_server(chunky, streaming=True) as url:
        task_id = start_task(url)
        with open_stream(url, "SubscribeToTask", {"id": task_id}) as stream:
            first = stream.events(5)
            assert not stream.ended
        # The client dropped the connection mid-task; it comes back with the last id it saw.
        last_seen = ids_of(first)[-1]
        with open_stream(
            url, "SubscribeToTask", {"id": task_id}, last_event_id=last_seen
        ) as stream:
            second = stream.events()
            assert stream.ended
        log = full_log(url, task_id)

    assert ids_of(log) == list(range(1, CHUNKY_EVENTS + 1))
    assert kinds(log)[0] == "task"
    assert states_of(log)[-1] == COMPLETED

    snapshot, *updates = first
    start = ids_of([snapshot])[0]
    assert kinds([snapshot]) == ["task"]
    assert consecutive(ids_of(first))
    assert ids_of(second) == list(range(last_seen + 1, CHUNKY_EVENTS + 1))
    assert "task" not in kinds(second), "a resumed stream starts after the event, no snapshot"
    # Together: the snapshot stands for events 1..start, then every later event exactly once,
    # each the very event the log holds under that number.
    by_id = dict(zip(ids_of(log), payloads(log), strict=True))
    assert payloads([*updates, *second]) == [by_id[n] for n in range(start + 1, len(log) + 1)]
    states_so_far = [state for state in states_of(log[:start]) if state is not None]
    assert state_in(result_of_event(snapshot)) == states_so_far[-1]


def test_resuming_after_the_end_of_a_finished_task() -> None:
    with running_server(chunky, streaming=True) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {COMPLETED})
        last = CHUNKY_EVENTS

        # A fresh subscription to a finished task is refused, before any event.
        error_of(subscribe_error(url, task_id), -32004)
        # So is a resume from its last event: nothing can follow it.
        error_of(subscribe_error(url, task_id, last), -32004)
        # A resume from earlier still gets the tail, then the stream ends.
        tail, _ = read_stream(url, "SubscribeToTask", {"id": task_id}, last_event_id=last - 3)
        assert ids_of(tail) == [last - 2, last - 1, last]
        assert states_of(tail)[-1] == COMPLETED
        # An id the task never had is invalid.
        error = error_of(subscribe_error(url, task_id, last + 1), -32602)
        assert violated_fields(error) == ["Last-Event-ID"]


def test_resuming_a_live_task_continues_to_its_end() -> None:
    gate = Gate()
    with running_server(gated(gate, chunks=5), streaming=True) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        # Resume from the very first event while the agent waits: the log so far, then live.
        with open_stream(url, "SubscribeToTask", {"id": task_id}, last_event_id=1) as stream:
            [working_event] = stream.events(1)
            assert working_event.id == "2"
            assert states_of([working_event]) == [WORKING]
            gate.open()
            rest = stream.events()
            assert stream.ended
    assert ids_of(rest) == list(range(3, 3 + 5 + 1))
    assert kinds(rest) == ["artifactUpdate"] * 5 + ["statusUpdate"]


# --- slow readers ---------------------------------------------------------------------------------


def test_a_stalled_reader_delays_neither_the_agent_nor_other_readers() -> None:
    gate = Gate()
    burst = MAX_BUFFERED_BATCHES + 200
    # Big events, so the stalled reader's socket buffers fill and its stream really blocks. In
    # memory: on a durable store each of the 300 chunks rewrites the whole task, its 10 MB
    # artifact included, which makes the burst take seconds; backpressure is the point here.
    engine = build_engine(
        gated(gate, chunks=burst, size=32_000, pause=True), streaming=True, store=MemoryStore()
    )
    with serving(engine) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        with open_stream(url, "SubscribeToTask", {"id": task_id}) as stalled:
            # It reads nothing for now.
            started = time.monotonic()
            with open_stream(url, "SubscribeToTask", {"id": task_id}, timeout=5.0) as other:
                gate.open()
                seen = other.events()
                assert other.ended
            took = time.monotonic() - started
            assert took < 3.0, f"the second reader took {took:.2f} s"
            assert len(seen) == 1 + burst + 1
            assert state_of(get_task(url, task_id)) == COMPLETED

            # The stalled stream was given a bounded number of batches, then fell back on the log.
            assert engine.server.following(task_id) == 1, "the stalled stream never stalled"
            assert engine.server.stalls, "the stalled reader never fell behind: proves nothing"

            late = stalled.events()
            assert stalled.ended
    assert ids_of(late) == ids_of(seen)
    assert consecutive(ids_of(late))
    assert payloads(late) == payloads(seen)
    assert states_of(late)[-1] == COMPLETED


def test_many_subscribers_get_the_same_events_and_one_leaving_harms_none() -> None:
    gate = Gate()
    chunks = 20
    with running_server(gated(gate, chunks=chunks), streaming=True) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        with contextlib.ExitStack() as streams:
            # Ten subscribers: nine stay to the end, one leaves mid-task.
            readers: list[SseStream] = [
                streams.enter_context(open_stream(url, "SubscribeToTask", {"id": task_id}))
                for _ in range(9)
            ]
            with open_stream(url, "SubscribeToTask", {"id": task_id}) as quitter:
                gate.open()
                assert len(quitter.events(3)) == 3
            # The quitter has closed its connection mid-task.
            seen = [reader.events() for reader in readers]
            assert all(reader.ended for reader in readers)
        task = get_task(url, task_id)
    assert state_of(task) == COMPLETED
    assert len(task["artifacts"]) == chunks
    reference = seen[0]
    assert len(reference) == 1 + chunks + 1
    assert consecutive(ids_of(reference))
    for events in seen[1:]:
        assert ids_of(events) == ids_of(reference)
        assert payloads(events) == payloads(reference)


# --- keep-alive and clean-up ----------------------------------------------------------------------


def test_an_idle_stream_gets_keep_alive_comments() -> None:
    gate = Gate()
    with running_server(gated(gate), streaming=True, keepalive_seconds=0.2) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        # A read that waits 1 s for anything fails, and so does a stream open for over 2 s.
        with open_stream(
            url, "SubscribeToTask", {"id": task_id}, timeout=2.0, read_timeout=1.0
        ) as stream:
            [snapshot] = stream.events(1)
            deadline = time.monotonic() + 2.0
            while len(stream.comments) < 2:
                assert time.monotonic() < deadline, "no keep-alive within 2 s"
                item = stream.next_item()
                assert item is not None, "the stream ended while the task was working"
                assert item in stream.comments, f"an event while the task was idle: {item}"
            assert {c.text for c in stream.comments} == {"keep-alive"}
            gate.open()
            rest = stream.events()
    assert kinds([snapshot]) == ["task"]
    assert states_of(rest)[-1] == COMPLETED


def test_a_closed_stream_is_freed_while_its_task_goes_on() -> None:
    gate = Gate()
    engine = build_engine(gated(gate), streaming=True)  # 15 s keep-alive: no write to notice
    with serving(engine) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        with open_stream(url, "SubscribeToTask", {"id": task_id}) as stream:
            stream.events(1)
            assert engine.server.following(task_id) == 1
        assert wait_until(lambda: not engine.server.following(task_id), timeout=FREE_TIMEOUT), (
            "the server kept following for the closed subscription"
        )

        # The same for a streamed send, closed before its task settles.
        params = send_params("second")
        with open_stream(url, "SendStreamingMessage", params) as stream:
            [first] = stream.events(1)
            second_id = result_of_event(first)["task"]["id"]
            assert engine.server.following(second_id) == 1
        assert wait_until(lambda: not engine.server.following(second_id), timeout=FREE_TIMEOUT)

        assert state_of(get_task(url, task_id)) == WORKING, "closing a stream touched the task"
        gate.open()
        wait_for_state(url, task_id, {COMPLETED})
        wait_for_state(url, second_id, {COMPLETED})
    assert engine.server.open_streams == 0


def test_a_stream_whose_client_left_at_once_is_freed() -> None:
    # Clients that send a whole request and hang up before reading anything. (Served by
    # hypercorn, such streams ran on, writing keep-alives to nobody, until their task ended.)
    gate = Gate()
    engine = build_engine(gated(gate), streaming=True, keepalive_seconds=0.2)
    with serving(engine) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        port = int(url.rsplit(":", 1)[1])
        body = json.dumps(rpc_body("SubscribeToTask", {"id": task_id})).encode()
        head = (
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"A2A-Version: 1.0\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        try:
            for _ in range(5):
                # Send the whole request, then hang up without reading the answer.
                with socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT) as s:
                    s.sendall(head + body)
            time.sleep(0.5)  # time for the server to take the requests (and open their streams)
            freed = wait_until(lambda: not engine.server.following(task_id), timeout=2.0)
            assert state_of(get_task(url, task_id)) == WORKING
        finally:
            gate.open()  # ends the task, and with it any stream still running
            wait_for_state(url, task_id, {COMPLETED})
    assert freed, "streams whose clients had gone stayed registered while the task ran"


class BrokenLogStore(MemoryStore):
    """A store whose event log cannot be read (as when its database goes away)."""

    async def read(self, reads: Reads) -> Snapshot:
        if reads.log is not None:
            raise RuntimeError("the event log is unavailable")
        return await super().read(reads)


def test_the_server_uses_the_store_it_is_given() -> None:
    store = MemoryStore()
    with running_server(gated(Gate()), streaming=True, store=store) as url:
        task_id = start_task(url)
        found = wait_until(lambda: len(store) == 1, timeout=1.0)
        result_of(rpc(url, "CancelTask", {"id": task_id}))
    assert found, "the task was not written to the store the server was given"


def test_a_stream_that_fails_ends_with_an_error_event() -> None:
    gate = Gate()
    with running_server(gated(gate), streaming=True, store=BrokenLogStore()) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        # A stream reads the log when it starts, which fails here.
        with open_stream(
            url, "SubscribeToTask", {"id": task_id}, rpc_id="resume-1", last_event_id=1
        ) as stream:
            events = stream.events()
            assert stream.ended
        [failure] = events
        assert failure.event == "error"
        document = failure.json()
        assert document["id"] == "resume-1"
        assert "result" not in document
        assert document["error"]["code"] == -32603
        error_info(document["error"])
        # The failed stream leaves the task untouched: it goes on and finishes.
        assert state_of(get_task(url, task_id)) == WORKING
        gate.open()
        wait_for_state(url, task_id, {COMPLETED})


# --- errors before the first event ----------------------------------------------------------------


def test_streaming_off_refuses_both_stream_methods_with_plain_errors() -> None:
    with running_server(tck_agent.agent, card=tck_agent.card) as url:
        error_of(rpc(url, "SendStreamingMessage", tck_params("tck-stream-001")), -32004)
        task_id = start_task(url)
        error_of(rpc(url, "SubscribeToTask", {"id": task_id}), -32004)


def test_unknown_tasks_are_plain_not_found_errors(tck_url: str) -> None:
    error_of(rpc(tck_url, "SubscribeToTask", {"id": "no-such-task"}), -32001)
    error_of(subscribe_error(tck_url, "no-such-task", 3), -32001)
    follow_up = send_params("hello", task_id="no-such-task")
    error_of(rpc(tck_url, "SendStreamingMessage", follow_up), -32001)


def test_subscribing_to_a_finished_task_is_a_plain_error(tck_url: str) -> None:
    task = result_of(rpc(tck_url, "SendMessage", tck_params("tck-complete-task")))["task"]
    assert state_of(task) == COMPLETED
    error = error_of(rpc(tck_url, "SubscribeToTask", {"id": task["id"]}), -32004)
    assert task["id"] in error["message"]


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", "0x10", "7 8"])
def test_a_last_event_id_that_is_not_an_event_number_is_invalid(tck_url: str, value: str) -> None:
    task = result_of(rpc(tck_url, "SendMessage", tck_params("tck-input-required")))["task"]
    error = error_of(subscribe_error(tck_url, task["id"], value), -32602)
    assert violated_fields(error) == ["Last-Event-ID"]
