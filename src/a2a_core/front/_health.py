"""Health probes: liveness and readiness, beside A2A's routes rather than among them.

An orchestrator (Kubernetes, a load balancer) asks two different questions. *Live*: is the
process worth keeping, or should it be restarted? Only a failed engine says restart; a store
that is down does not (a restart would not bring it back, and every replica restarting at once
makes an outage worse). *Ready*: should requests be sent here now? Not while the engine starts
or stops, nor while the store does not answer, since every task call would fail.

Which paths are probes and what each answer says are decided here, from facts the transport
found out (did the engine fail, did the store answer a probe): the transport only looks them
up and sends the answer. The probes are not A2A endpoints: they need no credentials (a probe
carries none, and the answer reveals nothing about tasks) and take no body.
"""

import enum

import attrs

from a2a_core._json import dumps

from ._exchange import JSON, HttpResponse

__all__ = ["HEALTH_PATHS", "Health", "Probe", "health_problem", "health_response", "probe_for"]


class Probe(enum.Enum):
    """Which question a probe asks."""

    LIVE = "live"
    READY = "ready"


#: The probes' paths, at the server's root (the names Kubernetes' own components use).
HEALTH_PATHS: dict[str, Probe] = {"/healthz": Probe.LIVE, "/readyz": Probe.READY}


def probe_for(method: str, path: str) -> Probe | None:
    """The probe ``method`` and ``path`` ask for, if they ask for one (only GET and HEAD do:
    anything else at those paths is not a probe, and gets the server's usual answer)."""
    if method not in ("GET", "HEAD"):
        return None
    return HEALTH_PATHS.get(path)


@attrs.frozen
class Health:
    """What the transport found out, for a probe to be answered on."""

    #: Why the engine stopped on its own (it will not recover), if it did.
    failed: str | None = None
    #: Whether the engine has started (requests are handled only from then).
    started: bool = True
    #: Whether the server is shutting down (new work should go elsewhere).
    stopping: bool = False
    #: Why the store's probe failed, if it did (only readiness asks the store).
    store: str | None = None


def health_problem(probe: Probe, health: Health) -> str | None:
    """Why the answer to ``probe`` is no, or ``None`` when it is yes."""
    if health.failed is not None:
        return f"the engine failed: {health.failed}"
    if probe is Probe.LIVE:
        return None
    if not health.started:
        return "the engine is starting"
    if health.stopping:
        return "the server is shutting down"
    if health.store is not None:
        return f"the task store does not answer: {health.store}"
    return None


def health_response(probe: Probe, health: Health, *, head: bool = False) -> HttpResponse:
    """The answer to ``probe``: 200, or 503 saying why not (:func:`health_problem`).

    Never cached (a proxy must not answer with an old health); a HEAD gets the headers only,
    with the length GET would send.
    """
    problem = health_problem(probe, health)
    if problem is None:
        status, body = 200, dumps({"status": "ok"})
    else:
        status, body = 503, dumps({"status": "unavailable", "reason": problem})
    headers = (
        ("content-type", JSON),
        ("cache-control", "no-store"),
        ("content-length", str(len(body))),
    )
    return HttpResponse(status, headers, b"" if head else body)
