"""Graceful shutdown: agents get their graceful period, queued pushes go out, idle exits fast.

Before, SIGTERM failed every running task at once and cancelled the push sender mid-delivery:
of 30 running tasks, webhooks heard a terminal state for 3 or 4, and one notification was cut
off half way.
"""

import asyncio
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from a2a_adapters import MemoryStore, build_engine
from a2a_adapters.asyncio import bind_socket
from a2a_core import AgentContext, working
from a2a_core.store import Reads, Snapshot
from examples import echo
from tests.a2a_adapters import processes
from tests.a2a_adapters.support import (
    COMPLETED,
    FAILED,
    WORKING,
    new_id,
    result_of,
    rpc,
    send_params,
    wait_for_state,
    wait_until,
)
from tests.a2a_adapters.webhooks import Answer, Receiver, receiving
from tests.servers import serving

pytestmark = pytest.mark.usefixtures("adapter")

ROOT = Path(__file__).resolve().parents[2]
#: How long the agents here take: well inside the graceful period, far longer than "at once".
WORK_SECONDS = 1.0


async def takes_a_second(ctx: AgentContext) -> AsyncIterator[Any]:
    yield working("on it")
    await anyio.sleep(WORK_SECONDS)
    yield f"finished {ctx.text}"


def start_tasks(url: str, receiver: Receiver, count: int) -> list[str]:
    ids = []
    for n in range(count):
        params = {
            "message": {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": f"{n}"}]},
            "configuration": {
                "returnImmediately": True,
                "taskPushNotificationConfig": {"url": f"{receiver.url}/hook/{n}"},
            },
        }
        ids.append(result_of(rpc(url, "SendMessage", params))["task"]["id"])
    for task_id in ids:
        wait_for_state(url, task_id, {WORKING})
    return ids


def terminal_states_heard(receiver: Receiver) -> dict[str, str]:
    """The last state each webhook path heard, for those that heard a terminal one."""
    heard: dict[str, str] = {}
    for delivery in receiver.deliveries():
        update = delivery.json().get("statusUpdate")
        if update is not None and update["status"]["state"] == COMPLETED:
            heard[delivery.path] = update["taskId"]
    return heard


def test_running_agents_finish_within_the_grace_and_their_pushes_go_out() -> None:
    engine = build_engine(takes_a_second, push=True, push_allow_hosts=["127.0.0.1"])
    with receiving() as receiver:
        with serving(engine) as url:
            ids = start_tasks(url, receiver, 10)
            stopping = time.monotonic()
        took = time.monotonic() - stopping
        heard = terminal_states_heard(receiver)
    assert sorted(heard.values()) == sorted(ids), "every task's completion reached its webhook"
    assert took < WORK_SECONDS + 3.0, f"shutdown took {took:.1f} s"

    async def states() -> list[str]:
        records = [(await engine.store.read(Reads(task_id=t))).task for t in ids]
        return [r.state.value for r in records if r is not None]

    assert anyio.run(states) == [COMPLETED] * len(ids)


def test_shutdown_is_prompt_when_nothing_runs() -> None:
    engine = build_engine(echo.agent, push=True, push_allow_hosts=["127.0.0.1"])
    with serving(engine) as url:
        assert _answers(url)
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 1.5


_SERVER = """
import sys
import anyio
from a2a_adapters import serve
from a2a_core import working

async def agent(ctx):
    yield working("on it")
    await anyio.sleep(float(sys.argv[2]))
    yield "finished " + ctx.text

serve(agent, port=int(sys.argv[3]), loop=sys.argv[1], push_allow_hosts=["127.0.0.1"])
"""


def test_sigterm_gives_running_agents_their_grace(adapter: str) -> None:
    with bind_socket("127.0.0.1", 0) as probe:
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER, adapter, str(WORK_SECONDS), str(port)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        assert wait_until(lambda: _answers(url), timeout=20.0), "the server never started"
        with receiving() as receiver:
            ids = start_tasks(url, receiver, 20)
            process.send_signal(signal.SIGTERM)
            code = process.wait(15)
            heard = terminal_states_heard(receiver)
            # Each body arrived whole: the receiver parsed every one as JSON.
            bodies = [d.json() for d in receiver.deliveries()]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
        stderr = process.stderr.read() if process.stderr else ""
    assert code == 0, stderr
    assert sorted(heard.values()) == sorted(ids), stderr
    # Per task: created, two progress reports, completed; each whole (parsed as JSON).
    assert len(bodies) == 4 * len(ids)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/.well-known/agent-card.json", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


# --- a stop asked for at an awkward moment -------------------------------------------------------

#: A server whose SIGTERM comes while it is still making its event loop: after its "A2A server
#: on" line, before uvicorn handles signals. Such a SIGTERM used to be swallowed, and the server
#: went on serving until it was killed (a ``--workers`` supervisor stopping a worker that had just
#: started waited its whole budget, then killed it).
_EARLY_SIGTERM = """
import os
import signal

from a2a_adapters import _serve
from a2a_adapters.asyncio import _server
from examples import echo

made = _server.fast_loop_factory

def factory():
    os.kill(os.getpid(), signal.SIGTERM)
    return made()

_server.fast_loop_factory = factory
_serve.serve(echo.agent, port=0)
"""


def test_a_sigterm_while_the_server_starts_stops_it_gracefully() -> None:
    finished = subprocess.run(
        [sys.executable, "-c", _EARLY_SIGTERM],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    assert "A2A server on" in finished.stderr
    # It stopped gracefully: serving ended normally, after the application's shutdown.
    assert "A2A server stopped" in finished.stderr
    assert "Traceback" not in finished.stderr


class HeldStore(MemoryStore):
    """The memory store, awaited (not called inline), whose reads wait for :attr:`gate`."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = anyio.Event()
        self.reading = anyio.Event()

    async def read(self, reads: Reads) -> Snapshot:
        self.reading.set()
        await self.gate.wait()
        return await super().read(reads)


def test_a_shutdown_begun_outside_any_task_with_store_work_queued_fails_nothing() -> None:
    # A signal's callback begins the shutdown (uvicorn's handler, through call_soon_threadsafe)
    # while the engine's first reads are queued behind one under way. It used to raise there
    # (anyio's start_soon, outside any task, finds no running loop), leaving a traceback in the log.
    async def scenario() -> list[dict[str, Any]]:
        store = HeldStore()
        engine = build_engine(echo.agent, store=store, push=True)
        loop = asyncio.get_running_loop()
        errors: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _, context: errors.append(context))
        async with anyio.create_task_group() as group:
            group.start_soon(engine.run)
            with anyio.fail_after(5):
                await store.reading.wait()
            loop.call_soon(engine.begin_shutdown)
            await anyio.sleep(0.05)
            store.gate.set()
            with anyio.fail_after(5):
                await engine.wait_ready()
                await engine.aclose()
            assert engine.server.busy == 0  # every read it asked for was done
        return errors

    assert asyncio.run(scenario()) == []


# --- what a stop says --------------------------------------------------------------------------


def test_a_stop_says_what_it_waits_for_and_what_it_leaves_for_the_next_start(
    adapter: str, tmp_path: Path
) -> None:
    """A run that outlasts the grace and a webhook that hangs: the log says what the stop waits
    for, then what it stopped and what it left; the port is free again; and the next server
    on the same store delivers what was left."""
    store = f"sqlite:{tmp_path / 'tasks.db'}"
    args = ["--shutdown-grace", "1", "--push-allow-host", "127.0.0.1"]
    with receiving() as receiver:
        receiver.always("/hook", Answer(200, delay=30))  # past the grace: still in flight
        server = processes.start(store, loop=adapter, agent_log=tmp_path / "runs.log", args=args)
        try:
            url = server.wait_for_url()
            port = int(url.rsplit(":", 1)[1])
            params = send_params("work 1 20000", return_immediately=True)  # 20 s: past the grace
            params["configuration"]["taskPushNotificationConfig"] = {"url": receiver.url + "/hook"}
            task_id = result_of(rpc(url, "SendMessage", params))["task"]["id"]
            receiver.wait_for(1, "/hook")
            started = time.monotonic()
            code = server.stop()
            took = time.monotonic() - started
        finally:
            server.kill()
        log = server.stderr
        assert code == 0, log
        assert took < 10, took
        assert "stopping: waiting up to 1 s for 1 agent run and " in log, log
        assert "stopping: 1 agent run still going after 1 s: stopped, its task failed" in log
        left = r"stopping: \d+ push notifications? not delivered within 1 s, kept in the store's"
        assert re.search(left, log), log
        with bind_socket("127.0.0.1", port):  # the port was released
            pass
        receiver.always("/hook", 200)
        again = processes.start(store, loop=adapter, agent_log=tmp_path / "runs.log", args=args)
        try:
            again.wait_for_url()
            assert wait_until(lambda: _heard_failed(receiver, task_id), timeout=10.0)
        finally:
            again.kill()


def _heard_failed(receiver: Receiver, task_id: str) -> bool:
    for delivery in receiver.deliveries("/hook"):
        update = delivery.json().get("statusUpdate")
        if update and update["taskId"] == task_id and update["status"]["state"] == FAILED:
            return True
    return False
