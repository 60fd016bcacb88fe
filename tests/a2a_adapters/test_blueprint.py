"""A2A mounted into a user's own Quart application with ``a2a_blueprint``, served for real."""

import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest
from a2a.types import a2a_pb2 as pb
from quart import Quart
from quart_trio import QuartTrio

from a2a_adapters import asyncio as asyncio_adapter
from a2a_adapters import build_engine
from a2a_adapters import trio as trio_adapter
from a2a_core import AgentContext, completed, working
from examples import echo, multi_turn
from tests import servers
from tests.a2a_adapters.support import (
    COMPLETED,
    INPUT_REQUIRED,
    LEGACY_CARD_PATH,
    card_of,
    error_of,
    get_task,
    jsonrpc_url,
    post_raw,
    rpc,
    sdk_client,
    sdk_message,
    sdk_send,
    send_task,
    state_of,
    status_text,
    wait_until,
)
from tests.servers import running_app

ECHO = "/agents/echo"
GREETER = "/agents/greeter"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


#: Every test here runs against the asyncio and the trio adapter.
pytestmark = pytest.mark.usefixtures("adapter")


def user_app() -> Quart:
    """The user's application: its own routes, and two agents mounted below ``/agents``."""
    on_trio = servers.ADAPTER == "trio"
    app = QuartTrio("users_app") if on_trio else Quart("users_app")
    adapter = trio_adapter if on_trio else asyncio_adapter
    a2a_blueprint, run_engine = adapter.a2a_blueprint, adapter.run_engine
    echo_engine = build_engine(echo.agent, card=echo.card, max_body_bytes=1024)
    greeter_engine = build_engine(multi_turn.agent, card=multi_turn.card)
    app.register_blueprint(a2a_blueprint(echo_engine), url_prefix=ECHO)
    app.register_blueprint(a2a_blueprint(greeter_engine, name="greeter"), url_prefix=GREETER)

    @app.route("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    # The application runs the engines while it serves, as a2a_blueprint's docstring asks.
    run_engine(app, echo_engine)
    run_engine(app, greeter_engine)

    return app


@pytest.fixture
def server() -> Iterator[str]:
    with running_app(user_app()) as url:
        yield url


def test_card_advertises_the_mounted_url(server: str) -> None:
    card = card_of(server + ECHO)
    legacy = card_of(server + ECHO, path=LEGACY_CARD_PATH)
    greeter = card_of(server + GREETER)
    assert card["name"] == "Echo"
    assert jsonrpc_url(card) == f"{server}{ECHO}/"
    assert legacy == card
    assert greeter["name"] == "Greeter"
    assert jsonrpc_url(greeter) == f"{server}{GREETER}/"


@pytest.mark.anyio
async def test_sdk_client_from_the_mounted_url(server: str) -> None:
    requests: list[str] = []
    async with sdk_client(server + ECHO, requests=requests) as client:
        event = await sdk_send(client, sdk_message("mounted"))
        task = await client.get_task(pb.GetTaskRequest(id=event.task.id))
    assert event.task.status.state == pb.TASK_STATE_COMPLETED
    assert "".join(p.text for p in event.task.status.message.parts) == "Echo: mounted"
    assert task.status == event.task.status
    assert requests[-2:] == [f"POST {server}{ECHO}/", f"POST {server}{ECHO}/"]


def test_the_users_own_route_still_works(server: str) -> None:
    response = httpx.get(server + "/health")
    missing = httpx.get(server + "/not-a-route")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert missing.status_code == 404


def test_mounted_agents_are_separate(server: str) -> None:
    echoed = send_task(server + ECHO, "one")
    asked = send_task(server + GREETER, "two")
    answered = send_task(server + GREETER, "Grace", task_id=asked["id"])
    assert state_of(echoed) == COMPLETED
    assert state_of(asked) == INPUT_REQUIRED
    assert status_text(answered) == "Hello, Grace! You first said: 'two'."
    # Each engine has its own tasks: one mount cannot see the other's.
    error_of(rpc(server + GREETER, "GetTask", {"id": echoed["id"]}), -32001)
    error_of(rpc(server + ECHO, "GetTask", {"id": asked["id"]}), -32001)
    assert get_task(server + ECHO, echoed["id"])["id"] == echoed["id"]


def test_errors_and_limits_below_the_mount(server: str) -> None:
    unknown = httpx.get(f"{server}{ECHO}/no/such/path")
    wrong_method = httpx.get(f"{server}{ECHO}/")
    version = rpc(server + ECHO, "GetTask", {"id": "x"}, headers={})
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}})
    too_large = post_raw(server + ECHO, body.encode() + b" " * 2000)
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == 404
    assert wrong_method.status_code == 405
    error_of(version, -32009)
    error_of(too_large, -32600, rpc_id=None, http_status=413)
    # The limit belongs to the echo mount only.
    fits = post_raw(server + GREETER, body.encode() + b" " * 2000)
    assert fits.status_code == 200


def test_a_mounted_blocking_send_whose_client_leaves_stops_waiting() -> None:
    """The same door as the fast path: a blocking send's waiter goes with its client."""
    release = threading.Event()

    async def endless(ctx: AgentContext) -> AsyncIterator[Any]:
        yield working()
        while not release.is_set():  # noqa: ASYNC110  a thread's Event; the test releases it
            await anyio.sleep(0.01)
        yield completed()

    on_trio = servers.ADAPTER == "trio"
    app = QuartTrio("users_app") if on_trio else Quart("users_app")
    adapter = trio_adapter if on_trio else asyncio_adapter
    engine = build_engine(endless)
    app.register_blueprint(adapter.a2a_blueprint(engine), url_prefix=ECHO)
    adapter.run_engine(app, engine)
    try:
        with running_app(app) as url:
            params = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(f"{url}{ECHO}/", json=body, headers={"A2A-Version": "1.0"}, timeout=0.3)
            assert wait_until(lambda: not engine.server.waiting, timeout=5)
            assert engine.server.live_runs  # the task goes on
    finally:
        release.set()
