"""Run time limits over real HTTP, on both adapters: a stuck run fails its task with a record
of which limit it passed, and the agent is really stopped (its late answer never lands)."""

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from a2a_adapters import build_engine
from a2a_core import AgentContext, completed, working
from tests.a2a_adapters.processes import spawn
from tests.a2a_adapters.support import (
    FAILED,
    get_task,
    new_id,
    rpc,
    send_params,
    send_task,
    state_of,
    status_text,
    wait_for_state,
    wait_until,
)
from tests.servers import running_server

#: The limits here: long enough for a loaded machine to start the run, short for the suite.
LIMIT = 0.3


#: The texts of the runs that were stopped (cancelled: their ``finally`` ran).
STOPPED: list[str] = []


async def stuck(ctx: AgentContext) -> str:
    try:
        await anyio.sleep(30)
    finally:
        STOPPED.append(ctx.text)
    return "too late"


async def speaks_once(ctx: AgentContext) -> AsyncIterator[Any]:
    yield working("thinking")
    await anyio.sleep(30)
    yield completed("too late")


@pytest.mark.usefixtures("adapter")
def test_a_run_over_its_time_fails_its_task() -> None:
    text = new_id()
    with running_server(stuck, max_run_time=LIMIT) as url:
        task = send_task(url, text)
        assert wait_until(lambda: text in STOPPED)  # the agent was cancelled, not left running
        again = get_task(url, task["id"])
    assert state_of(task) == FAILED
    assert status_text(task) == (
        "The agent ran longer than its limit of 0.3 s, so the server stopped it; "
        "send a new message to retry."
    )
    assert state_of(again) == FAILED


@pytest.mark.usefixtures("adapter")
def test_a_silent_run_fails_its_task() -> None:
    with running_server(speaks_once, run_idle_time=LIMIT) as url:
        task = send_task(url, "hi")
    assert state_of(task) == FAILED
    assert status_text(task).startswith("The agent gave no output for 0.3 s")


def test_limits_are_checked_when_the_server_is_set_up() -> None:
    with pytest.raises(ValueError, match="max_run_time must be positive"):
        build_engine(stuck, max_run_time=0)
    with pytest.raises(TypeError, match="run_idle_time must be a number of seconds"):
        build_engine(stuck, run_idle_time="1")


@pytest.mark.parametrize("loop", ["asyncio", "trio"])
def test_the_limits_are_command_line_options(loop: str) -> None:
    args = ["tests.a2a_adapters.test_run_limits:stuck", "--store", "memory", "--port", "0"]
    args += ["--loop", loop, "--max-run-seconds", "0.5", "--run-idle-seconds", "60"]
    args += ["--max-runs", "1", "--max-runs-per-owner", "1", "--max-streams", "1"]
    server = spawn(*args)
    try:
        url = server.wait_for_url()
        first = send_task(url, "hi", return_immediately=True)
        second = rpc(url, "SendMessage", send_params("hi"))
        task = wait_for_state(url, first["id"], {FAILED})
    finally:
        server.stop()
    assert second.status_code == 503
    assert "its limit is 1" in second.json()["error"]["message"]
    assert status_text(task).startswith("The agent ran longer than its limit of 0.5 s")
