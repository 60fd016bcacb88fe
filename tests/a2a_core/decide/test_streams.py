"""Stream cursors: exactly-once, in-order delivery over a task's event log, and where streams end.

The property at the end drives the real reducer with random agent output and checks that every
subscriber, whenever it joins, however its events are batched, duplicated or lost in transit,
sees exactly the task's log from its starting point.
"""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

import a2a_core as a2a
from a2a_core import (
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    decisions,
    transport,
)
from a2a_core import text_artifact as artifact
from a2a_core.decisions import FollowTask, StreamMode, advance, open_cursor, release
from a2a_core.store import LoggedEvent as E
from tests.a2a_core.support import Harness, created_id, make_core, publishes, start_of

NOW = datetime(2026, 1, 1, tzinfo=UTC)
#: How long a send stream in these tests may hold its snapshot for a direct reply.
HOLD = NOW + timedelta(milliseconds=50)


def task(state: TaskState = TaskState.SUBMITTED) -> Task:
    return Task(id="t", context_id="c", status=TaskStatus(state, timestamp=NOW))


def status(state: TaskState, text: str | None = None) -> TaskStatusUpdateEvent:
    message = None
    if text is not None:
        message = Message(message_id="m", role=Role.AGENT, parts=(Part(text=text),))
    return TaskStatusUpdateEvent("t", "c", TaskStatus(state, message, NOW))


def chunk(text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent("t", "c", artifact(text, artifact_id="a"))


def seqs(frames: Sequence[E]) -> list[int]:
    return [f.seq for f in frames]


def test_a_subscription_starts_with_the_snapshot() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SUBSCRIBE, 4, task(), TaskState.WORKING))
    assert step.frames == (E(4, task()),)
    assert not step.cursor.done
    assert not step.gap


def test_a_resent_message_the_agent_answered_directly_streams_that_answer_alone() -> None:
    """The answer is the whole stream (a direct reply ends it), held for no one."""
    reply = Message("r", Role.AGENT, (Part(text="done"),), context_id="c")
    step = open_cursor(FollowTask("t", StreamMode.SEND, 3, reply, TaskState.COMPLETED, HOLD))
    assert step.frames == (E(3, reply),)
    assert step.cursor.done
    assert step.cursor.held is None
    assert not step.gap


def test_a_send_stream_holds_its_snapshot_until_the_agent_speaks() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SEND, 1, task(), TaskState.SUBMITTED, HOLD))
    assert step.frames == ()
    step = advance(step.cursor, [E(2, status(TaskState.WORKING))])
    assert step.frames == (E(1, task()), E(2, status(TaskState.WORKING)))


def test_a_held_snapshot_goes_out_when_its_time_comes_though_the_agent_is_silent() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SEND, 1, task(), TaskState.SUBMITTED, HOLD))
    assert step.cursor.release_at == HOLD
    early = release(step.cursor, HOLD - timedelta(milliseconds=1))
    assert early.frames == ()
    assert early.cursor == step.cursor
    step = release(step.cursor, HOLD)
    assert step.frames == (E(1, task()),)
    assert step.cursor.release_at is None
    assert release(step.cursor, HOLD + timedelta(seconds=9)).frames == ()  # once only
    # A direct reply after that is one more event of the task's stream, which goes on.
    done = status(TaskState.COMPLETED, "hi")
    assert done.status.message is not None
    step = advance(step.cursor, [E(2, done.status.message), E(3, done)])
    assert seqs(step.frames) == [2, 3]
    assert step.cursor.done


def test_without_a_hold_a_send_stream_starts_with_its_snapshot() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SEND, 1, task(), TaskState.SUBMITTED))
    assert step.frames == (E(1, task()),)
    assert step.cursor.release_at is None


def test_first_output_before_the_time_ends_the_hold() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SEND, 1, task(), TaskState.SUBMITTED, HOLD))
    step = advance(step.cursor, [E(2, status(TaskState.WORKING))])
    assert seqs(step.frames) == [1, 2]
    assert step.cursor.release_at is None
    assert release(step.cursor, HOLD).frames == ()


def test_a_direct_reply_makes_the_whole_stream_one_message() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SEND, 1, task(), TaskState.SUBMITTED, HOLD))
    done = status(TaskState.COMPLETED, "hi")
    assert done.status.message is not None
    # The reducer logs a direct reply as the message, then the completion it causes.
    step = advance(step.cursor, [E(2, done.status.message), E(3, done)])
    assert step.frames == (E(2, done.status.message),)
    assert step.cursor.done


def test_a_reply_after_progress_is_an_ordinary_event() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SEND, 1, task(), TaskState.SUBMITTED, HOLD))
    done = status(TaskState.COMPLETED, "hi")
    assert done.status.message is not None
    batch = [E(2, status(TaskState.WORKING)), E(3, done.status.message), E(4, done)]
    step = advance(step.cursor, batch)
    assert seqs(step.frames) == [1, 2, 3, 4]
    assert step.cursor.done


