"""The reducer, driven through ``Core.needs``/``Core.decide`` over a dict-backed store."""

from datetime import timedelta
from typing import Any

import attrs
import pytest

from a2a_core import (
    AgentContext,
    Artifact,
    ArtifactChunk,
    CancelTaskRequest,
    GetTaskRequest,
    InputError,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    MissingInput,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StateChange,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    auth_required,
    completed,
    failed,
    input_required,
    rejected,
    reply,
    text_artifact,
    working,
)
from a2a_core.card import AgentSkill
from a2a_core.decisions import (
    AgentDone,
    AgentOutput,
    AwaitTask,
    Call,
    Decision,
    Dialect,
    Fail,
    FollowTask,
    Operation,
    Publish,
    Respond,
    Tick,
    World,
)
from a2a_core.errors import (
    ContentTypeNotSupportedError,
    FieldViolation,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.model._records import message_fingerprint, named_key
from a2a_core.model._requests import (
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
)
from a2a_core.store import (
    Cursor,
    Delete,
    ExpiryQuery,
    ListQuery,
    LoggedEvent,
    MessageKey,
    Owner,
    Put,
    Reads,
    Snapshot,
)
from a2a_core.transport import Caller, StartRun, StopRun

from .support import (
    CARD,
    EPOCH,
    Harness,
    Ids,
    awaited,
    created_id,
    failed_with,
    make_core,
    publishes,
    responded,
    start_of,
)

# --- helpers ----------------------------------------------------------------------------------


def status_text(task: Task) -> str | None:
    message = task.status.message
    return None if message is None else message.text


def texts(messages: tuple[Message, ...]) -> list[tuple[Role, str]]:
    return [(m.role, m.text) for m in messages]


def only_put(decision: Decision) -> Put:
    (write,) = decision.writes
    assert isinstance(write, Put)
    return write


def waiting_task(harness: Harness, question: str = "Which city?") -> str:
    """A task whose first run asked a question and ended: input-required, no run going."""
    task_id = harness.create("weather please")
    harness.decide(AgentDone(task_id, 1, error=InputError(question)))
    assert harness.record(task_id).state is TaskState.INPUT_REQUIRED
    assert not harness.record(task_id).running
    return task_id


def listed(decision: Decision) -> ListTasksResponse:
    value = responded(decision)
    assert isinstance(value, ListTasksResponse)
    return value


# --- creating a task --------------------------------------------------------------------------


def test_send_creates_a_submitted_task() -> None:
    harness = Harness()
    decision = harness.send("hello", metadata={"k": "v"}, accepted_output_modes=("text/plain",))
    put = only_put(decision)
    record = put.record
    assert put.expected == 0
    assert record.version == 1
    assert record.id == "id-1"
    assert record.task.context_id == "id-2"
    assert record.owner == Owner("alice")
    assert record.created_at == EPOCH
    assert (record.run, record.running, record.seq, record.replied) == (1, True, 1, False)
    assert record.task.status == TaskStatus(TaskState.SUBMITTED, timestamp=EPOCH)
    (message,) = record.task.history
    assert message.text == "hello"
    assert message.role is Role.USER
    assert (message.task_id, message.context_id) == ("id-1", "id-2")
    assert record.task.artifacts == ()

    publish, start = decision.effects
    assert publish == Publish(record, (LoggedEvent(1, record.task),), settled=False)
    assert put.events == publish.events
    # The fingerprint is of the message exactly as the client sent it.
    sent = attrs.evolve(message, task_id="", context_id="")
    assert record.messages == (("msg-1", message_fingerprint(sent)),)
    assert start == StartRun(
        "id-1",
        1,
        AgentContext(
            task_id="id-1",
            context_id="id-2",
            message=message,
            history=(message,),
            principal="alice",
            metadata={"k": "v"},
            accepted_output_modes=("text/plain",),
        ),
    )
    assert decision.reply == AwaitTask("id-1", None)
    assert decision.wake_at is None
    assert harness.record("id-1") == record


def test_send_keeps_the_clients_context_id() -> None:
    harness = Harness()
    task_id = harness.create(context_id="ctx-9")
    assert harness.task(task_id).context_id == "ctx-9"
    assert harness.task(task_id).history[0].context_id == "ctx-9"


def test_tasks_belong_to_principal_and_tenant() -> None:
    harness = Harness()
    task_id = harness.create(tenant="acme")
    assert harness.record(task_id).owner == Owner("alice", "acme")
    assert start_of(harness.send("x", tenant="acme")).context.tenant == "acme"
    # The same principal without the tenant cannot see it.
    assert isinstance(failed_with(harness.get(task_id)), TaskNotFoundError)
    found = harness.call(Operation.GET_TASK, GetTaskRequest(task_id, tenant="acme"))
    assert responded(found).id == task_id


def test_return_immediately_answers_with_the_submitted_task() -> None:
    harness = Harness()
    decision = harness.send("hi", blocking=False)
    task = responded(decision)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.SUBMITTED
    assert task == only_put(decision).record.task
    assert start_of(decision).run == 1


def test_return_immediately_honours_history_length() -> None:
    harness = Harness()
    task = responded(harness.send("hi", blocking=False, history_length=0))
    assert task.history == ()
    assert harness.task(task.id).history != ()


def test_blocking_send_answers_with_the_settled_task() -> None:
    harness = Harness()
    decision = harness.send("hi")
    wait = awaited(decision)
    harness.decide(AgentDone(wait.task_id, 1, "the answer"))
    reply_ = harness.core.settled_reply(wait, harness.record(wait.task_id))
    task = reply_.value
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert status_text(task) == "the answer"
    assert task == harness.task(wait.task_id)


def test_blocking_send_honours_history_length() -> None:
    harness = Harness()
    wait = awaited(harness.send("hi", history_length=1))
    assert wait.history_length == 1
    harness.decide(AgentOutput(wait.task_id, 1, "thinking"))
    harness.decide(AgentDone(wait.task_id, 1, "done"))
    task = harness.core.settled_reply(wait, harness.record(wait.task_id)).value
    assert texts(task.history) == [(Role.AGENT, "thinking")]


def test_blocking_send_answers_with_the_agents_direct_message() -> None:
    harness = Harness()
    wait = awaited(harness.send("hi"))
    decision = harness.decide(AgentDone(wait.task_id, 1, reply("hello yourself")))
    record = harness.record(wait.task_id)
    assert record.replied
    assert record.state is TaskState.COMPLETED
    answer = harness.core.settled_reply(wait, record).value
    assert isinstance(answer, Message)
    assert answer.text == "hello yourself"
    assert answer.role is Role.AGENT
    assert (answer.task_id, answer.context_id) == (record.id, record.task.context_id)
    assert answer.message_id  # the core filled it in
    assert publishes(decision)[0].settled


# --- message checks ---------------------------------------------------------------------------


def send_message(harness: Harness, message: Message) -> Decision:
    return harness.call(Operation.SEND_MESSAGE, SendMessageRequest(message))


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (Message("m", Role.AGENT, (Part(text="x"),)), "params.message.role"),
        (Message("m", Role.UNSPECIFIED, (Part(text="x"),)), "params.message.role"),
        (Message("", Role.USER, (Part(text="x"),)), "params.message.messageId"),
        (Message("m", Role.USER, ()), "params.message.parts"),
    ],
)
def test_bad_messages_are_invalid_params(message: Message, field: str) -> None:
    error = failed_with(send_message(Harness(), message))
    assert isinstance(error, InvalidParamsError)
    assert error.violations[0].field == field


