"""Signed agent cards (spec §8.4): a JWS with a detached payload over the card's canonical form.

The core renders every card it serves and asks its ``card_signer`` for signatures over the
card's canonical bytes (RFC 8785, computed in the core: ``a2a_core.card.canonical_card_bytes``).
This module is that signer, and the matching verifier, on PyJWT (the ``signing`` extra): keys,
algorithms and the randomness ECDSA takes stay at the edge.

A signature is the compact JWS of the canonical bytes with its payload taken out: ``protected``
(the base64url header: ``alg``, ``kid``, ``typ: JOSE`` and, if given, ``jku``) and
``signature``. A verifier puts the payload back from its own canonical form of the card, so a
card altered in any field that survives a protobuf round trip fails. The official a2a-sdk signs
and verifies the same way (tested against it).

    signer = CardSigner.from_file("card-key.pem", jku="https://agent.example/.well-known/jwks.json")
    serve(agent, card_signer=signer)          # or: serve --sign-card card-key.pem
    verify_card(card_text, jwks)              # what a client has: the card, the signer's JWKS
"""

import base64
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ._extras import needs

with needs("signing", "a2a_adapters.signing"):
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from a2a_core.card import AgentCard, AgentCardSignature, canonical_card_bytes
from a2a_core.errors import A2AError
from a2a_core.transport import V1Codec

__all__ = ["ALGORITHMS", "CardSignatureError", "CardSigner", "verify_card"]

PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey
#: What a verifier is given: a JWKS document (``{"keys": [...]}``, as the signer publishes it),
#: the keys by ``kid``, or a function of ``(kid, jku)`` that finds one (it may fetch the JWKS
#: ``jku`` names, from sources it trusts).
Keys = (
    Mapping[str, Any]
    | Mapping[str, PublicKey]
    | Callable[[str | None, str | None], PublicKey | None]
)

#: The algorithms a card may be signed and verified with: EdDSA (Ed25519), ECDSA on P-256 and
#: P-384, and RSA PKCS#1 v1.5 with SHA-256. Never ``none``, never HMAC (a shared secret cannot
#: sign a public document).
ALGORITHMS = ("EdDSA", "ES256", "ES384", "RS256")
_CURVES = {"secp256r1": "ES256", "secp384r1": "ES384"}


class CardSignatureError(ValueError):
    """A card carries no signature that verifies with the keys given."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _algorithm_of(key: PrivateKey | PublicKey) -> str:
    if isinstance(key, ed25519.Ed25519PrivateKey | ed25519.Ed25519PublicKey):
        return "EdDSA"
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey):
        algorithm = _CURVES.get(key.curve.name)
        if algorithm is None:
            raise ValueError(f"an EC key on {key.curve.name} cannot sign cards: use P-256 or P-384")
        return algorithm
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        if key.key_size < 2048:
            raise ValueError(f"an RSA key of {key.key_size} bits is too weak: use 2048 or more")
        return "RS256"
    raise ValueError(f"a {type(key).__name__} cannot sign cards: use Ed25519, P-256 or RSA")


def public_jwk(key: PublicKey) -> dict[str, Any]:
    """``key`` as a JWK (RFC 7517) dict, without ``kid``."""
    if isinstance(key, ed25519.Ed25519PublicKey):
        jwk: Any = OKPAlgorithm.to_jwk(key, as_dict=True)
    elif isinstance(key, ec.EllipticCurvePublicKey):
        jwk = ECAlgorithm.to_jwk(key, as_dict=True)
    else:
        jwk = RSAAlgorithm.to_jwk(key, as_dict=True)
    return dict(jwk)


def thumbprint(key: PublicKey) -> str:
    """The key's RFC 7638 thumbprint (base64url SHA-256 of its required members): a ``kid``
    that names the key itself, so two signers cannot pick the same one by accident."""
    jwk = public_jwk(key)
    members = {"OKP": ("crv", "kty", "x"), "EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n")}
    required = {name: jwk[name] for name in members[jwk["kty"]]}
    digest = hashlib.sha256(json.dumps(required, separators=(",", ":"), sort_keys=True).encode())
    return _b64(digest.digest())


class CardSigner:
    """Signs cards with one private key: the ``card_signer`` of ``CoreConfig``, ``serve`` and
    ``build_engine``. ``kid`` defaults to the key's thumbprint; ``jku``, if given, is the URL of
    a JWKS holding the public key (the server serves one at ``/.well-known/jwks.json``:
    :meth:`jwks`)."""

    def __init__(self, key: PrivateKey, *, kid: str | None = None, jku: str | None = None) -> None:
        self.algorithm = _algorithm_of(key)
        self._key = key
        self.public_key: PublicKey = key.public_key()
        self.kid = kid or thumbprint(self.public_key)
        self.jku = jku
        header: dict[str, str] = {"alg": self.algorithm, "kid": self.kid, "typ": "JOSE"}
        if jku:
            header["jku"] = jku
        self._header = header

    @classmethod
    def from_pem(
        cls,
        data: bytes,
        *,
        password: bytes | None = None,
        kid: str | None = None,
        jku: str | None = None,
    ) -> "CardSigner":
        """A signer of the PEM private key ``data`` (PKCS#8 or the key type's own form)."""
        key = serialization.load_pem_private_key(data, password=password)
        if not isinstance(key, PrivateKey):
            raise ValueError(f"a {type(key).__name__} cannot sign cards: use Ed25519, P-256 or RSA")
        return cls(key, kid=kid, jku=jku)

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        password: bytes | None = None,
        kid: str | None = None,
        jku: str | None = None,
    ) -> "CardSigner":
        """A signer of the PEM private key in the file at ``path``."""
        try:
            data = Path(path).read_bytes()
        except OSError as error:
            raise ValueError(f"cannot read the card signing key {path}: {error.strerror}") from None
        try:
            return cls.from_pem(data, password=password, kid=kid, jku=jku)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{path} holds no usable private key: {error}") from None

    def __call__(self, canonical: bytes) -> tuple[AgentCardSignature, ...]:
        """The signature of a card whose canonical bytes are ``canonical``."""
        token = jwt.api_jws.encode(
            canonical, self._key, algorithm=self.algorithm, headers=self._header
        )
        protected, _, signature = token.split(".")
        return (AgentCardSignature(protected=protected, signature=signature),)

    def jwks(self) -> dict[str, Any]:
        """The JWKS document of this signer's public key."""
        jwk = {**public_jwk(self.public_key), "kid": self.kid, "alg": self.algorithm, "use": "sig"}
        return {"keys": [jwk]}

    def jwks_bytes(self) -> bytes:
        """:meth:`jwks` as the JSON bytes the server serves."""
        return json.dumps(self.jwks(), separators=(",", ":")).encode()


