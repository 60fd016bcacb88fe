"""Stream followers: each stream that follows a task, its cursor, and whether it is reading.

A stream takes a task's events as they are published here, and reads the store's log when it
cannot trust that it has seen them all: on opening (events may have been committed since the
snapshot it opened on), after a gap, when the task changed on another server, and when it
fell a whole ``stream_window`` of unsent batches behind (it stops taking events, and reads on
from the log once its client has caught up). Its phase says which of those it is doing:

* a stream that is reading takes no published event (the read will bring it) but notes the
  highest it missed, and reads again after if the read may not have reached it;
* a change elsewhere that came with no events while it was reading makes the read *stale*;
* a stream *behind* its window takes nothing until its client has caught up.
"""

from collections.abc import Callable, Iterable
from datetime import datetime

import attrs

from a2a_core._errors import A2AError
from a2a_core.decide._streams import (
    Advance,
    FollowTask,
    StreamCursor,
    advance,
    log_page,
    open_cursor,
)
from a2a_core.front._exchange import Binding
from a2a_core.front._http import Dispatch, served_by, task_concerned
from a2a_core.store._contract import LoggedEvent, LogQuery, Snapshot
from a2a_core.wire._sse import KEEPALIVE

from ._actions import Action, Frames, StreamOpened
from ._core import Core
from ._phases import Phase, Phases

__all__ = ["FOLLOW_PHASES", "FollowPhase", "Follower", "Followers"]


class FollowPhase(Phase):
    """What a stream is doing besides taking events."""

    #: Taking events as they are published.
    LIVE = "live"
    #: Reading the log; published events are noted, not taken.
    READING = "reading"
    #: Reading, and the task changed elsewhere meanwhile: read again after.
    READING_STALE = "reading, stale"
    #: A whole window behind: takes nothing until its client has caught up.
    BEHIND = "behind"
    #: Behind, with a log read still under way.
    BEHIND_READING = "behind, reading"
    #: Behind, with a stale log read still under way.
    BEHIND_READING_STALE = "behind, reading, stale"


_F = FollowPhase
FOLLOW_PHASES: Phases[FollowPhase] = Phases(
    "a stream follower",
    {
        (_F.LIVE, "read the log"): _F.READING,
        (_F.BEHIND, "read the log"): _F.BEHIND_READING,
        (_F.READING, "changed elsewhere"): _F.READING_STALE,
        (_F.READING_STALE, "changed elsewhere"): _F.READING_STALE,
        (_F.BEHIND, "changed elsewhere"): _F.BEHIND,
        (_F.BEHIND_READING, "changed elsewhere"): _F.BEHIND_READING_STALE,
        (_F.BEHIND_READING_STALE, "changed elsewhere"): _F.BEHIND_READING_STALE,
        (_F.READING, "log read"): _F.LIVE,
        (_F.READING_STALE, "log read"): _F.LIVE,
        (_F.BEHIND_READING, "log read"): _F.BEHIND,
        (_F.BEHIND_READING_STALE, "log read"): _F.BEHIND,
        (_F.LIVE, "window full"): _F.BEHIND,
        (_F.READING, "window full"): _F.BEHIND_READING,
        (_F.READING_STALE, "window full"): _F.BEHIND_READING_STALE,
        (_F.BEHIND, "window full"): _F.BEHIND,
        (_F.BEHIND_READING, "window full"): _F.BEHIND_READING,
        (_F.BEHIND_READING_STALE, "window full"): _F.BEHIND_READING_STALE,
        (_F.BEHIND, "caught up"): _F.LIVE,
        (_F.BEHIND_READING, "caught up"): _F.READING,
        (_F.BEHIND_READING_STALE, "caught up"): _F.READING_STALE,
    },
)
_READING = frozenset((_F.READING, _F.READING_STALE, _F.BEHIND_READING, _F.BEHIND_READING_STALE))
_BEHIND = frozenset((_F.BEHIND, _F.BEHIND_READING, _F.BEHIND_READING_STALE))


@attrs.define
class Follower:
    """A stream following a task."""

    exchange: int
    dispatch: Dispatch
    cursor: StreamCursor
    phase: FollowPhase = FollowPhase.LIVE
    #: The highest event number published for its task while it could not take events.
    seen: int = 0
    #: Batches sent and not yet acknowledged (with a ``stream_window``).
    unsent: int = 0


