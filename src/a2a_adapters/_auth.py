"""Authentication: who is calling, decided before a request reaches the core.

The core trusts the :class:`~a2a_core.transport.Caller` it is given (the seed's "authenticated entry
point"), so verifying credentials is the adapter's job; a request with missing or wrong
credentials is answered 401 with a ``WWW-Authenticate`` challenge per scheme, rendered by the
core in the request's binding, and never passed on. Only the public card needs none.

That rule is :func:`authenticate`, and every way in asks it: the door (``a2a_adapters._door``,
on the head, before the body is read), which every HTTP entry goes through (A2A's short way,
the mounted blueprint; HTTP/1.1 and HTTP/2, gRPC included, on either loop), and
``Engine.handle`` for a request handed to it whole with no verified caller.

Secrets are compared by their SHA-256 digests, so a lookup takes the same time whatever the
presented value shares with a real one.
"""

import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from anyio.abc import TaskStatus

from a2a_core import Core
from a2a_core.card import APIKeySecurityScheme, HTTPAuthSecurityScheme, SecurityScheme
from a2a_core.transport import ANONYMOUS, Caller, HttpRequest, HttpResponse

__all__ = [
    "ANONYMOUS",
    "ApiKeys",
    "Authenticator",
    "BearerTokens",
    "KeepsState",
    "authenticate",
    "challenges",
    "identify",
]

log = logging.getLogger("a2a_adapters")


@runtime_checkable
class Authenticator(Protocol):
    """Turns request headers into a principal."""

    #: The name of the scheme in the card's ``securitySchemes``.
    name: str

    def principal(self, headers: Mapping[str, str]) -> str | None:
        """The verified principal, or ``None`` when the credentials are missing or wrong."""
        ...

    def challenge(self) -> str:
        """The ``WWW-Authenticate`` value that tells a client how to authenticate."""
        ...

    def scheme(self) -> SecurityScheme:
        """How the card describes this scheme to clients."""
        ...


@runtime_checkable
class KeepsState(Protocol):
    """An authenticator with state of its own to keep (an issuer's keys: ``oidc.JwtBearer``):
    the engine runs :meth:`run` in its task group, and is ready once it has reported started."""

    async def run(self, *, task_status: TaskStatus[Any]) -> None: ...


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class BearerTokens:
    """``Authorization: Bearer <token>``, each token naming its principal."""

    name = "bearer"

    def __init__(self, tokens: Mapping[str, str]) -> None:
        """``tokens`` maps each token to the principal it authenticates."""
        if not tokens:
            raise ValueError("at least one token is needed")
        self._principals = {_digest(token): principal for token, principal in tokens.items()}

    def principal(self, headers: Mapping[str, str]) -> str | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self._principals.get(_digest(token.strip()))

    def challenge(self) -> str:
        return 'Bearer realm="a2a"'

    def scheme(self) -> SecurityScheme:
        return HTTPAuthSecurityScheme(scheme="Bearer", description="A bearer token")


class ApiKeys:
    """An API key in a request header (``X-API-Key`` by default)."""

    name = "apiKey"

    def __init__(self, keys: Mapping[str, str], *, header: str = "X-API-Key") -> None:
        """``keys`` maps each key to the principal it authenticates."""
        if not keys:
            raise ValueError("at least one key is needed")
        self.header = header
        self._principals = {_digest(key): principal for key, principal in keys.items()}

    def principal(self, headers: Mapping[str, str]) -> str | None:
        key = headers.get(self.header.lower(), "").strip()
        return self._principals.get(_digest(key)) if key else None

    def challenge(self) -> str:
        return f'ApiKey realm="a2a", header="{self.header}"'

    def scheme(self) -> SecurityScheme:
        return APIKeySecurityScheme(location="header", name=self.header, description="An API key")


def identify(authenticators: Sequence[Authenticator], request: HttpRequest) -> Caller | None:
    """The caller ``request``'s credentials prove, or ``None`` when they prove none.

    With no authenticators the server runs open and every caller is :data:`ANONYMOUS`.
    """
    if not authenticators:
        return ANONYMOUS
    for authenticator in authenticators:
        try:
            principal = authenticator.principal(request.headers)
        except Exception as error:
            # An authenticator's own fault is a refusal, never a 500: the credentials it was
            # shown are the caller's to choose. Logged once a minute, without a traceback, so
            # that a caller cannot fill the log at the request rate.
            _faulted(authenticator, error)
            continue
        if principal is not None:
            return Caller(principal)
    return None


#: When each authenticator (by its scheme's name) last had its fault logged.
_FAULT_LOGGED: dict[str, float] = {}
_FAULT_EVERY = 60.0


def _faulted(authenticator: Authenticator, error: Exception) -> None:
    name = authenticator.name
    now = time.monotonic()
    if now - _FAULT_LOGGED.get(name, -_FAULT_EVERY) >= _FAULT_EVERY:
        _FAULT_LOGGED[name] = now
        log.warning(
            "the %s authenticator raised %r; the request was refused (logged once a minute)",
            name,
            error,
        )


def authenticate(
    core: Core, authenticators: Sequence[Authenticator], request: HttpRequest
) -> Caller | HttpResponse:
    """The caller of ``request``, or the core's 401 answer (in the request's binding, with a
    challenge per scheme) when it is not authenticated and needs to be: the 401 rule. Only the
    head is read (``request.body`` may still be empty)."""
    caller = identify(authenticators, request)
    if caller is not None:
        return caller
    if core.is_public(request):
        return ANONYMOUS
    return core.unauthenticated(request, challenges(authenticators, request.headers))


def challenges(
    authenticators: Sequence[Authenticator], headers: Mapping[str, str]
) -> tuple[str, ...]:
    """The ``WWW-Authenticate`` values of a 401: one per scheme. A bearer scheme's says
    ``error="invalid_token"`` only when the request presented a bearer token (RFC 6750 §3.1:
    a request with no credentials at all gets no error code, just how to authenticate)."""
    scheme, _, _ = headers.get("authorization", "").partition(" ")
    presented = scheme.lower() == "bearer"
    found = []
    for authenticator in authenticators:
        challenge = authenticator.challenge()
        if presented and challenge.lower().startswith("bearer"):
            challenge += ', error="invalid_token"'
        found.append(challenge)
    return tuple(found)
