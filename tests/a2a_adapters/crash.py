"""The crash campaign: a server on a SQLite file under concurrent load, killed with SIGKILL at a
random moment, restarted on the same file and checked, round after round.

Each round starts ``serve`` on the file (alternating between asyncio and trio, and every two
rounds between SQLite's ``synchronous`` FULL and NORMAL, so each reads what another wrote),
checks what the last process left (from the second round on), then runs client coroutines
against it (blocking and non-blocking sends, follow-ups to tasks waiting for input, cancels,
streamed sends and subscriptions, reads) until the kill, which comes at a random moment while
agents run: the agent is ``crash_agent``, whose runs take from a millisecond to most of a
second. A final restart checks the last kill; before some restarts, a server is also killed
while it starts. What is checked after every restart, black-box over HTTP:

* recovery: no task is left submitted or working (polled briefly: recovery runs at start-up);
  one whose run the kill cut is failed with a status saying the server restarted;
* every send that got an answer is still there, in the same or a later state (a terminal one
  exactly as the client was given it, history and artifacts included), with every message of
  it that was acknowledged;
* an idempotent re-send of every acknowledged message id (of the round, and a sample of the
  ones before) returns the same task and runs nothing;
* every stream, cut or finished: each event its client saw is the one the task's log keeps
  under that number, and a cut one resumed with ``Last-Event-ID`` (over JSON-RPC or REST) gets
  exactly the events after it, with no gap and no duplicate;
* from the agent's own log of runs (``crash_agent``): no message id started a run twice, and
  every message that ran is in the store (nothing ran on a commit the kill undid);
* the sends the kill left unanswered, sent again: each returns the task the store has for it,
  or (never stored) creates one and runs once; no task is in the store that none explains;
* no push notification is lost: half the new tasks are sent with a push config whose webhook
  is a real receiver that goes down at random (503, retried), across kills too; once it is up
  again and recovery has run, every event of each such task's log reached it at least once
  under its ``X-A2A-Notification-Id``, with the logged event as its body, first deliveries in
  order, or was given up on after ``MAX_ATTEMPTS`` refusals (``crash_push.py`` says how).

``tests/a2a_adapters/test_crash.py`` runs a few rounds in CI; ``python -m benchmarks.crash``
runs the full campaign and prints the counts.
"""

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.a2a_adapters import crash_push, processes
from tests.a2a_adapters.crash_push import PUSH_PATH, Drops, Hook, Ledger, Owed, Webhooks
from tests.a2a_adapters.sse import Event, SseParser
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    CANCELED,
    FAILED,
    INPUT_REQUIRED,
    SUBMITTED,
    TERMINAL,
    WORKING,
    send_params,
    state_of,
    status_text,
)
from tests.a2a_adapters.webhooks import Receiver, receiving

Json = dict[str, Any]

#: What a task whose run a restart cut short says.
#: How a settled run reads: "The server restarted before…" after a restart on a file, "The
#: server stopped before…" when a replica took over a dead one's runs on a shared store.
RESTARTED = "before the agent finished"
#: Client coroutines of the load.
WORKERS = 8
#: Seconds of load before the kill: drawn from this range each round.
KILL_AFTER = (0.3, 1.5)
#: How often a restart is preceded by a server killed while it starts, and when it is killed
#: (seconds after it was started: about half a second imports and opens the file).
START_KILL_CHANCE = 0.3
START_KILL_AFTER = (0.2, 0.8)
#: Seconds a restarted server may take to settle every task the last one left live.
RECOVERY_TIMEOUT = 10.0
#: Seconds any one HTTP exchange may take (a stream: between two of its chunks).
HTTP_TIMEOUT = 10.0
#: Seconds one round (load or checks) may take before the campaign gives up on it.
ROUND_TIMEOUT = 120.0
#: Seconds a stream read after a restart may take to end (its task is settled by then).
STREAM_CHECK_TIMEOUT = 5.0
#: Earlier rounds' acknowledged messages re-sent at each restart (all of the last round's are).
RESEND_SAMPLE = 50
#: Problems kept in full (the count goes on past it).
MAX_PROBLEMS = 50
#: Seconds without a new event after which the replay of a task waiting for input (whose
#: subscription stays open) is taken as its whole log; and how many logs are read at once.
LOG_QUIET = 0.3
LOG_READERS = 16
#: How the campaign's webhook receiver fails, unless told otherwise.
WEBHOOKS = Webhooks()

#: The load's operations and how often each is drawn.
OPERATIONS = {
    "blocking": 3,
    "ask": 2,
    "follow_up": 2,
    "non_blocking": 2,
    "cancel": 1,
    "stream": 2,
    "subscribe": 1,
    "get": 1,
}