class Followers:
    """The streams open here: by exchange (``streams``), by task (``by_task``), and those
    holding a snapshot back until a time (``held``). What they send goes to ``act``."""

    def __init__(
        self, core: Core, act: Callable[[Action], None], *, sse: bool, window: int | None
    ) -> None:
        self._core = core
        self._act = act
        self._render_one = core.render_event if sse else core.event_payload
        self._window = window
        self.streams: dict[int, Follower] = {}
        self.by_task: dict[str, list[Follower]] = {}
        self.held: dict[int, Follower] = {}
        #: How many times a stream fell a whole window behind (and read on from the log).
        self.stalls = 0

    def open(self, exchange: int, dispatch: Dispatch, opened: FollowTask) -> Follower | None:
        """Answer ``exchange`` with a stream; the follower, if it goes on following."""
        step = open_cursor(opened)
        follower = Follower(exchange, dispatch, step.cursor)
        frames = self._render(follower, step.frames)
        headers = self._core.stream_headers(dispatch)
        keepalive = b"" if dispatch.binding is Binding.GRPC else KEEPALIVE
        shown = task_concerned(dispatch.call.request, opened.snapshot)
        served = served_by(dispatch)
        if step.cursor.done:
            tail, trailers = self._core.stream_end(dispatch)
            self._act(
                StreamOpened(
                    exchange, 200, headers, frames + tail, True, trailers, keepalive, shown, served
                )
            )
            return None
        self.streams[exchange] = follower
        self.by_task.setdefault(opened.task_id, []).append(follower)
        self._moved(follower, step.cursor)
        self._act(StreamOpened(exchange, 200, headers, frames, False, (), keepalive, shown, served))
        return follower

    def of(self, task_id: str) -> list[Follower]:
        """The streams that follow ``task_id`` (a copy: delivering may end one)."""
        return list(self.by_task.get(task_id, ()))

    def _render(self, follower: Follower, frames: Iterable[LoggedEvent]) -> tuple[bytes, ...]:
        render = self._render_one
        return tuple(r for f in frames if (r := render(follower.dispatch, f)))

    def deliver(self, follower: Follower, step: Advance) -> bool:
        """Send what ``step`` produced; whether the stream must read the log (a gap)."""
        self._moved(follower, step.cursor)
        frames = self._render(follower, step.frames)
        if step.cursor.done:
            self.end(follower, frames)
            return False
        if frames:
            self._act(Frames(follower.exchange, frames, ended=False))
            if self._window is not None:
                follower.unsent += 1
                if follower.unsent >= self._window:
                    self.stalls += 1
                    follower.phase = FOLLOW_PHASES[follower.phase, "window full"]
        return step.gap

    def _moved(self, follower: Follower, cursor: StreamCursor) -> None:
        follower.cursor = cursor
        if cursor.release_at is not None:
            self.held[follower.exchange] = follower
        else:
            self.held.pop(follower.exchange, None)

    def end(
        self, follower: Follower, frames: tuple[bytes, ...], error: A2AError | None = None
    ) -> None:
        """End ``follower``'s stream (having failed with ``error``, if given)."""
        tail, trailers = self._core.stream_end(follower.dispatch, error)
        self._act(Frames(follower.exchange, frames + tail, ended=True, trailers=trailers))
        self.forget(follower.exchange)

    def forget(self, exchange: int) -> Follower | None:
        """Nothing more is sent on ``exchange``; the follower it had, if any."""
        follower = self.streams.pop(exchange, None)
        if follower is not None:
            self.held.pop(exchange, None)
            task_id = follower.cursor.task_id
            kept = [f for f in self.by_task[task_id] if f is not follower]
            if kept:
                self.by_task[task_id] = kept
            else:
                del self.by_task[task_id]
        return follower

    def taking(self, follower: Follower, last: int, *, rang: bool = False) -> bool:
        """Whether ``follower`` takes events published now (up to ``last``); if not, it notes
        them (``rang``: the task changed elsewhere with no events said, so a read under way may
        have missed it)."""
        if follower.phase is FollowPhase.LIVE:
            return True
        if rang:
            follower.phase = FOLLOW_PHASES[follower.phase, "changed elsewhere"]
        follower.seen = max(follower.seen, last)
        return False

    def start_read(self, follower: Follower) -> LogQuery | None:
        """The log page ``follower`` reads next, unless it is reading or gone."""
        if follower.phase in _READING or follower.exchange not in self.streams:
            return None
        follower.phase = FOLLOW_PHASES[follower.phase, "read the log"]
        return log_page(follower.cursor)

    def read_done(self, follower: Follower, snapshot: Snapshot) -> bool:
        """``follower``'s log read came back with the task; whether to read on (a full page,
        more published meanwhile, a gap, or a stale read)."""
        stale = follower.phase in (_F.READING_STALE, _F.BEHIND_READING_STALE)
        follower.phase = FOLLOW_PHASES[follower.phase, "log read"]
        full_page = len(snapshot.log) == log_page(follower.cursor).limit
        if (
            self.deliver(follower, advance(follower.cursor, snapshot.log))
            and follower.exchange in self.streams
        ):
            stale = True  # a gap: read on
        if follower.exchange not in self.streams or follower.phase in _BEHIND:
            return False
        assert snapshot.task is not None  # a read of a gone task ends its stream instead
        more = follower.cursor.last_seq < max(follower.seen, snapshot.task.seq)
        return full_page or more or stale

    def sent(self, exchange: int) -> Follower | None:
        """A batch of ``exchange`` went out; the follower if it has now caught up."""
        follower = self.streams.get(exchange)
        if follower is None:
            return None
        follower.unsent = max(follower.unsent - 1, 0)
        if follower.phase in _BEHIND and follower.unsent == 0:
            follower.phase = FOLLOW_PHASES[follower.phase, "caught up"]
            return follower
        return None

    def due(self, now: datetime) -> list[Follower]:
        """The streams whose held snapshot is due by ``now``."""
        return [
            f
            for f in self.held.values()
            if f.cursor.release_at is not None and f.cursor.release_at <= now
        ]

    def deadline(self) -> datetime | None:
        """When the first held snapshot is due."""
        times = [f.cursor.release_at for f in self.held.values() if f.cursor.release_at]
        return min(times) if times else None
