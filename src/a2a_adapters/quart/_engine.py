"""The asyncio engine: runs the core's read-decide-commit-perform loop for real.

This is the only place where the core meets asyncio. Everything here is mechanics: reading and
committing through the store, retrying on a version conflict, running agents as asyncio tasks,
cancelling them, and waking blocking sends when their task settles. Every *decision* (what a
request means, which state a task moves to, whether agent output still counts) is the core's.

The framework-free entry point is :meth:`Engine.handle`: any asyncio HTTP framework can call it
with the request's method, path, headers and body (and the caller, if it authenticated the
request itself; otherwise the engine's authenticators decide, answering 401 when they refuse).
"""

import asyncio
import contextlib
import inspect
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, assert_never

import anyio
import attrs

from a2a_adapters._agents import AgentRegistry
from a2a_adapters._auth import Authenticator, authenticate
from a2a_adapters._push import PushSender
from a2a_adapters._streaming import HttpStream
from a2a_adapters.stores import TaskStore
from a2a_core import (
    KEEPALIVE,
    AgentDone,
    AgentOutput,
    AwaitTask,
    Caller,
    Context,
    Core,
    Decision,
    Dispatch,
    Effect,
    Fail,
    HttpRequest,
    HttpResponse,
    Input,
    InternalError,
    LoggedEvent,
    LogQuery,
    Notify,
    OpenStream,
    Publish,
    Reads,
    Respond,
    StartRun,
    StopRun,
    TaskRecord,
    Tick,
    advance,
    open_cursor,
)

__all__ = ["Engine"]

log = logging.getLogger("a2a_adapters")

#: How often a decision is retried when its writes lose a compare-and-set race.
MAX_ATTEMPTS = 16
#: Events a stream may have waiting before it stops buffering and reads the store's log instead.
MAX_BUFFERED_EVENTS = 256
#: Seconds of silence after which a stream sends a keep-alive comment.
KEEPALIVE_SECONDS = 15.0


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_uuid() -> str:
    return str(uuid.uuid4())


