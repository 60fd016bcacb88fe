"""A whole A2A server with no I/O: the core, tasks in memory, and an adapter's bookkeeping.

The core decides one input at a time; a server around it also has to remember things between
inputs: which agent run is current, which blocking sends wait for which task, which streams
follow which task and how far each has got, and when the timer should next fire. The adapters'
engine keeps that on an event loop over a pluggable async store. :class:`Server` keeps it with
no loop at all, over :class:`MemoryTasks`, synchronously, so that

* a custom transport (h11 on trio sockets, JSON-RPC lines over a pipe: ``examples/``) is a loop
  that turns bytes into :meth:`Server.receive` calls and performs the actions it gets back, and
* ``a2a_core.testing.Driver`` can replay any interleaving of requests, agent output, cancels,
  disconnects and clock jumps, exactly and with no event loop.

Like h11's ``Connection``, it never calls out: every method takes the time as an argument, and
what the outside world must do comes back as :data:`Action` values from :meth:`take_actions`
(start or stop an agent run, answer a waiting request, send stream frames, deliver a push).
"""

import inspect
import itertools
from collections.abc import Callable
from contextlib import aclosing
from datetime import datetime
from typing import Any, TypeVar, assert_never

import attrs

from ._agent_api import Agent
from ._core import Core
from ._effects import AwaitTask, Decision, Fail, Notify, Publish, Respond, StartRun, StopRun
from ._http import Dispatch, HttpRequest, HttpResponse
from ._inputs import ANONYMOUS, AgentDone, AgentOutput, Caller, Context, Input, Tick
from ._memory import MemoryTasks
from ._storage import LogQuery, Reads
from ._streams import Advance, OpenStream, StreamCursor, advance, open_cursor, release

__all__ = ["Action", "Answer", "Frames", "Server", "Stream", "Waiting"]


@attrs.frozen
class Waiting:
    """A request whose answer comes later (a blocking send): watch for its :class:`Answer`."""

    exchange: int


@attrs.frozen
class Stream:
    """A request answered with an event stream: send the head and ``frames`` now; later frames
    come as :class:`Frames` actions. ``ended``: the stream is complete already."""

    stream: int
    status: int
    headers: tuple[tuple[str, str], ...]
    frames: tuple[bytes, ...]
    ended: bool


@attrs.frozen
class Answer:
    """The response to a :class:`Waiting` request."""

    exchange: int
    response: HttpResponse


@attrs.frozen
class Frames:
    """More of a stream (SSE frames, in order); ``ended``: send nothing more, close it."""

    stream: int
    frames: tuple[bytes, ...]
    ended: bool


#: What the outside world must do: run an agent (feeding what it yields to
#: :meth:`Server.agent_output` and how it ended to :meth:`Server.agent_done`), stop one, answer a
#: waiting request, extend a stream, or POST a push notification.
Action = StartRun | StopRun | Answer | Frames | Notify


@attrs.define
class _Waiter:
    exchange: int
    dispatch: Dispatch
    wait: AwaitTask


@attrs.define
class _Follower:
    stream: int
    dispatch: Dispatch
    cursor: StreamCursor


_E = TypeVar("_E", _Waiter, _Follower)


def _counter_ids() -> Callable[[], str]:
    count = itertools.count(1)
    return lambda: f"id-{next(count)}"