def test_a_media_type_the_card_does_not_accept_is_refused() -> None:
    harness = Harness()
    parts = (Part(text="fine"), Part(raw=b"\x89PNG", media_type="image/png"))
    error = failed_with(harness.send(parts=parts))
    assert isinstance(error, ContentTypeNotSupportedError)
    assert error.codes.jsonrpc == -32005
    assert "params.message.parts[1]" in error.message
    assert error.metadata == {"mediaType": "image/png"}
    assert harness.store.records == {}


@pytest.mark.parametrize(
    ("modes", "media_type", "accepted"),
    [
        (("text/plain",), "text/plain", True),
        (("text/plain",), "TEXT/PLAIN; charset=utf-8", True),
        (("text/plain",), "", True),
        (("text/plain",), "application/json", False),
        (("image/*",), "image/png", True),
        (("image/*",), "text/plain", False),
        (("*/*",), "application/x-anything", True),
        ((), "application/x-anything", True),
        (("text/plain", "application/json;v=2"), "application/json", True),
    ],
)
def test_media_types_are_matched_against_default_input_modes(
    modes: tuple[str, ...], media_type: str, accepted: bool
) -> None:
    card = attrs.evolve(CARD, default_input_modes=modes)
    harness = Harness(make_core(card=card))
    decision = harness.send(parts=(Part(text="x", media_type=media_type),))
    if accepted:
        assert isinstance(decision.reply, AwaitTask)
    else:
        assert isinstance(failed_with(decision), ContentTypeNotSupportedError)


def test_negative_history_length_in_a_send_is_refused() -> None:
    error = failed_with(Harness().send(history_length=-1))
    assert error.violations == (
        FieldViolation("params.configuration.historyLength", "must not be negative, got -1"),
    )


# --- agent output -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "state", "text"),
    [
        ("plain answer", TaskState.COMPLETED, "plain answer"),
        (completed("done"), TaskState.COMPLETED, "done"),
        (completed(), TaskState.COMPLETED, None),
        (working("still at it"), TaskState.COMPLETED, None),
        (input_required("Which city?"), TaskState.INPUT_REQUIRED, "Which city?"),
        (auth_required("Please log in"), TaskState.AUTH_REQUIRED, "Please log in"),
        (failed("could not"), TaskState.FAILED, "could not"),
        (rejected("will not"), TaskState.REJECTED, "will not"),
        (None, TaskState.COMPLETED, None),
        ([], TaskState.COMPLETED, None),
        ([working("a"), "b"], TaskState.COMPLETED, None),
        ((input_required("q"),), TaskState.INPUT_REQUIRED, "q"),
    ],
)
def test_the_final_value_of_a_run(value: Any, state: TaskState, text: str | None) -> None:
    harness = Harness()
    task_id = harness.create()
    decision = harness.decide(AgentDone(task_id, 1, value))
    record = only_put(decision).record
    assert record.state is state
    assert status_text(record.task) == text
    assert not record.running
    assert record.version == 2
    (publish,) = publishes(decision)
    assert publish.record == record
    assert publish.settled
    assert record.seq == 1 + len(publish.events)
    assert publish.events[-1] == LoggedEvent(
        record.seq, TaskStatusUpdateEvent(task_id, record.task.context_id, record.task.status)
    )
    assert only_put(decision).events == publish.events
    if record.task.status.message is not None:
        assert record.task.status.message.role is Role.AGENT
        assert record.task.status.message.task_id == task_id


def test_status_messages_are_completed_by_the_core() -> None:
    harness = Harness()
    task_id = harness.create()
    stray = Message("", Role.USER, (Part(text="odd"),), task_id="other", context_id="other")
    harness.decide(AgentOutput(task_id, 1, StateChange(TaskState.WORKING, stray)))
    message = harness.task(task_id).status.message
    assert message is not None
    assert message.role is Role.AGENT
    assert (message.task_id, message.context_id) == (task_id, harness.task(task_id).context_id)
    assert message.message_id.startswith("id-")


@pytest.mark.parametrize(
    ("value", "state", "running", "settled"),
    [
        ("progress", TaskState.WORKING, True, False),
        (working(), TaskState.WORKING, True, False),
        (input_required("q"), TaskState.INPUT_REQUIRED, True, True),
        (auth_required("login"), TaskState.AUTH_REQUIRED, True, True),
        (completed("done"), TaskState.COMPLETED, False, True),
        (failed("no"), TaskState.FAILED, False, True),
        (rejected("no"), TaskState.REJECTED, False, True),
        (reply("direct"), TaskState.COMPLETED, False, True),
    ],
)
def test_yielded_values(value: Any, state: TaskState, running: bool, settled: bool) -> None:
    harness = Harness()
    task_id = harness.create()
    decision = harness.decide(AgentOutput(task_id, 1, value))
    record = only_put(decision).record
    assert record.state is state
    assert record.running is running
    assert record.run == 1
    (publish,) = publishes(decision)
    assert publish.settled is settled
    assert decision.reply is None


def test_a_yielded_string_is_progress_text() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentOutput(task_id, 1, "step one"))
    task = harness.task(task_id)
    assert task.status.state is TaskState.WORKING
    assert status_text(task) == "step one"
    harness.decide(AgentOutput(task_id, 1, "step two"))
    task = harness.task(task_id)
    assert status_text(task) == "step two"
    # The superseded status message moved into the history.
    assert texts(task.history) == [(Role.USER, "hello"), (Role.AGENT, "step one")]


@pytest.mark.parametrize("value", [None, [], ()])
def test_empty_output_writes_nothing(value: Any) -> None:
    harness = Harness()
    task_id = harness.create()
    assert harness.decide(AgentOutput(task_id, 1, value)) == Decision()
    assert harness.record(task_id).version == 1


def test_artifacts_are_added_without_changing_the_state() -> None:
    harness = Harness()
    task_id = harness.create()
    artifact = text_artifact("report", name="r", artifact_id="art-1")
    decision = harness.decide(AgentOutput(task_id, 1, artifact))
    record = only_put(decision).record
    assert record.state is TaskState.SUBMITTED
    assert record.task.artifacts == (artifact,)
    (publish,) = publishes(decision)
    assert publish.events == (
        LoggedEvent(
            2, TaskArtifactUpdateEvent(task_id, record.task.context_id, artifact, last_chunk=True)
        ),
    )
    assert not publish.settled
    harness.decide(AgentDone(task_id, 1))
    assert harness.task(task_id).status.state is TaskState.COMPLETED
    assert harness.task(task_id).artifacts == (artifact,)


