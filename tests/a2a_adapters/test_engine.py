"""The engine contains every failure of a background job, and dies loudly if it dies at all.

Before, one push config holding a non-ASCII token made the push sender raise, which cancelled the
engine's task group: from then on every send answered 500 and left its task submitted, reads
still worked, and nothing was logged. Here each kind of background job (a delivery, a run, a
tick, a request's own store access) fails on purpose, and the engine must log it and go on; and
when the engine itself does stop, the process must exit non-zero.
"""

import logging
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio.lowlevel
import httpx
import pytest

from a2a_adapters import MemoryStore, PushSender
from a2a_core import AgentContext, working
from a2a_core.machine._server import MAX_HOLDS
from a2a_core.store import Put, Reads, Snapshot, StoreMisconfigured, Write
from examples import echo
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    COMPLETED,
    FAILED,
    HTTP_TIMEOUT,
    error_of,
    rpc,
    send_task,
    state_of,
    status_text,
    text_of,
    wait_for_state,
    wait_until,
)
from tests.servers import running_server

pytestmark = pytest.mark.usefixtures("adapter")

ROOT = Path(__file__).resolve().parents[2]


class FaultyStore(MemoryStore):
    """The memory store, made to fail on purpose where a test says."""

    def __init__(self) -> None:
        super().__init__()
        #: Reads of these task ids raise.
        self.broken_ids: set[str] = set()
        #: Reads of these task ids are refused, as a store whose user lacks a permission is.
        self.refused_ids: set[str] = set()
        #: How many of the next commits of agent output raise (then the store works again).
        self.failing_outputs = 0
        #: The next expiry sweep raises.
        self.fail_next_sweep = False

    async def read(self, reads: Reads) -> Snapshot:
        if reads.task_id in self.broken_ids:
            raise OSError("the disk is on fire")
        if reads.task_id in self.refused_ids:
            raise StoreMisconfigured("NOPERM this user may not run 'hget' (ACL SETUSER app +hget)")
        if reads.expiry is not None and self.fail_next_sweep:
            self.fail_next_sweep = False
            raise OSError("the sweep hit a bad sector")
        return await super().read(reads)

    async def commit(self, writes: Sequence[Write]) -> bool:
        if self.failing_outputs and any(
            isinstance(w, Put) and w.record.version > 1 for w in writes
        ):
            self.failing_outputs -= 1
            raise OSError("the commit failed half way")
        return await super().commit(writes)


def test_a_store_failure_in_a_request_is_a_protocol_error_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FaultyStore()
    store.broken_ids.add("doomed")
    with running_server(echo.agent, store=store) as url:
        response = rpc(url, "GetTask", {"id": "doomed"})
        error = error_of(response, -32603)
        rest = httpx.get(f"{url}/tasks/doomed", headers=A2A_HEADERS, timeout=HTTP_TIMEOUT)
        after = send_task(url, "still here?")
    assert "the failure was logged" in error["message"]
    assert rest.status_code == 500
    assert rest.json()["error"]["status"] == "INTERNAL"
    assert state_of(after) == COMPLETED
    assert "the disk is on fire" in caplog.text


def test_a_store_that_refuses_is_a_server_error_said_once_in_the_log_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FaultyStore()
    store.refused_ids.add("refused")
    with (
        caplog.at_level(logging.WARNING, logger="a2a_adapters"),
        running_server(echo.agent, store=store) as url,
    ):
        for _ in range(3):
            error = error_of(rpc(url, "GetTask", {"id": "refused"}), -32603)
            assert "the failure was logged" in error["message"]
        rest = httpx.get(f"{url}/tasks/refused", headers=A2A_HEADERS, timeout=HTTP_TIMEOUT)
        assert rest.status_code == 500  # not 503: retrying will not help until it is set up
        after = send_task(url, "still here?")
    assert state_of(after) == COMPLETED
    said = [r for r in caplog.records if "refuses what this server asks of it" in r.getMessage()]
    assert len(said) == 1
    assert "ACL SETUSER app +hget" in said[0].getMessage()
    assert said[0].exc_info is None
    assert not any(r.exc_info for r in caplog.records)
    assert any("accepts it again" in r.getMessage() for r in caplog.records)


