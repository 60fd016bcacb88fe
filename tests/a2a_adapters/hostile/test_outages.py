"""Store outages in every phase of a run, on SQLite and on Redis, on both loops.

A store that is away for a moment (shorter than a replica's lease) must change no task's
outcome: a send that arrives meanwhile is told to retry (and its retry is served once), an
agent's outputs and the end of its run are held and written, in order, once the store is back,
and the fate of a push notification delivered meanwhile is recorded then, so that a restart
does not deliver it again.

The outages are real: a ``redis-server`` of the test's own killed with SIGKILL and started again
on its append-only file, and a SQLite file whose write lock another connection holds past the
store's busy timeout (SQLite's own "database is locked"; a full disk takes the same path, see
``stores/test_sqlite.py``). The agent is held at gates the test opens, so that each outage
falls in the phase it is named after. ``A2A_OUTAGE_ROUNDS`` repeats each case (1 in ``make test``)
and ``A2A_OUTAGE_SECONDS`` sets how long the store is away (1.2 s).
"""

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from a2a_adapters import build_engine
from a2a_adapters.stores import RedisStore, SqliteStore
from a2a_core import AgentContext, ArtifactChunk, Update, completed, text_artifact
from a2a_core.store import AsyncStore
from tests import servers
from tests.a2a_adapters.redis_server import RedisServer
from tests.a2a_adapters.support import (
    get_task,
    result_of,
    rpc,
    send_params,
    state_of,
    status_text,
    wait_until,
)
from tests.a2a_adapters.webhooks import Answer, Receiver, receiving

pytestmark = pytest.mark.usefixtures("adapter")

#: How long each outage lasts (``A2A_OUTAGE_SECONDS``): by default one shorter than a lease
#: (5 s), which must change no task's outcome; a longer one must not either, with one replica.
OUTAGE = float(os.environ.get("A2A_OUTAGE_SECONDS", "1.2"))
#: The longest a test waits for a task to settle once its store is back.
SETTLE_TIMEOUT = 10.0
#: What a client is told while the store is away.
AWAY = "The task store is unavailable"
ROUNDS = int(os.environ.get("A2A_OUTAGE_ROUNDS", "1"))
HOOK = "/hook"


# --- the agent, held at gates -------------------------------------------------------------------


@dataclass
class Gates:
    """Where a run is, and where it may go: each run waits at ``output`` before it yields its
    artifact, and at ``end`` before it completes."""

    started: int = 0
    output: threading.Event = field(default_factory=threading.Event)
    yielded: threading.Event = field(default_factory=threading.Event)
    end: threading.Event = field(default_factory=threading.Event)

    def open(self) -> None:
        self.output.set()
        self.end.set()


GATES: dict[str, Gates] = {}


async def _passed(gate: threading.Event) -> None:
    for _ in range(3000):  # 30 s at most: a test that forgot a gate fails, never hangs
        if gate.is_set():
            return
        await anyio.sleep(0.01)
    raise TimeoutError("a gate was never opened")


async def gated(ctx: AgentContext) -> AsyncIterator[Update]:
    gates = GATES[ctx.text]
    gates.started += 1
    await _passed(gates.output)
    yield ArtifactChunk(text_artifact("the result", artifact_id="result"))
    gates.yielded.set()
    await _passed(gates.end)
    yield completed("done")


# --- the outages --------------------------------------------------------------------------------


class Outage:
    """A store, and a way to take it away and bring it back."""

    reads_while_down = False

    def store(self) -> AsyncStore:
        raise NotImplementedError

    def down(self) -> None:
        raise NotImplementedError

    def up(self) -> None:
        raise NotImplementedError


class RedisKilled(Outage):
    """Redis is killed (SIGKILL) and started again on its append-only file."""

    def __init__(self, redis: RedisServer) -> None:
        self.redis = redis
        self.prefix = f"t-{uuid.uuid4().hex[:12]}"

    def store(self) -> AsyncStore:
        return RedisStore(self.redis.url, prefix=self.prefix, connect_timeout=0.2, timeout=2.0)

    def down(self) -> None:
        self.redis.kill()

    def up(self) -> None:
        self.redis.start()


