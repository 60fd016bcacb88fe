"""Runs and capacity: the agent runs under way here, their clocks, and the limits on them.

This server keeps one run of a task, the latest it knows of: a store may answer commits out
of order, so a run started by a commit answered late must not replace a later one. Capacity
(``max_runs``, ``max_runs_per_owner``, ``max_streams``) is checked when a caller's decision
is made, before anything is written, so a refused send leaves no task behind; decisions whose
commits are under way count as started (``reserve``), or sends decided side by side would
overshoot the limits together. A run under a time limit (``max_run_time``,
``run_idle_time``) has a clock and one entry at a time in a heap of when to look at it.

Beside them, the last record this server committed of each task it runs: a run's next output
is decided on it without a read (a stale one only loses its compare-and-set).
"""

import heapq
import itertools
from collections.abc import Iterable
from datetime import datetime, timedelta

import attrs

from a2a_core._agent_api import RunTimedOut
from a2a_core._config import CoreConfig
from a2a_core._errors import BusyError
from a2a_core.model._records import TaskRecord
from a2a_core.store._contract import Delete, Put, Write

__all__ = ["Reserved", "RunClock", "Runs"]


@attrs.frozen
class Reserved:
    """What a decision whose commit is under way will start: ``runs`` for ``owner``, and a
    stream if ``stream``."""

    owner: str
    runs: int
    stream: bool


@attrs.define
class RunClock:
    """When run ``run`` started, and when it last gave an output."""

    run: int
    started: datetime
    spoke: datetime

    def due(self, longest: timedelta | None, idle: timedelta | None) -> datetime:
        """When the run would pass a limit if it says nothing more."""
        times = [self.started + longest] if longest is not None else []
        if idle is not None:
            times.append(self.spoke + idle)
        return min(times)

    def passed(
        self, longest: timedelta | None, idle: timedelta | None, now: datetime
    ) -> RunTimedOut | None:
        """The limit the run has passed by ``now``, if any (the whole run's first)."""
        if longest is not None and now >= self.started + longest:
            return RunTimedOut(longest, idle=False)
        if idle is not None and now >= self.spoke + idle:
            return RunTimedOut(idle, idle=True)
        return None


