"""Run time limits, decided by the machine on the time it is given: a run past
``max_run_time``, or silent for ``run_idle_time``, is stopped and its task failed saying which
limit it passed; a run that spoke or ended in time is left alone, and its timer forgotten."""

import json
from datetime import timedelta
from typing import Any

from a2a_core import Core, CoreConfig, working
from a2a_core.store import MemoryTasks
from a2a_core.testing import counting_ids
from a2a_core.transport import Answer, HttpRequest, Server, StartRun, StopRun

from .support import CARD, EPOCH

V1 = {"content-type": "application/json", "a2a-version": "1.0"}


def rpc(method: str, params: Any) -> HttpRequest:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return HttpRequest("POST", "/", V1, json.dumps(body).encode())


def machine(**limits: Any) -> Server:
    return Server(Core(CoreConfig(card=CARD, **limits)), store=MemoryTasks(), new_id=counting_ids())


def start(server: Server) -> StartRun:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    server.receive(rpc("SendMessage", params), EPOCH)
    (run,) = [a for a in server.take_actions() if isinstance(a, StartRun)]
    return run


def stops(server: Server) -> list[StopRun]:
    return [a for a in server.take_actions() if isinstance(a, StopRun)]


def status_of(server: Server, task_id: str) -> tuple[str, str]:
    server.receive(rpc("GetTask", {"id": task_id}), EPOCH)
    (answer,) = [a for a in server.take_actions() if isinstance(a, Answer)]
    status = json.loads(answer.response.body)["result"]["status"]
    return status["state"], status.get("message", {}).get("parts", [{}])[0].get("text", "")


def test_a_run_past_its_limit_is_stopped_and_its_task_failed_saying_so() -> None:
    server = machine(max_run_time=30)
    run = start(server)
    assert server.next_deadline() == EPOCH + timedelta(seconds=30)
    server.tick(EPOCH + timedelta(seconds=29))
    assert stops(server) == []
    server.tick(EPOCH + timedelta(seconds=30))
    assert stops(server) == [StopRun(run.task_id, run.run)]
    assert status_of(server, run.task_id) == (
        "TASK_STATE_FAILED",
        "The agent ran longer than its limit of 30 s, so the server stopped it; "
        "send a new message to retry.",
    )
    assert server.live_runs == 0
    assert server.next_deadline() is None


def test_output_puts_the_idle_limit_off_but_not_the_whole_runs() -> None:
    server = machine(run_idle_time=10, max_run_time=60)
    run = start(server)
    for second in (5, 14, 23, 32, 41, 50):
        server.agent_output(
            run.task_id, run.run, working("still at it"), EPOCH + timedelta(seconds=second)
        )
        server.tick(EPOCH + timedelta(seconds=second + 1))
        assert stops(server) == []
    assert server.next_deadline() == EPOCH + timedelta(seconds=60)
    server.tick(EPOCH + timedelta(seconds=60))
    assert stops(server) == [StopRun(run.task_id, run.run)]
    assert "ran longer than its limit of 60 s" in status_of(server, run.task_id)[1]


def test_a_silent_run_is_stopped_after_the_idle_limit() -> None:
    server = machine(run_idle_time=10)
    run = start(server)
    server.agent_output(run.task_id, run.run, working("one"), EPOCH + timedelta(seconds=4))
    server.tick(EPOCH + timedelta(seconds=10))  # due from the start: it spoke since
    assert stops(server) == []
    assert server.next_deadline() == EPOCH + timedelta(seconds=14)
    server.tick(EPOCH + timedelta(seconds=14))
    assert stops(server) == [StopRun(run.task_id, run.run)]
    assert status_of(server, run.task_id) == (
        "TASK_STATE_FAILED",
        "The agent gave no output for 10 s, so the server stopped it; send a new message to retry.",
    )


def test_a_run_that_ends_in_time_leaves_no_timer_behind() -> None:
    server = machine(max_run_time=30)
    run = start(server)
    server.agent_done(run.task_id, run.run, EPOCH + timedelta(seconds=1), value="done")
    server.take_actions()
    server.tick(EPOCH + timedelta(seconds=30))  # the stale timer: nothing to stop
    assert stops(server) == []
    assert status_of(server, run.task_id)[0] == "TASK_STATE_COMPLETED"
    assert server.next_deadline() is None


def test_without_limits_a_run_sets_no_deadline() -> None:
    server = machine()
    start(server)
    assert server.next_deadline() is None
