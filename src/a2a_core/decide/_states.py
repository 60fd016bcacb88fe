"""The task state machine, as one table.

Every change of a task's state, whoever causes it (the agent, the client's follow-up message, a
cancel), goes through :func:`transition`, which only looks the pair up in :data:`TRANSITIONS`. A
pair that is not in the table is illegal and raises :class:`IllegalTransition`; the reducer turns
that into the right protocol error for the operation (a cancel of a finished task is -32002, a
message to it -32004) or, for agent output, drops the output and stops the run.

The spec has no normative table (PROTOCOL.md §5); this one encodes its rules:

* terminal states (completed, failed, canceled, rejected) have no outgoing entries at all, so a
  canceled task can never be revived by late agent output: the absorbing property is a fact of
  the data, checked by a property test over every (state, event) pair;
* interrupted states (input-required, auth-required) resume on the client's follow-up message,
  or on the agent's own word (an agent MAY resume after out-of-band credentials);
* a follow-up message is accepted while the task is live: to a task waiting for input it is the
  answer; to a task still being worked on it supersedes the turn under way (the reducer stops
  that run and starts a new one over the whole conversation, so no message is silently queued
  or lost);
* artifacts never change the state: they are output, not progress.

Beside it, the run machine (:data:`RUNS`): which agent run of a task counts, and what starting,
superseding, canceling and finishing runs make happen. Its entries name their effects, as h2's
tables do, so the rule that late output is dropped and its run stopped is stated once.
"""

from collections.abc import Mapping

from a2a_core.model._task import FastEnum, TaskState

__all__ = [
    "RUNS",
    "TRANSITIONS",
    "IllegalTransition",
    "RunEffect",
    "RunState",
    "RunTrigger",
    "Trigger",
    "run_step",
    "state_diagram",
    "transition",
]


class Trigger(FastEnum):
    """What can happen to a task."""

    #: The agent reports the task's new state.
    AGENT_WORKING = "agent: working"
    AGENT_INPUT_REQUIRED = "agent: input required"
    AGENT_AUTH_REQUIRED = "agent: auth required"
    AGENT_COMPLETED = "agent: completed"
    AGENT_FAILED = "agent: failed"
    AGENT_REJECTED = "agent: rejected"
    AGENT_CANCELED = "agent: canceled"
    #: The agent emits (a chunk of) an artifact.
    AGENT_ARTIFACT = "agent: artifact"
    #: The client sends a follow-up message to the task.
    USER_MESSAGE = "client: message"
    #: The client cancels the task.
    CANCEL = "client: cancel"


class IllegalTransition(Exception):
    """The event is not allowed in the task's current state."""

    def __init__(self, state: TaskState, event: Trigger) -> None:
        self.state = state
        self.event = event
        super().__init__(f"{event.value} is not allowed in state {state.value}")


_S = TaskState
_E = Trigger

#: What the agent's own word does to a task that is live (submitted or working).
_AGENT_MOVES: Mapping[Trigger, TaskState] = {
    _E.AGENT_WORKING: _S.WORKING,
    _E.AGENT_INPUT_REQUIRED: _S.INPUT_REQUIRED,
    _E.AGENT_AUTH_REQUIRED: _S.AUTH_REQUIRED,
    _E.AGENT_COMPLETED: _S.COMPLETED,
    _E.AGENT_FAILED: _S.FAILED,
    _E.AGENT_REJECTED: _S.REJECTED,
    _E.AGENT_CANCELED: _S.CANCELED,
}

_BY_STATE: Mapping[TaskState, Mapping[Trigger, TaskState]] = {
    _S.SUBMITTED: {
        **_AGENT_MOVES,
        _E.AGENT_ARTIFACT: _S.SUBMITTED,
        _E.USER_MESSAGE: _S.WORKING,
        _E.CANCEL: _S.CANCELED,
    },
    _S.WORKING: {
        **_AGENT_MOVES,
        _E.AGENT_ARTIFACT: _S.WORKING,
        _E.USER_MESSAGE: _S.WORKING,
        _E.CANCEL: _S.CANCELED,
    },
    _S.INPUT_REQUIRED: {
        **_AGENT_MOVES,
        _E.AGENT_ARTIFACT: _S.INPUT_REQUIRED,
        _E.USER_MESSAGE: _S.WORKING,
        _E.CANCEL: _S.CANCELED,
    },
    _S.AUTH_REQUIRED: {
        **_AGENT_MOVES,
        _E.AGENT_ARTIFACT: _S.AUTH_REQUIRED,
        _E.USER_MESSAGE: _S.WORKING,
        _E.CANCEL: _S.CANCELED,
    },
    # Terminal states absorb: nothing leaves them.
    _S.COMPLETED: {},
    _S.FAILED: {},
    _S.CANCELED: {},
    _S.REJECTED: {},
    # Never stored; a task cannot be in it.
    _S.UNSPECIFIED: {},
}

