"""Bearer JWTs validated against an issuer's keys (OpenID Connect), beside static tokens and API
keys.

A token is accepted when its signature verifies with a key of the issuer's JWKS (chosen by the
token's ``kid``), with an algorithm allowed here (never ``none``, never HMAC: the issuer's keys
are public) *and* fit for that key (its JWK's ``alg``, else the algorithms of its type and curve:
a header that names an RSA algorithm for an EC key is refused before any verification is
tried), and its claims hold: ``iss`` is the issuer, ``aud`` names the audience, ``exp`` is in
the future and ``nbf``/``iat`` are not, each within ``leeway`` seconds of clock skew and each a
JSON number (RFC 7519's NumericDate, not a string that looks like one). The principal is one
claim (``sub`` by default), so a task belongs to whoever the issuer says.

Whatever a token holds, the answer is the principal or a refusal (401 with a challenge): a
token that makes the verifier raise anything at all is refused, and logged at debug level
only, since anyone can send one at the request rate.

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
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import attrs
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
#: The algorithms a key of each JWK type (and curve) can verify, when its JWK names none.
_FIT = {
    "RSA": frozenset({"RS256", "RS384", "RS512", "PS256"}),
    ("EC", "P-256"): frozenset({"ES256"}),
    ("EC", "P-384"): frozenset({"ES384"}),
    ("OKP", "Ed25519"): frozenset({"EdDSA"}),
    ("OKP", "Ed448"): frozenset({"EdDSA"}),
}
#: The claims that are times (RFC 7519 NumericDate: a JSON number of seconds).
_TIMES = ("exp", "nbf", "iat")


@attrs.frozen
class _Key:
    """A verifying key of the issuer's, pinned to the algorithms it may be used with."""

    key: Any
    algorithms: frozenset[str]


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
        self._keys: dict[str, _Key] = {}
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
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        kid, algorithm = header.get("kid"), header.get("alg")
        if kid is not None and not isinstance(kid, str):
            return None
        key = self._keys.get(kid) if kid else self._only_key()
        if key is None:
            self._want_keys()  # rotated, perhaps: look again (rate-limited)
            return None
        if algorithm not in key.algorithms or algorithm not in self.algorithms:
            return None  # "none", HMAC, or another family than the key's: never tried
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except Exception as error:  # a hostile token is a refusal, whatever it made PyJWT do
            log.debug("a JWT was refused: %r", error)
            return None
        if any(claim in claims and not _numeric_date(claims[claim]) for claim in _TIMES):
            return None
        principal = claims.get(self.claim)
        return principal if isinstance(principal, str) and principal else None

    def challenge(self) -> str:
        return 'Bearer realm="a2a"'

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

    def _only_key(self) -> _Key | None:
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
        except Exception as error:  # whatever the issuer answered: the keys held are kept
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


def _numeric_date(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _keys_of(document: Mapping[str, Any]) -> dict[str, _Key]:
    """The signing keys of a JWKS document, by ``kid``, each pinned to its algorithms (keys for
    other uses, of a kind no allowed algorithm fits, or that PyJWT cannot read, are left out)."""
    keys: dict[str, _Key] = {}
    for n, entry in enumerate(document["keys"]):
        if entry.get("use", "sig") != "sig":
            continue
        named = entry.get("alg")
        fit = _FIT.get(entry.get("kty")) or _FIT.get((entry.get("kty"), entry.get("crv")))
        algorithms = frozenset({named}) & (fit or frozenset()) if named else fit
        if not algorithms:
            log.warning(
                "a JWKS key was left out: no allowed algorithm fits a %s key%s",
                entry.get("kty"),
                f" with alg {named}" if named else "",
            )
            continue
        try:
            key = jwt.PyJWK(entry)
        except jwt.PyJWTError as error:
            log.warning("a JWKS key was left out: %s", error)
            continue
        keys[entry.get("kid") or f"#{n}"] = _Key(key.key, algorithms)
    return keys
