"""Capacity limits, decided by the machine before anything is written: a send that would
start one run too many (or one too many for its caller), or open one stream too many, is
refused as busy (-32603 ``SERVER_BUSY``, HTTP 503, ``Retry-After``) and leaves no task behind;
decisions whose commits are still under way count, so side-by-side sends cannot overshoot."""

import json
from typing import Any

from a2a_core import Core, CoreConfig
from a2a_core.store import MemoryTasks
from a2a_core.testing import counting_ids
from a2a_core.transport import (
    Answer,
    Caller,
    Commit,
    HttpRequest,
    HttpResponse,
    Read,
    Server,
    StartRun,
    StreamOpened,
)
from tests.a2a_core.test_server import Board

from .support import CARD, EPOCH

V1 = {"content-type": "application/json", "a2a-version": "1.0"}
ALICE, BOB = Caller("alice"), Caller("bob")


def rpc(method: str, params: Any) -> HttpRequest:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return HttpRequest("POST", "/", V1, json.dumps(body).encode())


def send_request(message_id: str, method: str = "SendMessage") -> HttpRequest:
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    params: dict[str, Any] = {"message": message}
    if method == "SendMessage":
        params["configuration"] = {"returnImmediately": True}
    return rpc(method, params)


def machine(**limits: Any) -> Server:
    return Server(
        Core(CoreConfig(card=CARD, streaming=True, **limits)),
        store=MemoryTasks(),
        new_id=counting_ids(),
    )


def send(server: Server, message_id: str, caller: Caller = ALICE, **options: Any) -> list[Any]:
    server.receive(send_request(message_id, **options), EPOCH, caller=caller)
    return server.take_actions()


def busy(actions: list[Any]) -> HttpResponse | None:
    """The busy answer among ``actions``, if that is what they are."""
    for action in actions:
        if isinstance(action, Answer):
            body = json.loads(action.response.body)
            if body.get("error", {}).get("data", [{}])[0].get("reason") == "SERVER_BUSY":
                return action.response
    return None


def started(actions: list[Any]) -> list[StartRun]:
    return [a for a in actions if isinstance(a, StartRun)]


def tasks_of(server: Server, caller: Caller = ALICE) -> int:
    server.receive(rpc("ListTasks", {}), EPOCH, caller=caller)
    (answer,) = [a for a in server.take_actions() if isinstance(a, Answer)]
    total: int = json.loads(answer.response.body)["result"]["totalSize"]
    return total


def test_one_run_too_many_is_refused_as_busy_and_leaves_no_task() -> None:
    server = machine(max_runs=1)
    (run,) = started(send(server, "m1"))
    refused = busy(second := send(server, "m2"))
    assert refused is not None, second
    assert refused.status == 503
    assert ("retry-after", "1") in refused.headers
    error = json.loads(refused.body)["error"]
    assert error["code"] == -32603
    assert error["message"] == "The server is running 1 agents, its limit is 1; retry later"
    assert started(second) == []
    assert tasks_of(server) == 1
    server.agent_done(run.task_id, run.run, EPOCH, value="done")
    server.take_actions()
    assert len(started(send(server, "m3"))) == 1  # room again once the run ended


def test_a_callers_runs_are_capped_apart_from_others() -> None:
    server = machine(max_runs_per_owner=1)
    assert len(started(send(server, "m1", ALICE))) == 1
    refused = busy(send(server, "m2", ALICE))
    assert refused is not None
    assert "You have 1 agent runs under way, the limit per caller is 1" in refused.body.decode()
    assert len(started(send(server, "m3", BOB))) == 1


def test_one_stream_too_many_is_refused() -> None:
    server = machine(max_streams=1)
    first = send(server, "m1", method="SendStreamingMessage")
    (opened,) = [a for a in first if isinstance(a, StreamOpened)]
    assert busy(send(server, "m2", method="SendStreamingMessage")) is not None
    assert tasks_of(server) == 1  # the refused streamed send made no task either
    server.client_left(opened.exchange)
    server.take_actions()
    again = send(server, "m3", method="SendStreamingMessage")
    assert [a for a in again if isinstance(a, StreamOpened)]


def test_the_rest_binding_says_busy_with_retry_after() -> None:
    server = machine(max_runs=1)
    send(server, "m1")
    message = {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    body = {"message": message, "configuration": {"returnImmediately": True}}
    request = HttpRequest("POST", "/message:send", V1, json.dumps(body).encode())
    server.receive(request, EPOCH, caller=ALICE)
    (answer,) = [a for a in server.take_actions() if isinstance(a, Answer)]
    assert answer.response.status == 503
    assert ("retry-after", "1") in answer.response.headers
    assert json.loads(answer.response.body)["error"]["status"] == "UNAVAILABLE"


def test_sends_whose_commits_are_under_way_count() -> None:
    board = Board(max_runs=1)
    first = board.receive(send_request("m1"), caller=ALICE)
    second = board.receive(send_request("m2"), caller=ALICE)
    reads = sorted(op for op, action in board.pending.items() if isinstance(action, Read))
    for op in reads:  # both decided before either commit is answered
        board.complete(op)
    assert busy(board.answers(second)) is not None
    commits = [op for op, action in board.pending.items() if isinstance(action, Commit)]
    assert len(commits) == 1
    board.settle()
    assert len([a for a in board.seen if isinstance(a, StartRun)]) == 1
    assert busy(board.answers(first)) is None
    assert board.answers(first)
