"""What an agent may say: ``normalize`` for every kind of value, and ``exception_status``."""

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core import (
    AgentContext,
    Artifact,
    ArtifactChunk,
    InputError,
    Message,
    MissingInput,
    Part,
    Role,
    StateChange,
    TaskState,
    agent_message,
    auth_required,
    completed,
    failed,
    input_required,
    rejected,
    reply,
    text_artifact,
    working,
)
from a2a_core._agent_api import exception_status, normalize
from a2a_core.errors import InvalidAgentResponseError
from a2a_core.transport import Outputs, ends_run

from .support import artifacts, messages

BOTH = pytest.mark.parametrize("final", [False, True], ids=["yielded", "returned"])


def agent_text(update: Any) -> str | None:
    assert isinstance(update, StateChange)
    return None if update.message is None else update.message.text


# --- the table of the module docstring, row by row --------------------------------------------


@BOTH
def test_none_means_nothing(final: bool) -> None:
    assert normalize(None, final=final) == []


def test_a_yielded_string_is_progress() -> None:
    assert normalize("halfway", final=False) == [working("halfway")]
    (update,) = normalize("halfway", final=False)
    assert isinstance(update, StateChange)
    assert update.state is TaskState.WORKING
    assert agent_text(update) == "halfway"


def test_a_returned_string_completes() -> None:
    (update,) = normalize("done", final=True)
    assert update == completed("done")
    assert isinstance(update, StateChange)
    assert update.state is TaskState.COMPLETED
    assert agent_text(update) == "done"


@BOTH
@pytest.mark.parametrize(
    "status",
    [
        working(),
        working("w"),
        input_required("q?"),
        auth_required("log in"),
        completed("c"),
        failed("f"),
        rejected("r"),
        StateChange(TaskState.SUBMITTED),  # passed through: the reducer refuses it, not normalize
    ],
)
def test_a_status_is_itself(status: StateChange, final: bool) -> None:
    assert normalize(status, final=final) == [status]


@BOTH
@given(artifact=artifacts)
def test_an_artifact_is_a_whole_last_chunk(artifact: Artifact, final: bool) -> None:
    assert normalize(artifact, final=final) == [ArtifactChunk(artifact, last_chunk=True)]


@BOTH
@pytest.mark.parametrize(
    "chunk",
    [
        ArtifactChunk(text_artifact("a", artifact_id="x")),
        ArtifactChunk(text_artifact("b", artifact_id="x"), append=True),
        ArtifactChunk(text_artifact("c", artifact_id="x"), append=True, last_chunk=True),
    ],
)
def test_a_chunk_is_itself(chunk: ArtifactChunk, final: bool) -> None:
    assert normalize(chunk, final=final) == [chunk]


@BOTH
@given(message=messages)
def test_a_message_is_a_direct_reply(message: Message, final: bool) -> None:
    assert normalize(message, final=final) == [message]


@BOTH
def test_a_list_or_tuple_is_each_item_in_turn(final: bool) -> None:
    art = text_artifact("t", artifact_id="a")
    items = ["one", input_required("q"), art, None, [completed("nested")], reply("r")]
    expected = [
        working("one"),
        input_required("q"),
        ArtifactChunk(art, last_chunk=True),
        completed("nested"),
        reply("r"),
    ]
    assert normalize(items, final=final) == expected
    assert normalize(tuple(items), final=final) == expected
    assert normalize([], final=final) == []


def test_strings_inside_a_returned_list_are_progress_not_completion() -> None:
    """Items are normalized as if yielded: only a bare returned string completes with its text."""
    assert normalize(["a", "b"], final=True) == [working("a"), working("b")]


@BOTH
@pytest.mark.parametrize(
    "value",
    [42, 1.5, True, b"bytes", {"text": "hi"}, {1, 2}, object(), Part(text="x"), ["fine", 3]],
    ids=lambda v: type(v).__name__,
)
def test_anything_else_is_an_invalid_agent_response(value: Any, final: bool) -> None:
    with pytest.raises(InvalidAgentResponseError) as raised:
        normalize(value, final=final)
    error = raised.value
    assert error.codes.jsonrpc == -32006
    culprit = value[-1] if isinstance(value, list) else value
    assert type(culprit).__name__ in error.message


@BOTH
@pytest.mark.parametrize(
    ("value", "said"),
    [
        (
            Message("m", Role.AGENT, ("hello",)),  # type: ignore[arg-type]
            "the message's parts[0] is a str, not a Part",
        ),
        (
            Message("m", Role.AGENT, (Part(text="x"),), reference_task_ids=(7,)),  # type: ignore[arg-type]
            "the message's reference_task_ids[0] is a int, not a string",
        ),
        (
            Artifact(artifact_id="a", parts=(Part(text="x"),), name=b"name"),  # type: ignore[arg-type]
            "the artifact's name is a bytes, not a string",
        ),
        (
            Artifact(artifact_id="a", parts=(Part(data={"bad": {1, 2}}),)),
            "the artifact's parts[0]'s data",
        ),
    ],
    ids=["part", "reference", "name", "data"],
)
def test_content_that_could_not_be_written_back_is_refused_saying_where(
    value: Any, said: str, final: bool
) -> None:
    with pytest.raises(InvalidAgentResponseError, match=re.escape(said)):
        normalize(value, final=final)


