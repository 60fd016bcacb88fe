"""Replicas sharing a Redis store, black-box: real ``serve`` processes, a real ``redis-server``.

Three replicas of the crash agent's server (``tests/a2a_adapters/crash_agent.py``), on asyncio and
trio, share a ``redis-server`` of the test's own (a free port of 127.0.0.1, never the machine's
Redis) under a key prefix of their own, with ``lease=1`` so that a takeover takes a second or
two; the tests spread requests over them as clients behind a load balancer would, over plain
HTTP (JSON-RPC and REST, ``A2A-Version: 1.0``) and through the official a2a-sdk client. The
agent's run log and trace (``replicas.trace_of``) say which process ran each message, when each
step was yielded and when a run was stopped, so a test can prove from the agent's side where a
run happened and that it stopped.

What is checked: a task made on one replica is read, listed, continued and canceled on the
others; one message sent to several replicas at once, or re-sent blocking to another while it
runs, runs once; a stream cut on one replica resumes on another with ``Last-Event-ID``, and a
subscription on another replica follows a run live; a cancel on one replica stops the run on
another at once (the agent says when it stopped); the runs of a replica killed with SIGKILL are
failed, or run again (``--on-restart rerun``), by the others within lease + reclaim + slack, and
its streams resume elsewhere; Redis killed and restarted under load (append-only file) loses
nothing acknowledged and answers nothing but results and "the task store is unavailable"
errors meanwhile; ``serve --workers`` replaces a dead worker and stops them all; the push
notifications a dead replica owed are delivered by the others, and one webhook's notifications
keep their order whichever replica committed each event.

The replicas that nothing kills are shared by the module; a test that kills a replica, Redis or a
worker starts its own. Every wait is a bounded poll; every process is killed on the way out.
The delays measured on the way (from the agent's step on one replica to its event reaching a
client of another) are printed, for the record (``pytest -s``), and only bounded generously.
"""

import os
import signal
import statistics
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from a2a.utils.constants import TransportProtocol

from tests.a2a_adapters import replicas as rep
from tests.a2a_adapters.conftest import unique_prefix
from tests.a2a_adapters.processes import START_TIMEOUT, run_to_exit
from tests.a2a_adapters.redis_server import RedisServer, redis_available
from tests.a2a_adapters.sse import (
    Event,
    SseParser,
    consecutive,
    ids_of,
    open_stream,
    read_stream,
    results,
    states_of,
)
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    CANCELED,
    COMPLETED,
    FAILED,
    HTTP_TIMEOUT,
    INPUT_REQUIRED,
    TERMINAL,
    cancel_task,
    get_task,
    list_tasks,
    result_of,
    rpc,
    sdk_message,
    sdk_send,
    send_params,
    send_task,
    state_of,
    status_text,
    wait_for_state,
)
from tests.a2a_adapters.webhooks import Delivery, Receiver, receiving

pytestmark = pytest.mark.skipif(not redis_available(), reason="needs redis-server")