class Engine:
    """Serves A2A on asyncio: a core, a store and agents."""

    def __init__(
        self,
        core: Core,
        store: TaskStore,
        agents: AgentRegistry,
        *,
        auth: Sequence[Authenticator] = (),
        push: PushSender | None = None,
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = new_uuid,
        keepalive_seconds: float = KEEPALIVE_SECONDS,
    ) -> None:
        self.core = core
        self.store = store
        self.agents = agents
        self.auth = tuple(auth)
        self.push = push
        self._push_task: asyncio.Task[None] | None = None
        self._clock = clock
        self._new_id = new_id
        self._runs: dict[str, _Run] = {}
        self._waiters: dict[str, list[asyncio.Future[TaskRecord]]] = {}
        self._mailboxes: dict[str, set[_Mailbox]] = {}
        self._keepalive = keepalive_seconds
        self._wake_at: datetime | None = None
        self._alarm = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None

    # --- entry points -------------------------------------------------------------------------

    async def handle(
        self, request: HttpRequest, base_url: str, caller: Caller | None = None
    ) -> HttpResponse | HttpStream:
        """Answer one HTTP request that reached the A2A root at ``base_url``.

        Pass ``caller`` if the request was authenticated already; otherwise the engine's
        authenticators verify it (every caller is anonymous when there are none).
        """
        if caller is None:
            verified = authenticate(self.core, self.auth, request)
            if isinstance(verified, HttpResponse):
                return verified
            caller = verified
        routed = self.core.handle_http(request, caller, base_url)
        if isinstance(routed, HttpResponse):
            return routed
        try:
            decision, settled, mailbox = await self._execute(routed.call)
        except _Conflict as conflict:
            return self.core.render(routed, Fail(InternalError(str(conflict))))
        match decision.reply:
            case Respond() | Fail() as reply:
                return self.core.render(routed, reply)
            case AwaitTask() as wait:
                assert settled is not None
                return self.core.render(routed, self.core.settled_reply(wait, await settled))
            case OpenStream() as opened:
                assert mailbox is not None
                body = self._stream(routed, opened, mailbox)
                return HttpStream(200, self.core.stream_headers(), body)
            case None:  # pragma: no cover - the core answers every call
                raise AssertionError("the core returned no reply for a call")

    async def start(self) -> None:
        """Start the timer, with a first tick at once (to sweep what expired while we were down)."""
        if self._timer is None:
            self._arm(self._clock())
            self._timer = asyncio.create_task(self._run_timer(), name="a2a timer")
        if self.push is not None and self._push_task is None:
            self._push_task = asyncio.create_task(self.push.run(), name="a2a push")

    async def aclose(self) -> None:
        """Stop the timer and every agent run, and wait until they have ended."""
        runs = list(self._runs.values())
        for run in runs:
            run.scope.cancel()
        background = [t for t in (self._timer, self._push_task) if t is not None]
        self._timer = self._push_task = None
        for task in background:
            task.cancel()
        await asyncio.gather(*(r.task for r in runs), *background, return_exceptions=True)

    # --- read, decide, commit, perform --------------------------------------------------------

    async def _execute(
        self, inp: Input
    ) -> tuple[Decision, asyncio.Future[TaskRecord] | None, "_Mailbox | None"]:
        for _ in range(MAX_ATTEMPTS):
            snapshot = await self.store.read(self.core.needs(inp))
            decision = self.core.decide(inp, snapshot, Context(self._clock(), self._new_id))
            if not decision.writes or await self.store.commit(decision.writes):
                break
        else:
            raise _Conflict(f"gave up after {MAX_ATTEMPTS} conflicting writes")
        if decision.wake_at is not None:
            self._arm(decision.wake_at)
        # Listeners are registered before the effects run, so no event can slip past them.
        settled = mailbox = None
        match decision.reply:
            case AwaitTask(task_id=task_id):
                settled = asyncio.get_running_loop().create_future()
                self._waiters.setdefault(task_id, []).append(settled)
            case OpenStream(task_id=task_id):
                mailbox = _Mailbox()
                self._mailboxes.setdefault(task_id, set()).add(mailbox)
        for effect in decision.effects:
            self._perform(effect)
        return decision, settled, mailbox

    def _perform(self, effect: Effect) -> None:
        match effect:
            case StartRun():
                scope = anyio.CancelScope()
                name = f"a2a run {effect.task_id}"
                task = asyncio.create_task(self._run(effect, scope), name=name)
                self._runs[effect.task_id] = _Run(effect.run, scope, task)
            case StopRun(task_id=task_id, run=run):
                current = self._runs.get(task_id)
                if current is not None and current.run == run:
                    # A cancel scope (not Task.cancel) so that an agent's shielded section
                    # finishes first, as it would on trio.
                    current.scope.cancel()
            case Publish(record=record, events=events, settled=settled):
                for mailbox in self._mailboxes.get(record.id, ()):
                    mailbox.offer(events, record.replied)
                if settled:
                    for waiter in self._waiters.pop(record.id, ()):
                        if not waiter.done():
                            waiter.set_result(record)
            case Notify():
                if self.push is not None:
                    self.push.send(effect)
                else:  # a config stored while push was on; the server no longer pushes
                    log.warning("push is off: dropped a notification for task %s", effect.task_id)
            case _:
                assert_never(effect)

    # --- event streams ------------------------------------------------------------------------

    async def _stream(
        self, dispatch: Dispatch, opened: OpenStream, mailbox: "_Mailbox"
    ) -> AsyncIterator[bytes]:
        """The SSE frames of one stream, until the core's cursor says it is done."""
        task_id = opened.task_id
        try:
            step = open_cursor(opened)
            while True:
                for frame in step.frames:
                    yield self.core.render_event(dispatch, frame)
                cursor = step.cursor
                if cursor.done:
                    return
                if step.gap or mailbox.behind:
                    # Missed events (a resume, or a full mailbox): the store's log has them.
                    mailbox.behind = False
                    query = LogQuery(task_id, cursor.last_seq)
                    found = await self.store.read(Reads(task_id=task_id, log=query))
                    if found.task is None:
                        return  # the task is gone (expired): nothing more will come
                    step = advance(cursor, found.log, replied=False)
                    if len(found.log) == query.limit and not step.cursor.done:
                        mailbox.behind = True  # there may be more: read on
                    continue
                if mailbox.batches:
                    events, replied = mailbox.take()
                    step = advance(cursor, events, replied=replied)
                    continue
                mailbox.wake.clear()
                try:
                    await asyncio.wait_for(mailbox.wake.wait(), self._keepalive)
                except TimeoutError:
                    yield KEEPALIVE
                step = advance(cursor, (), replied=False)
        except Exception:
            log.exception("stream on task %s failed", task_id)
            yield self.core.render_stream_error(dispatch, InternalError("The stream failed"))
        finally:
            boxes = self._mailboxes.get(task_id)
            if boxes is not None:
                boxes.discard(mailbox)
                if not boxes:
                    del self._mailboxes[task_id]

    # --- the timer ----------------------------------------------------------------------------

    def _arm(self, at: datetime) -> None:
        """Make sure the timer fires no later than ``at``."""
        if self._wake_at is None or at < self._wake_at:
            self._wake_at = at
            self._alarm.set()

    async def _run_timer(self) -> None:
        while True:
            self._alarm.clear()
            if self._wake_at is None:
                await self._alarm.wait()
                continue
            delay = (self._wake_at - self._clock()).total_seconds()
            if delay > 0:
                # Sleep until the deadline, or until an earlier one is armed.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._alarm.wait(), delay)
                continue
            self._wake_at = None
            try:
                await self._execute(Tick(self._clock()))
            except _Conflict:
                log.exception("the expiry sweep could not be committed; retrying later")
                self._arm(self._clock() + timedelta(seconds=1))

    # --- agent runs ---------------------------------------------------------------------------

    async def _run(self, start: StartRun, scope: anyio.CancelScope) -> None:
        task_id, run = start.task_id, start.run
        try:
            with scope:
                done = await self._drive(start)
            if not scope.cancelled_caught:
                # Even a run stopped meanwhile reports how it ended: the core drops what no
                # longer counts.
                await self._execute(done)
        except _Conflict:
            log.exception("agent output for task %s could not be committed", task_id)
        finally:
            current = self._runs.get(task_id)
            if current is not None and current.run == run:
                del self._runs[task_id]

    async def _drive(self, start: StartRun) -> AgentDone:
        """Run the agent, feeding each yielded value to the core; say how it ended."""
        agent = self.agents.agent_for(start.context.skill_id)
        task_id, run = start.task_id, start.run
        try:
            result: Any = agent(start.context)
            if not inspect.isasyncgen(result):
                return AgentDone(task_id, run, await result)
        except Exception as error:
            log.exception("agent failed on task %s", task_id)
            return AgentDone(task_id, run, error=error)
        updates: AsyncIterator[Any] = result
        try:
            while True:
                try:
                    value = await anext(updates)
                except StopAsyncIteration:
                    return AgentDone(task_id, run)
                except Exception as error:
                    log.exception("agent failed on task %s", task_id)
                    return AgentDone(task_id, run, error=error)
                # Shielded: a stop must not fall between the commit and its effects; it takes
                # effect at the agent's next await instead.
                with anyio.CancelScope(shield=True):
                    await self._execute(AgentOutput(task_id, run, value))
        finally:
            with anyio.CancelScope(shield=True):
                await result.aclose()


