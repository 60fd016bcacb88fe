"""The core signs each card it serves through its configured signer, over the card as served,
and serves the signer's JWKS; no event loop, no keys (a signer here is a plain function)."""

import hashlib
import json

import pytest

from a2a_core import Core, CoreConfig
from a2a_core.card import AgentCard, AgentCardSignature, canonical_card_bytes
from a2a_core.transport import Caller, HttpRequest, HttpResponse
from tests.a2a_core.support import CARD

BASE = "http://host"
CARD_PATH = "/.well-known/agent-card.json"
JWKS_PATH = "/.well-known/jwks.json"
JWKS = b'{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA","kid":"k"}]}'


def digest_signer(canonical: bytes) -> tuple[AgentCardSignature, ...]:
    """A stand-in for a JWS: the digest of what it was asked to sign."""
    return (AgentCardSignature(protected="p", signature=hashlib.sha256(canonical).hexdigest()),)


def _core(**options: object) -> Core:
    return Core(CoreConfig(card=CARD, **options))  # type: ignore[arg-type]


def _get(core: Core, path: str, base_url: str = BASE, method: str = "GET") -> HttpResponse:
    answered = core.handle_http(HttpRequest(method, path), Caller("anyone"), base_url)
    assert isinstance(answered, HttpResponse)
    return answered


@pytest.mark.parametrize("v03_fields", [True, False])
def test_the_card_is_signed_as_served_interfaces_included(v03_fields: bool) -> None:
    core = _core(card_signer=digest_signer, card_v03_fields=v03_fields)
    for base_url in ("http://one", "http://two"):
        card = json.loads(_get(core, CARD_PATH, base_url).body)
        (signature,) = card["signatures"]
        # What was signed is the v1.0 card as served to this base URL, less its signatures.
        v1 = core.codec.encode(core.card(base_url))
        assert signature["signature"] == hashlib.sha256(canonical_card_bytes(v1)).hexdigest()
        assert base_url in canonical_card_bytes(v1).decode()


def test_signatures_the_card_came_with_are_kept_before_the_signers() -> None:
    given = AgentCardSignature(protected="given", signature="sig")
    core = Core(
        CoreConfig(
            card=AgentCard(name="a", description="b", version="1", signatures=(given,)),
            card_signer=digest_signer,
        )
    )
    card = json.loads(_get(core, CARD_PATH).body)
    assert [s["protected"] for s in card["signatures"]] == ["given", "p"]


def test_an_unsigned_server_serves_no_signatures_and_no_jwks() -> None:
    core = _core()
    assert "signatures" not in json.loads(_get(core, CARD_PATH).body)
    assert _get(core, JWKS_PATH).status == 404
    assert not core.is_public(HttpRequest("GET", JWKS_PATH))


def test_the_jwks_is_served_to_anyone_with_get_and_head_only() -> None:
    core = _core(card_signer=digest_signer, card_jwks=JWKS)
    assert core.is_public(HttpRequest("GET", JWKS_PATH))
    got = _get(core, JWKS_PATH)
    assert got.status == 200
    assert got.body == JWKS
    assert ("content-type", "application/json") in got.headers
    head = _get(core, JWKS_PATH, method="HEAD")
    assert head.body == b""
    assert ("content-length", str(len(JWKS))) in head.headers
    assert _get(core, JWKS_PATH, method="POST").status == 405