def verify_card(
    card: str | bytes | Mapping[str, Any], keys: Keys, *, algorithms: Iterable[str] = ALGORITHMS
) -> dict[str, Any]:
    """Check that ``card`` (as received: its JSON text, or that parsed) carries at least one
    signature that verifies with ``keys`` (the signer's JWKS document, keys by ``kid``, or a
    function of ``(kid, jku)``); return that signature's protected header.
    :class:`CardSignatureError` otherwise, saying why."""
    if isinstance(card, str | bytes):
        try:
            card = json.loads(card)
        except ValueError as error:
            raise CardSignatureError(f"the card is not JSON: {error}") from None
    if not isinstance(card, Mapping):
        raise CardSignatureError("the card is not a JSON object")
    keys = _keys_by_kid(keys)
    signatures = card.get("signatures") or []
    if not signatures:
        raise CardSignatureError("the card carries no signature")
    allowed = [a for a in algorithms if a in ALGORITHMS]
    payloads = _payloads(card)
    reasons = []
    for n, signature in enumerate(signatures):
        try:
            protected, value = signature["protected"], signature["signature"]
            header = json.loads(_unb64(protected))
            if not isinstance(header, dict):
                raise ValueError("its protected header is not a JSON object")
            kid, jku = header.get("kid"), header.get("jku")
            key = keys(kid, jku) if callable(keys) else keys.get(kid or "")
            if key is None:
                raise ValueError(f"no key is known for kid {kid!r}")
            if not any(_verifies(protected, p, value, key, allowed) for p in payloads):
                raise ValueError("the signature does not verify")
        except (KeyError, TypeError, ValueError, jwt.PyJWTError) as error:
            reasons.append(f"signature {n}: {error}")
            continue
        return header
    raise CardSignatureError("no signature of the card verifies: " + "; ".join(reasons))


def _keys_by_kid(keys: Keys) -> Keys:
    """``keys`` as a verifier looks them up: a JWKS document becomes its keys by ``kid``."""
    if callable(keys):
        return keys
    listed: object = keys.get("keys")
    if not isinstance(listed, list):
        return keys
    found: dict[str, PublicKey] = {}
    for entry in listed:
        try:
            jwk = jwt.PyJWK(entry)
        except (jwt.PyJWTError, TypeError, ValueError, KeyError) as error:
            raise CardSignatureError(f"a key of the JWKS cannot be read: {error}") from None
        kid = entry.get("kid") if isinstance(entry, Mapping) else None
        if isinstance(kid, str):
            found[kid] = jwk.key
    return found


def _verifies(protected: str, payload: str, signature: str, key: Any, allowed: list[str]) -> bool:
    try:
        jwt.api_jws.decode(f"{protected}.{payload}.{signature}", key, algorithms=allowed)
    except jwt.InvalidSignatureError:
        return False
    return True


def _payloads(card: Mapping[str, Any]) -> list[str]:
    """The canonical forms a signature of ``card`` may sign: the card as it is, and the card
    with only the fields of A2A v1.0's schema (what a protobuf round trip keeps). A card served
    to clients of both versions (ours, by default) carries v0.3's fields beside v1.0's; its
    signatures, like the SDK's, sign the v1.0 card."""
    found = [_b64(canonical_card_bytes(card))]
    try:
        codec = V1Codec()
        v1 = codec.encode(codec.decode(AgentCard, dict(card), "card"))
    except A2AError:
        return found  # not a v1.0 card: only its own form can be signed
    schema_only = _b64(canonical_card_bytes(v1))
    if schema_only not in found:
        found.append(schema_only)
    return found
