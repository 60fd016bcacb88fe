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
"""

import enum
from collections.abc import Mapping

from ._model import TaskState

__all__ = ["TRANSITIONS", "Event", "IllegalTransition", "state_diagram", "transition"]


class Event(enum.Enum):
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

    def __init__(self, state: TaskState, event: Event) -> None:
        self.state = state
        self.event = event
        super().__init__(f"{event.value} is not allowed in state {state.value}")


_S = TaskState
_E = Event

#: What the agent's own word does to a task that is live (submitted or working).
_AGENT_MOVES: Mapping[Event, TaskState] = {
    _E.AGENT_WORKING: _S.WORKING,
    _E.AGENT_INPUT_REQUIRED: _S.INPUT_REQUIRED,
    _E.AGENT_AUTH_REQUIRED: _S.AUTH_REQUIRED,
    _E.AGENT_COMPLETED: _S.COMPLETED,
    _E.AGENT_FAILED: _S.FAILED,
    _E.AGENT_REJECTED: _S.REJECTED,
    _E.AGENT_CANCELED: _S.CANCELED,
}

_BY_STATE: Mapping[TaskState, Mapping[Event, TaskState]] = {
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
TRANSITIONS: Mapping[tuple[TaskState, Event], TaskState] = {
    (state, event): target for state, moves in _BY_STATE.items() for event, target in moves.items()
}


def transition(state: TaskState, event: Event) -> TaskState:
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
