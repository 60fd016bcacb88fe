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
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, assert_never

from a2a_adapters._agents import AgentRegistry
from a2a_adapters._auth import Authenticator, authenticate
from a2a_adapters.stores import TaskStore
from a2a_core import (
    AgentDone,
    AgentOutput,
    AwaitTask,
    Call,
    Caller,
    Context,
    Core,
    Decision,
    Effect,
    Fail,
    HttpRequest,
    HttpResponse,
    Input,
    InternalError,
    Publish,
    Respond,
    StartRun,
    StopRun,
    TaskRecord,
    Tick,
)

__all__ = ["Engine"]

log = logging.getLogger("a2a_adapters")

#: How often a decision is retried when its writes lose a compare-and-set race.
MAX_ATTEMPTS = 16


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
        clock: Callable[[], datetime] = utc_now,
        new_id: Callable[[], str] = new_uuid,
    ) -> None:
        self.core = core
        self.store = store
        self.agents = agents
        self.auth = tuple(auth)
        self._clock = clock
        self._new_id = new_id
        self._runs: dict[str, tuple[int, asyncio.Task[None]]] = {}
        self._waiters: dict[str, list[asyncio.Future[TaskRecord]]] = {}
        self._wake_at: datetime | None = None
        self._alarm = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None

    # --- entry points -------------------------------------------------------------------------

    async def handle(
        self, request: HttpRequest, base_url: str, caller: Caller | None = None
    ) -> HttpResponse:
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
        return self.core.render(routed, await self.call(routed.call))

    async def call(self, call: Call) -> Respond | Fail:
        """Run a decoded call to its final reply (waiting for the task, for a blocking send)."""
        try:
            decision, settled = await self._execute(call)
        except _Conflict as conflict:
            return Fail(InternalError(str(conflict)))
        match decision.reply:
            case Respond() | Fail() as reply:
                return reply
            case AwaitTask() as wait:
                assert settled is not None
                return self.core.settled_reply(wait, await settled)
            case None:  # pragma: no cover - the core answers every call
                raise AssertionError("the core returned no reply for a call")

    async def start(self) -> None:
        """Start the timer, with a first tick at once (to sweep what expired while we were down)."""
        if self._timer is None:
            self._arm(self._clock())
            self._timer = asyncio.create_task(self._run_timer(), name="a2a timer")

    async def aclose(self) -> None:
        """Stop the timer and every agent run, and wait until they have ended."""
        tasks = [task for _, task in self._runs.values()]
        if self._timer is not None:
            tasks.append(self._timer)
            self._timer = None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- read, decide, commit, perform --------------------------------------------------------

    async def _execute(self, inp: Input) -> tuple[Decision, asyncio.Future[TaskRecord] | None]:
        for _ in range(MAX_ATTEMPTS):
            snapshot = await self.store.read(self.core.needs(inp))
            decision = self.core.decide(inp, snapshot, Context(self._clock(), self._new_id))
            if not decision.writes or await self.store.commit(decision.writes):
                break
        else:
            raise _Conflict(f"gave up after {MAX_ATTEMPTS} conflicting writes")
        if decision.wake_at is not None:
            self._arm(decision.wake_at)
        settled = None
        if isinstance(decision.reply, AwaitTask):
            # Registered before the run starts, so the settling event cannot be missed.
            settled = asyncio.get_running_loop().create_future()
            self._waiters.setdefault(decision.reply.task_id, []).append(settled)
        for effect in decision.effects:
            self._perform(effect)
        return decision, settled

    def _perform(self, effect: Effect) -> None:
        match effect:
            case StartRun():
                task = asyncio.create_task(self._run(effect), name=f"a2a run {effect.task_id}")
                self._runs[effect.task_id] = (effect.run, task)
            case StopRun(task_id=task_id, run=run):
                current = self._runs.get(task_id)
                if current is not None and current[0] == run:
                    current[1].cancel()
            case Publish(record=record, settled=settled):
                if settled:
                    for waiter in self._waiters.pop(record.id, ()):
                        if not waiter.done():
                            waiter.set_result(record)
            case _:
                assert_never(effect)

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

    async def _run(self, start: StartRun) -> None:
        task_id, run = start.task_id, start.run
        try:
            done = await self._drive(start)
            await self._execute(done)
        except asyncio.CancelledError:
            pass  # stopped by the core (cancel, superseded run) or by shutdown
        except _Conflict:
            log.exception("agent output for task %s could not be committed", task_id)
        finally:
            current = self._runs.get(task_id)
            if current is not None and current[0] == run:
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
                await self._execute(AgentOutput(task_id, run, value))
        finally:
            await result.aclose()


class _Conflict(Exception):
    """Writes kept losing compare-and-set races."""
