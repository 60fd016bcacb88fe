"""Server.drive: an agent run fed to the server with no event loop (it awaits only the agent)."""

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2a_core import (
    Action,
    Answer,
    HttpRequest,
    Server,
    StartRun,
    Waiting,
    completed,
    working,
)

from .support import EPOCH, make_core


def blocking_send(server: Server) -> tuple[Waiting, StartRun]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}},
    }
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    reply = server.receive(HttpRequest("POST", "/", headers, json.dumps(body).encode()), EPOCH)
    assert isinstance(reply, Waiting)
    (start,) = [a for a in server.take_actions() if isinstance(a, StartRun)]
    return reply, start


def finish(coroutine: Any) -> None:
    with pytest.raises(StopIteration):
        coroutine.send(None)


def test_drive_runs_the_agent_and_the_answer_comes_out() -> None:
    server = Server(make_core())
    waiting, start = blocking_send(server)
    taken: list[Action] = []

    async def agent(ctx: Any) -> AsyncIterator[Any]:
        yield working()
        yield completed("done")

    finish(server.drive(start, agent, lambda: EPOCH, lambda: taken.extend(server.take_actions())))
    (answer,) = [a for a in taken if isinstance(a, Answer)]
    assert answer.exchange == waiting.exchange
    result = json.loads(answer.response.body)["result"]["task"]
    assert result["status"]["state"] == "TASK_STATE_COMPLETED"


def test_an_agent_whose_output_stops_counting_is_closed() -> None:
    server = Server(make_core())
    _, start = blocking_send(server)
    closed: list[bool] = []

    async def chatty(ctx: Any) -> AsyncIterator[Any]:
        try:
            yield completed("done")
            yield working("still here")  # never asked for
        finally:
            closed.append(True)

    finish(server.drive(start, chatty, lambda: EPOCH, lambda: None))
    assert closed == [True]


def test_an_agent_that_raises_fails_its_task() -> None:
    server = Server(make_core())
    _, start = blocking_send(server)
    taken: list[Action] = []

    async def broken(ctx: Any) -> str:
        raise ValueError("secret detail")

    finish(server.drive(start, broken, lambda: EPOCH, lambda: taken.extend(server.take_actions())))
    (answer,) = [a for a in taken if isinstance(a, Answer)]
    task = json.loads(answer.response.body)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert b"secret detail" not in answer.response.body
