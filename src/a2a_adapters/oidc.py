"""Bearer JWTs validated against an issuer's keys (OpenID Connect), beside static tokens and API
keys.

A token is accepted when its signature verifies with a key of the issuer's JWKS (chosen by the
token's ``kid``), with an algorithm allowed here (never ``none``, never HMAC: the issuer's keys
are public), and its claims hold: ``iss`` is the issuer, ``aud`` names the audience, ``exp`` is
in the future and ``nbf``/``iat`` are not, each within ``leeway`` seconds of clock skew. The
principal is one claim (``sub`` by default), so a task belongs to whoever the issuer says.

Verification happens on every request and never waits: the keys are held in memory. They are
fetched by :meth:`JwtBearer.run` in the engine's task group: once at start-up (the engine is
ready only after the first attempt), then every ``refresh_seconds``, and sooner when a token
names a ``kid`` the set lacks (the issuer rotated its keys), but not more often than every
``min_refresh_seconds``, so that tokens with made-up ``kid`` values cannot make the server
hammer the issuer. A fetch that fails is logged with its cause and the keys held are kept.

    from a2a_adapters.oidc import JwtBearer
    serve(agent, auth=[JwtBearer("https://issuer.example", "my-agent")])
    # or: serve --jwt-issuer https://issuer.example --jwt-audience my-agent

It needs the ``oidc`` extra (PyJWT with cryptography).
"""

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import httpx
from anyio.abc import TaskStatus

from a2a_core.card import HTTPAuthSecurityScheme, OpenIdConnectSecurityScheme, SecurityScheme

from ._extras import needs

with needs("oidc", "a2a_adapters.oidc"):
    import jwt

__all__ = ["JwtBearer"]

log = logging.getLogger("a2a_adapters")

#: The algorithms an issuer's tokens may be signed with (asymmetric only).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")
DISCOVERY = "/.well-known/openid-configuration"


class JwtBearer:
    """``Authorization: Bearer <JWT>`` from ``issuer``, for ``audience``.

    The keys come from ``jwks`` (a JWKS document, for tests and static setups), else from
    ``jwks_url``, else from the issuer's OpenID Connect discovery document
    (``ISSUER/.well-known/openid-configuration``, its ``jwks_uri``). ``claim`` names the
    principal; ``leeway`` is the clock skew allowed, in seconds.
    """

    name = "oidc"

    def __init__(
        self,
        issuer: str,
        audience: str | Sequence[str],
        *,
        jwks: Mapping[str, Any] | None = None,
        jwks_url: str | None = None,
        claim: str = "sub",
        leeway: float = 30.0,
        algorithms: Sequence[str] = ALGORITHMS,
        refresh_seconds: float = 300.0,
        min_refresh_seconds: float = 30.0,
        fetch_timeout: float = 5.0,
    ) -> None:
        if not issuer:
            raise ValueError("a JWT issuer is needed")
        if not audience:
            raise ValueError("a JWT audience is needed")
        refused = [a for a in algorithms if a not in ALGORITHMS]
        if refused:
            raise ValueError(f"JWT algorithms must be asymmetric ones of {ALGORITHMS}: {refused}")
        if leeway < 0:
            raise ValueError(f"leeway must not be negative, got {leeway}")
        self.issuer = issuer
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        self.claim = claim
        self.leeway = leeway
        self.algorithms = list(algorithms)
        self.jwks_url = jwks_url
        self.refresh_seconds = refresh_seconds
        self.min_refresh_seconds = min_refresh_seconds
        self.fetch_timeout = fetch_timeout
        self._keys: dict[str, Any] = {}
        self._static = jwks is not None
        if jwks is not None:
            self._keys = _keys_of(jwks)
        self._wanted = anyio.Event()
        self._fetched_at = -float("inf")
        #: How many times the keys were fetched (for tests and logs).
        self.fetches = 0

    # --- Authenticator ------------------------------------------------------------------------

    def principal(self, headers: Mapping[str, str]) -> str | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or token.count(".") != 2:
            return None
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError:
            return None
        key = self._keys.get(kid) if kid else self._only_key()
        if key is None:
            self._want_keys()  # rotated, perhaps: look again (rate-limited)
            return None
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=self.algorithms,
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError:
            return None
        principal = claims.get(self.claim)
        return principal if isinstance(principal, str) and principal else None

    def challenge(self) -> str:
        return 'Bearer realm="a2a", error="invalid_token"'

    def scheme(self) -> SecurityScheme:
        if self._static or self.jwks_url:
            return HTTPAuthSecurityScheme(
                scheme="Bearer", bearer_format="JWT", description=f"A JWT from {self.issuer}"
            )
        return OpenIdConnectSecurityScheme(
            open_id_connect_url=self.issuer.rstrip("/") + DISCOVERY,
            description="An OpenID Connect access token (JWT)",
        )

    # --- the keys -----------------------------------------------------------------------------

    def _only_key(self) -> Any:
        # A token without kid is accepted only when the set leaves no doubt which key it means.
        return next(iter(self._keys.values())) if len(self._keys) == 1 else None

    def _want_keys(self) -> None:
        # The keeper fetches at the earliest min_refresh_seconds after its last fetch.
        if not self._static:
            self._wanted.set()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Keep the issuer's keys (run in the engine's task group); reports started once the
        first fetch has been tried."""
        if self._static:
            task_status.started()
            return
        async with httpx.AsyncClient(timeout=self.fetch_timeout) as client:
            await self._fetch(client)
            task_status.started()
            while True:
                with anyio.move_on_after(self.refresh_seconds):
                    await self._wanted.wait()
                # Not sooner than the minimum, whoever asked.
                pause = self._fetched_at + self.min_refresh_seconds - time.monotonic()
                if pause > 0:
                    await anyio.sleep(pause)
                await self._fetch(client)

    async def _fetch(self, client: httpx.AsyncClient) -> None:
        self._wanted = anyio.Event()
        self._fetched_at = time.monotonic()
        try:
            url = self.jwks_url or await self._discover(client)
            reply = await client.get(url)
            reply.raise_for_status()
            keys = _keys_of(reply.json())
        except (httpx.HTTPError, ValueError, KeyError, TypeError, jwt.PyJWTError) as error:
            log.warning("could not fetch the JWT keys of %s: %r", self.issuer, error)
            return
        self.fetches += 1
        if keys != self._keys:
            log.info("the JWT keys of %s: %s", self.issuer, ", ".join(sorted(keys)) or "none")
        self._keys = keys

    async def _discover(self, client: httpx.AsyncClient) -> str:
        reply = await client.get(self.issuer.rstrip("/") + DISCOVERY)
        reply.raise_for_status()
        found = reply.json()
        if found.get("issuer") != self.issuer:
            raise ValueError(f"the discovery document names issuer {found.get('issuer')!r}")
        uri = found["jwks_uri"]
        if not isinstance(uri, str):
            raise ValueError("the discovery document's jwks_uri is not a URL")
        return uri


def _keys_of(document: Mapping[str, Any]) -> dict[str, Any]:
    """The signing keys of a JWKS document, by ``kid`` (keys for other uses, or that PyJWT
    cannot read, are left out)."""
    keys: dict[str, Any] = {}
    for n, entry in enumerate(document["keys"]):
        if entry.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK(entry)
        except jwt.PyJWTError as error:
            log.warning("a JWKS key was left out: %s", error)
            continue
        keys[entry.get("kid") or f"#{n}"] = key.key
    return keys
