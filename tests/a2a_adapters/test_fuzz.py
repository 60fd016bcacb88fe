"""The hostile fuzz invariant over real HTTP, on both adapters: no 5xx, no dead engine.

Requests from ``a2a_core.testing.strategies.hostile`` (every dialect and binding, any field
replaced by something built to hurt, or the bytes damaged) go to one real server per adapter,
whose agent streams, pushes and stores like a real one. Every answer must be a protocol error
or a success; afterwards the same server must still serve an ordinary send, and its engine must
still be running.

``A2A_FUZZ_EXAMPLES`` sets how many requests each dialect sends (small by default; ``make fuzz``
sends thousands).
"""

import os
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from a2a_adapters import Engine, build_engine
from a2a_core.testing.strategies import Dialect, Hostile, hostile
from a2a_core.transport import HttpRequest
from examples import echo
from tests import servers
from tests.a2a_adapters.support import COMPLETED, TLS, send_task, state_of

pytestmark = pytest.mark.usefixtures("module_adapter")

EXAMPLES = max(int(os.environ.get("A2A_FUZZ_EXAMPLES", "150")) // 3, 1)
#: The longest any one answer (a stream included) may take.
ANSWER_TIMEOUT = 10.0


@pytest.fixture(scope="module")
def engine(module_adapter: servers.Adapter) -> Engine:
    return build_engine(
        echo.agent,
        card=echo.card,
        streaming=True,
        push=True,
        push_allow_hosts=["127.0.0.1"],
        task_ttl=30,
    )


@pytest.fixture(scope="module")
def url(engine: Engine) -> Iterator[str]:
    with servers.serving(engine) as served:
        yield served


@pytest.fixture(scope="module")
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(timeout=ANSWER_TIMEOUT, verify=TLS) as client:
        yield client


def send(http: httpx.Client, url: str, request: HttpRequest) -> httpx.Response:
    target = url + request.path + (f"?{request.query}" if request.query else "")
    built = http.build_request(
        request.method, target, headers=dict(request.headers), content=request.body
    )
    response = http.send(built, stream=True)
    try:
        response.read()  # a stream ends when its task settles: the echo agent is quick
    finally:
        response.close()
    return response


@pytest.mark.parametrize("dialect", ["1.0", "1.0-rest", "0.3", "legacy"])
def test_hostile_requests_never_get_a_5xx_nor_stop_the_engine(
    dialect: Dialect, http: httpx.Client, url: str, engine: Engine
) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(hostile(dialect))
    def check(attack: Hostile) -> None:
        response = send(http, url, attack.request)
        assert response.status_code < 500, (attack, response.status_code, response.content)
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("application/json") and response.content:
            response.json()  # the body is JSON, whatever went in

    check()
    assert engine.failure is None
    assert state_of(send_task(url, "still serving?")) == COMPLETED