def test_an_artifact_without_id_gets_one() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentOutput(task_id, 1, text_artifact("a")))
    harness.decide(AgentOutput(task_id, 1, text_artifact("b")))
    ids = [a.artifact_id for a in harness.task(task_id).artifacts]
    assert len(ids) == 2
    assert all(ids)
    assert ids[0] != ids[1]


def test_artifact_chunks_append_and_replace() -> None:
    harness = Harness()
    task_id = harness.create()
    first = Artifact("a", (Part(text="one "),), name="doc")
    harness.decide(AgentOutput(task_id, 1, ArtifactChunk(first)))
    more = Artifact("a", (Part(text="two"),))
    decision = harness.decide(
        AgentOutput(task_id, 1, ArtifactChunk(more, append=True, last_chunk=True))
    )
    (artifact,) = harness.task(task_id).artifacts
    assert artifact == Artifact("a", (Part(text="one "), Part(text="two")), name="doc")
    (publish,) = publishes(decision)
    (logged,) = publish.events
    event = logged.event
    assert isinstance(event, TaskArtifactUpdateEvent)
    assert (event.append, event.last_chunk, event.artifact) == (True, True, more)

    other = Artifact("b", (Part(text="x"),))
    harness.decide(AgentOutput(task_id, 1, ArtifactChunk(other, append=True)))
    replacement = Artifact("a", (Part(text="fresh"),))
    harness.decide(AgentOutput(task_id, 1, ArtifactChunk(replacement)))
    assert harness.task(task_id).artifacts == (replacement, other)


def test_a_list_is_applied_item_by_item() -> None:
    harness = Harness()
    task_id = harness.create()
    value = [working("a"), text_artifact("t", artifact_id="x"), completed("b"), working("late")]
    decision = harness.decide(AgentOutput(task_id, 1, value))
    record = only_put(decision).record
    # Everything after the task finished no longer counts.
    assert record.state is TaskState.COMPLETED
    assert status_text(record.task) == "b"
    (publish,) = publishes(decision)
    assert [type(e.event).__name__ for e in publish.events] == [
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    assert record.seq == 4


@pytest.mark.parametrize("value", [42, 1.5, object(), {"text": "hi"}, b"bytes", [working(), 7]])
def test_invalid_agent_values_fail_the_task(value: Any) -> None:
    harness = Harness()
    task_id = harness.create()
    for inp in (AgentOutput(task_id, 1, value), AgentDone(task_id, 1, value)):
        fresh = Harness()
        fresh_id = fresh.create()
        assert fresh_id == task_id
        fresh.decide(inp)
        task = fresh.task(task_id)
        assert task.status.state is TaskState.FAILED
        text = status_text(task)
        assert text is not None
        bad = value[-1] if isinstance(value, list) else value
        assert type(bad).__name__ in text
        assert "not an A2A update" in text
        assert not fresh.record(task_id).running


@pytest.mark.parametrize("state", [TaskState.SUBMITTED, TaskState.UNSPECIFIED])
def test_agents_cannot_move_a_task_to_an_initial_state(state: TaskState) -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentOutput(task_id, 1, StateChange(state)))
    task = harness.task(task_id)
    assert task.status.state is TaskState.FAILED
    assert (
        status_text(task) == f"Invalid agent response: an agent cannot move a task to {state.value}"
    )


@pytest.mark.parametrize("error", [InputError("Which city?"), MissingInput("Which city?")])
def test_input_error_asks_the_user(error: Exception) -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentDone(task_id, 1, error=error))
    record = harness.record(task_id)
    assert record.state is TaskState.INPUT_REQUIRED
    assert status_text(record.task) == "Which city?"
    assert not record.running


def test_input_error_without_text_asks_generically() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentDone(task_id, 1, error=MissingInput()))
    assert status_text(harness.task(task_id)) == "More input is required."


@pytest.mark.parametrize(
    "error", [ValueError("password=hunter2"), RuntimeError("/srv/secret.db"), KeyError("hunter2")]
)
def test_other_exceptions_fail_without_leaking_their_text(error: Exception) -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentDone(task_id, 1, error=error))
    task = harness.task(task_id)
    assert task.status.state is TaskState.FAILED
    assert status_text(task) == f"The agent failed ({type(error).__name__})."
    wire = repr(harness.core.codec.encode(task))
    assert "hunter2" not in wire
    assert "secret" not in wire


def test_a_generator_run_that_ends_while_working_completes() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentOutput(task_id, 1, "step 1"))
    harness.decide(AgentOutput(task_id, 1, text_artifact("partial", artifact_id="p")))
    decision = harness.decide(AgentDone(task_id, 1))
    record = harness.record(task_id)
    assert record.state is TaskState.COMPLETED
    assert not record.running
    assert status_text(record.task) is None
    assert texts(record.task.history) == [(Role.USER, "hello"), (Role.AGENT, "step 1")]
    assert [a.artifact_id for a in record.task.artifacts] == ["p"]
    assert publishes(decision)[0].settled
    assert record.version == 4
    assert record.seq == 4


def test_a_generator_run_that_ends_while_input_required_keeps_waiting() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentOutput(task_id, 1, input_required("Which city?")))
    assert harness.record(task_id).running
    decision = harness.decide(AgentDone(task_id, 1))
    record = only_put(decision).record
    assert record.state is TaskState.INPUT_REQUIRED
    assert status_text(record.task) == "Which city?"
    assert not record.running
    # Nothing new to tell listeners: only the run's end was recorded.
    assert decision.effects == ()
    assert record.seq == harness.record(task_id).seq


def test_output_of_an_unknown_task_stops_the_run() -> None:
    harness = Harness()
    assert harness.decide(AgentOutput("ghost", 3, "hi")) == Decision(
        effects=(StopRun("ghost", 3),), run_over=True
    )
    assert harness.decide(AgentDone("ghost", 3, "hi")) == Decision()


# --- multi-turn -------------------------------------------------------------------------------


@pytest.mark.parametrize("with_context", [False, True])
def test_follow_up_resumes_an_input_required_task(with_context: bool) -> None:
    harness = Harness()
    task_id = waiting_task(harness)
    before = harness.record(task_id)
    context_id = before.task.context_id
    decision = harness.send("Paris", task_id=task_id, context_id=context_id if with_context else "")
    put = only_put(decision)
    record = put.record
    assert put.expected == before.version
    assert record.version == before.version + 1
    assert record.state is TaskState.WORKING
    assert (record.run, record.running, record.replied) == (2, True, False)
    assert record.seq == before.seq + 1
    assert texts(record.task.history) == [
        (Role.USER, "weather please"),
        (Role.AGENT, "Which city?"),
        (Role.USER, "Paris"),
    ]
    answer = record.task.history[-1]
    assert (answer.task_id, answer.context_id) == (task_id, context_id)
    assert record.task.status.message is None

    publish, start = decision.effects  # the first run had ended: nothing to stop
    assert isinstance(publish, Publish)
    assert not publish.settled
    assert publish.events == (
        LoggedEvent(record.seq, TaskStatusUpdateEvent(task_id, context_id, record.task.status)),
    )
    assert isinstance(start, StartRun)
    assert (start.task_id, start.run) == (task_id, 2)
    assert start.context.message == answer
    assert start.context.history == record.task.history
    assert start.context.text == "Paris"
    assert decision.reply == AwaitTask(task_id, None)

    harness.decide(AgentDone(task_id, 2, "Sunny in Paris"))
    done = harness.record(task_id)
    assert done.state is TaskState.COMPLETED
    assert status_text(done.task) == "Sunny in Paris"