class _Conflict(Exception):
    """Writes kept losing compare-and-set races."""


@attrs.frozen
class _Run:
    """A running agent: its number, the scope that stops it, and its task."""

    run: int
    scope: anyio.CancelScope
    task: asyncio.Task[None]


class _Mailbox:
    """The events published to one stream and not yet sent, bounded.

    When a stream falls :data:`MAX_BUFFERED_EVENTS` behind, its buffer is dropped and it reads
    the store's log instead (``behind``): a slow reader costs bounded memory and never blocks the
    agent or other readers, and still loses nothing.
    """

    def __init__(self) -> None:
        self.batches: deque[tuple[tuple[LoggedEvent, ...], bool]] = deque()
        self.size = 0
        self.behind = False
        self.wake = asyncio.Event()

    def offer(self, events: tuple[LoggedEvent, ...], replied: bool) -> None:
        if not self.behind:
            if self.size + len(events) > MAX_BUFFERED_EVENTS:
                self.behind = True
                self.batches.clear()
                self.size = 0
            else:
                self.batches.append((events, replied))
                self.size += len(events)
        self.wake.set()

    def take(self) -> tuple[tuple[LoggedEvent, ...], bool]:
        events, replied = self.batches.popleft()
        self.size -= len(events)
        return events, replied