@dataclass
class Counts:
    """What the campaign did and saw, over all its rounds."""

    rounds: int = 0
    #: Servers killed while they started, before the one that checks (some restarts only).
    kills_while_starting: int = 0
    #: Sends (blocking, non-blocking, follow-ups, streamed) that got an answer or a first event.
    sends_acknowledged: int = 0
    #: Sends in flight at a kill, with no answer: sent again after the restart.
    sends_cut: int = 0
    cancels_acknowledged: int = 0
    #: Task checks after restarts (every task known, after each restart).
    tasks_checked: int = 0
    #: Idempotent re-sends of acknowledged message ids after a restart.
    resends: int = 0
    #: Streams compared with the task's log after a restart, and those of them the kill cut
    #: and that were resumed with Last-Event-ID.
    streams_checked: int = 0
    streams_resumed: int = 0
    #: Tasks whose run a kill cut, failed by the next start's recovery.
    recovered: int = 0
    #: Tasks waiting for input at a kill that still waited after it.
    still_waiting: int = 0
    #: Agent runs, from the agent's own log.
    runs: int = 0
    #: Tasks the campaign made (each checked after every restart from its own on).
    tasks: int = 0
    #: What the webhooks saw (``crash_push.PushCounts``).
    push: crash_push.PushCounts = field(default_factory=crash_push.PushCounts)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        found = {**vars(self), **vars(self.push)}
        del found["push"]
        return [f"{name.replace('_', ' ')}: {value}" for name, value in found.items()]


@dataclass
class Known:
    """What clients were told of one task."""

    task_id: str
    #: Every state a client was told it had.
    states: set[str] = field(default_factory=set)
    #: The task as a client was last given it whole once terminal (it must never change).
    final: Json | None = None
    #: When a client was first told it was terminal (``time.monotonic``).
    final_at: float | None = None
    #: The user messages sent to it that were acknowledged: message id -> SendMessage params.
    messages: dict[str, Json] = field(default_factory=dict)
    #: The state a client was told last.
    last: str = ""
    #: Whether a restart found it failed as restarted.
    recovered: bool = False


@dataclass
class Stream:
    """One event stream as its client read it."""

    kind: str  # "send" or "subscribe"
    task_id: str | None = None
    #: (event id, StreamResponse) in the order they arrived.
    events: list[tuple[int, Json]] = field(default_factory=list)
    #: Whether the server ended it (else the kill cut it).
    ended: bool = False


def history_ids(task: Json) -> set[str]:
    return {message["messageId"] for message in task.get("history", ())}


def allowed_after_restart(states: set[str]) -> set[str]:
    """The states a task told ``states`` may have once a restart's recovery has run: the same
    terminal one, or (having been live) waiting for input or any terminal one."""
    final = states & TERMINAL
    return set(final) if final else {INPUT_REQUIRED, *TERMINAL}


def refused_as_terminal(error: Json) -> bool:
    """The refusal of a subscription to a terminal task, in JSON-RPC (-32004) or REST."""
    details = error["error"].get("details", ())
    reasons = {detail.get("reason") for detail in details}
    return error["error"]["code"] == -32004 or "UNSUPPORTED_OPERATION" in reasons


def stream_state(payload: Json) -> str | None:
    for key in ("task", "statusUpdate"):
        if key in payload:
            state: str = payload[key]["status"]["state"]
            return state
    return None


def rpc_body(method: str, params: Json) -> Json:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def push_config(params: Json) -> Json | None:
    config: Json | None = params.get("configuration", {}).get("taskPushNotificationConfig")
    return config


def resend_params(params: Json) -> Json:
    """The same message again, answered at once (its task is settled, or is new), with its
    push config (a task the first send never stored gets it; a stored one ignores it)."""
    configuration: Json = {"returnImmediately": True}
    config = push_config(params)
    if config is not None:
        configuration["taskPushNotificationConfig"] = config
    return {"message": params["message"], "configuration": configuration}