def test_follow_up_to_auth_required_resumes_too() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentDone(task_id, 1, auth_required("Log in first")))
    decision = harness.send("done, logged in", task_id=task_id)
    assert only_put(decision).record.state is TaskState.WORKING


def test_follow_up_while_the_old_run_still_goes_stops_it() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentOutput(task_id, 1, input_required("Which city?")))
    decision = harness.send("Rome", task_id=task_id)
    assert decision.effects[0] == StopRun(task_id, 1)
    assert start_of(decision).run == 2
    # Whatever the superseded run says now is dropped.
    before = harness.record(task_id)
    assert harness.decide(AgentOutput(task_id, 1, completed("stale"))) == Decision(
        effects=(StopRun(task_id, 1),), run_over=True
    )
    assert harness.decide(AgentDone(task_id, 1, "stale")) == Decision()
    assert harness.record(task_id) == before


@pytest.mark.parametrize("final", ["done", failed("x"), rejected("x"), reply("direct")])
def test_follow_up_to_a_terminal_task_is_unsupported(final: Any) -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentDone(task_id, 1, final))
    state = harness.record(task_id).state
    assert state.terminal
    error = failed_with(harness.send("more", task_id=task_id))
    assert isinstance(error, UnsupportedOperationError)
    assert error.codes.jsonrpc == -32004
    assert error.metadata == {"taskId": task_id, "state": state.value}
    assert "terminal" in error.message


def test_follow_up_to_a_canceled_task_is_unsupported() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.cancel(task_id)
    assert isinstance(failed_with(harness.send("more", task_id=task_id)), UnsupportedOperationError)


@pytest.mark.parametrize("progress", [None, "working on it"])
def test_a_message_to_a_task_at_work_supersedes_its_run(progress: str | None) -> None:
    """The run under way is stopped and a new one starts over the whole conversation."""
    harness = Harness()
    task_id = harness.create()
    if progress is not None:
        harness.decide(AgentOutput(task_id, 1, progress))
    decision = harness.send("hurry", task_id=task_id)
    stops = [e for e in decision.effects if isinstance(e, StopRun)]
    assert stops == [StopRun(task_id, 1)]
    start = start_of(decision)
    assert start.run == 2
    assert [m.text for m in start.context.history if m.role is Role.USER] == ["hello", "hurry"]
    after = harness.record(task_id)
    assert after.state is TaskState.WORKING
    assert after.running
    # Output of the superseded run no longer counts.
    late = harness.decide(AgentOutput(task_id, 1, "late"))
    assert late.writes == ()
    assert late.effects == (StopRun(task_id, 1),)


def test_follow_up_with_another_context_is_invalid_params() -> None:
    harness = Harness()
    task_id = waiting_task(harness)
    error = failed_with(harness.send("Paris", task_id=task_id, context_id="elsewhere"))
    assert isinstance(error, InvalidParamsError)
    assert error.violations[0].field == "params.message.contextId"


def test_unknown_and_foreign_tasks_look_exactly_alike() -> None:
    """Another principal's task answers what a missing task answers: ids cannot be probed."""
    harness = Harness()
    task_id = waiting_task(harness)
    empty = Harness()
    for operation in ("send", "get", "cancel"):
        foreign = _try(harness, operation, task_id, "bob")
        missing = _try(empty, operation, task_id, "alice")
        assert foreign == missing
        error = failed_with(foreign)
        assert isinstance(error, TaskNotFoundError)
        assert error.codes.jsonrpc == -32001
        assert error.metadata == {"taskId": task_id}
        assert harness.core.codec.encode_error_details(
            error
        ) == empty.core.codec.encode_error_details(failed_with(missing))
    assert harness.record(task_id).state is TaskState.INPUT_REQUIRED


def _try(harness: Harness, operation: str, task_id: str, principal: str) -> Decision:
    if operation == "send":
        return harness.send("x", task_id=task_id, principal=principal)
    if operation == "get":
        return harness.get(task_id, principal)
    return harness.cancel(task_id, principal)


# --- cancel -----------------------------------------------------------------------------------


def test_cancel_stops_the_run_and_late_output_is_dropped() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentOutput(task_id, 1, "working"))
    decision = harness.cancel(task_id)
    put = only_put(decision)
    record = put.record
    assert record.state is TaskState.CANCELED
    assert not record.running
    assert record.version == put.expected + 1
    stop, publish = decision.effects
    assert stop == StopRun(task_id, 1)
    assert isinstance(publish, Publish)
    assert publish.settled
    assert publish.events == (
        LoggedEvent(
            record.seq, TaskStatusUpdateEvent(task_id, record.task.context_id, record.task.status)
        ),
    )
    assert responded(decision) == record.task
    # The superseded status message is history now.
    assert texts(record.task.history)[-1] == (Role.AGENT, "working")

    late_output = harness.decide(AgentOutput(task_id, 1, completed("finished anyway")))
    assert late_output == Decision(effects=(StopRun(task_id, 1),), run_over=True)
    assert harness.decide(AgentDone(task_id, 1, "finished anyway")) == Decision()
    assert harness.decide(AgentDone(task_id, 1, error=ValueError())) == Decision()
    assert harness.record(task_id) == record


def test_cancel_of_a_waiting_task_has_no_run_to_stop() -> None:
    harness = Harness()
    task_id = waiting_task(harness)
    decision = harness.cancel(task_id)
    assert [type(e) for e in decision.effects] == [Publish]
    assert harness.record(task_id).state is TaskState.CANCELED


@pytest.mark.parametrize("final", ["done", failed("x"), None])
def test_cancel_of_a_terminal_task_is_not_cancelable(final: Any) -> None:
    harness = Harness()
    task_id = harness.create()
    harness.decide(AgentDone(task_id, 1, final))
    state = harness.record(task_id).state
    error = failed_with(harness.cancel(task_id))
    assert isinstance(error, TaskNotCancelableError)
    assert error.codes.jsonrpc == -32002
    assert error.metadata == {"taskId": task_id, "state": state.value}


def test_cancel_twice_is_not_cancelable() -> None:
    harness = Harness()
    task_id = harness.create()
    harness.cancel(task_id)
    assert isinstance(failed_with(harness.cancel(task_id)), TaskNotCancelableError)


