"""The transition table: every (state, event) pair, and what follows from the table as data."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core import TaskState
from a2a_core.decide._states import RUNS, RunEffect, RunState, RunTrigger, run_step
from a2a_core.decisions import TRANSITIONS, IllegalTransition, Trigger, state_diagram, transition

ALL_PAIRS = list(itertools.product(TaskState, Trigger))
TERMINAL = [s for s in TaskState if s.terminal]
INTERRUPTED = [s for s in TaskState if s.interrupted]
#: The states a stored task can be in and still change.
LIVE = [TaskState.SUBMITTED, TaskState.WORKING, *INTERRUPTED]
AGENT_STATE_EVENTS = {
    Trigger.AGENT_WORKING: TaskState.WORKING,
    Trigger.AGENT_INPUT_REQUIRED: TaskState.INPUT_REQUIRED,
    Trigger.AGENT_AUTH_REQUIRED: TaskState.AUTH_REQUIRED,
    Trigger.AGENT_COMPLETED: TaskState.COMPLETED,
    Trigger.AGENT_FAILED: TaskState.FAILED,
    Trigger.AGENT_REJECTED: TaskState.REJECTED,
    Trigger.AGENT_CANCELED: TaskState.CANCELED,
}


@given(st.sampled_from(TaskState), st.sampled_from(Trigger))
def test_transition_is_exactly_the_table(state: TaskState, event: Trigger) -> None:
    if (state, event) in TRANSITIONS:
        assert transition(state, event) is TRANSITIONS[state, event]
    else:
        with pytest.raises(IllegalTransition) as raised:
            transition(state, event)
        assert raised.value.state is state
        assert raised.value.event is event
        assert state.value in str(raised.value)
        assert event.value in str(raised.value)


@pytest.mark.parametrize(("state", "event"), ALL_PAIRS, ids=lambda v: getattr(v, "name", v))
def test_every_pair_is_decided_by_the_table(state: TaskState, event: Trigger) -> None:
    """The same property, exhaustively: no pair is left to chance."""
    try:
        target = transition(state, event)
    except IllegalTransition:
        assert (state, event) not in TRANSITIONS
    else:
        assert TRANSITIONS[state, event] is target


def test_the_table_only_names_real_states_and_events() -> None:
    for (state, event), target in TRANSITIONS.items():
        assert isinstance(state, TaskState)
        assert isinstance(event, Trigger)
        assert isinstance(target, TaskState)
        assert target is not TaskState.UNSPECIFIED


@pytest.mark.parametrize("state", [*TERMINAL, TaskState.UNSPECIFIED])
def test_terminal_and_unspecified_states_have_no_way_out(state: TaskState) -> None:
    assert [pair for pair in TRANSITIONS if pair[0] is state] == []
    for event in Trigger:
        with pytest.raises(IllegalTransition):
            transition(state, event)


def test_terminal_states_are_the_four_of_the_spec() -> None:
    assert set(TERMINAL) == {
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
    }
    assert set(INTERRUPTED) == {TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED}
    for state in TaskState:
        assert state.settled == (state.terminal or state.interrupted)


@given(st.sampled_from(TaskState), st.lists(st.sampled_from(Trigger), max_size=30))
def test_terminal_states_absorb_any_sequence_of_events(
    start: TaskState, events: list[Trigger]
) -> None:
    """Walk the table with random events (skipping illegal ones): terminal means forever."""
    state = start
    for event in events:
        try:
            following = transition(state, event)
        except IllegalTransition:
            continue
        assert not state.terminal, f"{state} left a terminal state on {event}"
        assert following is not TaskState.UNSPECIFIED
        state = following
    if start.terminal:
        assert state is start


@pytest.mark.parametrize("state", INTERRUPTED)
def test_interrupted_states_resume_on_the_users_message(state: TaskState) -> None:
    assert transition(state, Trigger.USER_MESSAGE) is TaskState.WORKING


@pytest.mark.parametrize("state", [TaskState.SUBMITTED, TaskState.WORKING])
def test_a_message_to_a_task_at_work_supersedes_the_turn(state: TaskState) -> None:
    assert transition(state, Trigger.USER_MESSAGE) is TaskState.WORKING


@pytest.mark.parametrize("state", TERMINAL)
def test_a_message_to_a_finished_task_is_refused(state: TaskState) -> None:
    with pytest.raises(IllegalTransition):
        transition(state, Trigger.USER_MESSAGE)


@pytest.mark.parametrize("state", list(TaskState))
def test_cancel_is_legal_exactly_in_live_states(state: TaskState) -> None:
    if state in LIVE:
        assert transition(state, Trigger.CANCEL) is TaskState.CANCELED
    else:
        with pytest.raises(IllegalTransition):
            transition(state, Trigger.CANCEL)


@pytest.mark.parametrize("state", LIVE)
def test_the_agent_may_move_a_live_task_to_any_state_it_names(state: TaskState) -> None:
    for event, target in AGENT_STATE_EVENTS.items():
        assert transition(state, event) is target


@pytest.mark.parametrize("state", LIVE)
def test_artifacts_never_change_the_state(state: TaskState) -> None:
    assert transition(state, Trigger.AGENT_ARTIFACT) is state


def test_no_transition_leads_back_to_submitted() -> None:
    """Only the artifact self-loop stays in submitted; nothing else enters it."""
    for (state, event), target in TRANSITIONS.items():
        if target is TaskState.SUBMITTED:
            assert (state, event) == (TaskState.SUBMITTED, Trigger.AGENT_ARTIFACT)


def test_state_diagram_draws_every_edge_but_artifact_self_loops() -> None:
    diagram = state_diagram()
    lines = diagram.splitlines()
    assert lines[0] == "stateDiagram-v2"
    assert "    [*] --> submitted: client: send" in lines
    expected_edges = {
        f"    {state.name.lower()} --> {target.name.lower()}: {event.value}"
        for (state, event), target in TRANSITIONS.items()
        if event is not Trigger.AGENT_ARTIFACT
    }
    assert expected_edges <= set(lines)
    assert not any(Trigger.AGENT_ARTIFACT.value in line for line in lines)
    # Exactly the edges of the table, the start arrow and one end arrow per terminal state.
    edges = [line for line in lines[1:] if ": " in line and not line.startswith("    [*]")]
    assert set(edges) == expected_edges
    assert len(edges) == len(expected_edges)
    for state in TERMINAL:
        assert f"    {state.name.lower()} --> [*]" in lines
    assert diagram.endswith("\n")


# --- the run machine ------------------------------------------------------------------------------


def test_the_run_table_covers_every_state_and_event() -> None:
    reachable = {
        RunState.IDLE: set(RunTrigger) - {RunTrigger.OUTPUT, RunTrigger.FINISH, RunTrigger.END},
        RunState.RUNNING: set(RunTrigger),
    }
    assert {(s, e) for s, events in reachable.items() for e in events} == set(RUNS)


def test_late_output_is_always_dropped_and_its_run_stopped() -> None:
    """The rule behind "a canceled task stays canceled", for runs."""
    for running in (False, True):
        effects, after = run_step(running, RunTrigger.LATE)
        assert {RunEffect.DROP, RunEffect.STOP_REPORTER, RunEffect.OVER} <= set(effects)
        assert after == running  # a late report changes nothing of the current run
        effects, after = run_step(running, RunTrigger.LATE_END)
        assert effects == (RunEffect.DROP,)
        assert after == running


def test_a_cancel_stops_the_run_and_leaves_the_task_idle() -> None:
    assert run_step(True, RunTrigger.CANCEL) == ((RunEffect.STOP_CURRENT,), False)
    assert run_step(False, RunTrigger.CANCEL) == ((), False)
    # After it, whatever the old run says is late.
    assert RunEffect.DROP in run_step(False, RunTrigger.LATE)[0]


def test_a_turn_supersedes_the_run_under_way() -> None:
    assert run_step(True, RunTrigger.TURN) == ((RunEffect.STOP_CURRENT, RunEffect.START), True)
    assert run_step(False, RunTrigger.TURN) == ((RunEffect.START,), True)
    for event in (RunTrigger.FINISH, RunTrigger.END):
        assert run_step(True, event) == ((RunEffect.OVER,), False)