#: The replicas' lease (``?lease=``): a replica that stops renewing is taken for dead after it.
LEASE = 1.0
#: How often a replica looks for what dead ones left (the engine's ``max(lease, 1)``).
RECLAIM = max(LEASE, 1.0)
#: What a takeover may take beyond both: the claim's commits, a loaded two-core machine.
SLACK = 2.0
TAKEOVER = LEASE + RECLAIM + SLACK
#: What a task whose replica died says, once another replica settled it.
STOPPED = "The server stopped before the agent finished; send a new message to retry."
#: The generous bound on any one event's way from the agent on one replica to a client of another.
EVENT_DELAY = 1.0


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    """One ``redis-server`` for the module; each group of replicas has a key prefix of its own."""
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="module")
def shared(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[rep.Group]:
    """A (asyncio), B (trio) and C (asyncio), for the tests that kill nothing."""
    directory = tmp_path_factory.mktemp("replicas")
    with rep.group(redis.url, unique_prefix(), directory, ["asyncio", "trio", "asyncio"]) as found:
        yield found
        assert not found.tracebacks(), found.tracebacks()


@pytest.fixture
def prefix() -> str:
    return unique_prefix()


# --- helpers --------------------------------------------------------------------------------------


def whole_log(url: str, task_id: str) -> list[Event]:
    """Every event the task logged (a subscription resumed after event 0, read to its end)."""
    events, _ = read_stream(url, "SubscribeToTask", {"id": task_id}, last_event_id=0)
    return events


def resume(url: str, task_id: str, last_event_id: int) -> list[Event]:
    """The events after ``last_event_id``, read until the server ends the stream."""
    with open_stream(url, "SubscribeToTask", {"id": task_id}, last_event_id=last_event_id) as s:
        events = s.events()
        assert s.ended
        return events


def task_of_stream(events: list[Event]) -> dict[str, Any]:
    task: dict[str, Any] = results(events[:1])[0]["task"]
    return task


def started_on(group: rep.Group, task_id: str, index: int, *, steps: int = 1) -> None:
    """Wait until the task's run has started on replica ``index`` and done ``steps`` steps."""
    pid = group.pid(index)
    rep.wait_for(
        lambda: (
            any(p == pid for _, p in rep.starts(group.trace, task_id))
            and len(rep.steps(group.trace, task_id)) >= steps
        ),
        timeout=10.0,
        what=f"the run of {task_id} never got going on replica {index}",
    )


def chunk_number(result: Mapping[str, Any]) -> int | None:
    """The step of an artifact chunk the stream agent yielded (``chunk N;``)."""
    update = result.get("artifactUpdate")
    if update is None:
        return None
    text: str = update["artifact"]["parts"][0]["text"]
    return int(text.removeprefix("chunk ").removesuffix(";"))


def figures(delays: list[float]) -> str:
    ms = sorted(d * 1000 for d in delays)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    return (
        f"n={len(ms)} median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms, max {ms[-1]:.1f} ms"
    )


# --- 1. one task across the replicas --------------------------------------------------------------


def test_a_task_made_on_one_replica_is_read_listed_continued_and_canceled_on_the_others(
    shared: rep.Group,
) -> None:
    a, b, c = shared.urls
    asked = send_task(a, "ask 2 10")  # blocking: it waits at input-required
    assert state_of(asked) == INPUT_REQUIRED
    context = asked["contextId"]
    other = send_task(a, "ask", context_id=context)  # a second one, to cancel
    assert state_of(other) == INPUT_REQUIRED

    for url in (b, c):
        assert get_task(url, asked["id"]) == get_task(a, asked["id"]) == asked
        listed = list_tasks(url, contextId=context)
        assert listed["totalSize"] == 2
        assert {task["id"] for task in listed["tasks"]} == {asked["id"], other["id"]}

    # Continued on B: its follow-up runs there (the trace names B's process) and completes.
    answer = send_params("go on", task_id=asked["id"], context_id=context)
    done = result_of(rpc(b, "SendMessage", answer))["task"]
    assert state_of(done) == COMPLETED
    assert rep.starts(shared.trace, asked["id"]) == [
        (asked["history"][0]["messageId"], shared.pid(0)),
        (answer["message"]["messageId"], shared.pid(1)),
    ]
    assert get_task(a, asked["id"]) == get_task(c, asked["id"]) == done
    assert [m["role"] for m in done["history"]].count("ROLE_USER") == 2

    # Canceled on C, and canceled as A and B see it.
    canceled = cancel_task(c, other["id"])
    assert state_of(canceled) == CANCELED
    assert state_of(get_task(a, other["id"])) == state_of(get_task(b, other["id"])) == CANCELED
    assert list_tasks(b, contextId=context, status=CANCELED)["totalSize"] == 1


# --- 2. a re-sent message, blocking on another replica --------------------------------------------


def test_a_blocking_resend_on_another_replica_answers_when_the_run_settles(
    shared: rep.Group,
) -> None:
    a, b, _ = shared.urls
    params = send_params("work 10 100", return_immediately=True)  # about a second
    message_id = params["message"]["messageId"]
    started = result_of(rpc(a, "SendMessage", params))["task"]
    assert state_of(started) not in TERMINAL
    # The same message again, on B, blocking: it waits for the run on A to settle the task.
    answered = result_of(rpc(b, "SendMessage", {"message": params["message"]}))["task"]
    answered_at = time.monotonic_ns()
    assert answered["id"] == started["id"]
    assert state_of(answered) == COMPLETED
    assert status_text(answered) == f"done after 10 steps ({message_id})"
    assert answered == get_task(a, started["id"])
    # The agent ran once for the message, on A.
    assert rep.runs(shared.run_log, message_id) == 1
    assert rep.starts(shared.trace, started["id"]) == [(message_id, shared.pid(0))]
    last_step = rep.steps(shared.trace, started["id"])[-1].ns
    lag = (answered_at - last_step) / 1e9
    print(f"\nblocking re-send on B answered {lag * 1000:.1f} ms after the last step on A")
    assert lag < EVENT_DELAY


def test_one_message_sent_to_every_replica_at_once_makes_one_task_and_one_run(
    shared: rep.Group,
) -> None:
    params = send_params("work 3 20", return_immediately=True)
    message_id = params["message"]["messageId"]
    barrier = threading.Barrier(len(shared.urls) * 2)

    def send_to(url: str) -> dict[str, Any]:
        barrier.wait(timeout=5)
        task: dict[str, Any] = result_of(rpc(url, "SendMessage", params))["task"]
        return task

    with ThreadPoolExecutor(len(shared.urls) * 2) as pool:
        answers = [f.result(timeout=10) for f in [pool.submit(send_to, u) for u in shared.urls * 2]]
    assert len({task["id"] for task in answers}) == 1
    task_id = answers[0]["id"]
    done = wait_for_state(shared.urls[1], task_id, {COMPLETED})
    assert [m["messageId"] for m in done["history"] if m["role"] == "ROLE_USER"] == [message_id]
    assert rep.runs(shared.run_log, message_id) == 1
    assert len(rep.starts(shared.trace, task_id)) == 1


# --- 3. streams across replicas -------------------------------------------------------------------


def test_a_stream_cut_on_one_replica_resumes_on_another_with_every_later_event_once(
    shared: rep.Group,
) -> None:
    a, b, c = shared.urls
    with open_stream(a, "SendStreamingMessage", send_params("stream 40 20")) as stream:
        seen = stream.events(6)
    # The client cut it there; the run goes on, on A, and C resumes the stream after its last id.
    task_id = task_of_stream(seen)["id"]
    last = ids_of(seen[1:])[-1]
    tail = resume(c, task_id, last)
    log = whole_log(b, task_id)

    assert ids_of(log) == list(range(1, len(log) + 1))
    assert ids_of(tail) == list(range(last + 1, len(log) + 1))
    assert len(tail) >= 20  # it was cut mid-run
    assert results(tail) == results(log[last:])
    assert results(seen[1:]) == results(log[ids_of(seen[1:])[0] - 1 : last])
    assert states_of(tail)[-1] == COMPLETED
    assert [pid for _, pid in rep.starts(shared.trace, task_id)] == [shared.pid(0)]  # ran on A


def follow(url: str, task_id: str) -> list[tuple[Event, int]]:
    """A subscription read to its end: each event with ``time.monotonic_ns()`` when it came."""
    got: list[tuple[Event, int]] = []
    with open_stream(url, "SubscribeToTask", {"id": task_id}) as stream:
        while (event := stream.next_event()) is not None:
            got.append((event, time.monotonic_ns()))
    return got


def test_a_subscription_on_another_replica_gets_each_event_as_it_happens(
    shared: rep.Group,
) -> None:
    a, b, _ = shared.urls
    task = send_task(a, "stream 30 40", return_immediately=True)
    task_id = task["id"]
    # Followed on B, and on A itself (the same replica's delay, to compare with).
    with ThreadPoolExecutor(2) as pool:
        on_b, on_a = pool.submit(follow, b, task_id), pool.submit(follow, a, task_id)
        far, near = on_b.result(timeout=15), on_a.result(timeout=15)
    log = whole_log(b, task_id)
    stepped = {int(t.fields[0]): t.ns for t in rep.steps(shared.trace, task_id)}
    assert len(stepped) == 30

    delays: dict[str, list[float]] = {}
    for name, got in (("B (another replica)", far), ("A (the run's own)", near)):
        events = [event for event, _ in got]
        # After the snapshot it opens with: consecutive events, as logged, to the completion.
        after = events[1:]
        assert consecutive(ids_of(after)), ids_of(after)
        assert results(after) == results(log[ids_of(after)[0] - 1 :])
        assert states_of(after)[-1] == COMPLETED
        delays[name] = [
            (at - stepped[n]) / 1e9
            for event, at in got[1:]
            if (n := chunk_number(results([event])[0])) is not None
        ]
        assert len(delays[name]) >= 20, name  # most chunks came live, not in the snapshot
        assert max(delays[name]) < EVENT_DELAY, (name, delays[name])
    print()
    for name, found in delays.items():
        print(f"agent step on A -> event at a client of {name}: {figures(found)}")


# --- 4. a cancel on one replica stops the run on another ------------------------------------------


def test_a_cancel_on_another_replica_stops_the_run_at_once(shared: rep.Group) -> None:
    a, b, c = shared.urls
    task = send_task(a, "work 200 50", return_immediately=True)  # ten seconds, unless stopped
    task_id = task["id"]
    started_on(shared, task_id, 0, steps=2)
    canceled = cancel_task(b, task_id)
    answered_at = time.monotonic_ns()
    assert state_of(canceled) == CANCELED

    def stopped() -> list[rep.Traced]:
        return [t for t in rep.trace_of(shared.trace, task_id) if t.what == "stopped"]

    rep.wait_for(lambda: bool(stopped()), timeout=5.0, what="the run on A never stopped")
    [stop] = stopped()
    lag = (stop.ns - answered_at) / 1e9
    print(f"\nthe run on A stopped {lag * 1000:.1f} ms after B answered the cancel")
    assert lag < 1.0
    # Nothing after: the agent did no step past its stop, and the log ends with the cancel.
    assert all(t.ns < stop.ns for t in rep.steps(shared.trace, task_id))
    assert [p for _, p in rep.starts(shared.trace, task_id)] == [shared.pid(0)]
    log = whole_log(c, task_id)
    assert states_of(log)[-1] == CANCELED
    assert CANCELED not in states_of(log)[:-1]
    time.sleep(0.2)  # four steps' worth: a run that went on would have logged by now
    assert whole_log(a, task_id) == log
    assert get_task(a, task_id) == get_task(c, task_id)
    assert state_of(get_task(a, task_id)) == CANCELED


# --- the official client, across replicas ---------------------------------------------------------


#: The longest any one exchange of the official client below may take.
SDK_TIMEOUT = 10.0


@asynccontextmanager
async def sdk_at(
    url: str, *, streaming: bool = False, binding: str = TransportProtocol.JSONRPC
) -> AsyncIterator[Any]:
    """The a2a-sdk client resolved from ``url``'s card, speaking ``binding``."""
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        config = ClientConfig(
            httpx_client=http, streaming=streaming, supported_protocol_bindings=[binding]
        )
        client = await ClientFactory(config).create_from_url(url)
        try:
            yield client
        finally:
            await client.close()


def test_the_official_client_works_a_task_across_replicas(shared: rep.Group) -> None:
    a, b, c = shared.urls

    async def main() -> dict[str, Any]:
        with anyio.fail_after(SDK_TIMEOUT):
            async with (
                sdk_at(a) as on_a,
                sdk_at(b, streaming=True) as on_b,
                sdk_at(c, binding=TransportProtocol.HTTP_JSON) as on_c,
            ):
                sent = await sdk_send(on_a, sdk_message("work 20 50"), return_immediately=True)
                task_id = sent.task.id
                # Followed on B (JSON-RPC, SSE) to its end while it runs on A.
                followed = [e async for e in on_b.subscribe(pb.SubscribeToTaskRequest(id=task_id))]
                # Read on C over HTTP+JSON.
                read = await on_c.get_task(pb.GetTaskRequest(id=task_id))
                # Another, asked on C, canceled on B, read on A.
                asked = (await sdk_send(on_c, sdk_message("ask"))).task
                canceled = await on_b.cancel_task(pb.CancelTaskRequest(id=asked.id))
                after = await on_a.get_task(pb.GetTaskRequest(id=asked.id))
                return {
                    "sent": sent,
                    "followed": followed,
                    "read": read,
                    "asked": asked,
                    "canceled": canceled,
                    "after": after,
                }

    found = anyio.run(main)
    sent, followed, read = found["sent"], found["followed"], found["read"]
    assert sent.task.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    assert followed[0].HasField("task")
    assert followed[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert sum(e.HasField("status_update") for e in followed) >= 10  # it followed the run live
    assert read.id == sent.task.id
    assert read.status.state == pb.TASK_STATE_COMPLETED
    assert [p for _, p in rep.starts(shared.trace, read.id)] == [shared.pid(0)]
    assert found["asked"].status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert found["canceled"].status.state == pb.TASK_STATE_CANCELED
    assert found["after"].status.state == pb.TASK_STATE_CANCELED


# --- 5. a replica killed mid-run ------------------------------------------------------------------


def cut_stream(url: str, text: str, count: int, kill: Any) -> tuple[str, int]:
    """Open a streamed send of ``text`` on ``url``, read ``count`` events, then ``kill()``
    the replica under it; the task's id and the last event id the client got."""
    with open_stream(url, "SendStreamingMessage", send_params(text)) as stream:
        seen = stream.events(count)
        kill()
    return task_of_stream(seen)["id"], ids_of(seen[1:])[-1]


def test_the_runs_of_a_killed_replica_are_failed_by_another_and_its_stream_resumes(
    redis: RedisServer, prefix: str, tmp_path: Path
) -> None:
    with rep.group(redis.url, prefix, tmp_path, ["trio", "asyncio", "trio"]) as group:
        a, b, c = group.urls
        tasks = [send_task(a, "work 100 30", return_immediately=True)["id"] for _ in range(3)]
        blocking = send_params("work 100 30")  # a blocking send, waiting on A when it dies
        with ThreadPoolExecutor(3) as pool:
            cut_off = pool.submit(rpc, a, "SendMessage", blocking)
            waited = rep.wait_for_task(group.trace, blocking["message"]["messageId"])
            for task_id in [*tasks, waited]:
                started_on(group, task_id, 0)
            killed_at = 0.0

            def kill() -> None:
                nonlocal killed_at
                group.servers[0].kill()
                killed_at = time.monotonic()

            streamed, last = cut_stream(a, "stream 200 20", 4, kill)
            # Resumed on C at once, while nobody has taken the run over yet; the blocking send
            # re-sent on B, which answers once the task is settled.
            tail = pool.submit(resume, c, streamed, last)
            again = pool.submit(rpc, b, "SendMessage", blocking)
            with pytest.raises(httpx.TransportError):
                cut_off.result(timeout=HTTP_TIMEOUT)

            def settled() -> bool:
                return all(state_of(get_task(b, t)) == FAILED for t in [*tasks, waited, streamed])

            rep.wait_for(settled, timeout=TAKEOVER + 2, what="the killed replica's runs")
            took = time.monotonic() - killed_at
            rest = tail.result(timeout=10)
            answered = result_of(again.result(timeout=HTTP_TIMEOUT))["task"]
        print(f"\nthe runs of the killed replica were failed {took:.2f}s after the kill")
        assert took < TAKEOVER
        assert answered == get_task(c, waited)
        assert state_of(answered) == FAILED
        for task_id in [*tasks, waited, streamed]:
            failed = get_task(c, task_id)
            assert status_text(failed) == STOPPED
            assert [p for _, p in rep.starts(group.trace, task_id)] == [group.pid(0)]  # no rerun
        log = whole_log(b, streamed)
        assert ids_of(rest) == list(range(last + 1, len(log) + 1))
        assert results(rest) == results(log[last:])
        assert states_of(rest)[-1] == FAILED
        assert not group.tracebacks(), group.tracebacks()


def test_told_to_rerun_the_survivors_run_a_killed_replicas_tasks_again_to_their_end(
    redis: RedisServer, prefix: str, tmp_path: Path
) -> None:
    rerun = ["--on-restart", "rerun"]
    loops = ["asyncio", "trio", "asyncio"]
    with rep.group(redis.url, prefix, tmp_path, loops, args=[rerun] * 3) as group:
        a, b, c = group.urls
        sent = [send_params("work 40 30", return_immediately=True) for _ in range(2)]
        tasks = [result_of(rpc(a, "SendMessage", params))["task"]["id"] for params in sent]
        for task_id in tasks:
            started_on(group, task_id, 0)
        killed_at = time.monotonic()
        streamed, last = cut_stream(a, "stream 60 20", 4, group.servers[0].kill)

        def completed() -> bool:
            return all(state_of(get_task(c, t)) == COMPLETED for t in [*tasks, streamed])

        rep.wait_for(completed, timeout=TAKEOVER + 5, what="the reruns never completed")
        took = time.monotonic() - killed_at
        print(f"\nthe killed replica's tasks were run again and completed {took:.2f}s after it")
        rest = resume(b, streamed, last)
        log = whole_log(c, streamed)
        assert ids_of(rest) == list(range(last + 1, len(log) + 1))
        assert results(rest) == results(log[last:])
        assert states_of(rest)[-1] == COMPLETED
        survivors = {group.pid(1), group.pid(2)}
        for task_id in [*tasks, streamed]:
            first, second = rep.starts(group.trace, task_id)  # ran twice: cut, then whole
            assert first[1] == group.pid(0)
            assert second[1] in survivors
            assert first[0] == second[0]  # on the same (the user's last) message
        for params in sent:
            assert rep.runs(group.run_log, params["message"]["messageId"]) == 2
        assert not group.tracebacks(), group.tracebacks()


# --- 6. Redis killed and restarted under load -----------------------------------------------------

#: What a client is told while the store is away (JSON-RPC -32603; HTTP+JSON says 503).
AWAY = "The task store is unavailable"
#: The longest any one request may take, the outage included: nothing may hang.
LOAD_TIMEOUT = 8.0
#: How long Redis stays down: longer than a lease, so that every replica's lapses meanwhile.
OUTAGE = 2 * LEASE


@dataclass
class Outcome:
    """One request of the load: which replica, what, when, and how it was answered."""

    replica: int
    op: str
    at: float
    ok: bool
    away: bool = False
    problem: str | None = None
    task: dict[str, Any] | None = None
    took: float = 0.0


#: What the load's clients do, in turn: some send (a blocking send or a stream may wait for
#: the outage to end, its run's end being recorded once Redis is back), some only read.
SENDING = ("send", "send_later", "get", "rest_get", "list", "stream")
READING = ("get", "rest_get", "list")
CLIENTS = (SENDING, SENDING, SENDING, READING, READING)


@dataclass
class Load:
    """Clients sending to every replica, each request classified as it is answered."""

    urls: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def known(self) -> list[dict[str, Any]]:
        """The tasks whose creation a client was told of (a send's answer, a stream's first
        event), oldest first."""
        with self.lock:
            return [o.task for o in self.outcomes if o.task is not None]

    def answered(self, replica: int, since: float, *, ok: bool) -> int:
        with self.lock:
            return sum(
                1
                for o in self.outcomes
                if o.replica == replica and o.at >= since and (o.ok if ok else o.away)
            )

    def problems(self) -> list[Outcome]:
        with self.lock:
            return [o for o in self.outcomes if o.problem is not None]

    def client(self, worker: int) -> None:
        ops, n = CLIENTS[worker], worker * 7
        with httpx.Client(timeout=LOAD_TIMEOUT) as http:
            while not self.stop.is_set():
                n += 1
                replica, op = n // len(ops) % len(self.urls), ops[n % len(ops)]
                outcome = self.request(http, replica, op)
                outcome.took = time.monotonic() - outcome.at
                with self.lock:
                    self.outcomes.append(outcome)

    def request(self, http: httpx.Client, replica: int, op: str) -> Outcome:
        url, known, at = self.urls[replica], self.known(), time.monotonic()
        outcome = Outcome(replica, op, at, ok=False)
        try:
            if op == "rest_get" and known:
                response = http.get(f"{url}/tasks/{known[-1]['id']}", headers=A2A_HEADERS)
                return self.rest(outcome, response)
            if op == "stream":
                return self.stream(outcome, http, url)
            if op in ("get", "rest_get") and known:
                params: Any = {"id": known[-1]["id"]}
                return self.jsonrpc(outcome, http, url, "GetTask", params)
            if op == "list":
                return self.jsonrpc(outcome, http, url, "ListTasks", {"pageSize": 5})
            later = op == "send_later"
            params = send_params("work 3 20" if later else "work 2 5", return_immediately=later)
            return self.jsonrpc(outcome, http, url, "SendMessage", params)
        except httpx.HTTPError as error:
            outcome.problem = f"{op} on {replica}: {error!r}"
            return outcome

    def jsonrpc(
        self, outcome: Outcome, http: httpx.Client, url: str, method: str, params: Any
    ) -> Outcome:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = http.post(url + "/", json=body, headers=A2A_HEADERS)
        try:
            document = response.json()
        except ValueError:
            outcome.problem = f"{outcome.op}: {response.status_code} {response.text[:300]}"
            return outcome
        if response.status_code == 200 and self.told(outcome, document):
            if outcome.ok and method == "SendMessage":
                outcome.task = document["result"]["task"]
        elif outcome.problem is None:
            outcome.problem = f"{outcome.op}: {response.status_code} {document}"
        return outcome

    def told(self, outcome: Outcome, document: Mapping[str, Any]) -> bool:
        """A JSON-RPC answer: a result, or the store's unavailability (anything else is a
        problem)."""
        error = document.get("error")
        if error is None and "result" in document:
            outcome.ok = True
        elif error is not None and error["code"] == -32603 and error["message"].startswith(AWAY):
            outcome.away = True
        else:
            outcome.problem = f"{outcome.op}: {document}"
        return outcome.problem is None

    def stream(self, outcome: Outcome, http: httpx.Client, url: str) -> Outcome:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendStreamingMessage",
            "params": send_params("stream 5 20"),
        }
        headers = {**A2A_HEADERS, "Accept": "text/event-stream"}
        with http.stream("POST", url + "/", json=body, headers=headers) as response:
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                return self.jsonrpc_answer(outcome, response)
            parser, events = SseParser(), []
            for line in response.iter_lines():
                if isinstance(item := parser.feed(line), Event):
                    events.append(item)
        documents = [event.json() for event in events]
        if documents and "task" in documents[0].get("result", {}):
            outcome.task = documents[0]["result"]["task"]  # its creation was told
        if not documents or not self.told(outcome, documents[-1]):
            outcome.problem = outcome.problem or f"stream: {documents}"
            return outcome
        if outcome.ok and states_of(events)[-1] not in TERMINAL:
            outcome.ok, outcome.problem = False, f"stream ended early: {documents[-1]}"
        return outcome

    def jsonrpc_answer(self, outcome: Outcome, response: httpx.Response) -> Outcome:
        response.read()
        try:
            document = response.json()
        except ValueError:
            outcome.problem = f"{outcome.op}: {response.status_code} {response.text[:300]}"
            return outcome
        self.told(outcome, document)
        return outcome

    def rest(self, outcome: Outcome, response: httpx.Response) -> Outcome:
        if response.status_code == 200:
            outcome.ok = True
        elif response.status_code == 503 and AWAY in response.text:
            outcome.away = True
        else:
            outcome.problem = f"{outcome.op}: {response.status_code} {response.text[:300]}"
        return outcome


def test_replicas_ride_out_a_redis_restart_and_lose_nothing_acknowledged(
    prefix: str, tmp_path: Path
) -> None:
    with (
        RedisServer(durable=True) as redis,
        rep.group(redis.url, prefix, tmp_path, ["asyncio", "trio", "asyncio"]) as group,
    ):
        a, b, c = group.urls
        load = Load(group.urls)
        with ThreadPoolExecutor(len(CLIENTS)) as pool:
            clients = [pool.submit(load.client, n) for n in range(len(CLIENTS))]
            try:
                rep.wait_for(
                    lambda: len(load.known()) >= 15, timeout=10, what="the load never got going"
                )
                before = load.known()
                # A few finished tasks' whole logs, to compare with what is kept after.
                finished = [t for t in before if state_of(t) == COMPLETED][:8]
                logs = {t["id"]: results(whole_log(b, t["id"])) for t in finished}
                redis.kill()
                down_at = time.monotonic()
                rep.wait_for(
                    lambda: (
                        time.monotonic() - down_at >= OUTAGE
                        and all(load.answered(r, down_at, ok=False) > 0 for r in range(3))
                    ),
                    timeout=OUTAGE + 10,
                    what="not every replica told a client that the store is away",
                )
                redis.start()  # the same port and directory: its append-only file
                up_at = time.monotonic()
                back = rep.wait_for(
                    lambda: all(load.answered(r, up_at, ok=True) >= 3 for r in range(3)),
                    timeout=15,
                    what="the replicas never served again by themselves",
                )
            finally:
                load.stop.set()
                for done in clients:
                    done.result(timeout=LOAD_TIMEOUT + 2)
        outage = up_at - down_at
        away = sum(o.away for o in load.outcomes)
        slowest = max(load.outcomes, key=lambda o: o.took)
        print(
            f"\n{len(load.outcomes)} requests, {away} told the store is away during a "
            f"{outage:.2f}s outage; every replica served again {back:.2f}s after Redis was back; "
            f"the slowest answer took {slowest.took:.2f}s ({slowest.op})"
        )
        assert not load.problems(), load.problems()[:5]
        # Everything acknowledged is there, before the outage and after; the runs all ended.
        acknowledged = load.known()
        assert len(acknowledged) > len(before)

        def all_settled() -> bool:
            return all(state_of(get_task(c, t["id"])) in TERMINAL for t in acknowledged)

        rep.wait_for(all_settled, timeout=10, what="tasks left live after the outage")
        ended = Counter(
            f"{state_of(t)} ({status_text(t)[:40]})" if state_of(t) == FAILED else state_of(t)
            for t in (get_task(c, task["id"]) for task in acknowledged)
        )
        print(f"how the {len(acknowledged)} acknowledged tasks ended: {dict(ended)}")
        for task in before:
            kept = get_task(a, task["id"])
            assert kept["history"][0] == task["history"][0]
            if state_of(task) == COMPLETED:
                assert kept == task
        for task_id, logged in logs.items():
            assert results(whole_log(c, task_id)) == logged
        for task in acknowledged:
            log = whole_log(b, task["id"])
            assert ids_of(log) == list(range(1, len(log) + 1))
            assert states_of(log)[-1] in TERMINAL
        # The event bus is back too: a stream on B follows a run on A.
        streamed = send_task(a, "stream 10 20", return_immediately=True)
        with open_stream(b, "SubscribeToTask", {"id": streamed["id"]}) as stream:
            events = stream.events()
        assert states_of(events)[-1] == COMPLETED
        assert consecutive(ids_of(events[1:]))
        for server in group.servers:
            assert server.process.poll() is None  # nobody restarted them
        assert not group.tracebacks(), group.tracebacks()[0][-3000:]


# --- 7. serve --workers ---------------------------------------------------------------------------


def test_workers_on_one_port_share_the_store_and_a_dead_one_is_replaced(
    redis: RedisServer, prefix: str, tmp_path: Path
) -> None:
    store = f"{redis.url}?prefix={prefix}&lease={LEASE:g}"
    trace = tmp_path / "workers-trace.log"
    # A short graceful period: the runs still going when it is told to stop are cut after it.
    with rep.supervisor(store, tmp_path, 3, args=["--shutdown-grace", "1"]) as parent:
        url, supervisor = parent.url, parent.process.pid
        rep.wait_for(
            lambda: len(rep.children(supervisor)) == 3 and rep.serving_workers(parent) == 3,
            timeout=START_TIMEOUT,
            what="three workers serving",
        )
        workers = rep.children(supervisor)
        # Tasks made through the port are read through it, whichever worker answers.
        made = [send_task(url, "work 1 1") for _ in range(6)]
        for task in made:
            for _ in range(3):
                assert get_task(url, task["id"]) == task
        # Long runs, until one of them runs on a worker: that worker is killed.
        long_runs = [send_task(url, "work 300 20", return_immediately=True) for _ in range(4)]
        rep.wait_for(
            lambda: all(rep.starts(trace, t["id"]) for t in long_runs),
            timeout=10,
            what="the long runs never started",
        )
        ran_by = {t["id"]: rep.starts(trace, t["id"])[0][1] for t in long_runs}
        assert set(ran_by.values()) <= workers
        victim = next(iter(ran_by.values()))
        cut = [task_id for task_id, pid in ran_by.items() if pid == victim]
        os.kill(victim, signal.SIGKILL)
        rep.wait_for(
            lambda: len(rep.children(supervisor)) == 3 and victim not in rep.children(supervisor),
            timeout=15,
            what="the supervisor never started a worker in place of the dead one",
        )
        rep.wait_for(
            lambda: rep.serving_workers(parent) == 4,
            timeout=START_TIMEOUT,
            what="the new worker never served",
        )
        replaced = rep.children(supervisor)
        assert len(replaced - workers) == 1
        # What the dead worker ran is failed by another, as a dead replica's is.
        for task_id in cut:
            failed = wait_for_state(url, task_id, {FAILED}, timeout=TAKEOVER + 2)
            assert status_text(failed) == STOPPED
        for task in made:
            assert get_task(url, task["id"]) == task
        assert f"(pid {victim}) exited with status -9" in parent.stderr
        # SIGTERM: the supervisor stops every worker, then itself.
        status = parent.stop()
        assert status == 0, parent.stderr[-3000:]
        rep.wait_for(
            lambda: not any(rep.alive(pid) for pid in replaced),
            timeout=10,
            what="workers outlived their supervisor",
        )
        print(f"\nworkers {sorted(workers)} ran tasks on {sorted(set(ran_by.values()))}")
        assert "Traceback" not in parent.stderr, parent.stderr[-3000:]


def test_a_supervisor_told_to_stop_while_it_waits_to_replace_workers_stops_at_once(
    redis: RedisServer, prefix: str, tmp_path: Path
) -> None:
    store = f"{redis.url}?prefix={prefix}&lease={LEASE:g}"
    with rep.supervisor(store, tmp_path, 2) as parent:
        supervisor = parent.process.pid
        rep.wait_for(
            lambda: len(rep.children(supervisor)) == 2 and rep.serving_workers(parent) == 2,
            timeout=START_TIMEOUT,
            what="two workers serving",
        )
        for worker in rep.children(supervisor):
            os.kill(worker, signal.SIGKILL)
        rep.wait_for(
            lambda: "exited with status -9; starting another in 1.0s" in parent.stderr,
            timeout=5,
            what="the supervisor never saw its workers die",
        )
        # SIGTERM during the pause before the first is replaced: it stops at once, starting
        # nothing (it used to sleep the pause out, start a worker, then stop it).
        asked = time.monotonic()
        status = parent.stop()
        took = time.monotonic() - asked
    assert took < 0.8, f"the supervisor took {took:.2f}s to stop"
    assert status == 1, parent.stderr  # the second worker's death, reported on the way out
    assert rep.serving_workers(parent) == 2
    assert "Traceback" not in parent.stderr


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_workers_are_refused_a_store_that_one_process_keeps(store: str, tmp_path: Path) -> None:
    where = "memory" if store == "memory" else f"sqlite:{tmp_path / 'tasks.db'}"
    finished = run_to_exit(
        ["tests.a2a_adapters.crash_agent:agent", "--workers", "2", "--port", "0", "--store", where]
    )
    assert finished.returncode == 2, finished.stderr
    assert "Traceback" not in finished.stderr
    [line] = finished.stderr.splitlines()
    assert line == (
        f"a2a-sansio: error: --workers 2 needs a store the processes can share "
        f"(--store redis://HOST:PORT/DB); {where} keeps tasks in one process"
    )
    assert list(tmp_path.iterdir()) == []  # nothing was made


# --- 8. push notifications owed by a replica that died --------------------------------------------


def test_the_notifications_a_killed_replica_owed_are_delivered_by_another(
    redis: RedisServer, prefix: str, tmp_path: Path
) -> None:
    with (
        receiving() as receiver,
        rep.group(redis.url, prefix, tmp_path, ["asyncio", "trio", "asyncio"]) as group,
    ):
        a, b, c = group.urls
        receiver.always("/hook", 503)  # down while A runs the task
        params = send_params("work 200 50", return_immediately=True)
        params["configuration"]["taskPushNotificationConfig"] = {
            "url": f"{receiver.url}/hook",
            "token": "a-token",
        }
        task_id = result_of(rpc(a, "SendMessage", params))["task"]["id"]
        started_on(group, task_id, 0, steps=4)
        receiver.wait_for(2, "/hook")  # A tried (and failed) at least twice
        group.servers[0].kill()
        refused = receiver.deliveries("/hook")
        receiver.always("/hook", 200)  # the webhook is back
        failed = wait_for_state(b, task_id, {FAILED}, timeout=TAKEOVER + 2)
        assert status_text(failed) == STOPPED
        log = results(whole_log(c, task_id))
        [config] = result_of(rpc(b, "ListTaskPushNotificationConfigs", {"taskId": task_id}))[
            "configs"
        ]
        ids = {f"{task_id}/{config['id']}/{seq}" for seq in range(1, len(log) + 1)}

        def accepted() -> dict[str, Any]:
            return {
                d.headers["x-a2a-notification-id"]: d
                for d in reversed(receiver.deliveries("/hook"))
                if d.status == 200
            }

        rep.wait_for(
            lambda: set(accepted()) >= ids, timeout=10, what="notifications never delivered"
        )
        deliveries = [d for d in receiver.deliveries("/hook") if d.status == 200]
        print(
            f"\n{len(log)} events; A's {len(refused)} refused attempts before it was killed; "
            f"{len(deliveries)} deliveries after, by the survivors"
        )
        for d in deliveries:
            seq = int(d.headers["x-a2a-notification-id"].rpartition("/")[2])
            assert d.json() == log[seq - 1]
            assert d.headers["x-a2a-notification-token"] == "a-token"
        # First acceptances in the order of the events (duplicates may follow: at least once).
        firsts: list[int] = []
        for d in deliveries:
            seq = int(d.headers["x-a2a-notification-id"].rpartition("/")[2])
            if seq not in firsts:
                firsts.append(seq)
        assert firsts == sorted(firsts) == list(range(1, len(log) + 1)), firsts
        assert set(accepted()) == ids
        assert not group.tracebacks(), group.tracebacks()


def notification_seq(delivery: Delivery) -> int:
    return int(delivery.headers["x-a2a-notification-id"].rpartition("/")[2])


def first_acceptances(receiver: Receiver, path: str) -> list[int]:
    """The event numbers of the notifications ``path`` accepted, each the first time."""
    firsts: list[int] = []
    for delivery in receiver.deliveries(path):
        seq = notification_seq(delivery)
        if delivery.status == 200 and seq not in firsts:
            firsts.append(seq)
    return firsts


def test_a_notification_committed_on_one_replica_waits_for_those_another_still_owes(
    shared: rep.Group,
) -> None:
    a, b, c = shared.urls
    with receiving() as receiver:
        receiver.always("/ordered", 503)  # down while A runs the task
        params = send_params("work 200 50", return_immediately=True)
        params["configuration"]["taskPushNotificationConfig"] = {"url": f"{receiver.url}/ordered"}
        task_id = result_of(rpc(a, "SendMessage", params))["task"]["id"]
        started_on(shared, task_id, 0, steps=2)
        receiver.wait_for(2, "/ordered")  # A is retrying its first notification, backing off
        # Canceled on B: B's commit owes the webhook the cancel's event, the task's last, and
        # the webhook is back before A's next attempt (it backs off), so that B's would come
        # first, were it not held back for A's.
        assert state_of(cancel_task(b, task_id)) == CANCELED
        receiver.always("/ordered", 200)
        last = len(whole_log(c, task_id))
        rep.wait_for(
            lambda: len(first_acceptances(receiver, "/ordered")) == last,
            timeout=15,
            what="the notifications never all arrived",
        )
        # One webhook's notifications arrive in the order of their events, whoever owes them.
        assert first_acceptances(receiver, "/ordered") == list(range(1, last + 1))