class SqliteLocked(Outage):
    """Another process's connection holds the file's write lock past the busy timeout."""

    reads_while_down = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self._holder: sqlite3.Connection | None = None

    def store(self) -> AsyncStore:
        return SqliteStore(self.path, synchronous="NORMAL", busy_timeout=0.05)

    def down(self) -> None:
        self._holder = sqlite3.connect(self.path, isolation_level=None)
        self._holder.execute("BEGIN IMMEDIATE")

    def up(self) -> None:
        assert self._holder is not None
        self._holder.execute("ROLLBACK")
        self._holder.close()
        self._holder = None


@pytest.fixture(params=["sqlite", "redis"])
def outage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Outage]:
    if request.param == "sqlite":
        locked = SqliteLocked(tmp_path / "tasks.db")
        try:
            yield locked
        finally:
            if locked._holder is not None:
                locked.up()
        return
    with RedisServer(durable=True) as redis:
        yield RedisKilled(redis)


@contextmanager
def serving(store: AsyncStore, **options: Any) -> Iterator[str]:
    try:
        with servers.serving(build_engine(gated, store=store, streaming=True, **options)) as url:
            yield url
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


@contextmanager
def away(outage: Outage) -> Iterator[None]:
    outage.down()
    try:
        yield
    finally:
        outage.up()


def new_gates() -> tuple[str, Gates]:
    name = f"run-{uuid.uuid4().hex[:8]}"
    gates = GATES[name] = Gates()
    return name, gates


def settled(url: str, task_id: str) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def done() -> bool:
        answer = rpc(url, "GetTask", {"id": task_id}).json()
        if "error" in answer:
            # A store that has just come back may not be reached yet: retry, as a client would.
            assert answer["error"]["message"].startswith("The task store is unavailable"), answer
            return False
        found.update(answer["result"])
        return state_of(found) in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED")

    assert wait_until(done, timeout=SETTLE_TIMEOUT), f"the task never settled: {found}"
    return found


def assert_completed_once(task: dict[str, Any], gates: Gates) -> None:
    """The outcome an outage must not change: completed, with its artifact once, by one run."""
    assert state_of(task) == "TASK_STATE_COMPLETED", status_text(task)
    assert status_text(task) == "done"
    assert [a["artifactId"] for a in task.get("artifacts", ())] == ["result"]
    assert [p["text"] for p in task["artifacts"][0]["parts"]] == ["the result"]
    assert gates.started == 1


def start_task(url: str, name: str) -> str:
    task_id: str = result_of(rpc(url, "SendMessage", send_params(name, return_immediately=True)))[
        "task"
    ]["id"]
    return task_id


def wait(gate: Callable[[], bool], what: str) -> None:
    assert wait_until(gate, timeout=SETTLE_TIMEOUT), what