class Problems:
    """Broken invariants, each said in a line."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.count = 0

    def add(self, text: str) -> None:
        self.count += 1
        if len(self.found) < MAX_PROBLEMS:
            self.found.append(text)


class Client:
    """JSON-RPC and SSE over one httpx client, as a remote client speaks them."""

    def __init__(self, url: str, http: httpx.AsyncClient) -> None:
        self.url = url
        self.http = http

    async def call(self, method: str, params: Json) -> Json:
        """The JSON-RPC response document (``result`` or ``error``)."""
        response = await self.http.post(
            self.url + "/", json=rpc_body(method, params), headers=A2A_HEADERS
        )
        document: Json = response.json()
        return document

    async def result(self, method: str, params: Json) -> Json:
        document = await self.call(method, params)
        if "error" in document:
            raise AssertionError(f"{method} answered {document['error']}")
        result: Json = document["result"]
        return result

    async def stream(
        self,
        method: str,
        params: Json,
        into: Stream,
        *,
        last_event_id: int | None = None,
        rest: bool = False,
    ) -> Json | None:
        """Read an event stream into ``into`` as it arrives (so that what a kill cuts short is
        kept); ``None`` once the server ended it, or the JSON error it answered instead."""
        headers = {**A2A_HEADERS, "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        if rest:
            request = self.http.build_request(
                "GET", f"{self.url}/tasks/{params['id']}:subscribe", headers=headers
            )
        else:
            request = self.http.build_request(
                "POST", self.url + "/", json=rpc_body(method, params), headers=headers
            )
        response = await self.http.send(request, stream=True)
        try:
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                error: Json = json.loads(await response.aread())
                return error
            parser = SseParser()
            async for line in response.aiter_lines():
                item = parser.feed(line)
                if isinstance(item, Event):
                    into.events.append((int(item.id or "-1"), _payload(item, rest=rest)))
            if isinstance(parser.feed(""), Event):
                raise AssertionError("the stream ended inside an event")
            into.ended = True
            return None
        finally:
            await response.aclose()


def _payload(event: Event, *, rest: bool) -> Json:
    document: Json = event.json()
    if rest:
        return document
    if "error" in document:
        return {"error": document["error"]}
    result: Json = document["result"]
    return result


class Campaign:
    """The tasks, streams and messages clients saw, kept across rounds, and the checks."""

    def __init__(
        self, workdir: Path, receiver: Receiver, *, seed: int, webhooks: Webhooks = WEBHOOKS
    ) -> None:
        self.file: Path | None = workdir / "tasks.db"
        self.store = f"sqlite:{self.file}"
        self.agent_log = workdir / "runs.log"
        self.rng = random.Random(seed)  # noqa: S311  a workload, not a secret
        self.counts = Counts()
        self.problems = Problems()
        self.known: dict[str, Known] = {}
        #: Acknowledged messages of earlier rounds: (message id, task id, params).
        self.earlier: list[tuple[str, str, Json]] = []
        # What the round under way (or the last one, until its checks) did.
        self.acked: list[tuple[str, str, Json]] = []
        self.streams: list[Stream] = []
        self.pending: dict[str, Json] = {}  # sends without an answer, by message id
        self.waiting: list[str] = []  # tasks waiting for input (follow-ups go to them)
        self.live: list[str] = []  # tasks sent without blocking (cancels and subscriptions)
        self.killed_at: float | None = None
        self.listed_at = 0.0  # when the last listing of every task was asked for
        # The webhooks: the receiver and how it fails, the tasks with a config, what reached
        # the receiver and what servers gave up on, what each kill left owed.
        self.receiver = receiver
        self.webhooks = webhooks
        self.hooks: dict[str, Hook] = {}
        self.ledger = Ledger(receiver, self.problems.add)
        self.drops = Drops()
        self.owed: list[Owed] = []
        self.outage_left = 0.0  # seconds of the checks the receiver stays down after a kill
        self.server: processes.ServerProcess | None = None  # the one being checked

    def server_ended(self, server: processes.ServerProcess, loop: str) -> None:
        """Whatever a server logged as an error is a problem: none is expected of it. What it
        gave up on (a warning) is kept, for the push checks."""
        for line in server.log:
            if line.startswith(("ERROR", "CRITICAL")):
                self.problems.add(f"the server on {loop} logged: {line.strip()}")
        self.drops.server_ended(server.log)

    def killed(self, at: float) -> None:
        """A server was killed at ``at``: note what its outbox still owed (read-only)."""
        if self.file is not None:
            rows = crash_push.read_outbox(self.file)
            if rows is None:  # a limit of the look, not of the server: counted, not a problem
                self.counts.push.outboxes_unread += 1
            else:
                self.owed.append(Owed(at, rows))

    # --- what clients were told ------------------------------------------------------------

    def task(self, task_id: str) -> Known:
        known = self.known.get(task_id)
        if known is None:
            known = self.known[task_id] = Known(task_id)
        return known

    def observe(self, task: Json, asked_at: float | None = None) -> Known:
        """A whole task a client was given, in answer to a request made at ``asked_at``.

        Once a client was told a task is terminal, no answer to a request made after that may
        say otherwise; one made before may (the two overlapped: either order is right). A
        stream's snapshot has no such time (``None``): its events are checked against the
        task's log instead."""
        known = self.task(task["id"])
        state = state_of(task)
        final = known.states & TERMINAL
        later = asked_at is not None and known.final_at is not None and asked_at > known.final_at
        if final and state not in final and (state in TERMINAL or later):
            self.problems.add(f"task {known.task_id} was {final}, then {state}")
        self.saw(known, state)
        if state in TERMINAL:
            known.final = task
            if known.final_at is None:
                known.final_at = time.monotonic()
        return known

    @staticmethod
    def saw(known: Known, state: str) -> None:
        known.states.add(state)
        known.last = state

    def acknowledge(self, params: Json, task_id: str) -> None:
        """``params`` was answered with (or streamed) its task."""
        message_id = params["message"]["messageId"]
        self.pending.pop(message_id, None)
        self.task(task_id).messages[message_id] = params
        self.acked.append((message_id, task_id, params))
        config = push_config(params)
        if config is not None and task_id not in self.hooks:
            self.hooks[task_id] = Hook(task_id, config["token"], config.get("id"))

    def with_push(self, params: Json) -> Json:
        """``params`` of a new task, given a push config at random (half of them with an id
        of the campaign's choosing, the others with the server's)."""
        if self.rng.random() < self.webhooks.chance:
            config = {
                "url": self.receiver.url + PUSH_PATH,
                "token": f"{self.rng.getrandbits(64):x}",
            }
            if self.rng.random() < 0.5:
                config["id"] = f"hook-{self.rng.getrandbits(32):x}"
            params.setdefault("configuration", {})["taskPushNotificationConfig"] = config
        return params

    # --- the load -------------------------------------------------------------------------

    async def load(self, client: Client, server: processes.ServerProcess) -> None:
        """Run the workers until the kill, at a random moment."""
        self.killed_at = None
        self.acked, self.streams, self.pending = [], [], {}
        workers = [asyncio.create_task(self.worker(client)) for _ in range(WORKERS)]
        flaky = asyncio.create_task(self.flaky())
        await asyncio.sleep(self.rng.uniform(*KILL_AFTER))
        # Noted before the signal: a worker whose exchange fails sees that the kill caused it.
        self.killed_at = time.monotonic()
        server.kill()
        flaky.cancel()
        self.killed(self.killed_at)
        # The receiver is up again for the restart, or stays down into its checks.
        plan = self.webhooks
        if self.rng.random() < plan.long_outage_chance:
            self.outage_left = plan.long_outage
        elif self.rng.random() < plan.after_kill_chance:
            self.outage_left = self.rng.uniform(*plan.after_kill)
        else:
            self.outage_left = 0.0
        down = self.outage_left > 0
        self.receiver.always(PUSH_PATH, plan.refusal if down else crash_push.ACCEPTED)
        done, _ = await asyncio.wait(workers, timeout=HTTP_TIMEOUT)
        for worker in workers:
            if worker not in done:
                worker.cancel()
                self.problems.add("a client was still waiting long after the kill")
            elif (error := worker.exception()) is not None:
                self.problems.add(f"a client failed: {error!r}")
        self.counts.sends_cut += len(self.pending)

    async def flaky(self) -> None:
        """The receiver's outages during the load: down, up, down..., from a random start."""
        plan, down = self.webhooks, self.rng.random() < 0.5
        while True:
            self.receiver.always(PUSH_PATH, plan.refusal if down else crash_push.ACCEPTED)
            await asyncio.sleep(self.rng.uniform(*(plan.down if down else plan.up)))
            down = not down

    async def worker(self, client: Client) -> None:
        names, weights = list(OPERATIONS), list(OPERATIONS.values())
        while self.killed_at is None:
            name = self.rng.choices(names, weights)[0]
            try:
                await getattr(self, name)(client)
            except (httpx.TransportError, json.JSONDecodeError) as error:
                if self.killed_at is None:
                    self.problems.add(f"{name} failed while the server was up: {error!r}")
                return

    async def send(self, client: Client, params: Json, what: str) -> Json | None:
        """A send; its task once acknowledged (``None``: refused, which is a problem unless
        ``what`` is a follow-up to a task a cancel reached first)."""
        message_id = params["message"]["messageId"]
        self.pending[message_id] = params  # until answered: a kill may cut it
        asked_at = time.monotonic()
        document = await client.call("SendMessage", params)
        if "error" in document:
            del self.pending[message_id]
            target = params["message"].get("taskId")
            if target is None or not self.canceled_meanwhile(target, document):
                self.problems.add(f"{what} was refused: {document['error']}")
            return None
        task: Json = document["result"]["task"]
        self.observe(task, asked_at)
        self.acknowledge(params, task["id"])
        self.counts.sends_acknowledged += 1
        return task

    def steps(self, low: int, high: int, pause: tuple[int, int]) -> str:
        return f"{self.rng.randint(low, high)} {self.rng.randint(*pause)}"

    async def blocking(self, client: Client) -> None:
        params = self.with_push(send_params(f"work {self.steps(1, 4, (1, 8))}"))
        await self.send(client, params, "a blocking send")

    async def non_blocking(self, client: Client) -> None:
        params = send_params(f"work {self.steps(5, 40, (5, 20))}", return_immediately=True)
        params = self.with_push(params)
        task = await self.send(client, params, "a non-blocking send")
        if task is not None:
            self.live.append(task["id"])

    async def ask(self, client: Client) -> None:
        params = self.with_push(send_params(f"ask {self.steps(1, 3, (1, 5))}"))
        task = await self.send(client, params, "a question")
        if task is not None and state_of(task) == INPUT_REQUIRED:
            self.waiting.append(task["id"])

    async def follow_up(self, client: Client) -> None:
        if not self.waiting:
            return await self.ask(client)
        task_id = self.waiting.pop(self.rng.randrange(len(self.waiting)))
        immediately = self.rng.random() < 0.3
        params = send_params("answer", task_id=task_id, return_immediately=immediately)
        await self.send(client, params, f"a follow-up to {task_id}")

    def canceled_meanwhile(self, task_id: str, error: Json) -> bool:
        """A refusal as terminal (-32004) of a task a cancel reached first."""
        return error["error"]["code"] == -32004 and CANCELED in self.known[task_id].states

    async def cancel(self, client: Client) -> None:
        pool = self.live if self.live and self.rng.random() < 0.7 else self.waiting
        if not pool:
            return
        task_id = pool.pop(self.rng.randrange(len(pool)))
        asked_at = time.monotonic()
        document = await client.call("CancelTask", {"id": task_id})
        if "error" in document:
            if document["error"]["code"] != -32002:  # not cancelable: it finished first
                self.problems.add(f"a cancel of {task_id} was refused: {document['error']}")
            return
        self.observe(document["result"], asked_at)
        self.counts.cancels_acknowledged += 1
        if state_of(document["result"]) != CANCELED:
            self.problems.add(f"a cancel answered {state_of(document['result'])}")

    async def stream(self, client: Client) -> None:
        params = self.with_push(send_params(f"stream {self.steps(5, 30, (3, 12))}"))
        message_id = params["message"]["messageId"]
        self.pending[message_id] = params
        stream = Stream("send")
        self.streams.append(stream)
        try:
            error = await client.stream("SendStreamingMessage", params, stream)
        finally:
            self.stream_seen(stream, params)
        if error is not None:
            del self.pending[message_id]
            self.problems.add(f"a streamed send was refused: {error}")

    def stream_seen(self, stream: Stream, params: Json | None) -> None:
        """Learn the task and states a stream's events told, however far it got."""
        if not stream.events:
            return
        first = stream.events[0][1]
        if "task" not in first:
            self.problems.add(f"a stream began with {list(first)}, not its task")
            return
        stream.task_id = first["task"]["id"]
        known = self.observe(first["task"])
        if params is not None:
            self.acknowledge(params, known.task_id)
            self.counts.sends_acknowledged += 1
        for _, payload in stream.events[1:]:
            state = stream_state(payload)
            if state is not None:
                self.saw(known, state)

    async def subscribe(self, client: Client) -> None:
        if not self.live:
            return await self.non_blocking(client)
        task_id = self.rng.choice(self.live)
        stream = Stream("subscribe")
        self.streams.append(stream)
        try:
            error = await client.stream("SubscribeToTask", {"id": task_id}, stream)
        finally:
            self.stream_seen(stream, None)
        if error is not None:
            self.streams.remove(stream)
            if error["error"]["code"] != -32004:  # it finished before the subscription
                self.problems.add(f"a subscription to {task_id} was refused: {error}")

    async def get(self, client: Client) -> None:
        if not self.known:
            return
        task_id = self.rng.choice(list(self.known))
        asked_at = time.monotonic()
        self.observe(await client.result("GetTask", {"id": task_id}), asked_at)

    # --- the checks after a restart --------------------------------------------------------

    async def check(self, client: Client) -> None:
        outage = asyncio.create_task(self.end_outage())
        try:
            await self.check_all(client)
            await outage
            await self.check_push(client)
        finally:
            outage.cancel()

    async def end_outage(self) -> None:
        await asyncio.sleep(self.outage_left)
        self.receiver.always(PUSH_PATH, crash_push.ACCEPTED)

    async def check_all(self, client: Client) -> None:
        await self.recovery(client)
        stored = await self.all_tasks(client)
        unexplained = set(stored) - set(self.known)
        for known in list(self.known.values()):
            await self.check_task(client, known, stored)
        stored_messages = {m: task["id"] for task in stored.values() for m in history_ids(task)}
        for stream in self.streams:
            await self.check_stream(client, stream)
        await self.resend_acknowledged(client)
        self.check_runs(stored_messages)
        await self.resend_cut(client, stored_messages, unexplained)
        self.earlier.extend(self.acked)
        self.acked, self.streams = [], []
        self.live = []
        self.waiting = [k.task_id for k in self.known.values() if k.last == INPUT_REQUIRED]

    async def recovery(self, client: Client) -> None:
        deadline = time.monotonic() + RECOVERY_TIMEOUT
        while True:
            live = []
            for state in (SUBMITTED, WORKING):
                page = await client.result("ListTasks", {"status": state, "pageSize": 100})
                live += [task["id"] for task in page["tasks"]]
            if not live:
                return
            if time.monotonic() > deadline:
                self.problems.add(f"tasks still live {RECOVERY_TIMEOUT} s after a restart: {live}")
                return
            await asyncio.sleep(0.05)

    async def all_tasks(self, client: Client) -> dict[str, Json]:
        stored: dict[str, Json] = {}
        token = ""
        self.listed_at = time.monotonic()
        for _ in range(len(self.known) // 100 + len(self.pending) + 10):
            params = {"pageSize": 100, "includeArtifacts": True, "pageToken": token}
            page = await client.result("ListTasks", params)
            stored.update((task["id"], task) for task in page["tasks"])
            token = page["nextPageToken"]
            if not token:
                return stored
        self.problems.add("the listing of every task did not end")
        return stored

    async def check_task(self, client: Client, known: Known, stored: dict[str, Json]) -> None:
        self.counts.tasks_checked += 1
        task, asked_at = stored.get(known.task_id), self.listed_at
        if task is None:  # the listing may have moved under its cursor: ask for it by id
            asked_at = time.monotonic()
            document = await client.call("GetTask", {"id": known.task_id})
            if "error" in document:
                self.problems.add(f"task {known.task_id} was lost: {document['error']}")
                return
            task = stored[known.task_id] = document["result"]
        state = state_of(task)
        if state not in allowed_after_restart(known.states):
            self.problems.add(f"task {known.task_id} was {sorted(known.states)}, now {state}")
        if known.final is not None and task != known.final:
            self.problems.add(f"terminal task {known.task_id} changed: {known.final} -> {task}")
        missing = set(known.messages) - history_ids(task)
        if missing:
            self.problems.add(f"task {known.task_id} lost acknowledged messages {missing}")
        if known.last == INPUT_REQUIRED and state == INPUT_REQUIRED:
            self.counts.still_waiting += 1
        if state == FAILED and RESTARTED in status_text(task) and not known.recovered:
            known.recovered = True
            self.counts.recovered += 1
        self.observe(task, asked_at)

    async def check_stream(self, client: Client, stream: Stream) -> None:
        if stream.task_id is None:
            return  # cut before its first event: the send was not acknowledged
        self.counts.streams_checked += 1
        where = f"the {stream.kind} stream of {stream.task_id}"
        log, error = await self.read_after(client, stream.task_id, 0)
        if error is not None or not log.ended:
            self.problems.add(f"{where}: its whole log could not be read ({error})")
            return
        kept = dict(log.events)
        if not kept or [n for n, _ in log.events] != list(range(1, len(log.events) + 1)):
            self.problems.add(f"{where}: the log is not numbered 1..n: {list(kept)}")
            return
        if stream_state(log.events[-1][1]) not in TERMINAL:
            self.problems.add(f"{where}: the log does not end terminal")
        ids = [n for n, _ in stream.events]
        if ids != list(range(ids[0], ids[0] + len(ids))):
            self.problems.add(f"{where}: its client got events {ids}, with gaps or repeats")
        for number, payload in stream.events[1:]:
            if kept.get(number) != payload:
                self.problems.add(f"{where}: event {number} was {payload}, is {kept.get(number)}")
        # The snapshot stands for the events up to its number: it has the state they left.
        states = [stream_state(kept[n]) for n in range(1, ids[0] + 1) if n in kept]
        snapshot_state = stream_state(stream.events[0][1])
        if snapshot_state != next((s for s in reversed(states) if s is not None), None):
            self.problems.add(f"{where}: its snapshot's state is not its log's at {ids[0]}")
        if not stream.ended:
            await self.resume(client, stream, kept, where)

    async def resume(
        self, client: Client, stream: Stream, kept: dict[int, Json], where: str
    ) -> None:
        assert stream.task_id is not None
        last, end = stream.events[-1][0], len(kept)
        rest = self.rng.random() < 0.5
        resumed, error = await self.read_after(client, stream.task_id, last, rest=rest)
        self.counts.streams_resumed += 1
        if last == end:  # it had every event: a terminal task has nothing more to give
            if error is None or not refused_as_terminal(error):
                self.problems.add(f"{where}: resumed after its last event: {error}")
            return
        if error is not None or not resumed.ended:
            self.problems.add(f"{where}: resuming after {last} failed: {error}")
            return
        expected = [(n, kept[n]) for n in range(last + 1, end + 1)]
        if resumed.events != expected:
            got = [n for n, _ in resumed.events]
            self.problems.add(f"{where}: resumed after {last}, got {got}, not {last + 1}..{end}")

    @staticmethod
    async def read_after(
        client: Client, task_id: str, last_event_id: int, *, rest: bool = False
    ) -> tuple[Stream, Json | None]:
        """A subscription resumed after ``last_event_id``, read to its end (bounded): what
        it got, and the error it was answered with, if any."""
        into = Stream("subscribe")
        try:
            async with asyncio.timeout(STREAM_CHECK_TIMEOUT):
                params = {"id": task_id}
                error = await client.stream(
                    "SubscribeToTask", params, into, last_event_id=last_event_id, rest=rest
                )
        except (TimeoutError, httpx.HTTPError) as failure:
            return into, {"error": {"code": 0, "message": f"did not end: {failure!r}"}}
        return into, error

    async def resend_acknowledged(self, client: Client) -> None:
        runs_before = len(read_runs(self.agent_log))
        sample = self.rng.sample(self.earlier, min(RESEND_SAMPLE, len(self.earlier)))
        for message_id, task_id, params in [*self.acked, *sample]:
            asked_at = time.monotonic()
            document = await client.call("SendMessage", resend_params(params))
            self.counts.resends += 1
            if "error" in document:
                self.problems.add(f"a re-send of {message_id} was refused: {document['error']}")
                continue
            task = document["result"]["task"]
            if task["id"] != task_id:
                self.problems.add(f"a re-send of {message_id} went to {task['id']}, not {task_id}")
            self.observe(task, asked_at)
        ran_again = read_runs(self.agent_log)[runs_before:]
        if ran_again:
            self.problems.add(f"re-sends of acknowledged messages ran the agent: {ran_again}")

    def check_runs(self, stored_messages: dict[str, str]) -> None:
        runs = read_runs(self.agent_log)
        self.counts.runs = len(runs)
        twice = [m for m, n in Counter(m for _, m in runs).items() if n > 1]
        if twice:
            self.problems.add(f"messages that started a run twice: {twice}")
        for task_id, message_id in runs:
            if stored_messages.get(message_id) != task_id:
                self.problems.add(f"{message_id} ran on {task_id}, which the store does not hold")

    async def resend_cut(
        self, client: Client, stored_messages: dict[str, str], unexplained: set[str]
    ) -> None:
        """Send again what the kill left unanswered: the task the store has for it, or a new
        one whose run then starts exactly once."""
        fresh: list[str] = []
        for message_id, params in list(self.pending.items()):
            asked_at = time.monotonic()
            document = await client.call("SendMessage", resend_params(params))
            target = params["message"].get("taskId")
            if "error" in document:
                if target is None or document["error"]["code"] != -32004:
                    self.problems.add(f"a re-send of the cut {message_id}: {document['error']}")
                continue  # a follow-up to a task that ended meanwhile
            task = document["result"]["task"]
            self.observe(task, asked_at)
            self.acknowledge(params, task["id"])
            held = stored_messages.get(message_id)
            if held is not None and held != task["id"]:
                self.problems.add(
                    f"the cut {message_id} is in {held}, re-sent went to {task['id']}"
                )
            if held is None:
                fresh.append(message_id)
            unexplained.discard(task["id"])
        self.pending = {}
        if unexplained:
            self.problems.add(f"tasks in the store that no send explains: {sorted(unexplained)}")
        deadline = time.monotonic() + RECOVERY_TIMEOUT
        while time.monotonic() < deadline:
            if not set(fresh) - {m for _, m in read_runs(self.agent_log)}:
                return
            await asyncio.sleep(0.02)
        self.problems.add("sends never stored before the kill did not run when sent again")

    # --- the push checks --------------------------------------------------------------------

    async def check_push(self, client: Client) -> None:
        """Every notification owed reached the receiver (which is up by now), or was given up
        on after its attempts: for each task with a config not yet done with, its config and
        its whole log are read, then the ledger is awaited (bounded) and checked."""
        await self.recovery(client)  # what the re-sends of cut sends started has settled
        hooks = [hook for hook in self.hooks.values() if not hook.done]
        readers = asyncio.Semaphore(LOG_READERS)

        async def learn(hook: Hook) -> Hook | None:
            async with readers:
                return hook if await self.learn_hook(client, hook) else None

        learnt = [h for h in await asyncio.gather(*map(learn, hooks)) if h is not None]
        running = self.server.log if self.server is not None else []
        deadline = time.monotonic() + self.webhooks.timeout
        while True:
            self.ledger.update()
            drops = self.drops.now(running)
            if not any(crash_push.unaccounted(h, self.ledger, drops) for h in learnt):
                break
            if time.monotonic() > deadline:
                break  # what is still missing is a problem, said by check_hook
            await asyncio.sleep(0.05)
        for hook in learnt:
            crash_push.check_hook(hook, self.ledger, drops, self.problems.add)
        crash_push.check_posts(self.hooks, self.ledger, self.problems.add)

    async def learn_hook(self, client: Client, hook: Hook) -> bool:
        """Read ``hook``'s config (it must be the one it was sent with) and whole log."""
        where = f"the webhook of {hook.task_id}"
        document = await client.call("ListTaskPushNotificationConfigs", {"taskId": hook.task_id})
        if "error" in document:
            self.problems.add(f"{where}: its config could not be listed: {document['error']}")
            return False
        configs = document["result"]["configs"]
        expected_url = self.receiver.url + PUSH_PATH
        if len(configs) != 1 or configs[0]["url"] != expected_url:
            self.problems.add(f"{where}: its configs are {configs}")
            return False
        config = configs[0]
        if config.get("token") != hook.token or hook.config_id not in (None, config["id"]):
            self.problems.add(f"{where}: its config is {config}, not the one sent")
            return False
        hook.config_id = config["id"]
        log, error = await self.read_log(client, hook.task_id)
        if error is not None:
            self.problems.add(f"{where}: its log could not be read: {error}")
            return False
        numbers = [n for n, _ in log.events]
        if numbers != list(range(1, len(numbers) + 1)):
            self.problems.add(f"{where}: its log is not numbered 1..n: {numbers}")
            return False
        hook.log = [payload for _, payload in log.events]
        hook.terminal = log.ended
        return True

    async def read_log(self, client: Client, task_id: str) -> tuple[Stream, str | None]:
        """A task's whole log, resumed after event 0: read to its end if it is terminal; if it
        waits for input (its subscription stays open), until nothing came for ``LOG_QUIET``
        after an input-required event."""
        into = Stream("subscribe")
        reading = asyncio.create_task(
            client.stream("SubscribeToTask", {"id": task_id}, into, last_event_id=0)
        )
        deadline = time.monotonic() + STREAM_CHECK_TIMEOUT
        seen, quiet_since = 0, time.monotonic()
        try:
            while not reading.done():
                await asyncio.wait({reading}, timeout=0.05)
                now = time.monotonic()
                if len(into.events) != seen:
                    seen, quiet_since = len(into.events), now
                    continue
                states = [stream_state(payload) for _, payload in into.events]
                last = next((state for state in reversed(states) if state is not None), None)
                if last == INPUT_REQUIRED and now - quiet_since > LOG_QUIET:
                    return into, None
                if now > deadline:
                    return into, f"it did not end, last state {last}"
            try:
                error = reading.result()
            except httpx.HTTPError as failure:
                return into, repr(failure)
            return into, None if error is None else str(error)
        finally:
            reading.cancel()


def read_runs(agent_log: Path) -> list[tuple[str, str]]:
    """The agent's log of runs: (task id, message id), in the order they started."""
    if not agent_log.exists():
        return []
    runs = []
    for line in agent_log.read_text().splitlines():
        task_id, message_id = line.split()
        runs.append((task_id, message_id))
    return runs


@dataclass
class Report:
    counts: Counts
    problems: list[str]
    problem_count: int
    seed: int

    def lines(self) -> list[str]:
        found = [f"problems: {self.problem_count}", *self.problems[:MAX_PROBLEMS]]
        return [f"seed: {self.seed}", *self.counts.lines(), *found]


LOOPS = ("asyncio", "trio")
#: The SQLite store's durability settings, as ``--store`` URL suffixes.
DURABILITY = ("", "?synchronous=normal")


def run(
    rounds: int,
    workdir: Path,
    *,
    seed: int,
    store: str | None = None,
    args: Sequence[str] = (),
    webhooks: Webhooks = WEBHOOKS,
    say: Callable[[str], None] = lambda _: None,
) -> Report:
    """``rounds`` kills, each checked after the restart that follows it; the servers keep
    their tasks in ``store`` (default: a SQLite file in ``workdir``), with ``args`` besides,
    and deliver push notifications to a receiver on 127.0.0.1 that fails as ``webhooks`` says.

    The loop alternates every round and, on the default store, SQLite's durability setting
    every two (``FULL``, then ``NORMAL``, which is to survive a killed process as well), so
    that each pair of them writes a file that another reads. Before some restarts, a server is
    killed while it starts (opening the file, settling what the last one left), so that the
    restart after it checks what a kill during recovery leaves."""
    with receiving() as receiver:
        return _run(rounds, workdir, receiver, seed, store, args, webhooks, say)


def _run(
    rounds: int,
    workdir: Path,
    receiver: Receiver,
    seed: int,
    store: str | None,
    args: Sequence[str],
    webhooks: Webhooks,
    say: Callable[[str], None],
) -> Report:
    started = time.monotonic()
    campaign = Campaign(workdir, receiver, seed=seed, webhooks=webhooks)
    if store is not None:
        campaign.file = None  # not the campaign's file: no outbox to look at
    args = ["--push-allow-host", "127.0.0.1", *args]
    for number in range(rounds + 1):
        loop = LOOPS[number % len(LOOPS)]
        durability = DURABILITY[number // 2 % len(DURABILITY)]
        where = store or campaign.store + durability
        if number > 0 and campaign.rng.random() < START_KILL_CHANCE:
            starting = processes.start(where, loop=loop, agent_log=campaign.agent_log, args=args)
            try:
                time.sleep(campaign.rng.uniform(*START_KILL_AFTER))
            finally:
                killed_at = time.monotonic()
                starting.kill()
            campaign.counts.kills_while_starting += 1
            campaign.server_ended(starting, loop)
            campaign.killed(killed_at)
        server = campaign.server = processes.start(
            where, loop=loop, agent_log=campaign.agent_log, args=args
        )
        try:
            url = server.wait_for_url()
            asyncio.run(_round(campaign, server, url, check=number > 0, kill=number < rounds))
        finally:
            server.kill()
        if number < rounds:
            campaign.counts.rounds += 1
        campaign.server_ended(server, loop)
        acknowledged = campaign.counts.sends_acknowledged
        say(f"round {number} on {loop}, {where}: {acknowledged} sends acknowledged so far")
    campaign.counts.tasks = len(campaign.known)
    campaign.ledger.update()
    drops = campaign.drops.finished
    unread = campaign.counts.push.outboxes_unread
    campaign.counts.push = crash_push.tally(
        campaign.hooks.values(), campaign.ledger, campaign.owed, drops
    )
    campaign.counts.push.outboxes_unread = unread
    campaign.counts.seconds = round(time.monotonic() - started, 1)
    problems = campaign.problems
    return Report(campaign.counts, problems.found, problems.count, seed)


async def _round(
    campaign: Campaign, server: processes.ServerProcess, url: str, *, check: bool, kill: bool
) -> None:
    timeout = httpx.Timeout(HTTP_TIMEOUT)
    async with asyncio.timeout(ROUND_TIMEOUT):
        if check:
            try:
                async with httpx.AsyncClient(timeout=timeout) as http:
                    await campaign.check(Client(url, http))
            except Exception as error:  # a problem to report, like the others: the rounds go on
                campaign.problems.add(f"the checks after a restart failed: {error!r}")
        if kill:
            limits = httpx.Limits(max_connections=WORKERS * 2)
            async with httpx.AsyncClient(timeout=timeout, limits=limits) as http:
                await campaign.load(Client(url, http), server)


def summary(report: Report) -> str:
    return "\n".join(report.lines())


__all__: Sequence[str] = ["Counts", "Report", "Webhooks", "run", "summary"]