# --- get --------------------------------------------------------------------------------------


def conversation(harness: Harness) -> str:
    """A task with five history messages (user, agent, user, agent, agent) and one artifact."""
    task_id = waiting_task(harness)
    harness.send("Paris", task_id=task_id)
    harness.decide(AgentOutput(task_id, 2, "looking it up"))
    harness.decide(AgentOutput(task_id, 2, text_artifact("forecast", artifact_id="f")))
    harness.decide(AgentOutput(task_id, 2, "almost"))
    harness.decide(AgentDone(task_id, 2, "Sunny"))
    assert len(harness.task(task_id).history) == 5
    return task_id


def test_get_returns_the_whole_task_by_default() -> None:
    harness = Harness()
    task_id = conversation(harness)
    assert responded(harness.get(task_id)) == harness.task(task_id)


@pytest.mark.parametrize("length", [0, 1, 3, 5, 50])
def test_get_keeps_the_last_history_length_messages(length: int) -> None:
    harness = Harness()
    task_id = conversation(harness)
    full = harness.task(task_id)
    task = responded(harness.get(task_id, history_length=length))
    assert task.history == (full.history[-length:] if length else ())
    assert task.artifacts == full.artifacts
    assert task.status == full.status
    if length == 0:
        assert "history" not in harness.core.codec.encode(task)


def test_get_refuses_a_negative_history_length() -> None:
    harness = Harness()
    task_id = harness.create()
    error = failed_with(harness.get(task_id, history_length=-1))
    assert isinstance(error, InvalidParamsError)
    assert error.violations[0].field == "params.historyLength"


def test_get_of_an_unknown_task_is_not_found() -> None:
    error = failed_with(Harness().get("nope"))
    assert error == TaskNotFoundError("Task nope not found", metadata={"taskId": "nope"})


# --- list -------------------------------------------------------------------------------------


def populate(harness: Harness) -> dict[str, str]:
    """Alice: a, b (context ctx-1), c (completed), d; bob: e. Created in that order."""
    names = {}
    names["a"] = harness.create("a", context_id="ctx-1")
    names["b"] = harness.create("b", context_id="ctx-1")
    names["c"] = harness.create("c")
    names["d"] = harness.create("d")
    names["e"] = harness.create("e", principal="bob")
    harness.decide(AgentOutput(names["c"], 1, text_artifact("out", artifact_id="o")))
    harness.decide(AgentDone(names["c"], 1, "done"))
    return names


def test_list_returns_the_callers_tasks_newest_first() -> None:
    harness = Harness()
    names = populate(harness)
    page = listed(harness.list())
    assert [t.id for t in page.tasks] == [names[n] for n in ("c", "d", "b", "a")]
    assert page.total_size == 4
    assert page.page_size == 50
    assert page.next_page_token == ""
    assert names["e"] not in [t.id for t in page.tasks]
    bob = listed(harness.list("bob"))
    assert [t.id for t in bob.tasks] == [names["e"]]
    assert listed(harness.list("carol")) == ListTasksResponse((), "", 50, 0)


def test_list_filters() -> None:
    harness = Harness()
    names = populate(harness)
    by_context = listed(harness.list(context_id="ctx-1"))
    assert [t.id for t in by_context.tasks] == [names["b"], names["a"]]
    by_state = listed(harness.list(status=TaskState.COMPLETED))
    assert [t.id for t in by_state.tasks] == [names["c"]]
    assert by_state.total_size == 1
    since = harness.record(names["b"]).updated_at
    recent = listed(harness.list(status_timestamp_after=since))
    assert [t.id for t in recent.tasks] == [names["c"], names["d"], names["b"]]
    everything = listed(harness.list(status=TaskState.UNSPECIFIED))
    assert everything.total_size == 4


def test_list_omits_artifacts_unless_asked() -> None:
    harness = Harness()
    names = populate(harness)
    for include in (None, False):
        page = listed(harness.list(include_artifacts=include, status=TaskState.COMPLETED))
        assert page.tasks[0].artifacts == ()
        assert "artifacts" not in harness.core.codec.encode(page)["tasks"][0]
    page = listed(harness.list(include_artifacts=True, status=TaskState.COMPLETED))
    assert page.tasks[0].artifacts == harness.task(names["c"]).artifacts


def test_list_honours_history_length() -> None:
    harness = Harness()
    populate(harness)
    page = listed(harness.list(history_length=0))
    assert all(t.history == () for t in page.tasks)
    assert (
        failed_with(harness.list(history_length=-2)).violations[0].field == "params.historyLength"
    )


def test_list_pages_through_every_task_once() -> None:
    harness = Harness(step=timedelta(0))  # equal timestamps: the id breaks ties
    created = [harness.create(str(n)) for n in range(7)]
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = listed(harness.list(page_size=3, page_token=token))
        pages += 1
        assert page.total_size == 7
        assert page.page_size == 3
        seen.extend(t.id for t in page.tasks)
        token = page.next_page_token
        if not token:
            break
        assert Cursor.decode(token).task_id == page.tasks[-1].id
    assert pages == 3
    assert sorted(seen) == sorted(created)
    assert len(seen) == len(set(seen))


def test_list_page_size_default_and_bounds() -> None:
    harness = Harness(make_core(default_page_size=2, max_page_size=3))
    for _ in range(4):
        harness.create()
    page = listed(harness.list())
    assert (len(page.tasks), page.page_size) == (2, 2)
    assert page.next_page_token
    assert len(listed(harness.list(page_size=3)).tasks) == 3
    error = failed_with(harness.list(page_size=4))
    assert error.violations == (
        FieldViolation("params.pageSize", "must be between 1 and 3, got 4"),
    )


@pytest.mark.parametrize("size", [0, -1, 101, 2**31 - 1])
def test_list_page_size_outside_1_to_100_is_refused(size: int) -> None:
    error = failed_with(Harness().list(page_size=size))
    assert isinstance(error, InvalidParamsError)
    assert error.violations[0].field == "params.pageSize"


@pytest.mark.parametrize("size", [1, 100])
def test_list_page_size_bounds_are_inclusive(size: int) -> None:
    assert listed(Harness().list(page_size=size)).page_size == size


@pytest.mark.parametrize("token", ["garbage!", "bm90IGEgdG9rZW4", "zzzz", "fA"])
def test_list_refuses_a_page_token_it_did_not_issue(token: str) -> None:
    harness = Harness()
    call = Call(Operation.LIST_TASKS, ListTasksRequest(page_token=token), Caller("alice"))
    assert harness.core.needs(call) == Reads()
    error = failed_with(harness.decide(call))
    assert isinstance(error, InvalidParamsError)
    assert error.violations[0].field == "params.pageToken"


