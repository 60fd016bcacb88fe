"""The strategies keep their promises: valid requests are accepted by the core, in every dialect
and binding; each near-valid one gets a protocol error that names what was wrong."""

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import Core, CoreConfig, Message, Task
from a2a_core.card import AgentCard
from a2a_core.decisions import Dispatch
from a2a_core.testing import Driver
from a2a_core.testing.strategies import (
    Dialect,
    NearValid,
    StreamEvent,
    agent_cards,
    messages,
    near_valid,
    requests,
    stream_events,
    tasks,
)
from a2a_core.transport import ANONYMOUS, HttpRequest, HttpResponse, V1Codec
from tests.a2a_core.support import CARD

CORE = Core(CoreConfig(card=CARD, streaming=True, push_notifications=True))
CODEC = V1Codec()
DIALECTS: list[Dialect] = ["1.0", "1.0-rest", "0.3", "legacy"]
PROTOCOL_ERRORS = {-32700, -32600, -32601, -32602}
FAST = settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])


def asks_for_the_extended_card(request: HttpRequest) -> bool:
    """By its method (``GetExtendedAgentCard``, v0.3's ``agent/getAuthenticatedExtendedCard``)
    or its REST path: not by its body, whose ids and texts may hold the word."""
    if request.path.endswith("extendedAgentCard"):
        return True
    try:
        document = json.loads(request.body)
    except ValueError:
        return False
    return isinstance(document, dict) and "xtended" in str(document.get("method", ""))


@FAST
@given(dialect=st.sampled_from(DIALECTS), data=st.data())
def test_valid_requests_are_routed_to_a_call(dialect: Dialect, data: st.DataObject) -> None:
    request = data.draw(requests(dialect))
    routed = CORE.handle_http(request, ANONYMOUS, "http://localhost")
    if asks_for_the_extended_card(request):
        # The extended card is configuration: the front answers it (here: none is configured).
        assert isinstance(routed, HttpResponse), (request, routed)
        return
    assert isinstance(routed, Dispatch), (request, routed)


@FAST
@given(dialect=st.sampled_from(DIALECTS), data=st.data())
def test_valid_requests_are_decided_without_an_internal_error(
    dialect: Dialect, data: st.DataObject
) -> None:
    driver = Driver(push_notifications=True)
    exchange = driver.request(data.draw(requests(dialect)))
    if exchange.response is not None and exchange.response.headers:
        body = exchange.response.body
        if body.startswith(b"{") and b'"error"' in body:
            code = json.loads(body)["error"]["code"]
            # Semantic refusals (no such task, not configured…) are fine; a crash is not.
            assert code not in (-32603, 500), body


def _error(response: HttpResponse) -> dict[str, Any]:
    body = json.loads(response.body)
    assert "result" not in body, body
    error: dict[str, Any] = body["error"]
    return error


def _fields(error: dict[str, Any]) -> list[str]:
    return [
        violation["field"]
        for detail in error.get("data") or []
        if isinstance(detail, dict)
        for violation in detail.get("fieldViolations", [])
    ]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(dialect=st.sampled_from(["1.0", "0.3", "legacy"]), data=st.data())
def test_a_near_valid_request_gets_a_protocol_error_naming_it(
    dialect: Dialect, data: st.DataObject
) -> None:
    broken: NearValid = data.draw(near_valid(dialect))
    routed = CORE.handle_http(broken.request, ANONYMOUS, "http://localhost")
    assert isinstance(routed, HttpResponse), (broken, routed)
    error = _error(routed)
    assert error["code"] in PROTOCOL_ERRORS, (broken, error)
    if broken.path.startswith("params.") and error["code"] == -32602:
        named = _fields(error)
        assert named, (broken, error)
        if dialect == "1.0":
            # The field named is the one broken, or the object holding it (a oneof part
            # whose content is wrong is named as the part).
            assert any(broken.path.startswith(field) for field in named), (broken, named)


@given(messages())
def test_messages_survive_the_codec(message: Message) -> None:
    assert CODEC.decode(Message, CODEC.encode(message), "message") == message


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(tasks())
def test_tasks_survive_the_codec(task: Task) -> None:
    assert CODEC.decode(Task, CODEC.encode(task), "task") == task


@settings(max_examples=50, suppress_health_check=[HealthCheck.too_slow])
@given(stream_events())
def test_stream_events_survive_the_codec(event: StreamEvent) -> None:
    wire = CODEC.encode_event(event)
    (kind,) = wire
    assert kind in {"task", "message", "statusUpdate", "artifactUpdate"}
    assert CODEC.decode(type(event), wire[kind], "event") == event


@settings(max_examples=50, suppress_health_check=[HealthCheck.too_slow])
@given(agent_cards())
def test_agent_cards_survive_the_codec_and_the_server_fills_them_in(card: AgentCard) -> None:
    assert CODEC.decode(AgentCard, CODEC.encode(card), "card") == card
    served = Core(CoreConfig(card=card)).card("https://agents.example.com")
    assert served.name == card.name
    assert served.supported_interfaces  # the server says truthfully where it answers
