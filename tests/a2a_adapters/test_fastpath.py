"""The applications ``create_app`` builds: A2A's endpoints take the short way to the engine
(``a2a_adapters._fastpath.FastPath``), and everything else is still the Quart application's."""

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest

from a2a_adapters import build_engine
from a2a_core import AgentContext, completed, working
from examples import echo
from tests import servers
from tests.a2a_adapters.support import (
    CARD_PATH,
    COMPLETED,
    list_tasks,
    send_task,
    state_of,
    wait_until,
)
from tests.servers import running_app, serving

pytestmark = pytest.mark.usefixtures("adapter")

LIMIT = 2048


@pytest.fixture
def server() -> Iterator[str]:
    """create_app's application, with two routes of the user's own added to it."""
    app = servers.create_app(build_engine(echo.agent, card=echo.card, max_body_bytes=LIMIT))

    @app.route("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.route("/reports/<name>", methods=["POST"])
    async def report(name: str) -> dict[str, str]:
        return {"report": name}

    with running_app(app) as url:
        yield url


def test_a2a_and_the_users_routes_share_the_application(server: str) -> None:
    assert state_of(send_task(server, "hello")) == COMPLETED
    assert httpx.get(server + "/health").json() == {"status": "ok"}
    assert httpx.post(server + "/reports/daily", content=b"x").json() == {"report": "daily"}


def test_paths_a2a_does_not_serve_still_get_its_not_found(server: str) -> None:
    response = httpx.get(server + "/nothing/here")
    assert response.status_code == 404
    assert response.json()["error"]["status"] == "NOT_FOUND"


def test_a_rest_route_is_answered_by_the_core(server: str) -> None:
    response = httpx.get(server + "/tasks/no-such-task", headers={"A2A-Version": "1.0"})
    assert response.status_code == 404
    assert response.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
    wrong_method = httpx.delete(server + "/tasks/x:cancel")
    assert wrong_method.status_code == 405
    assert wrong_method.headers["allow"] == "POST"


def _chunks(total: int) -> Iterator[bytes]:
    body = b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' + b"x" * total + b'"}}'
    for start in range(0, len(body), 100):
        yield body[start : start + 100]


def test_a_chunked_body_is_read_whole(server: str) -> None:
    response = httpx.post(server + "/", content=_chunks(1000), headers={"A2A-Version": "1.0"})
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert response.json()["error"]["code"] == -32001  # the whole id arrived: task not found


def test_a_body_over_the_limit_is_refused_unread(server: str) -> None:
    declared = httpx.post(server + "/", content=b"x" * (LIMIT + 1))
    assert declared.status_code == 413
    chunked = httpx.post(server + "/", content=_chunks(LIMIT))
    assert chunked.status_code == 413
    assert declared.json()["error"]["message"] == chunked.json()["error"]["message"]
    assert str(LIMIT) in declared.json()["error"]["message"]
    # An HTTP+JSON route answers in its own format: a google.rpc.Status with the HTTP code.
    rest = httpx.post(server + "/message:send", content=b"x" * (LIMIT + 1))
    assert rest.status_code == 413
    assert rest.json()["error"]["code"] == 413


def test_head_declares_the_length_of_get(server: str) -> None:
    got = httpx.get(server + CARD_PATH)
    head = httpx.head(server + CARD_PATH)
    assert head.status_code == 200
    assert head.content == b""
    assert int(head.headers["content-length"]) == len(got.content)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("agents.example", "http://agents.example/"),
        ("agents.example:80", "http://agents.example/"),
        ("agents.example:8080", "http://agents.example:8080/"),
    ],
)
def test_the_card_names_the_host_the_client_used(server: str, host: str, expected: str) -> None:
    card = httpx.get(server + CARD_PATH, headers={"Host": host}).json()
    assert card["supportedInterfaces"][0]["url"] == expected


def test_a_blocking_send_whose_client_leaves_stops_waiting() -> None:
    release = threading.Event()

    async def endless(ctx: AgentContext) -> AsyncIterator[Any]:
        yield working()
        while not release.is_set():  # noqa: ASYNC110  a thread's Event; the test releases it
            await anyio.sleep(0.01)
        yield completed()

    engine = build_engine(endless)
    try:
        with serving(engine) as url:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}
                },
            }
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=0.3)
            # The task still works, but nobody waits for it any more.
            assert wait_until(lambda: not engine.server.waiting, timeout=5)
            assert engine.server.live_runs
    finally:
        release.set()


def test_half_a_request_is_not_acted_on() -> None:
    # A body that is whole JSON, but less than the Content-Length promised: the client hung up
    # before its request was complete, so nothing may be decided on it.
    engine = build_engine(echo.agent, card=echo.card)
    message = {"messageId": "m-half", "role": "ROLE_USER", "parts": [{"text": "x"}]}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    ).encode()
    with serving(engine) as url:
        host, port = url.removeprefix("http://").split(":")
        head = (
            f"POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"A2A-Version: 1.0\r\nContent-Length: {len(body) + 100}\r\n\r\n"
        ).encode()
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(head + body)
            time.sleep(0.2)  # let the server read what came
        # A whole request afterwards is served: the server noticed the first one and moved on.
        assert state_of(send_task(url, "after")) == COMPLETED
        # Only that one was stored (asked through the API: a store over a network has no len).
        assert len(list_tasks(url)["tasks"]) == 1
