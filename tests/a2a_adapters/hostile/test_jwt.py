"""Hostile bearer JWTs against a server that checks them (``JwtBearer``), on every binding and
both loops: each is refused with 401 and ``error="invalid_token"`` (gRPC ``UNAUTHENTICATED``),
never a 500, a response without a status, or a traceback in the log.

The issuer's keys are public (an RSA and an EC key, their ``kid`` in its JWKS), so every form
here is one anybody can send: algorithm swaps between the keys' families, ``none`` and HMAC
over the public key, made-up and malformed ``kid`` values, claims of the wrong JSON type
(RFC 7519's NumericDate is a number), broken segments, and sizes past the head limit.
"""

import json
import math
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import attrs
import grpc
import pytest
from a2a.types import a2a_pb2 as pb
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from a2a_adapters.oidc import JwtBearer
from a2a_core import AgentContext, Update, completed
from tests import servers
from tests.a2a_adapters.hostile.support import (
    EXAMPLES,
    code_of,
    forge,
    grpc_call,
    post,
    quiet_log,
)
from tests.a2a_adapters.support import send_params
from tests.servers import GrpcServer, running_grpc_server

pytestmark = pytest.mark.usefixtures("module_adapter")

ISSUER = "https://issuer.example"
AUDIENCE = "a2a-hostile"
RSA_KEY = rsa.generate_private_key(65537, 2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
JWKS = {
    "keys": [
        {**RSAAlgorithm.to_jwk(RSA_KEY.public_key(), as_dict=True), "kid": "rsa-1", "use": "sig"},
        {**ECAlgorithm.to_jwk(EC_KEY.public_key(), as_dict=True), "kid": "ec-1", "use": "sig"},
    ]
}
RSA_PUBLIC_PEM = RSA_KEY.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)
GARBAGE_SIGNATURE = b"\x01" * 64


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    yield completed()


def claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    found: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "alice",
        "iat": now,
        "exp": now + 60,
    }
    found.update(changes)
    return {k: v for k, v in found.items() if v is not None}


def rsa_signed(header: Any = None, payload: Any = None) -> str:
    return forge(
        {"alg": "RS256", "kid": "rsa-1"} if header is None else header,
        claims() if payload is None else payload,
        key=RSA_KEY,
        sign_as="RS256",
    )


@attrs.frozen
class Case:
    name: str
    token: Callable[[], str]