def _breaking_agent(store: FaultyStore, failures: int) -> Any:
    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        if ctx.text == "break":
            store.failing_outputs = failures
        yield working("on it")
        # A pause, so that the progress goes alone (values yielded in a row would go with the
        # run's end).
        await anyio.lowlevel.checkpoint()
        yield f"done: {ctx.text}"

    return agent


def test_an_output_whose_commit_fails_once_is_tried_again_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FaultyStore()
    with running_server(_breaking_agent(store, 1), store=store) as url:
        task_id = rpc(url, "SendMessage", {"message": _message("break"), **_IMMEDIATE}).json()
        task_id = task_id["result"]["task"]["id"]
        done = wait_for_state(url, task_id, {COMPLETED}, timeout=10.0)
    said = [text_of(m) for m in done["history"] if m["role"] == "ROLE_AGENT"]
    assert said == ["on it", "done: break"]  # held, written once, in order
    assert "the commit failed half way" in caplog.text
    assert "it is held and tried again shortly" in caplog.text


def test_an_output_the_store_keeps_failing_is_contained_and_its_task_failed_with_a_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FaultyStore()
    # The first try and every one after it fail; then the store works (and records the end).
    with running_server(_breaking_agent(store, 1 + MAX_HOLDS), store=store) as url:
        task_id = rpc(url, "SendMessage", {"message": _message("break"), **_IMMEDIATE}).json()
        task_id = task_id["result"]["task"]["id"]
        failed = wait_for_state(url, task_id, {FAILED}, timeout=10.0)
        after = send_task(url, "fine")
    assert "server failed while the agent ran" in status_text(failed)
    assert state_of(after) == COMPLETED
    assert "the commit failed half way" in caplog.text


def test_a_failing_sweep_is_logged_and_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    store = FaultyStore()
    store.fail_next_sweep = True
    with running_server(echo.agent, store=store, task_ttl=0.2) as url:
        task = send_task(url, "short-lived")
        # The first sweep fails; the next (a second later) removes the expired task.
        assert wait_until(lambda: len(store) == 0, timeout=5.0)
        gone = rpc(url, "GetTask", {"id": task["id"]})
        assert state_of(send_task(url, "after")) == COMPLETED
    error_of(gone, -32001)
    assert "the expiry sweep failed" in caplog.text


def test_push_deliveries_that_cannot_be_made_leave_the_engine_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def no_resolver(host: str, port: int) -> list[str]:
        raise UnicodeError("the resolver broke")

    sender = PushSender(resolve=no_resolver, max_attempts=1)
    with running_server(echo.agent, push=sender) as url:
        config = {"taskPushNotificationConfig": {"url": "https://hooks.example.com/a2a"}}
        for n in range(3):
            sent = rpc(url, "SendMessage", {"message": _message(f"n{n}"), "configuration": config})
            assert state_of(sent.json()["result"]["task"]) == COMPLETED
        assert wait_until(lambda: "the resolver broke" in caplog.text)
        assert state_of(send_task(url, "after")) == COMPLETED


_IMMEDIATE = {"configuration": {"returnImmediately": True}}


def _message(text: str) -> dict[str, Any]:
    import uuid

    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


_CRASHING_SERVER = """
import sys
import anyio
from a2a_adapters import PushSender, serve
from examples import echo

class BrokenSender(PushSender):
    async def run(self) -> None:
        await anyio.sleep(0.5)
        raise RuntimeError("the push sender broke down")

serve(echo.agent, card=echo.card, port=0, push=BrokenSender(), loop=sys.argv[1])
"""


def test_when_the_engine_itself_stops_the_process_exits_non_zero(adapter: str) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _CRASHING_SERVER, adapter],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode != 0, done.stderr
    assert time.monotonic() - started < 25
    assert "the A2A engine stopped after a failure" in done.stderr
    assert "the push sender broke down" in done.stderr
    assert logging.getLevelName(logging.CRITICAL) in done.stderr