# --- the phases ---------------------------------------------------------------------------------


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_send_while_the_store_is_away_is_told_to_retry_and_its_retry_runs_once(
    outage: Outage, round_: int
) -> None:
    with serving(outage.store()) as url:
        name, gates = new_gates()
        params = send_params(name, message_id=f"m-{name}")
        gates.open()
        with away(outage):
            response = rpc(url, "SendMessage", params)
            error = response.json()["error"]
            assert error["code"] == -32603
            assert error["message"].startswith("The task store is unavailable")
        task = result_of(rpc(url, "SendMessage", params))["task"]
        assert_completed_once(settled(url, task["id"]), gates)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_an_output_made_while_the_store_is_away_is_kept_and_the_task_completes(
    outage: Outage, round_: int
) -> None:
    with serving(outage.store()) as url:
        name, gates = new_gates()
        task_id = start_task(url, name)
        wait(lambda: gates.started == 1, "the run never started")
        with away(outage):
            gates.open()  # the artifact, then the completion, while the store is away
            time.sleep(OUTAGE)
            if outage.reads_while_down:
                held = get_task(url, task_id)
                assert state_of(held) == "TASK_STATE_SUBMITTED"
                assert not held.get("artifacts")  # held, not lost and not yet written
        assert_completed_once(settled(url, task_id), gates)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_the_end_of_a_run_while_the_store_is_away_is_recorded_once_it_is_back(
    outage: Outage, round_: int
) -> None:
    with serving(outage.store()) as url:
        name, gates = new_gates()
        task_id = start_task(url, name)
        gates.output.set()
        wait(lambda: bool(get_task(url, task_id).get("artifacts")), "no artifact was written")
        with away(outage):
            gates.end.set()
            time.sleep(OUTAGE)
        assert_completed_once(settled(url, task_id), gates)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_notification_delivered_while_the_store_is_away_is_not_delivered_again(
    outage: Outage, round_: int
) -> None:
    with receiving() as receiver:
        name, gates = new_gates()
        options = {"push": True, "push_allow_hosts": ["127.0.0.1"]}
        with serving(outage.store(), **options) as url:
            task_id = start_task(url, name)
            config = {"taskId": task_id, "url": receiver.url + HOOK}
            result_of(rpc(url, "CreateTaskPushNotificationConfig", config))
            # The artifact's notification reaches the webhook, which answers once the store
            # is away: the sender hears 200 then, and the outbox is told while it is away.
            receiver.script(HOOK, Answer(200, delay=0.5))
            receiver.always(HOOK, 200)
            gates.output.set()
            receiver.wait_for(1, HOOK)
            with away(outage):
                time.sleep(OUTAGE)
            gates.end.set()
            assert_completed_once(settled(url, task_id), gates)
            heard = wait_for_completion(receiver, task_id)
        # Every fate was recorded: a server on the same store afterwards owes nothing.
        with serving(outage.store(), **options) as url:
            get_task(url, task_id)  # started, and its first tick read the outbox
            time.sleep(0.5)
        assert len(receiver.deliveries(HOOK)) == heard


def wait_for_completion(receiver: Receiver, task_id: str) -> int:
    """How many notifications the webhook got, once it heard of the completion (last, and
    each once)."""

    def kinds() -> list[str]:
        found = []
        for delivery in receiver.deliveries(HOOK):
            body = delivery.json()
            if "statusUpdate" in body:
                assert body["statusUpdate"]["taskId"] == task_id
                found.append(body["statusUpdate"]["status"]["state"])
            else:
                found.append(next(iter(body)))
        return found

    wait(lambda: "TASK_STATE_COMPLETED" in kinds(), f"the webhook heard {kinds()}")
    assert kinds() == ["artifactUpdate", "TASK_STATE_COMPLETED"]
    return len(kinds())


def test_redis_away_is_two_lines_in_the_log_503_to_clients_and_not_ready(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """However many requests, retries and reconnections an outage causes, the log says once
    that the store is away and once that it is back; clients and the readiness probe are told
    meanwhile, and the server recovers by itself."""
    with RedisServer(durable=True) as redis:
        outage = RedisKilled(redis)
        with serving(outage.store()) as url:
            name, gates = new_gates()
            gates.open()
            caplog.clear()
            with away(outage):
                for n in range(10):
                    answer = rpc(url, "SendMessage", send_params(name, message_id=f"m-{n}"))
                    assert answer.json()["error"]["message"].startswith(AWAY)
                    time.sleep(0.1)
                ready = httpx.get(url + "/readyz", timeout=10)
                assert ready.status_code == 503
                assert "redis://" in ready.json()["reason"]
                warnings = [r.getMessage() for r in caplog.records if r.levelno >= 30]
            assert wait_until(
                lambda: httpx.get(url + "/readyz", timeout=10).status_code == 200,
                timeout=SETTLE_TIMEOUT,
            )
            task = result_of(rpc(url, "SendMessage", send_params(name, message_id="m-after")))
            assert_completed_once(settled(url, task["task"]["id"]), gates)
            back = [r.getMessage() for r in caplog.records if "answers again" in r.getMessage()]
    store_lines = [w for w in warnings if w.startswith("the task store ")]
    assert len(store_lines) == 1, store_lines
    assert "requests that need it are answered 503" in store_lines[0]
    assert len(warnings) <= 3, warnings  # the store, the bus's subscription, the lease
    assert len(back) == 1, back
    assert not [r for r in caplog.records if r.levelno >= 40], "an outage is not an error"