#: Every form refused. Each token but the signature's own cases is validly signed where the
#: form allows, so that what is refused is the form, not a bad signature.
REFUSED = [
    # Algorithms: swaps between the keys' families (these made PyJWT raise TypeError: a 500),
    # none, HMAC keyed with the public key, PSS under an EC key, unknown and non-string names.
    Case(
        "ES256 header on the RSA key",
        lambda: forge({"alg": "ES256", "kid": "rsa-1"}, claims(), signature=b"\x00" * 64),
    ),
    Case(
        "RS256 header on the EC key",
        lambda: forge({"alg": "RS256", "kid": "ec-1"}, claims(), signature=b"\x00" * 256),
    ),
    Case(
        "PS256 header on the EC key",
        lambda: forge({"alg": "PS256", "kid": "ec-1"}, claims(), signature=b"\x00" * 256),
    ),
    Case(
        "EdDSA header on the RSA key",
        lambda: forge({"alg": "EdDSA", "kid": "rsa-1"}, claims(), signature=b"\x00" * 64),
    ),
    Case(
        "HS256 keyed with the RSA public key",
        lambda: forge(
            {"alg": "HS256", "kid": "rsa-1"}, claims(), key=RSA_PUBLIC_PEM, sign_as="HS256"
        ),
    ),
    Case("alg none", lambda: forge({"alg": "none", "kid": "rsa-1"}, claims())),
    Case("alg None", lambda: forge({"alg": "None", "kid": "rsa-1"}, claims())),
    Case("no alg", lambda: rsa_signed({"kid": "rsa-1"})),
    Case("alg a number", lambda: rsa_signed({"alg": 256, "kid": "rsa-1"})),
    Case("alg a list", lambda: rsa_signed({"alg": ["RS256"], "kid": "rsa-1"})),
    Case("alg unknown", lambda: rsa_signed({"alg": "RS1024", "kid": "rsa-1"})),
    # Key ids: made up, of another type, huge; a key of another issuer under a real kid.
    Case("kid made up", lambda: rsa_signed({"alg": "RS256", "kid": "rsa-9"})),
    Case("kid a list", lambda: rsa_signed({"alg": "RS256", "kid": ["rsa-1"]})),
    Case("kid an object", lambda: rsa_signed({"alg": "RS256", "kid": {"id": "rsa-1"}})),
    Case("kid a number", lambda: rsa_signed({"alg": "RS256", "kid": 1})),
    Case("kid of 8 KiB", lambda: rsa_signed({"alg": "RS256", "kid": "k" * 8192})),
    Case(
        "kid of the issuer, key of another",
        lambda: forge(
            {"alg": "RS256", "kid": "rsa-1"},
            claims(),
            key=rsa.generate_private_key(65537, 2048),
            sign_as="RS256",
        ),
    ),
    Case(
        "crit names an extension nobody understands",
        lambda: rsa_signed({"alg": "RS256", "kid": "rsa-1", "crit": ["x-ours"], "x-ours": 1}),
    ),
    # Claims of the wrong JSON type, or out of range.
    Case("exp a string", lambda: rsa_signed(payload=claims(exp=str(int(time.time()) + 60)))),
    Case("exp true", lambda: rsa_signed(payload=claims(exp=True))),
    Case("exp Infinity", lambda: rsa_signed(payload=claims(exp=math.inf))),
    Case("exp NaN", lambda: rsa_signed(payload=claims(exp=math.nan))),
    Case("exp 1e400", lambda: rsa_signed(payload=claims(exp=10**400))),
    Case("exp an object", lambda: rsa_signed(payload=claims(exp={"at": 1}))),
    Case("nbf a string", lambda: rsa_signed(payload=claims(nbf="0"))),
    Case("iat a string", lambda: rsa_signed(payload=claims(iat="0"))),
    Case("iat a list", lambda: rsa_signed(payload=claims(iat=[0]))),
    Case("no exp", lambda: rsa_signed(payload=claims(exp=None))),
    Case("expired", lambda: rsa_signed(payload=claims(exp=int(time.time()) - 3600))),
    Case("not yet valid", lambda: rsa_signed(payload=claims(nbf=int(time.time()) + 3600))),
    Case("another issuer", lambda: rsa_signed(payload=claims(iss="https://evil.example"))),
    Case("iss a list", lambda: rsa_signed(payload=claims(iss=[ISSUER]))),
    Case("another audience", lambda: rsa_signed(payload=claims(aud="someone-else"))),
    Case("aud an object", lambda: rsa_signed(payload=claims(aud={"a": AUDIENCE}))),
    Case("sub a number", lambda: rsa_signed(payload=claims(sub=7))),
    Case("sub empty", lambda: rsa_signed(payload=claims(sub=""))),
    Case("no sub", lambda: rsa_signed(payload=claims(sub=None))),
    # Segments that are not what they say.
    Case("header not JSON", lambda: rsa_signed(b"{not json")),
    Case("header a list", lambda: rsa_signed(["RS256"])),
    Case("header not UTF-8", lambda: rsa_signed(b'{"alg":"RS256","kid":"\xff"}')),
    Case("payload not JSON", lambda: rsa_signed(payload=b"\x00\x01")),
    Case("payload a list", lambda: rsa_signed(payload=[claims()])),
    Case("payload a string", lambda: rsa_signed(payload="alice")),
    Case("signature not base64", lambda: rsa_signed().rpartition(".")[0] + ".!!!"),
    Case("signature garbage", lambda: forge({"alg": "RS256", "kid": "rsa-1"}, claims())),
    Case("two segments", lambda: rsa_signed().rpartition(".")[0]),
    Case("four segments", lambda: rsa_signed() + ".e30"),
    Case("empty segments", lambda: ".."),
    Case("not base64 at all", lambda: "%%%.%%%.%%%"),
]
#: Past the head limit (32 KiB), within what HTTP/2 decodes of a connection's first request
#: (64 KiB): answered with a status, 431 or gRPC's RESOURCE_EXHAUSTED.
OVERSIZED = Case("a token of 40 KiB", lambda: rsa_signed(payload=claims(pad="x" * 30_000)))


@pytest.fixture(scope="module")
def server(module_adapter: servers.Adapter) -> Iterator[GrpcServer]:
    bearer = JwtBearer(ISSUER, AUDIENCE, jwks=JWKS)
    with running_grpc_server(agent, same_port=module_adapter == "trio", auth=[bearer]) as running:
        yield running


