"""Event streams: which of a task's logged events a subscriber gets, in which order, and when
its stream ends.

Every change to a task is logged as numbered events (``LoggedEvent``; numbers start at 1 and have
no gaps), in the same commit as the change. A stream is a cursor over that log: it remembers the
last number it delivered, skips anything at or below it (a duplicate) and stops at anything that
would leave a hole (a gap: the adapter then reads the missing events from the store's log and
feeds them in). So however events reach a subscriber, from the local publisher, from another
replica or from the store, it sees each exactly once and in order, and a client that reconnects
with ``Last-Event-ID`` resumes exactly where it stopped.

Two kinds of stream end differently (spec §3.1.2, §3.6):

* a streamed **send** ends when the task settles: terminal, or interrupted (input or auth
  required, when the client has to act);
* a **subscription** ends only when the task is terminal; it stays open across interruptions.

A streamed send starts with the task snapshot, except when the agent answers with a direct
message: then the stream is that one message. That is only known from the agent's first output,
so the snapshot is held back, but only briefly: until the first output or the stream's
``release_at`` (the core's ``direct_reply_window`` after the send), whichever comes first. An
agent that thinks for seconds before its first word must not leave its client without even the
task id (to cancel it, or to show that something is happening); an agent that answers at once
still gets its one-message stream. The reducer logs a direct reply as a ``message`` event before
the completion it causes, so the log alone tells a reply from a completion.

The cursor reads no clock: :func:`release` is told the time, and :attr:`StreamCursor.release_at`
says when to call it (an adapter sleeps until then, or until the next events, which come first).
"""

import enum
from collections.abc import Sequence
from datetime import datetime

import attrs

from a2a_core.model._task import Message, Task, TaskState, TaskStatusUpdateEvent
from a2a_core.store._contract import LoggedEvent, LogQuery

__all__ = [
    "Advance",
    "FollowTask",
    "StreamCursor",
    "StreamMode",
    "advance",
    "log_page",
    "open_cursor",
    "release",
]


class StreamMode(enum.Enum):
    """What kind of stream a cursor serves."""

    #: ``SendStreamingMessage``: ends when the task is terminal or interrupted.
    SEND = "send"
    #: ``SubscribeToTask``: ends when the task is terminal.
    SUBSCRIBE = "subscribe"


@attrs.frozen
class FollowTask:
    """The reply that opens an event stream on a task.

    The client has every event up to ``after``; ``snapshot`` (if any) is the task as of that
    event and is sent first; ``state`` is the task's state as of ``after`` when known.
    """

    task_id: str
    mode: StreamMode
    after: int
    #: The task (or, for a re-sent message the agent answered directly, that answer).
    snapshot: Task | Message | None
    state: TaskState | None
    #: For a streamed send still running: when to send the task snapshot although the agent
    #: has said nothing yet (``None``: at once; ``datetime.max``: only on its first output).
    hold_until: datetime | None = None


@attrs.frozen
class StreamCursor:
    """How far a stream has got."""

    task_id: str
    mode: StreamMode
    last_seq: int
    state: TaskState | None
    #: A streamed send's snapshot, held until the agent's first output says what to send.
    held: Task | None = None
    #: When the held snapshot goes out anyway (see :func:`release`).
    hold_until: datetime | None = None
    done: bool = False

    @property
    def release_at(self) -> datetime | None:
        """When :func:`release` must be called (``None``: nothing is waiting for the time)."""
        return self.hold_until if self.held is not None else None


@attrs.frozen
class Advance:
    """What feeding events to a cursor produced."""

    cursor: StreamCursor
    #: The frames to send, in order (each with the sequence number to use as its SSE id).
    frames: tuple[LoggedEvent, ...]
    #: The batch skipped ahead of the cursor: read the log after ``cursor.last_seq`` and feed it.
    gap: bool = False


def _ends(mode: StreamMode, state: TaskState | None) -> bool:
    if state is None:
        return False
    return state.settled if mode is StreamMode.SEND else state.terminal


def open_cursor(stream: FollowTask) -> Advance:
    """The cursor for a new stream, and the frames to send at once."""
    cursor = StreamCursor(stream.task_id, stream.mode, stream.after, stream.state)
    snapshot = stream.snapshot
    if snapshot is None:
        # A resumed stream: whatever came after ``after`` is in the log; read it first.
        done = _ends(stream.mode, stream.state)
        return Advance(attrs.evolve(cursor, done=done), (), gap=not done)
    if isinstance(snapshot, Message):
        return Advance(attrs.evolve(cursor, done=True), (LoggedEvent(stream.after, snapshot),))
    if (
        stream.mode is StreamMode.SEND
        and stream.hold_until is not None
        and not _ends(stream.mode, stream.state)
    ):
        return Advance(attrs.evolve(cursor, held=snapshot, hold_until=stream.hold_until), ())
    frame = LoggedEvent(stream.after, snapshot)
    return Advance(attrs.evolve(cursor, done=_ends(stream.mode, stream.state)), (frame,))


#: How many logged events one catch-up read asks for.
LOG_PAGE = 100


def log_page(cursor: StreamCursor) -> LogQuery:
    """The next page of the log a stream that must catch up reads: the events after its cursor.
    A page that comes back full may have more behind it: read the next one."""
    return LogQuery(cursor.task_id, cursor.last_seq, LOG_PAGE)


def release(cursor: StreamCursor, now: datetime) -> Advance:
    """The held snapshot, if its time has come by ``now`` (the agent has not spoken yet)."""
    if cursor.held is None or cursor.hold_until is None or now < cursor.hold_until:
        return Advance(cursor, ())
    frame = LoggedEvent(cursor.last_seq, cursor.held)
    return Advance(attrs.evolve(cursor, held=None, hold_until=None), (frame,))


def advance(cursor: StreamCursor, batch: Sequence[LoggedEvent]) -> Advance:
    """Feed logged events (in order; duplicates allowed) to ``cursor``."""
    fresh = [e for e in batch if e.seq > cursor.last_seq]
    if cursor.done or not fresh:
        return Advance(cursor, ())
    frames: list[LoggedEvent] = []
    if cursor.held is not None:
        first = fresh[0]
        if first.seq == cursor.last_seq + 1 and isinstance(first.event, Message):
            # The agent answered with a message (logged before the completion it causes):
            # the whole stream is that message.
            done = attrs.evolve(cursor, last_seq=first.seq, held=None, done=True)
            return Advance(done, (first,))
        frames.append(LoggedEvent(cursor.last_seq, cursor.held))
        cursor = attrs.evolve(cursor, held=None, hold_until=None)
    for logged in fresh:
        if logged.seq != cursor.last_seq + 1:
            return Advance(cursor, tuple(frames), gap=True)
        state = cursor.state
        match logged.event:
            case TaskStatusUpdateEvent(status=status):
                state = status.state
            case Task(status=status):
                state = status.state
        frames.append(logged)
        cursor = attrs.evolve(cursor, last_seq=logged.seq, state=state)
        if _ends(cursor.mode, state):
            return Advance(attrs.evolve(cursor, done=True), tuple(frames))
    return Advance(cursor, tuple(frames))