#: The transition table: ``(state, event) -> new state``. Absent pairs are illegal.
TRANSITIONS: Mapping[tuple[TaskState, Trigger], TaskState] = {
    (state, event): target for state, moves in _BY_STATE.items() for event, target in moves.items()
}


def transition(state: TaskState, event: Trigger) -> TaskState:
    """The state after ``event``; raises :class:`IllegalTransition` if it is not allowed."""
    try:
        return TRANSITIONS[state, event]
    except KeyError:
        raise IllegalTransition(state, event) from None


def state_diagram() -> str:
    """The table as a Mermaid state diagram, for the docs (generated, never hand-drawn)."""

    def name(state: TaskState) -> str:
        return state.name.lower()

    lines = ["stateDiagram-v2", f"    [*] --> {name(_S.SUBMITTED)}: client: send"]
    for (state, event), target in TRANSITIONS.items():
        if event is _E.AGENT_ARTIFACT:
            continue  # a self-loop on every live state; it would only clutter the picture
        lines.append(f"    {name(state)} --> {name(target)}: {event.value}")
    lines.extend(f"    {name(s)} --> [*]" for s in _S if s.terminal)
    return "\n".join(lines) + "\n"


# --- the run machine ------------------------------------------------------------------------------


class RunState(FastEnum):
    """Whether a task has an agent run whose output counts (``TaskRecord.running``)."""

    IDLE = "idle"
    RUNNING = "running"


class RunTrigger(FastEnum):
    """What happens to a task's runs."""

    #: A message starts a turn: a new task, or a follow-up.
    TURN = "a message starts a turn"
    #: The client cancels the task.
    CANCEL = "the client cancels"
    #: The current run reports output that leaves the task live.
    OUTPUT = "the run reports"
    #: The current run reports output that settles the task for good (terminal).
    FINISH = "the run finishes the task"
    #: The current run ends.
    END = "the run ends"
    #: Output from a run that is not the current one (canceled, superseded, gone).
    LATE = "a run that no longer counts reports"
    #: The end of a run that is not the current one.
    LATE_END = "a run that no longer counts ends"


class RunEffect(FastEnum):
    """What a run transition makes happen (the reducer turns each into effects)."""

    #: Start a new run (numbered one more than the last).
    START = "start a new run"
    #: Stop the run under way (its output no longer counts).
    STOP_CURRENT = "stop the current run"
    #: Stop the run that reported (a late one).
    STOP_REPORTER = "stop the run that reported"
    #: Drop what the run reported: it changes nothing.
    DROP = "drop its output"
    #: Tell the run nothing more from it counts (``Decision.run_over``).
    OVER = "nothing more from it counts"


_R = RunState
_RE = RunTrigger
_RX = RunEffect

#: The run machine: ``(run state, event) -> (effects, new run state)``. This is where "a
#: canceled task stays canceled" lives for runs: a cancel makes the task idle, and whatever its
#: old run says after that is late: dropped, and the run stopped.
RUNS: Mapping[tuple[RunState, RunTrigger], tuple[tuple[RunEffect, ...], RunState]] = {
    (_R.IDLE, _RE.TURN): ((_RX.START,), _R.RUNNING),
    (_R.RUNNING, _RE.TURN): ((_RX.STOP_CURRENT, _RX.START), _R.RUNNING),
    (_R.IDLE, _RE.CANCEL): ((), _R.IDLE),
    (_R.RUNNING, _RE.CANCEL): ((_RX.STOP_CURRENT,), _R.IDLE),
    (_R.RUNNING, _RE.OUTPUT): ((), _R.RUNNING),
    (_R.RUNNING, _RE.FINISH): ((_RX.OVER,), _R.IDLE),
    (_R.RUNNING, _RE.END): ((_RX.OVER,), _R.IDLE),
    (_R.IDLE, _RE.LATE): ((_RX.DROP, _RX.STOP_REPORTER, _RX.OVER), _R.IDLE),
    (_R.RUNNING, _RE.LATE): ((_RX.DROP, _RX.STOP_REPORTER, _RX.OVER), _R.RUNNING),
    (_R.IDLE, _RE.LATE_END): ((_RX.DROP,), _R.IDLE),
    (_R.RUNNING, _RE.LATE_END): ((_RX.DROP,), _R.RUNNING),
}


def run_step(running: bool, event: RunTrigger) -> tuple[tuple[RunEffect, ...], bool]:
    """The effects of ``event`` on a task whose run is (or is not) ``running``, and whether a
    run counts after it. An idle task's current run cannot report: that is ``LATE``."""
    effects, after = RUNS[_R.RUNNING if running else _R.IDLE, event]
    return effects, after is _R.RUNNING
