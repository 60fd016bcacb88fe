"""The health probes' decisions: which requests are probes, and what each answers given what
the transport found out."""

import json

import pytest

from a2a_core import Core, CoreConfig
from a2a_core.card import AgentCard
from a2a_core.transport import Health, Probe

CORE = Core(CoreConfig(card=AgentCard(name="a", description="a", version="1")))


@pytest.mark.parametrize(
    ("method", "path", "probe"),
    [
        ("GET", "/healthz", Probe.LIVE),
        ("HEAD", "/healthz", Probe.LIVE),
        ("GET", "/readyz", Probe.READY),
        ("POST", "/readyz", None),
        ("GET", "/readyz/", None),
        ("GET", "/", None),
    ],
)
def test_which_requests_are_probes(method: str, path: str, probe: Probe | None) -> None:
    assert CORE.health_probe(method, path) is probe


@pytest.mark.parametrize(
    ("health", "live", "ready"),
    [
        (Health(), None, None),
        (Health(failed="boom"), "the engine failed: boom", "the engine failed: boom"),
        (Health(started=False), None, "the engine is starting"),
        (Health(stopping=True), None, "the server is shutting down"),
        (Health(store="refused"), None, "the task store does not answer: refused"),
    ],
)
def test_what_each_probe_answers(health: Health, live: str | None, ready: str | None) -> None:
    for probe, problem in ((Probe.LIVE, live), (Probe.READY, ready)):
        response = CORE.health(probe, health)
        body = json.loads(response.body)
        if problem is None:
            assert (response.status, body) == (200, {"status": "ok"})
        else:
            assert (response.status, body) == (503, {"status": "unavailable", "reason": problem})
        assert ("cache-control", "no-store") in response.headers


def test_a_head_gets_the_length_a_get_would() -> None:
    got, head = CORE.health(Probe.READY, Health()), CORE.health(Probe.READY, Health(), head=True)
    assert head.body == b""
    assert ("content-length", str(len(got.body))) in head.headers
    assert head.status == got.status
