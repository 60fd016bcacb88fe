"""CORS: which browser origins may call the server, and what the browser is told.

A browser refuses a page's request to another origin unless the server says the origin may
make it: for a request with an ``Origin`` header, ``Access-Control-Allow-Origin`` on the
answer; and before any request a page could not make from a form (a JSON POST, one with
``Authorization`` or ``A2A-Version``), a *preflight* ``OPTIONS`` asking whether it may. The
preflight carries no credentials, so it is answered here, before authentication and apart
from A2A's routes.

Off unless origins are configured (a server no browser page needs to reach should not invite
one). Only the configured origins are allowed (``*``: any); credentials are headers
(``Authorization``, ``X-API-Key``), never cookies, so ``Access-Control-Allow-Credentials`` is
not sent and ``*`` is safe in the way the CORS spec means.

Decided here, from the request's headers: a transport only sends what this says.
"""

from collections.abc import Collection, Mapping

from a2a_core._config import ANY_ORIGIN, origin_problem

from ._exchange import HttpResponse

__all__ = ["ANY_ORIGIN", "cors_headers", "origin_problem", "preflight"]

#: What a page may send: A2A's methods, and the headers its bindings and credentials use.
ALLOWED_METHODS = "GET, HEAD, POST, DELETE, OPTIONS"
ALLOWED_HEADERS = (
    "authorization, content-type, a2a-version, a2a-extensions, x-api-key, last-event-id, "
    "if-none-match"
)
#: What a page may read of an answer beyond the CORS-safelisted headers.
EXPOSED_HEADERS = "a2a-version, a2a-extensions, etag, retry-after, www-authenticate"
#: Seconds a browser may keep a preflight's answer.
MAX_AGE = "600"


def _allowed(origin: str, origins: Collection[str]) -> str | None:
    """What ``Access-Control-Allow-Origin`` says for ``origin``, or ``None`` if it may not."""
    if not origin or not origins:
        return None
    if ANY_ORIGIN in origins:
        return ANY_ORIGIN
    return origin if origin.lower() in origins else None


def cors_headers(
    headers: Mapping[str, str], origins: Collection[str]
) -> tuple[tuple[str, str], ...]:
    """The headers to add to the answer of a request (not a preflight) with these (lower-case)
    ``headers``: none unless it comes from an allowed origin."""
    allowed = _allowed(headers.get("origin", ""), origins)
    if allowed is None:
        return ()
    found = [
        ("access-control-allow-origin", allowed),
        ("access-control-expose-headers", EXPOSED_HEADERS),
    ]
    if allowed != ANY_ORIGIN:
        found.append(("vary", "origin"))  # the answer differs by origin: caches must know
    return tuple(found)


def preflight(
    method: str, headers: Mapping[str, str], origins: Collection[str]
) -> HttpResponse | None:
    """The answer to a CORS preflight (an ``OPTIONS`` with ``Origin`` and
    ``Access-Control-Request-Method``), or ``None`` if the request is not one (or CORS is
    off): it goes on to the server. A preflight from an origin not allowed is refused (403,
    with no CORS headers: the browser then refuses the page its request)."""
    if not origins or method != "OPTIONS":
        return None
    if "origin" not in headers or "access-control-request-method" not in headers:
        return None
    allowed = _allowed(headers["origin"], origins)
    if allowed is None:
        body = b"This origin may not call the server"
        return HttpResponse(
            403, (("content-type", "text/plain"), ("content-length", str(len(body)))), body
        )
    answer = [
        ("access-control-allow-origin", allowed),
        ("access-control-allow-methods", ALLOWED_METHODS),
        # The headers it asks for: the origin is trusted, and A2A extensions add headers.
        (
            "access-control-allow-headers",
            headers.get("access-control-request-headers") or ALLOWED_HEADERS,
        ),
        ("access-control-max-age", MAX_AGE),
        ("content-length", "0"),
    ]
    if allowed != ANY_ORIGIN:
        answer.append(("vary", "origin"))
    return HttpResponse(204, tuple(answer))