def test_list_needs_its_query() -> None:
    core = make_core()
    since = EPOCH - timedelta(days=1)
    cursor = Cursor(EPOCH, "id-3")
    call = Call(
        Operation.LIST_TASKS,
        ListTasksRequest(
            tenant="t",
            context_id="c",
            status=TaskState.WORKING,
            page_size=7,
            page_token=cursor.encode(),
            status_timestamp_after=since,
        ),
        Caller("alice"),
    )
    assert core.needs(call) == Reads(
        listing=ListQuery(Owner("alice", "t"), 7, "c", TaskState.WORKING, since, cursor)
    )


def test_cursor_tokens_round_trip_at_microsecond_precision() -> None:
    cursor = Cursor(EPOCH + timedelta(microseconds=123456), "task|with|bars")
    assert Cursor.decode(cursor.encode()) == cursor


# --- capabilities that are off ----------------------------------------------------------------

PUSH_CALLS: list[tuple[Operation, Any]] = [
    (Operation.CREATE_PUSH_CONFIG, TaskPushNotificationConfig("https://hook", task_id="t")),
    (Operation.GET_PUSH_CONFIG, GetTaskPushNotificationConfigRequest("t", "c")),
    (Operation.LIST_PUSH_CONFIGS, ListTaskPushNotificationConfigsRequest("t")),
    (Operation.DELETE_PUSH_CONFIG, DeleteTaskPushNotificationConfigRequest("t", "c")),
]
STREAM_CALLS: list[tuple[Operation, Any]] = [
    (
        Operation.SEND_STREAMING_MESSAGE,
        SendMessageRequest(Message("m", Role.USER, (Part(text="x"),))),
    ),
    (Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest("t")),
]


@pytest.mark.parametrize(("operation", "request_"), STREAM_CALLS)
def test_streaming_is_unsupported_while_off(operation: Operation, request_: Any) -> None:
    error = failed_with(Harness().call(operation, request_))
    assert isinstance(error, UnsupportedOperationError)
    assert error.codes.jsonrpc == -32004
    assert "capabilities.streaming" in error.message


@pytest.mark.parametrize(("operation", "request_"), PUSH_CALLS)
def test_push_configs_are_not_supported_while_off(operation: Operation, request_: Any) -> None:
    error = failed_with(Harness().call(operation, request_))
    assert isinstance(error, PushNotificationNotSupportedError)
    assert error.codes.jsonrpc == -32003


def test_extended_card_is_unsupported_without_one() -> None:
    error = failed_with(Harness().call(Operation.GET_EXTENDED_CARD, GetExtendedAgentCardRequest()))
    assert isinstance(error, UnsupportedOperationError)
    assert error.codes.jsonrpc == -32004


@pytest.mark.parametrize(
    ("options", "operation", "request_"),
    [
        *[({"streaming": True}, *call) for call in STREAM_CALLS],
        *[({"push_notifications": True}, *call) for call in PUSH_CALLS],
    ],
)
def test_advertised_capabilities_are_served(
    options: dict[str, Any], operation: Operation, request_: Any
) -> None:
    """With the capability on (and so on the card), its operations are not refused."""
    harness = Harness(make_core(**options))
    reply_ = harness.call(operation, request_).reply
    if isinstance(reply_, Fail):
        assert not isinstance(
            reply_.error, UnsupportedOperationError | PushNotificationNotSupportedError
        ), reply_
        assert isinstance(reply_.error, TaskNotFoundError)  # task "t" does not exist


# --- idempotent sends -------------------------------------------------------------------------


def test_a_resent_message_answers_with_its_task_and_runs_nothing() -> None:
    harness = Harness()
    first = harness.send("hi", message_id="m-1")
    task_id = created_id(first)
    again = harness.send("hi", message_id="m-1")
    assert again.writes == ()
    assert again.effects == ()
    assert again.reply == AwaitTask(task_id)
    immediately = harness.send("hi", message_id="m-1", blocking=False, history_length=0)
    assert immediately == Decision(reply=Respond(attrs.evolve(harness.task(task_id), history=())))
    assert len(harness.store.records) == 1


def test_a_message_resent_after_its_task_settled_gets_the_settled_answer() -> None:
    harness = Harness()
    task_id = created_id(harness.send("hi", message_id="m-1"))
    harness.decide(AgentDone(task_id, 1, reply("hello")))
    again = harness.send("hi", message_id="m-1")
    assert again.writes == ()
    answer = responded(again)
    assert isinstance(answer, Message)
    assert answer == harness.task(task_id).status.message


def test_a_message_id_reused_for_another_message_is_refused() -> None:
    harness = Harness()
    harness.send("hi", message_id="m-1")
    error = failed_with(harness.send("something else", message_id="m-1"))
    assert isinstance(error, InvalidParamsError)
    assert error.violations[0].field == "params.message.messageId"


def test_message_ids_are_per_owner() -> None:
    harness = Harness()
    mine = created_id(harness.send("hi", message_id="m-1"))
    bobs = created_id(harness.send("hi", message_id="m-1", principal="bob"))
    other_tenant = created_id(harness.send("hi", message_id="m-1", tenant="t2"))
    assert len({mine, bobs, other_tenant}) == 3


def test_a_resent_follow_up_does_not_start_another_run() -> None:
    harness = Harness()
    task_id = waiting_task(harness)
    follow = harness.send("Paris", task_id=task_id, message_id="answer")
    assert start_of(follow).run == 2
    again = harness.send("Paris", task_id=task_id, message_id="answer")
    assert again == Decision(reply=AwaitTask(task_id))
    assert harness.record(task_id).run == 2


# --- skills -----------------------------------------------------------------------------------

SKILLFUL = attrs.evolve(
    CARD,
    skills=(
        AgentSkill("chat", "Chat", "talks", ("chat",)),
        AgentSkill("draw", "Draw", "looks at pictures", ("img",), input_modes=("image/*",)),
    ),
)
PICTURE = (Part(raw=b"\x89PNG", media_type="image/png"),)


@pytest.mark.parametrize("where", ["request", "message"])
def test_a_send_naming_a_skill_is_routed_to_it(where: str) -> None:
    harness = Harness(make_core(card=SKILLFUL))
    metadata = {"skillId": "draw"}
    if where == "request":
        decision = harness.send(parts=PICTURE, metadata=metadata)
    else:
        message = Message("m", Role.USER, PICTURE, metadata=metadata)
        decision = harness.call(Operation.SEND_MESSAGE, SendMessageRequest(message))
    assert only_put(decision).record.skill_id == "draw"
    assert start_of(decision).context.skill_id == "draw"


def test_a_send_naming_no_skill_goes_to_the_default() -> None:
    harness = Harness(make_core(card=SKILLFUL, default_skill="chat"))
    assert start_of(harness.send("hi")).context.skill_id == "chat"
    assert start_of(Harness(make_core(card=SKILLFUL)).send("hi")).context.skill_id == ""


@pytest.mark.parametrize("skill_id", ["paint", 7, None, ""])
def test_an_unknown_skill_is_invalid_params(skill_id: Any) -> None:
    error = failed_with(Harness(make_core(card=SKILLFUL)).send(metadata={"skillId": skill_id}))
    assert isinstance(error, InvalidParamsError)
    assert error.violations[0].field == "params.metadata.skillId"
    assert "chat, draw" in error.message


