"""Signed agent cards: ours verified by the official a2a-sdk, the SDK's verified by ours, on
real servers of both adapters."""

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from a2a.client import A2ACardResolver
from a2a.types import a2a_pb2 as pb
from a2a.utils.signing import (
    InvalidSignaturesError,
    create_agent_card_signer,
    create_signature_verifier,
)
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from google.protobuf.json_format import MessageToDict, ParseDict

from a2a_adapters import BearerTokens
from a2a_adapters.signing import CardSignatureError, CardSigner, PublicKey, verify_card
from a2a_core import AgentContext, Update, completed
from a2a_core.card import AgentCapabilities, AgentCard, AgentExtension, AgentSkill
from tests import servers
from tests.a2a_adapters import processes
from tests.a2a_adapters.support import card_of

pytestmark = pytest.mark.usefixtures("adapter")

CARD = AgentCard(
    name="Signé ✓ agent",
    description="Numbers, unicode and empty fields: 0, 1e21, \u2028, \U0001f600",
    version="1.0.0",
    skills=(AgentSkill(id="s", name="Skill", description="ü", tags=("t",), examples=("",)),),
    capabilities=AgentCapabilities(
        extensions=(AgentExtension(uri="urn:x", description="", required=False),)
    ),
)


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    yield completed()


def _keys() -> dict[str, Any]:
    return {
        "EdDSA": ed25519.Ed25519PrivateKey.generate(),
        "ES256": ec.generate_private_key(ec.SECP256R1()),
        "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
    }


KEYS = _keys()