class Runs:
    """The runs under way here (``current``: task → run), their owners, clocks and
    reservations, and the records last committed of them (``known``)."""

    def __init__(self, config: CoreConfig) -> None:
        self.current: dict[str, int] = {}
        self.known: dict[str, TaskRecord] = {}
        self._longest = config.max_run_time
        self._idle = config.run_idle_time
        self.timed = self._longest is not None or self._idle is not None
        self._max_runs = config.max_runs
        self._max_per_owner = config.max_runs_per_owner
        self._max_streams = config.max_streams
        self.limited = not (
            config.max_runs is None
            and config.max_runs_per_owner is None
            and config.max_streams is None
        )
        self._clocks: dict[str, RunClock] = {}
        self.timers: list[tuple[datetime, int, str, int]] = []
        self._timer_numbers = itertools.count()
        self._owners: dict[str, str] = {}
        self._owner_runs: dict[str, int] = {}
        self.reserved: dict[int, Reserved] = {}

    def begin(self, task_id: str, run: int, now: datetime, owner: str) -> int | None:
        """Count run ``run`` of ``task_id`` (for caller ``owner``, "" for none) from ``now``.
        ``None``: a later run began here already (its commit was answered first): it is not
        started. Else the run of this server's it replaces, which must be stopped (0: none)."""
        current = self.current.get(task_id)
        if current is not None and current > run:
            return None
        self.current[task_id] = run
        self._forget_owner(task_id)  # of the run it replaces
        if owner:
            self._owners[task_id] = owner
            self._owner_runs[owner] = self._owner_runs.get(owner, 0) + 1
        if self.timed:
            clock = self._clocks[task_id] = RunClock(run, now, now)
            self._arm(task_id, clock)
        return current if current is not None and current < run else 0

    def end(self, task_id: str, run: int) -> bool:
        """Run ``run`` of ``task_id`` is over; whether it was the one counting here."""
        clock = self._clocks.get(task_id)
        if clock is not None and clock.run == run:
            del self._clocks[task_id]
        if self.current.get(task_id) != run:
            return False
        del self.current[task_id]
        self._forget_owner(task_id)
        self.known.pop(task_id, None)
        return True

    def spoke(self, task_id: str, run: int, now: datetime) -> None:
        """Run ``run`` gave an output (or its held output was tried again) at ``now``."""
        clock = self._clocks.get(task_id)
        if clock is not None and clock.run == run:
            clock.spoke = now

    def clear(self) -> list[tuple[str, int]]:
        """Forget every run (they are being stopped); the runs that were counting."""
        runs = list(self.current.items())
        self.current.clear()
        self._owners.clear()
        self._owner_runs.clear()
        return runs

    def _forget_owner(self, task_id: str) -> None:
        owner = self._owners.pop(task_id, None)
        if owner is not None:
            left = self._owner_runs[owner] - 1
            if left:
                self._owner_runs[owner] = left
            else:
                del self._owner_runs[owner]

    # --- capacity ---------------------------------------------------------------------------

    def reserve(self, owner: str, runs: int, stream: bool, streams: int) -> Reserved | BusyError:
        """Reserve ``runs`` for ``owner`` and maybe a stream (``streams`` are open now), or
        the busy error that refuses them."""
        held = self.reserved.values()
        if runs and self._max_runs is not None:
            under_way = len(self.current) + sum(r.runs for r in held)
            if under_way + runs > self._max_runs:
                return BusyError(
                    f"The server is running {under_way} agents, its limit is "
                    f"{self._max_runs}; retry later"
                )
        if runs and self._max_per_owner is not None:
            mine = self._owner_runs.get(owner, 0)
            mine += sum(r.runs for r in held if r.owner == owner)
            if mine + runs > self._max_per_owner:
                return BusyError(
                    f"You have {mine} agent runs under way, the limit per caller is "
                    f"{self._max_per_owner}; retry once one has finished"
                )
        if stream and self._max_streams is not None:
            open_ = streams + sum(1 for r in held if r.stream)
            if open_ + 1 > self._max_streams:
                return BusyError(
                    f"The server has {open_} streams open, its limit is {self._max_streams}; "
                    "retry later"
                )
        return Reserved(owner, runs, stream)

    # --- time limits ------------------------------------------------------------------------

    def _arm(self, task_id: str, clock: RunClock) -> None:
        due = clock.due(self._longest, self._idle)
        heapq.heappush(self.timers, (due, next(self._timer_numbers), task_id, clock.run))

    def timed_out(self, now: datetime) -> list[tuple[str, int, RunTimedOut]]:
        """The runs past a time limit by ``now``, with the limit each passed; their clocks
        stop (the caller stops them)."""
        out: list[tuple[str, int, RunTimedOut]] = []
        while self.timers and self.timers[0][0] <= now:
            _, _, task_id, run = heapq.heappop(self.timers)
            clock = self._clocks.get(task_id)
            if clock is None or clock.run != run:
                continue  # that run has ended: its timer is stale
            why = clock.passed(self._longest, self._idle, now)
            if why is None:
                self._arm(task_id, clock)  # it spoke since: look again later
                continue
            del self._clocks[task_id]
            out.append((task_id, run, why))
        return out

    # --- what was last committed ------------------------------------------------------------

    def remember(self, writes: Iterable[Write]) -> None:
        """Keep what was just committed of the tasks this server runs.

        Only a record of the run going on here, and never over a later one: a store may answer
        commits out of order, and a run's output decided on the record of the run before it
        would find itself superseded and stop, with no write to lose a compare-and-set (the
        task would stay working with no run behind it)."""
        for write in writes:
            if isinstance(write, Put):
                record = write.record
                key = record.id
                known = self.known.get(key)
                if known is not None and known.version >= record.version:
                    continue  # answered after a later commit of ours, remembered already
                if record.running and self.current.get(key) == record.run:
                    self.known[key] = record
                else:
                    self.known.pop(key, None)
            elif isinstance(write, Delete):
                self.known.pop(write.task_id, None)


def superseded(run: int, record: TaskRecord | None) -> bool:
    """Whether ``record`` says run ``run`` of its task no longer counts: the task is gone, a
    later run began, or this one ended. A record of an *earlier* run says nothing about it: it
    was read before the commit that started this run, and answered after it (a store may
    answer its operations out of order)."""
    if record is None or record.run > run:
        return True
    return record.run == run and not record.running
