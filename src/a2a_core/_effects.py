"""The core's output: a :class:`Decision` of writes, effects and a reply, all plain values.

Effects are what the adapter must *do* once the writes are committed: start or stop an agent run,
publish a task's new events to whoever waits on them. Adapters dispatch on them with ``match``
and ``assert_never``, so the type checker proves that every effect is handled, and tests assert
on them directly, with no event loop.
"""

from datetime import datetime
from typing import Any

import attrs

from ._agent_api import AgentContext
from ._errors import A2AError
from ._model import StreamEvent
from ._records import TaskRecord
from ._storage import Write

__all__ = [
    "AwaitTask",
    "Decision",
    "Effect",
    "Fail",
    "Publish",
    "Reply",
    "Respond",
    "StartRun",
    "StopRun",
]


@attrs.frozen
class StartRun:
    """Run the agent (the one for ``context.skill_id``) in the background."""

    task_id: str
    run: int
    context: AgentContext


@attrs.frozen
class StopRun:
    """Cancel that run if it is still going; its output no longer counts. Idempotent."""

    task_id: str
    run: int


@attrs.frozen
class Publish:
    """The task changed: deliver ``events`` (numbered up to ``record.seq``) to its listeners.

    ``settled`` says the task is now terminal or interrupted: blocking sends waiting on it answer
    and streams on it end.
    """

    record: TaskRecord
    events: tuple[StreamEvent, ...]
    settled: bool


Effect = StartRun | StopRun | Publish


@attrs.frozen
class Respond:
    """Answer the call with ``value`` (a model object, or ``None`` for an empty result)."""

    value: Any


@attrs.frozen
class Fail:
    """Answer the call with a protocol error."""

    error: A2AError


@attrs.frozen
class AwaitTask:
    """Answer once the task settles: pass the settled record to ``Core.settled_reply``."""

    task_id: str
    history_length: int | None = None


Reply = Respond | Fail | AwaitTask


@attrs.frozen
class Decision:
    """What the core decided for one input."""

    writes: tuple[Write, ...] = ()
    effects: tuple[Effect, ...] = ()
    #: The answer to a :class:`~a2a_core.Call`; ``None`` for agent output and ticks.
    reply: Reply | None = None
    #: When the core next wants a :class:`~a2a_core.Tick` (``None``: no change of plan).
    wake_at: datetime | None = None