def test_a_skills_input_modes_replace_the_cards() -> None:
    harness = Harness(make_core(card=SKILLFUL))
    assert isinstance(harness.send(parts=PICTURE, metadata={"skillId": "draw"}).reply, AwaitTask)
    refused = harness.send(parts=PICTURE, metadata={"skillId": "chat"})
    assert isinstance(failed_with(refused), ContentTypeNotSupportedError)


def test_a_follow_up_is_checked_against_its_tasks_skill() -> None:
    harness = Harness(make_core(card=SKILLFUL))
    task_id = created_id(harness.send(parts=PICTURE, metadata={"skillId": "draw"}))
    harness.decide(AgentDone(task_id, 1, error=InputError("Another picture?")))
    decision = harness.send(parts=PICTURE, task_id=task_id)
    assert isinstance(decision.reply, AwaitTask)


# --- expiry -----------------------------------------------------------------------------------

TTL = timedelta(minutes=5)


def expiring() -> Harness:
    return Harness(make_core(task_ttl=TTL, sweep_batch=2))


def test_finishing_a_task_asks_for_a_tick_when_it_expires() -> None:
    harness = expiring()
    task_id = harness.create()
    assert harness.send("x").wake_at is None  # nothing finished
    done = harness.decide(AgentDone(task_id, 1, "ok"))
    assert done.wake_at == harness.record(task_id).updated_at + TTL
    assert Harness().decide(AgentDone(Harness().create(), 1, "ok")).wake_at is None


def test_a_terminal_task_past_its_ttl_is_gone() -> None:
    harness = expiring()
    task_id = harness.create()
    waiting = waiting_task(harness)
    harness.decide(AgentDone(task_id, 1, "ok"))
    finished = harness.record(task_id).updated_at
    harness.now = finished + TTL - timedelta(microseconds=1)
    assert responded(harness.get(task_id)).id == task_id
    harness.now = finished + TTL
    assert isinstance(failed_with(harness.get(task_id)), TaskNotFoundError)
    assert isinstance(failed_with(harness.cancel(task_id)), TaskNotFoundError)
    assert [t.id for t in listed(harness.list()).tasks] == [waiting]
    # Live tasks never expire.
    harness.now += TTL * 10
    assert responded(harness.get(waiting)).id == waiting


def test_pages_past_tasks_expired_before_their_sweep_are_short_and_still_end() -> None:
    # The store lists what it holds; tasks whose TTL ended since the last sweep are dropped from
    # the page after, so a page may be short, even empty, and name a next page (AIP-158 allows
    # it): paging goes on past them and ends, showing only what is live.
    harness = expiring()
    done = [harness.create(str(n)) for n in range(3)]
    for task_id in done:
        harness.decide(AgentDone(task_id, 1, "ok"))
    live = harness.create("live")
    harness.now = harness.record(done[-1]).updated_at + TTL
    pages: list[list[str]] = []
    token = ""
    for _ in range(6):
        page = listed(harness.list(page_size=1, page_token=token))
        pages.append([t.id for t in page.tasks])
        token = page.next_page_token
        if not token:
            break
    assert pages == [[live], [], [], []]
    assert harness.tick().writes == tuple(Delete(i, 2) for i in done[:2])
    after_sweep = listed(harness.list())
    assert ([t.id for t in after_sweep.tasks], after_sweep.next_page_token) == ([live], "")


def test_ticks_sweep_expired_tasks_in_batches() -> None:
    harness = expiring()
    ids = [harness.create(str(n)) for n in range(3)]
    for task_id in ids:
        harness.decide(AgentDone(task_id, 1, "ok"))
    last = harness.record(ids[-1]).updated_at
    harness.now = last + TTL + timedelta(seconds=1)
    tick = Tick(harness.now)
    assert harness.core.needs(tick) == Reads(expiry=ExpiryQuery(harness.now - TTL, 2))
    now = harness.now
    first = harness.decide(tick)
    assert first.writes == tuple(Delete(i, 2) for i in ids[:2])
    assert first.wake_at == now  # a full batch: tick again at once
    second = harness.tick()
    assert second.writes == (Delete(ids[2], 2),)
    assert second.wake_at is None
    assert harness.store.records == {}


def test_a_tick_says_when_the_next_task_expires() -> None:
    harness = expiring()
    task_id = harness.create()
    harness.decide(AgentDone(task_id, 1, "ok"))
    decision = harness.tick()
    assert decision.writes == ()
    assert decision.wake_at == harness.record(task_id).updated_at + TTL


def test_a_message_id_of_an_expired_task_may_be_used_again() -> None:
    harness = expiring()
    old = created_id(harness.send("hi", message_id="m-1"))
    harness.decide(AgentDone(old, 1, "ok"))
    harness.now += TTL
    decision = harness.send("hi", message_id="m-1")
    delete, put = decision.writes
    assert delete == Delete(old, 2)
    assert isinstance(put, Put)
    assert put.expected == 0
    assert put.record.id != old


# --- what the reducer reads, and determinism --------------------------------------------------


def test_needs_names_the_task_each_input_touches() -> None:
    core = make_core()
    alice = Caller("alice")
    new = SendMessageRequest(Message("m", Role.USER, (Part(text="x"),)))
    follow = SendMessageRequest(Message("m", Role.USER, (Part(text="x"),), task_id="t1"))
    key = MessageKey(Owner("alice"), "m")
    assert core.needs(Call(Operation.SEND_MESSAGE, new, alice)) == Reads(message=key)
    # A task a client reads may be one it named itself (legacy tasks/send): under its own key.
    owned = Owner("alice")
    assert core.needs(Call(Operation.SEND_MESSAGE, follow, alice)) == Reads(
        "t1", named_key(owned, "t1"), message=key
    )
    assert core.needs(Call(Operation.GET_TASK, GetTaskRequest("t2"), alice)) == Reads(
        "t2", named_key(owned, "t2")
    )
    cancel = CancelTaskRequest("t3", tenant="acme")
    assert core.needs(Call(Operation.CANCEL_TASK, cancel, alice)) == Reads(
        "t3", named_key(Owner("alice", "acme"), "t3")
    )
    assert core.needs(AgentOutput("t4", 1, "x")) == Reads("t4")
    assert core.needs(AgentDone("t5", 1)) == Reads("t5")
    assert core.needs(Tick(EPOCH)) == Reads()
    push = Call(Operation.GET_EXTENDED_CARD, GetExtendedAgentCardRequest(), alice)
    assert core.needs(push) == Reads()


def test_tick_decides_nothing() -> None:
    harness = Harness()
    harness.create()
    assert harness.tick() == Decision()


def test_decisions_are_a_pure_function_of_their_inputs() -> None:
    """Two harnesses fed the same inputs decide exactly the same things."""

    def script(harness: Harness) -> list[Decision]:
        task_id = harness.create("one")
        return [
            harness.decide(AgentOutput(task_id, 1, ["x", text_artifact("y")])),
            harness.decide(AgentDone(task_id, 1, error=InputError("q"))),
            harness.send("two", task_id=task_id),
            harness.cancel(task_id),
            harness.list(),
        ]

    assert script(Harness()) == script(Harness())


