"""Capacity limits over real HTTP, on both adapters: one run, one run of a caller, or one
stream too many is answered busy (503, ``Retry-After``) at once, never queued; the work under
way goes on, and room comes back when it ends."""

from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import httpx
import pytest

from a2a_adapters import BearerTokens
from a2a_core import AgentContext, completed, working
from tests.a2a_adapters.sse import open_stream, rpc_body, stream_headers
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    COMPLETED,
    endpoint,
    rpc,
    send_params,
    wait_for_state,
)
from tests.servers import running_server

pytestmark = pytest.mark.usefixtures("adapter")

ALICE = {**A2A_HEADERS, "Authorization": "Bearer a"}
BOB = {**A2A_HEADERS, "Authorization": "Bearer b"}
TOKENS = [BearerTokens({"a": "alice", "b": "bob"})]


async def waits(ctx: AgentContext) -> AsyncIterator[Any]:
    """Works for a moment, long enough for a second request to come while it does."""
    yield working("waiting")
    await anyio.sleep(0.4)
    yield completed("finished")


def start(url: str, headers: Mapping[str, str] = A2A_HEADERS) -> httpx.Response:
    return rpc(url, "SendMessage", send_params("go", return_immediately=True), headers=headers)


def assert_busy(response: httpx.Response, says: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    error = response.json()["error"]
    assert error["code"] == -32603
    assert says in error["message"]


def test_one_run_too_many_is_busy_until_a_run_ends() -> None:
    with running_server(waits, max_runs=1) as url:
        first = start(url).json()["result"]["task"]
        assert_busy(start(url), "its limit is 1")
        wait_for_state(url, first["id"], {COMPLETED})
        assert start(url).status_code == 200


def test_a_caller_over_its_share_is_busy_and_others_are_not() -> None:
    with running_server(waits, auth=TOKENS, max_runs_per_owner=1) as url:
        assert start(url, ALICE).status_code == 200
        assert_busy(start(url, ALICE), "the limit per caller is 1")
        assert start(url, BOB).status_code == 200


def test_one_stream_too_many_is_busy() -> None:
    body = rpc_body("SendStreamingMessage", send_params("go"))
    with running_server(waits, streaming=True, max_streams=1) as url:
        with open_stream(url, "SendStreamingMessage", send_params("go")) as first:
            first.events(1)  # open: it has its task
            second = httpx.post(endpoint(url), json=body, headers=stream_headers())
            assert_busy(second, "streams open, its limit is 1")
            first.events()  # to its end
        third = rpc(url, "SendMessage", send_params("go"))  # not a stream: never refused
        with open_stream(url, "SendStreamingMessage", send_params("again")) as fourth:
            assert fourth.events(1)
    assert third.status_code == 200
