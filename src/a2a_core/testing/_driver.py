"""The deterministic driver: a whole A2A server run synchronously, step by step, on a fake clock.

:class:`Driver` is a :class:`~a2a_core.transport.Server` with the outside world played by the
test: the clock moves only when :meth:`Driver.advance` moves it, ids are ``id-1``, ``id-2``, …, and
agent runs move only when the test steps them. So a test can replay any interleaving of requests,
agent output, cancels, disconnects and clock jumps, and look at every reply, stream frame and push
notification, with no event loop and no flakiness.

Agents run in one of two ways:

* given an agent function, the driver steps it by hand: :meth:`Driver.step` advances one run to
  its next ``yield`` (or its end), and :meth:`Driver.run_agents` steps every run until none can
  go on. An agent that awaits the event loop (``anyio.sleep``, a network call) cannot be stepped
  without one, and the driver says so;
* with no agent function, the test scripts every run: :meth:`Driver.agent_yields`,
  :meth:`Driver.agent_returns`, :meth:`Driver.agent_raises`.
"""

import functools
import itertools
import json
import math
import re
from collections.abc import Callable, Coroutine, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from a2a_core import Agent, Core, CoreConfig
from a2a_core.card import AgentCard, AgentSkill
from a2a_core.errors import UsageError
from a2a_core.store import MemoryTasks
from a2a_core.transport import (
    ANONYMOUS,
    Answer,
    Caller,
    Frames,
    HttpRequest,
    HttpResponse,
    Notify,
    OutputTaken,
    Problem,
    Server,
    StartRun,
    StopRun,
    StreamOpened,
)

__all__ = ["EPOCH", "Driver", "Exchange", "counting_ids"]


def counting_ids(prefix: str = "id-") -> Callable[[], str]:
    """Ids ``id-1``, ``id-2``, …: what a test passes as ``Server(new_id=…)`` to predict them.
    Never serve with it: counted ids are guessable, and start again after a restart."""
    count = itertools.count(1)
    return lambda: f"{prefix}{next(count)}"


#: Where the fake clock starts unless told otherwise.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

_CARD = AgentCard(name="driven", description="An agent under test", version="1.0.0")


@attrs.define
class Exchange:
    """One request and everything that came back for it."""

    number: int
    #: The response, once there is one (at once, or when a blocking send's task settled).
    response: HttpResponse | None = None
    #: For a stream: its SSE frames so far, and whether it ended.
    frames: list[bytes] = attrs.field(factory=list)
    stream: bool = False
    ended: bool = False

    @property
    def answered(self) -> bool:
        return self.response is not None or self.stream

    def json(self) -> Any:
        """The response body, parsed."""
        if self.response is None:
            raise UsageError(f"request {self.number} has no response yet")
        return json.loads(self.response.body)

    def result(self) -> Any:
        """The JSON-RPC ``result`` (fails, showing the error, if the call failed)."""
        body = self.json()
        if "result" not in body:
            raise AssertionError(f"request {self.number} failed: {body}")
        return body["result"]

    def error(self) -> Any:
        """The JSON-RPC ``error`` (fails if the call succeeded)."""
        body = self.json()
        if "error" not in body:
            raise AssertionError(f"request {self.number} succeeded: {body}")
        return body["error"]

    def events(self) -> list[Any]:
        """The JSON payloads of the stream's events so far (keep-alives and ids left out)."""
        found = []
        for frame in self.frames:
            # Lines end at CR or LF only (str.splitlines also splits at U+2028 and more).
            for line in re.split(r"\r\n|\r|\n", frame.decode()):
                if line.startswith("data:"):
                    found.append(json.loads(line[5:]))
        return found


#: What asyncio, anyio and trio say when awaited with no loop running.
_NO_LOOP = ("no running event loop", "asynchronous event loop", "from async context")


def _needs_loop(what: object) -> UsageError:
    return UsageError(
        f"the agent awaited the event loop ({what}), which the driver does not run: "
        "script that agent's output with agent_yields / agent_returns instead, or run it in "
        "a2a_adapters.testing.Harness, which runs the real engine in your event loop"
    )


class _Stepper:
    """An agent run, advanced by hand: each step runs it to its next yield or its end."""

    def __init__(self, run: int, start: Callable[[], Any]) -> None:
        self.run = run
        self._start = start
        # The agent is called at the first step (a run never stepped leaves no coroutine
        # behind to be reported as never awaited): an async generator, or a coroutine.
        self._started: Any = None
        #: The server said nothing more from this run counts: let it finish, report nothing.
        self.over = False

    def step(self) -> tuple[str, Any]:
        """("yield", value), ("return", value) or ("raise", error)."""
        if self._started is None:
            try:
                self._started = self._start()
            except Exception as error:
                return "raise", error
        if isinstance(self._started, Coroutine):
            awaitable: Any = self._started
        else:
            awaitable = self._started.__anext__()
        try:
            blocked = awaitable.send(None)
        except StopIteration as done:
            if awaitable is self._started:
                return "return", done.value
            return "yield", done.value
        except StopAsyncIteration:
            return "return", None
        except RuntimeError as error:
            if any(sign in str(error) for sign in _NO_LOOP):
                raise _needs_loop(error) from error
            return "raise", error
        except Exception as error:
            return "raise", error
        awaitable.close()
        raise _needs_loop(blocked)

    def close(self) -> None:
        """Stop the run where it is (its ``finally`` blocks run, as on a cancel)."""
        if self._started is None:
            return
        if isinstance(self._started, Coroutine):
            self._started.close()
            return
        closing = self._started.aclose()
        try:
            closing.send(None)
        except (StopIteration, StopAsyncIteration, RuntimeError):
            return
        closing.close()  # it awaited the loop while closing: nothing more to do here