def _pem(key: Any) -> bytes:
    return key.private_bytes(  # type: ignore[no-any-return]
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _spki(key: Any) -> bytes:
    return key.public_bytes(  # type: ignore[no-any-return]
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _sdk_verifier(signer: CardSigner) -> Any:
    def key_for(kid: str | None, jku: str | None) -> Any:
        assert kid == signer.kid
        return signer.public_key

    return create_signature_verifier(key_for, [signer.algorithm])


async def _sdk_card(url: str) -> pb.AgentCard:
    async with httpx.AsyncClient(timeout=10) as http:
        return await A2ACardResolver(http, url).get_agent_card()


@pytest.mark.parametrize("algorithm", sorted(KEYS))
def test_the_sdk_verifies_the_card_we_serve(algorithm: str) -> None:
    signer = CardSigner(KEYS[algorithm], jku="https://agent.example/.well-known/jwks.json")
    with servers.running_server(agent, card=CARD, card_signer=signer) as url:
        served = card_of(url)
        card = anyio.run(_sdk_card, url)
        jwks = httpx.get(url + "/.well-known/jwks.json").json()
    _sdk_verifier(signer)(card)  # raises unless a signature verifies
    assert verify_card(served, {signer.kid: signer.public_key})["alg"] == algorithm
    (signature,) = served["signatures"]
    header = json.loads(base64.urlsafe_b64decode(signature["protected"] + "=="))
    assert header == {
        "alg": algorithm,
        "kid": signer.kid,
        "jku": "https://agent.example/.well-known/jwks.json",
        "typ": "JOSE",
    }
    # The JWKS served holds the public key the signature names.
    (jwk,) = jwks["keys"]
    assert jwk["kid"] == signer.kid
    assert jwk["alg"] == algorithm
    assert _spki(jwt.PyJWK(jwk).key) == _spki(signer.public_key)


@pytest.mark.parametrize("algorithm", sorted(KEYS))
def test_a_client_verifies_the_card_text_with_the_jwks_it_fetched(algorithm: str) -> None:
    """What a verifier has: the card as it came over the wire, and the signer's JWKS."""
    signer = CardSigner(KEYS[algorithm])
    with servers.running_server(agent, card=CARD, card_signer=signer) as url:
        text = httpx.get(url + "/.well-known/agent-card.json").text
        jwks = httpx.get(url + "/.well-known/jwks.json").json()
    assert verify_card(text, jwks)["kid"] == signer.kid
    assert verify_card(text.encode(), jwks)["alg"] == algorithm
    other = CardSigner(KEYS[algorithm] if algorithm != "EdDSA" else KEYS["ES256"])
    with pytest.raises(CardSignatureError, match="no key is known"):
        verify_card(text, {"keys": [{**other.jwks()["keys"][0], "kid": "someone-else"}]})
    with pytest.raises(CardSignatureError, match="not JSON"):
        verify_card("{not json", jwks)
    with pytest.raises(CardSignatureError, match="cannot be read"):
        verify_card(text, {"keys": [{"kty": "nonsense"}]})


def test_a_card_altered_after_signing_fails_both_verifiers() -> None:
    signer = CardSigner(KEYS["EdDSA"])
    with servers.running_server(agent, card=CARD, card_signer=signer) as url:
        served = card_of(url)
        card = anyio.run(_sdk_card, url)
    card.name = "Someone else"
    with pytest.raises(InvalidSignaturesError):
        _sdk_verifier(signer)(card)
    altered = {**served, "skills": [{**served["skills"][0], "tags": ["other"]}]}
    with pytest.raises(CardSignatureError, match="signature 0"):
        verify_card(altered, {signer.kid: signer.public_key})
    other = CardSigner(ed25519.Ed25519PrivateKey.generate(), kid=signer.kid)
    with pytest.raises(CardSignatureError):
        verify_card(served, {signer.kid: other.public_key})
    with pytest.raises(CardSignatureError, match="no key is known"):
        verify_card(served, {})
    with pytest.raises(CardSignatureError, match="no signature"):
        verify_card({**served, "signatures": []}, {signer.kid: signer.public_key})


@pytest.mark.parametrize("algorithm", ["EdDSA", "ES256"])
def test_we_verify_a_card_the_sdk_signed(algorithm: str) -> None:
    key = KEYS[algorithm]
    sdk_card = ParseDict(
        {
            "name": "SDK agent ✓",
            "description": "€ and 😀",
            "version": "2.0",
            "supportedInterfaces": [
                {
                    "url": "http://127.0.0.1:1/",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
        },
        pb.AgentCard(),
    )
    sign = create_agent_card_signer(key, {"alg": algorithm, "kid": "sdk-key", "typ": "JOSE"})  # type: ignore[typeddict-item]
    signed = MessageToDict(sign(sdk_card))
    public: PublicKey = key.public_key()
    assert verify_card(signed, {"sdk-key": public})["kid"] == "sdk-key"
    assert verify_card(signed, lambda kid, jku: public if kid == "sdk-key" else None)


def test_the_extended_card_is_signed_too() -> None:
    signer = CardSigner(KEYS["ES256"])
    extended = AgentCard(name="Extended", description="More", version="1.0.0")
    auth = [BearerTokens({"t": "alice"})]
    with servers.running_server(
        agent, card=CARD, extended_card=extended, auth=auth, card_signer=signer
    ) as url:
        headers = {"authorization": "Bearer t", "a2a-version": "1.0"}
        reply = httpx.get(url + "/extendedAgentCard", headers=headers)
    assert reply.status_code == 200, reply.text
    assert verify_card(reply.json(), {signer.kid: signer.public_key})


def test_serve_signs_with_the_key_file_it_is_given(tmp_path: Path) -> None:
    key_file = tmp_path / "card.pem"
    key_file.write_bytes(_pem(KEYS["EdDSA"]))
    expected = CardSigner(KEYS["EdDSA"])
    options = ["--sign-card", str(key_file), "--sign-card-jku", "https://agent.example/jwks.json"]
    with processes.serving("memory", loop=servers.ADAPTER, args=options) as server:
        served = card_of(server.wait_for_url())
    header = verify_card(served, {expected.kid: expected.public_key})
    assert header["kid"] == expected.kid
    assert header["jku"] == "https://agent.example/jwks.json"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the card signing key"),
        (b"not a key", "holds no usable private key"),
        ("secp192", "P-256 or P-384"),
    ],
)
def test_a_key_that_cannot_sign_is_refused_at_start_up(
    tmp_path: Path, content: bytes | str | None, message: str
) -> None:
    key_file = tmp_path / "card.pem"
    if content == "secp192":
        key_file.write_bytes(_pem(ec.generate_private_key(ec.SECP192R1())))
    elif isinstance(content, bytes):
        key_file.write_bytes(content)
    done = processes.run_to_exit(
        [processes.CRASH_AGENT, "--store", "memory", "--port", "0", "--sign-card", str(key_file)]
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
