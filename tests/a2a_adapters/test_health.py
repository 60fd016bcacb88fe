"""The health probes over real HTTP, on both adapters: ``/healthz`` (live) and ``/readyz``
(ready: the engine runs and the store answers), outside A2A's routes and its credentials.

Readiness is watched going to 503 and back while a ``redis-server`` of the test's own is
stopped and started again.
"""

import time
from pathlib import Path

import httpx
import pytest

from a2a_adapters import BearerTokens
from a2a_adapters.stores import RedisStore, SqliteStore
from examples import echo
from tests.a2a_adapters.conftest import unique_prefix
from tests.a2a_adapters.redis_server import RedisServer
from tests.servers import running_server

pytestmark = pytest.mark.usefixtures("adapter")

#: Seconds a probe's answer may take to change after the store went away or came back.
CHANGE_TIMEOUT = 5.0


def test_both_probes_answer_ok_without_credentials() -> None:
    auth = [BearerTokens({"secret": "alice"})]
    with running_server(echo.agent, card=echo.card, auth=auth) as url:
        live = httpx.get(url + "/healthz")
        ready = httpx.get(url + "/readyz")
        head = httpx.head(url + "/readyz")
        # The A2A routes still want credentials: the probes are outside them.
        card = httpx.get(url + "/extendedAgentCard", headers={"A2A-Version": "1.0"})
    for response in (live, ready):
        assert response.status_code == 200
        assert response.json() == {"status": "ok"}
        assert response.headers["cache-control"] == "no-store"
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(ready.content))
    assert card.status_code == 401


def test_other_methods_are_not_probes() -> None:
    with running_server(echo.agent, card=echo.card) as url:
        response = httpx.post(url + "/readyz", json={})
    assert response.status_code in (404, 405)


def test_readiness_on_sqlite_asks_the_file(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "tasks.db")
    try:
        with running_server(echo.agent, card=echo.card, store=store) as url:
            ready = httpx.get(url + "/readyz")
            store.close()  # as good as a file gone bad: nothing can be read any more
            closed = httpx.get(url + "/readyz")
    finally:
        store.close()
    assert ready.status_code == 200, ready.text
    assert closed.status_code == 503
    assert closed.json()["reason"].startswith("the task store does not answer: ")


def _wait_for(url: str, status: int) -> httpx.Response:
    deadline = time.monotonic() + CHANGE_TIMEOUT
    while True:
        response = httpx.get(url, timeout=CHANGE_TIMEOUT)
        if response.status_code == status or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def test_readiness_follows_redis_going_away_and_coming_back() -> None:
    with RedisServer() as redis:
        store = RedisStore(redis.url, prefix=unique_prefix(), connect_timeout=0.5)
        try:
            with running_server(echo.agent, card=echo.card, store=store) as url:
                assert httpx.get(url + "/readyz").status_code == 200
                redis.stop()
                down = _wait_for(url + "/readyz", 503)
                alive = httpx.get(url + "/healthz")
                redis.start()
                back = _wait_for(url + "/readyz", 200)
        finally:
            store.close()
    assert down.status_code == 503, down.text
    assert down.json()["status"] == "unavailable"
    assert down.json()["reason"].startswith("the task store does not answer: ")
    # A store that is down is no reason to restart the process: it is still live.
    assert alive.status_code == 200
    assert back.status_code == 200, back.text