def test_a_completion_with_text_is_not_mistaken_for_a_reply() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SEND, 1, task(), TaskState.SUBMITTED, HOLD))
    done = status(TaskState.COMPLETED, "hi")
    step = advance(step.cursor, [E(2, done)])
    assert seqs(step.frames) == [1, 2]
    assert isinstance(step.frames[0].event, Task)


def test_duplicates_are_skipped_and_gaps_reported() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SUBSCRIBE, 1, task(), TaskState.SUBMITTED))
    step = advance(step.cursor, [E(1, task()), E(2, chunk("a"))])
    assert seqs(step.frames) == [2]
    step = advance(step.cursor, [E(2, chunk("a")), E(4, chunk("c"))])
    assert step.frames == ()
    assert step.gap
    assert step.cursor.last_seq == 2


def test_send_streams_end_when_the_task_needs_input() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SEND, 1, task(), TaskState.SUBMITTED, HOLD))
    step = advance(step.cursor, [E(2, status(TaskState.INPUT_REQUIRED, "?"))])
    assert step.cursor.done


def test_subscriptions_stay_open_across_interruptions_and_end_when_terminal() -> None:
    step = open_cursor(
        FollowTask("t", StreamMode.SUBSCRIBE, 3, task(TaskState.INPUT_REQUIRED), None)
    )
    batch = [E(4, status(TaskState.WORKING)), E(5, status(TaskState.AUTH_REQUIRED))]
    step = advance(step.cursor, batch)
    assert not step.cursor.done
    batch = [E(6, status(TaskState.CANCELED)), E(7, chunk("after the end"))]
    step = advance(step.cursor, batch)
    assert step.cursor.done
    assert seqs(step.frames) == [6]
    assert advance(step.cursor, [E(8, chunk("x"))]).frames == ()


def test_a_resumed_stream_reads_the_log_first() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SUBSCRIBE, 2, None, None))
    assert step.gap
    assert step.frames == ()
    batch = [E(3, chunk("b")), E(4, status(TaskState.COMPLETED))]
    step = advance(step.cursor, batch)
    assert seqs(step.frames) == [3, 4]
    assert step.cursor.done


def test_a_resumed_stream_at_the_end_of_a_live_task_just_waits() -> None:
    step = open_cursor(FollowTask("t", StreamMode.SUBSCRIBE, 2, None, TaskState.WORKING))
    assert step.gap  # reading the log finds nothing new; then it waits
    assert not step.cursor.done


# --- the property -------------------------------------------------------------------------------

STATES = [TaskState.WORKING, TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED]
FINAL = [TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED]


@st.composite
def logs(draw: st.DrawFn) -> list[E]:
    """A task's log: a snapshot, then updates, ending (maybe) in a terminal state."""
    events: list[E] = [E(1, task())]
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["status", "chunk"]))
        event = status(draw(st.sampled_from(STATES))) if kind == "status" else chunk("x")
        events.append(E(len(events) + 1, event))
    if draw(st.booleans()):
        events.append(E(len(events) + 1, status(draw(st.sampled_from(FINAL)))))
    return events


def state_at(log: Sequence[E], seq: int) -> TaskState:
    state = TaskState.SUBMITTED
    for logged in log[:seq]:
        if isinstance(logged.event, TaskStatusUpdateEvent):
            state = logged.event.status.state
    return state


@settings(max_examples=300, deadline=None)
@given(log=logs(), data=st.data())
def test_every_subscriber_sees_the_log_from_its_start_exactly_once(
    log: list[E], data: st.DataObject
) -> None:
    # A subscriber joins after event ``start`` (fresh with a snapshot, or resuming).
    start = data.draw(st.integers(1, len(log)), label="start")
    resume = data.draw(st.booleans(), label="resume")
    mode = data.draw(st.sampled_from(list(StreamMode)), label="mode")
    state = state_at(log, start)
    snapshot = None if resume else attrs.evolve(task(), status=TaskStatus(state, None, NOW))
    step = open_cursor(FollowTask("t", mode, start, snapshot, state, HOLD))
    delivered = list(step.frames)
    cursor = step.cursor
    pending = step.gap
    # Events after ``start`` arrive in random batches; some come twice, and some are dropped
    # (as a full mailbox drops them: it then knows it is behind, and the log is read).
    position = start
    dropped = False
    for _ in range(4 * len(log) + 4):
        if cursor.done:
            break
        page_full = False
        if pending:  # the adapter reads a page of the log after the cursor
            limit = data.draw(st.integers(1, 5), label="page")
            batch = log[cursor.last_seq : cursor.last_seq + limit]
            page_full = len(batch) == limit  # there may be more: the adapter reads on
        else:
            if position >= len(log):
                break
            size = data.draw(st.integers(1, 4), label="batch")
            batch = log[position : position + size]
            position += size
            if data.draw(st.booleans(), label="drop first"):
                batch = batch[1:]
                dropped = True
            if data.draw(st.booleans(), label="duplicate") and cursor.last_seq:
                batch = [log[cursor.last_seq - 1], *batch]
        step = advance(cursor, batch)
        delivered.extend(step.frames)
        cursor = step.cursor
        pending = step.gap or dropped or (page_full and not cursor.done)
        dropped = False

    updates = [f for f in delivered if not isinstance(f.event, Task) or f.seq != start]
    # What was delivered is exactly the log after ``start``, in order, without holes or repeats,
    assert updates == log[start : start + len(updates)]

    # and it stops exactly where the stream should end (or at the end of the log).
    def ends_stream(logged: E) -> bool:
        if not isinstance(logged.event, TaskStatusUpdateEvent):
            return False
        state = logged.event.status.state
        return state.settled if mode is StreamMode.SEND else state.terminal

    ends = [e.seq for e in log[start:] if ends_stream(e)]
    already_over = state.settled if mode is StreamMode.SEND else state.terminal
    if not already_over:
        assert start + len(updates) == (ends[0] if ends else len(log))
    if snapshot is not None and delivered:
        # A send holds its snapshot back until the agent speaks; then it comes first.
        assert delivered[0].seq == start
        assert isinstance(delivered[0].event, Task)


