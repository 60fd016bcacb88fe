"""The stored form of a task: the wire task plus what only the server may know.

A :class:`TaskRecord` is what a store keeps and what the reducer decides over. Next to the public
``Task`` it carries the owner (who may see it), a version for compare-and-set, and the
bookkeeping of agent runs and events. None of those ever goes on the wire.
"""

from datetime import datetime

import attrs

from ._model import Task, TaskState

__all__ = ["Owner", "TaskRecord"]


@attrs.frozen(order=True)
class Owner:
    """Whom a task belongs to: the authenticated principal, within a tenant."""

    principal: str
    tenant: str = ""


@attrs.frozen
class TaskRecord:
    """One version of a task as the store holds it.

    ``version`` grows by one with every write; a store only accepts a write whose expected
    version matches, so concurrent deciders (two replicas, a cancel racing a completion) can
    never lose each other's updates.
    """

    task: Task
    owner: Owner
    version: int
    created_at: datetime
    #: The number of the latest agent run over this task (1 for the first).
    run: int = 0
    #: Whether that run may still produce output that counts.
    running: bool = False
    #: The skill the task was routed to ("" for the default agent).
    skill_id: str = ""
    #: The sequence number of the task's latest event (streams resume after a number).
    seq: int = 0
    #: The agent answered the latest send with a direct message rather than task updates.
    replied: bool = False

    @property
    def id(self) -> str:
        """The task's id."""
        return self.task.id

    @property
    def state(self) -> TaskState:
        """The task's current state."""
        return self.task.status.state

    @property
    def updated_at(self) -> datetime:
        """When the task's status last changed (the order ``ListTasks`` sorts by)."""
        timestamp = self.task.status.timestamp
        assert timestamp is not None, "the core stamps every status it writes"
        return timestamp