@given(
    st.recursive(st.text() | st.none(), lambda inner: st.lists(inner, max_size=3), max_leaves=10)
)
def test_nested_lists_flatten_in_order(value: Any) -> None:
    def leaves(v: Any) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        return [leaf for item in v for leaf in leaves(item)]

    updates = normalize(value, final=False)
    assert [agent_text(u) for u in updates] == leaves(value)


# --- the helpers agents use -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("helper", "state"),
    [
        (working, TaskState.WORKING),
        (input_required, TaskState.INPUT_REQUIRED),
        (completed, TaskState.COMPLETED),
        (failed, TaskState.FAILED),
        (rejected, TaskState.REJECTED),
    ],
)
def test_status_helpers(helper: Any, state: TaskState) -> None:
    assert helper() == StateChange(state)
    status = helper("text")
    assert status.state is state
    assert status.message == agent_message("text")


def test_auth_required_always_says_why() -> None:
    assert auth_required("log in at x") == StateChange(
        TaskState.AUTH_REQUIRED, agent_message("log in at x")
    )


def test_agent_messages_leave_ids_to_the_core() -> None:
    message = reply("hi")
    assert message == Message("", Role.AGENT, (Part(text="hi"),))
    assert message.text == "hi"


def test_agent_message_has_no_ids_until_the_core_fills_them() -> None:
    message = agent_message("hi", metadata={"a": 1})
    assert (message.message_id, message.task_id, message.context_id) == ("", "", "")
    assert message.role is Role.AGENT
    assert message.metadata == {"a": 1}


def test_text_artifact() -> None:
    assert text_artifact("body", name="n", artifact_id="a") == Artifact(
        "a", (Part(text="body"),), name="n"
    )
    assert text_artifact("body").artifact_id == ""


def test_agent_context_text_is_the_latest_message() -> None:
    message = Message("m", Role.USER, (Part(text="a"), Part(data={"x": 1}), Part(text="b")))
    context = AgentContext("t", "c", message, (message,), "alice")
    assert context.text == "a\nb"
    assert context.metadata == {}


# --- exceptions -------------------------------------------------------------------------------


def test_input_error_asks_its_question() -> None:
    assert exception_status(InputError("Which city?")) == input_required("Which city?")


def test_missing_input_is_input_error() -> None:
    assert MissingInput is InputError
    assert exception_status(MissingInput("When?")) == input_required("When?")


def test_input_error_without_text_still_asks() -> None:
    status = exception_status(InputError())
    assert status.state is TaskState.INPUT_REQUIRED
    assert agent_text(status) == "More input is required."


def test_input_error_subclasses_ask_too() -> None:
    class NeedsDate(InputError):
        pass

    assert exception_status(NeedsDate("Which day?")) == input_required("Which day?")


def test_invalid_agent_response_fails_with_its_message() -> None:
    error = InvalidAgentResponseError("The agent produced a value of type int")
    assert exception_status(error) == failed("The agent produced a value of type int")


@pytest.mark.parametrize(
    "error",
    [
        ValueError("password=hunter2"),
        RuntimeError("SELECT * FROM secrets"),
        KeyError("/home/alice/.ssh/id_rsa"),
        ZeroDivisionError("division by zero"),
        KeyboardInterrupt(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_other_exceptions_fail_naming_only_their_type(error: BaseException) -> None:
    status = exception_status(error)
    assert status.state is TaskState.FAILED
    assert agent_text(status) == f"The agent failed ({type(error).__name__})."
    if str(error):
        assert str(error) not in (agent_text(status) or "")


# --- Outputs: values yielded in a row, handed over together -------------------------------------


def test_outputs_mean_their_values_in_turn_as_yielded() -> None:
    art = text_artifact("t", artifact_id="a")
    values = ("one", art, None, [working("two")], completed("done"))
    assert normalize(Outputs(values), final=False) == normalize(list(values), final=False)
    # Returned with the run's end, each is still a yielded value: a text is progress.
    assert normalize(Outputs(("one",)), final=True) == [working("one")]
    assert normalize(Outputs(()), final=False) == []


def test_an_unreadable_value_among_outputs_fails_the_task_after_the_ones_before_it() -> None:
    """As it would have, alone: those before it count, it fails the task, those after it are
    never looked at (the task is finished by then)."""
    art = text_artifact("t", artifact_id="a")
    updates = normalize(Outputs((art, 42, working("after"))), final=False)
    assert updates[0] == ArtifactChunk(art, last_chunk=True)
    assert len(updates) == 2
    assert isinstance(updates[1], StateChange)
    assert updates[1].state is TaskState.FAILED
    assert "int" in (agent_text(updates[1]) or "")


@pytest.mark.parametrize(
    ("value", "ends"),
    [
        (None, False),
        ("progress", False),
        (working("w"), False),
        (input_required("q"), False),  # the run goes on until the agent returns
        (auth_required("a"), False),
        (text_artifact("t"), False),
        (ArtifactChunk(text_artifact("t")), False),
        (["a", text_artifact("t"), (working(),)], False),
        (completed(), True),
        (failed(), True),
        (rejected(), True),
        (StateChange(TaskState.CANCELED), True),
        (reply("r"), True),
        (["a", completed()], True),
        ((working(), [reply("r")]), True),
        (42, True),  # the core will refuse it, failing the task: that ends the run too
        (Part(text="x"), True),
    ],
    ids=repr,
)
def test_ends_run_lets_through_only_what_cannot_finish_the_task(value: Any, ends: bool) -> None:
    assert ends_run(value) is ends
