"""The pure deciders below :class:`~a2a_core.transport.Server`.

One input and the records it touches go in, a :class:`Decision` comes out: the writes, the
reply (:data:`CallReply`) and the effects. The machine performs this loop for a transport; the
names here are for tests, for fuzzing with hypothesis, and for a transport that wants to run the
read-decide-commit loop itself. The task and run state machines are tables (:data:`TRANSITIONS`,
:data:`RUNS`), and the stream cursor says which logged events a follower gets.
"""

from ._agent_api import normalize
from .decide._changes import view
from .decide._effects import (
    AwaitTask,
    CallReply,
    Decision,
    Effect,
    Fail,
    FollowTask,
    Notify,
    Publish,
    Push,
    Respond,
    StartRun,
    StopRun,
)
from .decide._inputs import (
    AgentDone,
    AgentOutput,
    Call,
    Dialect,
    Input,
    Operation,
    Rerun,
    Tick,
    World,
)
from .decide._states import (
    RUNS,
    TRANSITIONS,
    IllegalTransition,
    RunEffect,
    RunState,
    RunTrigger,
    Trigger,
    state_diagram,
    transition,
)
from .decide._streams import (
    Advance,
    StreamCursor,
    StreamMode,
    advance,
    log_page,
    open_cursor,
    release,
)
from .front._http import Binding, Dispatch

__all__ = [
    "RUNS",
    "TRANSITIONS",
    "Advance",
    "AgentDone",
    "AgentOutput",
    "AwaitTask",
    "Binding",
    "Call",
    "CallReply",
    "Decision",
    "Dialect",
    "Dispatch",
    "Effect",
    "Fail",
    "FollowTask",
    "IllegalTransition",
    "Input",
    "Notify",
    "Operation",
    "Publish",
    "Push",
    "Rerun",
    "Respond",
    "RunEffect",
    "RunState",
    "RunTrigger",
    "StartRun",
    "StopRun",
    "StreamCursor",
    "StreamMode",
    "Tick",
    "Trigger",
    "World",
    "advance",
    "log_page",
    "normalize",
    "open_cursor",
    "release",
    "state_diagram",
    "transition",
    "view",
]