class Driver:
    """A whole server, synchronous and deterministic (see the module's docstring).

    ``agent`` is an agent function, a mapping of skill id to agent (each a skill of the card,
    unless the card given lists its own), or ``None`` to script every run; ``config`` (or
    ``card`` and keyword options for :class:`~a2a_core.CoreConfig`, such as ``task_ttl`` in
    seconds or as a timedelta) sets up the core; the clock starts at ``start``.
    """

    def __init__(
        self,
        agent: Agent | Mapping[str, Agent] | None = None,
        *,
        config: CoreConfig | None = None,
        card: AgentCard | None = None,
        start: datetime = EPOCH,
        **options: Any,
    ) -> None:
        if config is None:
            options.setdefault("streaming", True)
            chosen = card or _CARD
            if isinstance(agent, Mapping) and not chosen.skills:
                # One skill per agent, as a server lists them: a send can name each.
                skills = tuple(
                    AgentSkill(id=name, name=name, description=f"The {name} skill.", tags=())
                    for name in agent
                )
                chosen = attrs.evolve(chosen, skills=skills)
            config = CoreConfig(card=chosen, **options)
        self.now = start
        #: The tasks, as the store holds them (read them freely; write only through requests).
        self.tasks = MemoryTasks()
        self.server = Server(Core(config), store=self.tasks, new_id=counting_ids())
        self._agents = agent
        #: The run of each task whose output still counts: its
        #: :class:`~a2a_core.transport.StartRun`.
        self.runs: dict[str, StartRun] = {}
        #: Every run that was stopped, in order.
        self.stopped: list[StopRun] = []
        #: Every push notification the server asked to deliver, in order.
        self.pushes: list[Notify] = []
        #: Every problem the server reported (what a transport would log).
        self.problems: list[str] = []
        # Whether each run's last output still counts, as the server said.
        self._taken: dict[tuple[str, int], bool] = {}
        self._steppers: dict[str, _Stepper] = {}
        self._exchanges: dict[int, Exchange] = {}
        self._sent = 0  # messages sent with send(), for their default ids

    @property
    def core(self) -> Core:
        return self.server.core

    # --- requests -----------------------------------------------------------------------------

    def request(self, request: HttpRequest, *, caller: Caller = ANONYMOUS) -> Exchange:
        """Send ``request``; its :class:`Exchange` fills in as the server answers."""
        number = self.server.receive(request, self.now, caller=caller)
        exchange = self._exchanges[number] = Exchange(number)
        self._pump()
        return exchange

    def rpc(
        self,
        method: str,
        params: Any = None,
        *,
        version: str | None = "1.0",
        rpc_id: int | str = 1,
        caller: Caller = ANONYMOUS,
        headers: Mapping[str, str] | None = None,
    ) -> Exchange:
        """A JSON-RPC call on the default endpoint (``version`` None sends no ``A2A-Version``)."""
        body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params or {}}
        sent = {"content-type": "application/json", **(headers or {})}
        if version is not None:
            sent["a2a-version"] = version
        return self.request(
            HttpRequest("POST", "/", sent, json.dumps(body).encode()), caller=caller
        )

    def send(
        self, text: str = "hello", *, message_id: str | None = None, **params: Any
    ) -> Exchange:
        """A v1.0 ``SendMessage`` of one text part; ``params`` are merged into the params
        (``configuration``, ``metadata``) or the message (``task_id``, ``context_id``)."""
        self._sent += 1
        message: dict[str, Any] = {
            "messageId": message_id or f"msg-{self._sent}",
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
        for key, wire in (("task_id", "taskId"), ("context_id", "contextId")):
            if key in params:
                message[wire] = params.pop(key)
        return self.rpc("SendMessage", {"message": message, **params})

    def disconnect(self, exchange: Exchange) -> None:
        """The client of ``exchange`` goes away (a waiting send, or a stream)."""
        self.server.client_left(exchange.number)
        self._exchanges.pop(exchange.number, None)

    # --- agents -------------------------------------------------------------------------------

    def step(self, task_id: str) -> bool:
        """Advance ``task_id``'s agent to its next yield (or its end); whether it can go on."""
        stepper = self._steppers.get(task_id)
        if stepper is None:
            return False
        run = stepper.run
        outcome, value = stepper.step()
        if outcome == "yield":
            if not stepper.over:
                stepper.over = not self._output(task_id, run, value)
                if stepper.over:
                    self._drop_run(task_id, run)  # it may go on; nothing it does counts
        else:
            del self._steppers[task_id]
            if not stepper.over:
                error = value if outcome == "raise" else None
                result = value if outcome == "return" else None
                self.server.agent_done(task_id, run, self.now, value=result, error=error)
            if task_id in self.runs and self.runs[task_id].run == run:
                del self.runs[task_id]
        self._pump()
        return task_id in self._steppers

    def run_agents(self, *, max_steps: int = 10_000) -> None:
        """Step every agent run until none can go on (started runs included)."""
        for _ in range(max_steps):
            if not self._steppers:
                return
            self.step(next(iter(self._steppers)))
        raise UsageError(f"agents were still running after {max_steps} steps")

    def agent_yields(self, task_id: str, value: Any) -> None:
        """Script: the current run of ``task_id`` yields ``value``. Once the run no longer
        counts (this output finished the task), it leaves :attr:`runs`: its end need not be
        reported, as an adapter need not report it."""
        start = self._current(task_id)
        if not self._output(task_id, start.run, value):
            self._drop_run(task_id, start.run)

    def agent_returns(self, task_id: str, value: Any = None) -> None:
        """Script: the current run of ``task_id`` returns ``value``."""
        start = self._current(task_id)
        self._forget(task_id, start.run)
        self.server.agent_done(task_id, start.run, self.now, value=value)
        self._pump()

    def agent_raises(self, task_id: str, error: BaseException) -> None:
        """Script: the current run of ``task_id`` raises ``error``."""
        start = self._current(task_id)
        self._forget(task_id, start.run)
        self.server.agent_done(task_id, start.run, self.now, error=error)
        self._pump()

    # --- the clock ----------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Move the clock on; every deadline the server set that passes fires on the way."""
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise UsageError(f"advance() takes a number of seconds, got {seconds!r}")
        if not math.isfinite(seconds) or seconds < 0:
            # The server's clock never goes back, and a deadline an infinity away never fires.
            raise UsageError(f"advance() takes a finite, non-negative number, got {seconds!r}")
        target = self.now + timedelta(seconds=seconds)
        while (due := self.server.next_deadline()) is not None and due <= target:
            self.now = max(self.now, due)
            self.server.tick(self.now)
            self._pump()
        self.now = target

    # --- the server's actions -----------------------------------------------------------------

    def _output(self, task_id: str, run: int, value: Any) -> bool:
        """Feed one output of a run; whether the run still counts after it."""
        self.server.agent_output(task_id, run, value, self.now)
        self._pump()
        return self._taken.pop((task_id, run))

    def _pump(self) -> None:
        for action in self.server.take_actions():
            match action:
                case StartRun(task_id=task_id):
                    self.runs[task_id] = action
                    old = self._steppers.pop(task_id, None)
                    if old is not None:
                        old.close()
                    if self._agents is not None:
                        agent = self._agent_for(action.context.skill_id)
                        start = functools.partial(agent, action.context)
                        self._steppers[task_id] = _Stepper(action.run, start)
                case StopRun(task_id=task_id, run=run):
                    self.stopped.append(action)
                    self._forget(task_id, run)
                case Answer(exchange=number, response=response):
                    answered = self._exchanges.pop(number, None)
                    if answered is not None:
                        answered.response = response
                case StreamOpened(exchange=number, frames=frames, ended=ended):
                    opened = self._exchanges.get(number)
                    if opened is not None:
                        opened.stream, opened.ended = True, ended
                        opened.frames.extend(frames)
                        if ended:
                            del self._exchanges[number]
                case Frames(exchange=number, frames=frames, ended=ended):
                    following = self._exchanges.get(number)
                    if following is not None:
                        following.frames.extend(frames)
                        following.ended = ended
                        if ended:
                            del self._exchanges[number]
                case Notify(task_id=task_id, config_id=config_id, seq=seq):
                    self.pushes.append(action)
                    # Kept in ``pushes`` for the test: as far as the server knows, delivered.
                    self.server.notified(task_id, config_id, seq, self.now)
                case OutputTaken(task_id=task_id, run=run, counts=counts):
                    self._taken[task_id, run] = counts
                case Problem(message=message):
                    self.problems.append(message)
                case _:  # Read and Commit: the server performs them on its own store
                    raise AssertionError(f"the driver's server asked for {action}")

    def _agent_for(self, skill_id: str) -> Agent:
        agents = self._agents
        if isinstance(agents, Mapping):
            return agents[skill_id] if skill_id in agents else next(iter(agents.values()))
        assert agents is not None
        return agents

    def _current(self, task_id: str) -> StartRun:
        start = self.runs.get(task_id)
        if start is None:
            raise UsageError(f"task {task_id} has no agent run going")
        return start

    def _drop_run(self, task_id: str, run: int) -> None:
        start = self.runs.get(task_id)
        if start is not None and start.run == run:
            del self.runs[task_id]

    def _forget(self, task_id: str, run: int) -> None:
        self._drop_run(task_id, run)
        stepper = self._steppers.get(task_id)
        if stepper is not None and stepper.run == run:
            del self._steppers[task_id]
            stepper.close()
