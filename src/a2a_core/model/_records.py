"""The stored form of a task: the wire task plus what only the server may know.

A :class:`TaskRecord` is what a store keeps and what the reducer decides over. Next to the public
``Task`` it carries the owner (who may see it), a version for compare-and-set, and the
bookkeeping of agent runs and events. None of those ever goes on the wire.
"""

import base64
import enum
import json
import operator
from binascii import b2a_base64
from collections.abc import Callable
from datetime import datetime
from hashlib import sha256
from typing import Any, NamedTuple

import attrs

from a2a_core._json import encoder

from ._task import Message, Task, TaskPushNotificationConfig, TaskState

__all__ = ["Owner", "TaskRecord", "message_fingerprint", "named_key"]


def _canonical(value: Any) -> Any:
    """The canonical form of what JSON has none for (the fingerprint encoder's ``default``):
    an attrs instance is the tuple of its field values in declaration order (the class fixes
    the order, so names would add nothing), an enum member its value, bytes their base64,
    a datetime its ISO text. The encoder calls it only for such values, and encodes what it
    returns in turn; dicts it sorts by key itself.
    """
    kind = type(value)
    if kind in _FIELDS:  # (``in`` and a subscript: ``get`` would be a call more per object)
        return _FIELDS[kind](value)
    if isinstance(value, enum.Enum):
        return value._value_  # (``.value`` is a property: two calls more for every role)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, datetime):
        return value.isoformat()
    if attrs.has(type(value)):
        _FIELDS[type(value)] = _getter(tuple(f.name for f in attrs.fields(type(value))))
        return _FIELDS[type(value)](value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


#: attrs classes met so far -> a getter of their fields' values, in declaration order
#: (``attrs.fields`` is slow on a hot path, and one ``attrgetter`` call beats a ``getattr``
#: per field).
_FIELDS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:  # (attrgetter of one name gives its value, not a tuple)
        (name,) = names
        return lambda value: (getattr(value, name),)
    return lambda value: ()


#: Canonical JSON: sorted keys, no spaces, text as it is. The encoder walks the message in C
#: and calls :func:`_canonical` only for the few values JSON has no form of (the message, its
#: role, its parts), so a fingerprint costs a few calls rather than one per value.
_canonical_json = encoder(sort_keys=True, default=_canonical)


def message_fingerprint(message: Message) -> str:
    """A stable digest of a client message exactly as sent (same on every replica and restart).

    Python's ``hash`` is salted per process, so it cannot serve; canonical JSON can. Kept with
    every stored task, so it is 144 bits of SHA-256 in base64 (24 characters), far past any
    chance of two messages colliding. Stores keep fingerprints across releases (a re-send after
    an upgrade must still match), so its text must never change:
    ``tests/a2a_core/model/test_records.py`` pins it.
    """
    canonical = _canonical_json(message)
    return b2a_base64(sha256(canonical.encode()).digest()[:18], newline=False).decode()


class Owner(NamedTuple):
    """Whom a task belongs to: the authenticated principal, within a tenant.

    A named tuple, not an attrs class: the stores look tasks up by owner a dozen times a send,
    and a tuple is hashed and compared in C, where an attrs class runs its generated Python
    ``__eq__`` and ``__hash__`` each time (about twenty calls a send). It compares equal to
    the plain tuple of its fields, which nothing here builds."""

    principal: str
    tenant: str = ""


def named_key(owner: Owner, task_id: str) -> str:
    """Where a store keeps the task that ``owner`` named ``task_id``.

    The legacy ``tasks/send`` lets a client choose a new task's id. Those ids are per owner: two
    owners may both use one, each meaning a task of their own, so that a client learns nothing
    from the ids it chooses (a first-come id would tell it that someone else holds the id). The
    key is the id with its owner, as JSON, which no id the server draws (a UUID) can equal.
    """
    return json.dumps([task_id, owner.principal, owner.tenant], separators=(",", ":"))


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
    #: ``(messageId, fingerprint)`` of every client message the task has accepted. Stores index
    #: the ids per owner (unique), which is what makes re-sending a message idempotent.
    messages: tuple[tuple[str, str], ...] = ()
    #: Where to push the task's events (at most ``CoreConfig.max_push_configs``).
    push_configs: tuple[TaskPushNotificationConfig, ...] = ()
    #: The store's key for a task whose client chose its id (:func:`named_key`); "" for a task
    #: the server named, which is kept under its id.
    key: str = ""

    @property
    def id(self) -> str:
        """The key the store keeps the task under, which effects (runs, streams, waits) name
        too: the task's id, unless its client named it (:attr:`key`). What goes on the wire is
        always ``task.id``."""
        return self.key or self.task.id

    @property
    def state(self) -> TaskState:
        """The task's current state."""
        return self.task.status.state

    def fingerprint(self, message_id: str) -> str | None:
        """The fingerprint of the client message with this id, if the task accepted one."""
        # Newest first: a client that re-sends mostly re-sends the message it sent last.
        return next((f for m, f in reversed(self.messages) if m == message_id), None)

    @property
    def updated_at(self) -> datetime:
        """When the task's status last changed (the order ``ListTasks`` sorts by)."""
        timestamp = self.task.status.timestamp
        assert timestamp is not None, "the core stamps every status it writes"
        return timestamp
