"""The JWT bearer's settings and its key set, read from JWKS documents of every odd shape;
and which tokens it even tries to verify. No server: a static JWKS and tokens made here."""

import base64
import json
import logging
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from a2a_adapters.oidc import JwtBearer

ISSUER = "https://issuer.example"
AUDIENCE = "a2a-tests"


def ec_key() -> tuple[ec.EllipticCurvePrivateKey, dict[str, Any]]:
    private = ec.generate_private_key(ec.SECP256R1())
    public: dict[str, Any] = json.loads(ECAlgorithm.to_jwk(private.public_key()))
    return private, public


def token(private: ec.EllipticCurvePrivateKey, **header: Any) -> str:
    claims = {"sub": "alice", "iss": ISSUER, "aud": AUDIENCE, "exp": time.time() + 60}
    return jwt.encode(claims, private, algorithm="ES256", headers=header or None)


def bearer(*keys: dict[str, Any]) -> JwtBearer:
    return JwtBearer(ISSUER, AUDIENCE, jwks={"keys": list(keys)})


def asks(value: str) -> dict[str, str]:
    return {"authorization": f"Bearer {value}"}


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"issuer": ""}, "a JWT issuer is needed"),
        ({"audience": ""}, "a JWT audience is needed"),
        ({"algorithms": ("RS256", "HS256")}, "JWT algorithms must be asymmetric ones"),
        ({"leeway": -1}, "leeway must not be negative, got -1"),
    ],
)
def test_settings_a_bearer_cannot_work_with_are_refused(options: dict[str, Any], says: str) -> None:
    settings: dict[str, Any] = {"issuer": ISSUER, "audience": AUDIENCE, "jwks": {"keys": []}}
    with pytest.raises(ValueError, match=says):
        JwtBearer(**(settings | options))


def test_a_token_without_kid_is_verified_only_when_the_set_has_one_key() -> None:
    private, public = ec_key()
    _, other = ec_key()
    unnamed = token(private)
    assert bearer(public).principal(asks(unnamed)) == "alice"
    assert bearer({**public, "kid": "a"}, {**other, "kid": "b"}).principal(asks(unnamed)) is None


def test_a_kid_that_is_not_text_is_refused_before_any_key_is_looked_up() -> None:
    private, public = ec_key()
    signed = token(private, kid="7")
    _, claims, signature = signed.split(".")
    header = {"alg": "ES256", "typ": "JWT", "kid": 7}  # (PyJWT will not write such a header)
    odd = base64.urlsafe_b64encode(json.dumps(header).encode()).rstrip(b"=").decode()
    assert bearer({**public, "kid": "7"}).principal(asks(f"{odd}.{claims}.{signature}")) is None
    assert bearer({**public, "kid": "7"}).principal(asks(token(private, kid="7"))) == "alice"


def test_keys_no_allowed_algorithm_fits_or_not_for_signing_are_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, public = ec_key()
    with caplog.at_level(logging.WARNING, logger="a2a_adapters"):
        found = bearer(
            {**public, "kid": "enc", "use": "enc"},
            {**public, "kid": "hmac", "alg": "HS256"},
            {"kty": "oct", "k": "c2VjcmV0", "kid": "symmetric"},
            {**public, "kid": "broken", "x": "AAAA"},
            {**public, "kid": "good", "alg": "ES256"},
            public,
        )._keys
    assert set(found) == {"good", "#5"}  # a key without kid is known by its place
    said = [r.getMessage() for r in caplog.records]
    assert "a JWKS key was left out: no allowed algorithm fits a EC key with alg HS256" in said
    assert "a JWKS key was left out: no allowed algorithm fits a oct key" in said
    assert any(m.startswith("a JWKS key was left out: ") and "fits" not in m for m in said)