def test_decide_over_a_snapshot_does_not_depend_on_the_store() -> None:
    harness = Harness()
    task_id = harness.create()
    record = harness.record(task_id)
    inp = AgentOutput(task_id, 1, "progress")
    first = harness.core.decide(inp, Snapshot(task=record), World(harness.now, Ids()))
    second = harness.core.decide(inp, Snapshot(task=record), World(harness.now, Ids()))
    assert first == second
    assert harness.record(task_id) is record  # decide wrote nothing itself


# --- tasks their clients named (legacy tasks/send) ----------------------------------------------


def legacy_send(harness: Harness, task_id: str, text: str, principal: str = "alice") -> Decision:
    """v0.1 ``tasks/send``: the client names the task; its message has no id."""
    message = Message("", Role.USER, (Part(text=text),), task_id=task_id)
    request = SendMessageRequest(
        message, configuration=SendMessageConfiguration(return_immediately=True)
    )
    call = Call(Operation.SEND_MESSAGE, request, Caller(principal), dialect=Dialect.LEGACY)
    return harness.decide(call)


def user_texts(task: Task) -> list[str | None]:
    return [m.text for m in task.history if m.role is Role.USER]


def test_two_owners_may_name_their_tasks_alike() -> None:
    harness = Harness()
    alices = legacy_send(harness, "x", "alice's")
    bobs = legacy_send(harness, "x", "bob's", "bob")
    fresh = legacy_send(harness, "y", "bob's", "bob")
    # Bob learns nothing of alice's "x": he gets a new task, as for an id nobody used.
    for decision, task_id in ((bobs, "x"), (fresh, "y")):
        (put,) = decision.writes
        assert isinstance(put, Put)
        assert put.expected == 0
        assert put.record.id == named_key(Owner("bob"), task_id)
        acknowledged = responded(decision)
        assert (acknowledged.id, acknowledged.status.state) == (task_id, TaskState.SUBMITTED)
        assert user_texts(acknowledged) == ["bob's"]
        assert start_of(decision).task_id == put.record.id
        assert start_of(decision).context.task_id == task_id  # the agent sees the id chosen
    assert start_of(alices).task_id != start_of(bobs).task_id
    assert user_texts(responded(harness.get("x"))) == ["alice's"]
    assert user_texts(responded(harness.get("x", "bob"))) == ["bob's"]
    assert isinstance(failed_with(harness.get("x", "carol")), TaskNotFoundError)


def test_a_named_task_answers_every_dialect_by_its_id() -> None:
    harness = Harness(make_core(streaming=True))
    key = start_of(legacy_send(harness, "x", "first")).task_id
    follow_up = harness.send("more", task_id="x", blocking=False)  # a v1.0 follow-up
    (put,) = follow_up.writes
    assert isinstance(put, Put)
    assert (put.record.id, put.expected) == (key, 1)
    assert user_texts(responded(follow_up)) == ["first", "more"]
    assert [type(e) for e in follow_up.effects if isinstance(e, StopRun | StartRun)] == [
        StopRun,
        StartRun,
    ]
    assert all(e.task_id == key for e in follow_up.effects if isinstance(e, StopRun | StartRun))
    subscribe = Call(Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest("x"), Caller("alice"))
    stream = harness.decide(subscribe).reply
    assert isinstance(stream, FollowTask)
    assert stream.task_id == key
    canceled = harness.cancel("x")
    assert responded(canceled).id == "x"
    assert isinstance(failed_with(harness.cancel("x")), TaskNotCancelableError)
    assert "Task x cannot be canceled" in str(failed_with(harness.cancel("x")))


def test_a_key_asked_for_as_an_id_finds_nothing() -> None:
    harness = Harness()
    key = start_of(legacy_send(harness, "x", "hi")).task_id
    assert isinstance(failed_with(harness.get(key)), TaskNotFoundError)
    assert isinstance(failed_with(harness.get(key, "bob")), TaskNotFoundError)


def test_a_named_id_of_another_owners_server_named_task_is_ones_own() -> None:
    harness = Harness()
    theirs = harness.create("alice's")
    mine = legacy_send(harness, theirs, "bob's", "bob")
    assert start_of(mine).task_id == named_key(Owner("bob"), theirs)
    assert user_texts(responded(harness.get(theirs, "bob"))) == ["bob's"]
    assert user_texts(responded(harness.get(theirs))) == ["alice's"]
    # Alice's own legacy send with her task's id is a turn of it.
    harness.decide(AgentDone(theirs, 1, input_required("more?")))
    (put,) = legacy_send(harness, theirs, "more").writes
    assert isinstance(put, Put)
    assert (put.record.id, put.expected) == (theirs, 2)


def test_an_expired_named_task_is_replaced_by_a_new_one() -> None:
    harness = expiring()
    key = start_of(legacy_send(harness, "x", "old")).task_id
    harness.decide(AgentDone(key, 1, "ok"))
    harness.now += TTL
    decision = legacy_send(harness, "x", "new")
    delete, put = decision.writes
    assert delete == Delete(key, 2)
    assert isinstance(put, Put)
    assert (put.record.id, put.expected) == (key, 0)
    assert user_texts(harness.task(key)) == ["new"]


# --- a long conversation ------------------------------------------------------------------------


def test_a_follow_up_logs_its_status_not_the_whole_task() -> None:
    harness = Harness()
    task_id = waiting_task(harness)
    (put,) = harness.send("Paris", task_id=task_id).writes
    assert isinstance(put, Put)
    assert [type(e.event) for e in put.events] == [TaskStatusUpdateEvent]


def test_a_follow_up_past_max_task_messages_is_refused() -> None:
    harness = Harness(make_core(max_task_messages=5))
    task_id = waiting_task(harness)  # the message, and the question in the status
    harness.send("Paris", task_id=task_id)  # the question moves to the history: 3
    harness.decide(AgentDone(task_id, 2, error=InputError("When?")))
    harness.send("Today", task_id=task_id)  # 5, the most there may be
    assert len(harness.task(task_id).history) == 5
    harness.decide(AgentDone(task_id, 3, error=InputError("Anything else?")))
    error = failed_with(harness.send("No", task_id=task_id))
    assert isinstance(error, InvalidParamsError)
    [violation] = error.violations
    assert violation.field == "params.message"
    assert "holds 6 messages and may hold at most 5" in violation.description
    assert harness.task(task_id).context_id in violation.description
    # The conversation goes on in a new task of the same context.
    context_id = harness.task(task_id).context_id
    assert harness.create("No", context_id=context_id) != task_id
    assert Harness(make_core(max_task_messages=None)).core.config.max_task_messages is None


def test_max_task_messages_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_task_messages"):
        make_core(max_task_messages=0)