def jsonrpc(server: GrpcServer, token: str) -> tuple[int, str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params("hi")}
    answer = post(server.url, "/", body, {"authorization": f"Bearer {token}"})
    return answer.status_code, answer.headers.get("www-authenticate", "")


def rest(server: GrpcServer, token: str) -> tuple[int, str]:
    answer = post(
        server.url, "/message:send", send_params("hi"), {"authorization": f"Bearer {token}"}
    )
    return answer.status_code, answer.headers.get("www-authenticate", "")


def metadata(token: str) -> tuple[tuple[str, str], ...]:
    return (("a2a-version", "1.0"), ("authorization", f"Bearer {token}"))


def grpc_code(server: GrpcServer, token: str) -> grpc.StatusCode:
    request = pb.GetTaskRequest(id="no-such-task").SerializeToString()
    return code_of(grpc_call(server.target, "GetTask", request, metadata(token)))


def test_a_valid_token_passes_so_the_refusals_are_the_forms_own(server: GrpcServer) -> None:
    assert jsonrpc(server, rsa_signed())[0] == 200
    assert rest(server, rsa_signed())[0] == 200
    es256 = forge({"alg": "ES256", "kid": "ec-1"}, claims(), key=EC_KEY, sign_as="ES256")
    assert jsonrpc(server, es256)[0] == 200
    assert grpc_code(server, rsa_signed()) == grpc.StatusCode.NOT_FOUND  # past the door


@pytest.mark.parametrize("case", REFUSED, ids=lambda case: case.name)
def test_a_hostile_token_is_refused_on_every_binding(
    server: GrpcServer, case: Case, caplog: pytest.LogCaptureFixture
) -> None:
    token = case.token()
    with quiet_log(caplog):
        for binding in (jsonrpc, rest):
            status, challenge = binding(server, token)
            assert status == 401, (binding.__name__, status)
            assert 'error="invalid_token"' in challenge
        assert grpc_code(server, token) == grpc.StatusCode.UNAUTHENTICATED


def test_a_token_past_the_head_limit_gets_a_clear_status(
    server: GrpcServer, caplog: pytest.LogCaptureFixture
) -> None:
    token = OVERSIZED.token()
    assert 32 * 1024 < len(token) < 64 * 1024
    with quiet_log(caplog):
        for binding in (jsonrpc, rest):
            assert binding(server, token)[0] == 431
        answer = grpc_call(server.target, "GetTask", b"", metadata(token))
        assert code_of(answer) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "over the limit" in answer.details()  # type: ignore[union-attr]


def test_a_head_past_what_http2_decodes_closes_that_connection_only(
    server: GrpcServer, caplog: pytest.LogCaptureFixture
) -> None:
    """HTTP/2 decodes a connection's first header block within 64 KiB (the client sends it
    before it hears the server's settings): a larger one is a protocol error that closes the
    connection (the client says UNAVAILABLE); the server serves the next one as before."""
    token = rsa_signed(payload=claims(pad="x" * 200_000))
    with quiet_log(caplog):
        assert jsonrpc(server, token)[0] == 431
        answer = grpc_call(server.target, "GetTask", b"", metadata(token))
        assert code_of(answer) == grpc.StatusCode.UNAVAILABLE
        assert grpc_code(server, rsa_signed()) == grpc.StatusCode.NOT_FOUND


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
_ALGS = st.sampled_from(["RS256", "ES256", "PS256", "HS256", "none", "EdDSA", "ES384"]) | _JSON
_KIDS = st.sampled_from(["rsa-1", "ec-1"]) | _JSON
_CLAIM = st.sampled_from(["exp", "nbf", "iat", "iss", "aud", "sub"])


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    alg=_ALGS,
    kid=_KIDS,
    changed=st.dictionaries(_CLAIM, _JSON, max_size=3),
    signature=st.binary(max_size=300),
)
def test_generated_tokens_are_refused_and_never_fault(
    server: GrpcServer, alg: Any, kid: Any, changed: dict[str, Any], signature: bytes
) -> None:
    token = forge({"alg": alg, "kid": kid}, claims(**changed), signature=signature)
    status, _ = jsonrpc(server, token)
    assert status == 401, json.dumps({"alg": alg, "kid": kid, **changed}, default=str)