class Server:
    """An A2A server as a synchronous state machine: inputs in, :data:`Action` values out."""

    def __init__(
        self,
        core: Core,
        *,
        new_id: Callable[[], str] | None = None,
        tasks: MemoryTasks | None = None,
        sse: bool = True,
    ) -> None:
        self.core = core
        #: Stream frames are SSE frames (``data: …`` with ids), or, for a transport that frames
        #: messages its own way, each event's JSON alone.
        self.sse = sse
        #: The tasks, as the store holds them (read it freely; write only through the server).
        self.tasks = tasks if tasks is not None else MemoryTasks()
        self._new_id = new_id or _counter_ids()
        self._numbers = itertools.count(1)
        self._waiters: dict[str, list[_Waiter]] = {}
        self._followers: dict[str, list[_Follower]] = {}
        self._actions: list[Action] = []
        #: When :meth:`tick` should next be called (``None``: no deadline).
        self.wake_at: datetime | None = None

    # --- inputs -------------------------------------------------------------------------------

    def receive(
        self,
        request: HttpRequest,
        now: datetime,
        *,
        caller: Caller = ANONYMOUS,
        base_url: str = "http://localhost",
    ) -> HttpResponse | Waiting | Stream:
        """Handle one request: answered now, answered later (:class:`Waiting`), or a stream.

        ``caller`` is whom the transport authenticated (anonymous by default); ``base_url`` is
        where the client reached the A2A root (for the card).
        """
        routed = self.core.handle_http(request, caller, base_url)
        if isinstance(routed, HttpResponse):
            return routed
        number = next(self._numbers)
        decision = self._execute(routed.call, now, waiter=(number, routed))
        match decision.reply:
            case Respond() | Fail() as reply:
                return self.core.render(routed, reply)
            case AwaitTask():
                return Waiting(number)
            case OpenStream() as opened:
                return self._open(number, routed, opened)
            case None:  # pragma: no cover - the core answers every call
                raise AssertionError("the core returned no reply for a call")

    def agent_output(self, task_id: str, run: int, value: Any, now: datetime) -> bool:
        """Run ``run`` of ``task_id``'s agent yielded ``value``. Returns whether the run still
        counts: once it does not, its agent should be stopped (a :class:`StopRun` says so too)
        and its end need not be reported."""
        decision = self._execute(AgentOutput(task_id, run, value), now)
        return not decision.run_over

    def agent_done(
        self,
        task_id: str,
        run: int,
        now: datetime,
        *,
        value: Any = None,
        error: BaseException | None = None,
    ) -> None:
        """Run ``run`` of ``task_id``'s agent returned ``value`` or raised ``error``."""
        self._execute(AgentDone(task_id, run, value, error), now)

    async def drive(
        self,
        start: StartRun,
        agent: Agent,
        now: Callable[[], datetime],
        after_each: Callable[[], None],
    ) -> None:
        """Run ``start``'s agent to its end, feeding what it yields to :meth:`agent_output`
        and how it ended to :meth:`agent_done`, calling ``after_each`` after every input (to
        take the actions). It awaits nothing but the agent, so it runs on any event loop; a
        transport stops a run (on :class:`StopRun`) by cancelling it its own way. An agent
        whose output stops counting is closed at once.
        """
        task_id, run = start.task_id, start.run
        try:
            result: Any = agent(start.context)
            if not inspect.isasyncgen(result):
                self.agent_done(task_id, run, now(), value=await result)
            else:
                async with aclosing(result) as updates:
                    async for value in updates:
                        counts = self.agent_output(task_id, run, value, now())
                        after_each()
                        if not counts:
                            return
                self.agent_done(task_id, run, now())
        except Exception as error:
            self.agent_done(task_id, run, now(), error=error)
        after_each()

    def tick(self, now: datetime) -> None:
        """The time :attr:`wake_at` named has come (calling it early or late is harmless):
        expired tasks go, and streamed sends whose agent has not spoken yet get their task."""
        if self.wake_at is not None and self.wake_at <= now:
            self.wake_at = None
        self._execute(Tick(now), now)
        for followers in list(self._followers.values()):
            for follower in list(followers):
                due = follower.cursor.release_at
                if due is not None and due <= now:
                    self._follow(follower, release(follower.cursor, now))
        self._wake_for_streams()

    def close(self, exchange_or_stream: int) -> None:
        """The client of a :class:`Waiting` request or a :class:`Stream` went away."""
        _drop(self._waiters, exchange_or_stream)
        _drop(self._followers, exchange_or_stream)

    # --- outputs ------------------------------------------------------------------------------

    def take_actions(self) -> list[Action]:
        """What the outside world must now do, in order (each action is returned once)."""
        actions, self._actions = self._actions, []
        return actions

    @property
    def open_streams(self) -> int:
        """How many streams are still following a task."""
        return sum(len(f) for f in self._followers.values())

    @property
    def waiting(self) -> int:
        """How many requests wait for their task to settle."""
        return sum(len(w) for w in self._waiters.values())

    # --- read, decide, commit, perform --------------------------------------------------------

    def _execute(
        self, inp: Input, now: datetime, *, waiter: tuple[int, Dispatch] | None = None
    ) -> Decision:
        snapshot = self.tasks.read(self.core.needs(inp))
        decision = self.core.decide(inp, snapshot, Context(now, self._new_id))
        if not self.tasks.commit(decision.writes):
            # One decider over memory it alone writes cannot lose a race.
            raise AssertionError("a write conflicted in a single-threaded server")
        self._wake_by(decision.wake_at)
        if waiter is not None and isinstance(decision.reply, AwaitTask):
            # Registered before the effects run, so that the task cannot settle unseen.
            number, dispatch = waiter
            entry = _Waiter(number, dispatch, decision.reply)
            self._waiters.setdefault(decision.reply.task_id, []).append(entry)
        for effect in decision.effects:
            match effect:
                case StartRun() | StopRun() | Notify():
                    self._actions.append(effect)
                case Publish(record=record, events=events, settled=settled):
                    for follower in list(self._followers.get(record.id, ())):
                        self._follow(follower, advance(follower.cursor, events))
                    if settled:
                        for entry in self._waiters.pop(record.id, ()):
                            reply = self.core.settled_reply(entry.wait, record)
                            answer = self.core.render(entry.dispatch, reply)
                            self._actions.append(Answer(entry.exchange, answer))
                case _:
                    assert_never(effect)
        return decision

    # --- streams ------------------------------------------------------------------------------

    def _open(self, number: int, dispatch: Dispatch, opened: OpenStream) -> Stream:
        step = open_cursor(opened)
        follower = _Follower(number, dispatch, step.cursor)
        self._followers.setdefault(opened.task_id, []).append(follower)
        frames = self._frames(follower, step, read_log=not step.cursor.done)
        ended = follower.cursor.done
        if ended:
            self.close(number)
        self._wake_by(follower.cursor.release_at)
        headers = self.core.stream_headers()
        return Stream(number, 200, headers, frames, ended)

    def _wake_for_streams(self) -> None:
        """Bring :attr:`wake_at` forward to the first held stream snapshot that is due."""
        for followers in self._followers.values():
            for follower in followers:
                self._wake_by(follower.cursor.release_at)

    def _wake_by(self, due: datetime | None) -> None:
        if due is not None and (self.wake_at is None or due < self.wake_at):
            self.wake_at = due

    def _follow(self, follower: _Follower, step: Advance) -> None:
        frames = self._frames(follower, step, read_log=False)
        if frames or follower.cursor.done:
            self._actions.append(Frames(follower.stream, frames, follower.cursor.done))
        if follower.cursor.done:
            self.close(follower.stream)

    def _frames(self, follower: _Follower, step: Advance, *, read_log: bool) -> tuple[bytes, ...]:
        """Render ``step``'s frames; catch up from the log while the cursor says there is a gap
        (a resumed stream, or one opened after events it must not miss)."""
        frames: list[bytes] = []
        while True:
            render = self.core.render_event if self.sse else self.core.event_payload
            frames.extend(r for f in step.frames if (r := render(follower.dispatch, f)))
            follower.cursor = step.cursor
            if step.cursor.done or not (read_log or step.gap):
                return tuple(frames)
            query = LogQuery(step.cursor.task_id, step.cursor.last_seq)
            found = self.tasks.read(Reads(task_id=query.task_id, log=query))
            if found.task is None:
                follower.cursor = attrs.evolve(step.cursor, done=True)  # the task is gone
                return tuple(frames)
            step = advance(step.cursor, found.log)
            read_log = len(found.log) == query.limit


def _drop(table: "dict[str, list[_E]]", number: int) -> None:
    """Remove the waiter or follower numbered ``number`` from ``table``."""
    for task_id, entries in list(table.items()):
        kept = [e for e in entries if _number(e) != number]
        if kept:
            table[task_id] = kept
        else:
            del table[task_id]


def _number(entry: _Waiter | _Follower) -> int:
    return entry.exchange if isinstance(entry, _Waiter) else entry.stream
