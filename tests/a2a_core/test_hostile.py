"""The hostile fuzz invariant, through the whole server with no I/O.

Any request built to hurt (``a2a_core.testing.strategies.hostile``: any field of any dialect
replaced by a lone surrogate, nesting past every limit, numbers no double holds, thousands of
items, damaged bytes...) gets a protocol error or a success: never a 5xx, never an exception,
never a body that is not JSON; and whatever it stored, every later read still works.

``A2A_FUZZ_EXAMPLES`` sets how many requests each dialect gets (a small number by default, so
that the suite stays fast; ``make fuzz`` runs thousands).
"""

import json
import os
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings

from a2a_core.testing import Driver
from a2a_core.testing.strategies import Dialect, Hostile, hostile
from a2a_core.transport import HttpResponse
from examples import echo

EXAMPLES = int(os.environ.get("A2A_FUZZ_EXAMPLES", "150"))
DIALECTS: list[Dialect] = ["1.0", "1.0-rest", "0.3", "legacy"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_hostile_requests_get_protocol_answers_and_break_no_later_read(dialect: Dialect) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(hostile(dialect))
    def check(attack: Hostile) -> None:
        driver = Driver(echo.agent, push_notifications=True, task_ttl=timedelta(seconds=60))
        exchange = driver.request(attack.request)
        driver.run_agents()
        driver.advance(1)
        response = exchange.response
        if response is not None:
            assert isinstance(response, HttpResponse)
            assert response.status < 500, (attack, response)
            content_type = dict(response.headers).get("content-type", "")
            if response.body and content_type.startswith("application/json"):
                json.loads(response.body.decode("utf-8"))  # strict UTF-8, and JSON
            elif response.body:  # an event stream (v0.3 answers a streaming call's error so)
                assert content_type.startswith("text/event-stream"), response
                response.body.decode("utf-8")
        for frame in exchange.events():
            json.dumps(frame)
        for notify in driver.pushes:
            json.loads(notify.body.decode("utf-8"))
        listed = driver.rpc("ListTasks", {"includeArtifacts": True}).result()
        for task in listed["tasks"]:
            got = driver.rpc("GetTask", {"id": task["id"]}).result()
            assert got["id"] == task["id"]

    check()