# --- the property, over the real reducer ----------------------------------------------------------


@attrs.define
class Subscriber:
    """A client reading one stream: what it was sent, and whether it still listens."""

    start: int
    cursor: Any
    frames: list[E]
    connected: bool = True
    behind: bool = False


AGENT_OUTPUTS = st.sampled_from(
    [
        "progress",
        artifact("piece", artifact_id="a"),
        a2a.ArtifactChunk(artifact("more", artifact_id="a"), append=True),
        a2a.input_required("more?"),
        a2a.auth_required("sign in"),
        a2a.completed("done"),
        a2a.failed("no"),
    ]
)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_subscribers_of_a_real_task_see_its_log_from_where_they_joined(
    data: st.DataObject,
) -> None:
    harness = Harness(make_core(streaming=True))
    decision = harness.send("start", operation=decisions.Operation.SEND_STREAMING_MESSAGE)
    task_id = created_id(decision)
    run = start_of(decision).run
    subscribers: list[Subscriber] = []

    def deliver(decision: decisions.Decision) -> None:
        for publish in publishes(decision):
            for sub in subscribers:
                if not sub.connected or sub.cursor.done:
                    continue
                if data.draw(st.integers(0, 5), label="overflow") == 0:
                    sub.behind = True  # a full mailbox drops the batch and reads the log
                    continue
                step = advance(sub.cursor, publish.events)
                sub.frames.extend(step.frames)
                sub.cursor, sub.behind = step.cursor, sub.behind or step.gap

    def catch_up(sub: Subscriber) -> None:
        for _ in range(100):
            if not sub.behind or sub.cursor.done:
                return
            log = harness.store.logs[task_id][sub.cursor.last_seq : sub.cursor.last_seq + 3]
            step = advance(sub.cursor, log)
            sub.frames.extend(step.frames)
            sub.cursor = step.cursor
            sub.behind = step.gap or len(log) == 3

    for _ in range(data.draw(st.integers(1, 25), label="steps")):
        record = harness.record(task_id)
        action = data.draw(st.sampled_from(["agent", "subscribe", "leave", "answer", "cancel"]))
        if action == "agent" and record.running:
            value = data.draw(AGENT_OUTPUTS, label="output")
            deliver(harness.decide(decisions.AgentOutput(task_id, run, value)))
        elif action == "subscribe":
            resume = data.draw(st.one_of(st.none(), st.integers(0, record.seq)), label="resume")
            request = a2a.SubscribeToTaskRequest(task_id)
            operation = decisions.Operation.SUBSCRIBE_TO_TASK
            call = decisions.Call(operation, request, transport.Caller("alice"), resume)
            reply = harness.decide(call).reply
            if isinstance(reply, FollowTask):
                step = open_cursor(reply)
                subscribers.append(
                    Subscriber(reply.after, step.cursor, list(step.frames), behind=step.gap)
                )
        elif action == "leave" and subscribers:
            data.draw(st.sampled_from(subscribers), label="leaver").connected = False
        elif action == "answer" and record.state is TaskState.INPUT_REQUIRED:
            decision = harness.send("answer", task_id=task_id)
            run = start_of(decision).run
            deliver(decision)
        elif action == "cancel" and not record.state.terminal:
            deliver(harness.cancel(task_id))
        for sub in subscribers:
            if sub.connected:
                catch_up(sub)

    log = harness.store.logs[task_id]
    for sub in subscribers:
        updates = [f for f in sub.frames if not (isinstance(f.event, Task) and f.seq == sub.start)]
        assert updates == log[sub.start : sub.start + len(updates)]
        if sub.connected:
            # A listener that stayed got everything up to the end of its stream or of the log.
            closing = [
                e.seq
                for e in log[sub.start :]
                if isinstance(e.event, TaskStatusUpdateEvent) and e.event.status.state.terminal
            ]
            assert sub.start + len(updates) == (closing[0] if closing else len(log))
