"""The core's output: a :class:`Decision` of writes, effects and a reply, all plain values.

Effects are what the adapter must *do* once the writes are committed: start or stop an agent run,
publish a task's new events to whoever waits on them. Adapters dispatch on them with ``match``
and ``assert_never``, so the type checker proves that every effect is handled, and tests assert
on them directly, with no event loop.
"""

from datetime import datetime
from typing import Any

import attrs

from a2a_core._agent_api import AgentContext
from a2a_core._errors import A2AError
from a2a_core.model._records import TaskRecord
from a2a_core.model._task import TaskPushNotificationConfig
from a2a_core.store._contract import LoggedEvent, Write

from ._streams import FollowTask

__all__ = [
    "AwaitTask",
    "CallReply",
    "Decision",
    "Effect",
    "Fail",
    "FollowTask",
    "Notify",
    "Publish",
    "Push",
    "Respond",
    "StartRun",
    "StopRun",
]


@attrs.frozen
class StartRun:
    """Run the agent (the one for ``context.skill_id``) in the background.

    ``exchange`` is the request whose decision started the run (``None``: a restart's recovery,
    a replica's reclaim, or a decision outside the machine), so that a transport can tie the
    run to that request in its traces. Equality ignores it: it is no part of the decision.
    """

    task_id: str
    run: int
    context: AgentContext
    exchange: int | None = attrs.field(default=None, eq=False)


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
    events: tuple[LoggedEvent, ...]
    settled: bool


@attrs.frozen
class Push:
    """Deliver ``event`` of task ``task_id`` to the webhook of ``config`` (the server machine
    renders it into a :class:`Notify` at the edge: the reducer encodes no wire format)."""

    task_id: str
    config: TaskPushNotificationConfig
    event: LoggedEvent


@attrs.frozen
class Notify:
    """POST ``body`` to a task's webhook (one event of its log, as a v1.0 ``StreamResponse``).

    ``guarded``: resolve the URL's host and connect only to an address the SSRF guard allows
    (``a2a_core.transport.address_allowed``); false only for allow-listed hosts. Deliveries to one
    ``(task_id, config_id)`` must keep their order (``seq``). ``attempts`` failed before (a
    notification a restart found still owed goes on counting). The transport reports the end of
    each with ``Server.notified`` (delivered, or given up), and each failed attempt that will be
    retried with ``Server.notify_failed``, so that the outbox keeps what is still owed.
    """

    task_id: str
    config_id: str
    seq: int
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    guarded: bool = True
    attempts: int = 0


Effect = StartRun | StopRun | Publish | Push


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


CallReply = Respond | Fail | AwaitTask | FollowTask


@attrs.frozen
class Decision:
    """What the core decided for one input."""

    writes: tuple[Write, ...] = ()
    effects: tuple[Effect, ...] = ()
    #: The answer to a :class:`~a2a_core.decisions.Call`; ``None`` for agent output and ticks.
    reply: CallReply | None = None
    #: When the core next wants a :class:`~a2a_core.decisions.Tick` (``None``: no change of plan).
    wake_at: datetime | None = None
    #: For agent output: nothing more from this run counts (the task settled, or the run was
    #: replaced), so its :class:`~a2a_core.decisions.AgentDone` would decide nothing and need not
    #: be sent.
    #: Saves an adapter a read and a decision for every run that finishes its own task.
    run_over: bool = False
