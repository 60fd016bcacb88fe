"""Bearer JWTs from an OpenID Connect issuer: a real issuer on 127.0.0.1 (its discovery
document and JWKS over HTTP), keys and tokens the tests mint, real servers on both adapters."""

import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from a2a_adapters.oidc import JwtBearer
from a2a_core import AgentContext, Update, completed
from tests import servers
from tests.a2a_adapters import processes
from tests.a2a_adapters.support import card_of, endpoint, send_params, wait_until

pytestmark = pytest.mark.usefixtures("adapter")

AUDIENCE = "a2a-tests"


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    yield completed()


class Issuer:
    """An OpenID Connect issuer: its discovery document and its JWKS, whose keys can change."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {"rsa-1": rsa.generate_private_key(65537, 2048)}
        self.jwks_requests = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks.json"}
                elif self.path == "/jwks.json":
                    issuer.jwks_requests += 1
                    body = issuer.jwks()
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"

    def jwks(self) -> dict[str, Any]:
        found = []
        for kid, key in self.keys.items():
            kind = RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) else ECAlgorithm
            jwk = kind.to_jwk(key.public_key(), as_dict=True)
            found.append({**jwk, "kid": kid, "use": "sig"})
        return {"keys": found}

    def token(self, subject: str = "alice", *, kid: str = "rsa-1", **claims: Any) -> str:
        now = int(time.time())
        payload = {"iss": self.url, "aud": AUDIENCE, "sub": subject, "iat": now, "exp": now + 60}
        payload.update(claims)
        key = self.keys[kid]
        algorithm = "RS256" if isinstance(key, rsa.RSAPrivateKey) else "ES256"
        return jwt.encode(payload, key, algorithm=algorithm, headers={"kid": kid})

    def __enter__(self) -> "Issuer":
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


def _send(url: str, token: str | None) -> httpx.Response:
    headers = {"a2a-version": "1.0"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params("hi")}
    return httpx.post(endpoint(url), json=body, headers=headers, timeout=10)


def _get(url: str, token: str, task_id: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task_id}}
    headers = {"a2a-version": "1.0", "authorization": f"Bearer {token}"}
    return httpx.post(endpoint(url), json=body, headers=headers, timeout=10)


def test_a_token_from_the_issuer_is_the_principal_its_subject_names(issuer: Issuer) -> None:
    with servers.running_server(agent, auth=[JwtBearer(issuer.url, AUDIENCE)]) as url:
        sent = _send(url, issuer.token("alice"))
        assert sent.status_code == 200, sent.text
        task_id = sent.json()["result"]["task"]["id"]
        assert "result" in _get(url, issuer.token("alice"), task_id).json()
        # Another subject of the same issuer does not see alice's task.
        assert _get(url, issuer.token("bob"), task_id).json()["error"]["code"] == -32001
        card = card_of(url)
    assert card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"] == {
        "openIdConnectUrl": issuer.url + "/.well-known/openid-configuration",
        "description": "An OpenID Connect access token (JWT)",
    }


def test_tokens_that_do_not_hold_are_refused_with_a_challenge(issuer: Issuer) -> None:
    now = int(time.time())
    other = Issuer()
    bad = {
        "another audience": issuer.token(aud="someone-else"),
        "another issuer": issuer.token(iss="https://elsewhere.example"),
        "expired past the leeway": issuer.token(exp=now - 120),
        "not yet valid": issuer.token(nbf=now + 120),
        "no expiry": jwt.encode(
            {"iss": issuer.url, "aud": AUDIENCE, "sub": "alice"},
            issuer.keys["rsa-1"],
            algorithm="RS256",
            headers={"kid": "rsa-1"},
        ),
        "signed by another key": other.token(iss=issuer.url),
        "unsigned": jwt.encode(
            {"iss": issuer.url, "aud": AUDIENCE, "sub": "a", "exp": now + 60},
            key="",
            algorithm="none",
            headers={"kid": "rsa-1"},
        ),
        "not a JWT": "abc.def",
    }
    with servers.running_server(agent, auth=[JwtBearer(issuer.url, AUDIENCE)]) as url:
        for what, token in bad.items():
            refused = _send(url, token)
            assert refused.status_code == 401, what
            assert "Bearer" in refused.headers["www-authenticate"], what
        assert _send(url, None).status_code == 401
        # Within the leeway (30 s by default), a token just expired still counts.
        assert _send(url, issuer.token(exp=now - 10)).status_code == 200


def test_a_key_the_issuer_rotates_in_is_fetched_and_a_made_up_kid_cannot_hammer_it(
    issuer: Issuer,
) -> None:
    bearer = JwtBearer(issuer.url, AUDIENCE, min_refresh_seconds=0.5)
    with servers.running_server(agent, auth=[bearer]) as url:
        assert wait_until(lambda: bearer.fetches == 1)  # at start-up
        issuer.keys["ec-2"] = ec.generate_private_key(ec.SECP256R1())
        rotated = issuer.token("carol", kid="ec-2")
        # The first token naming the new kid is refused, and the keys are looked up again.
        assert _send(url, rotated).status_code == 401
        assert wait_until(lambda: bearer.fetches == 2)
        assert _send(url, rotated).status_code == 200
        # Tokens with made-up kids ask for the keys at most once per min_refresh_seconds.
        asked, began = issuer.jwks_requests, time.monotonic()
        for n in range(20):
            assert _send(url, issuer.token(kid="rsa-1")[:-3] + "abc").status_code == 401
            made_up = jwt.encode(
                {"iss": issuer.url, "aud": AUDIENCE, "sub": "m", "exp": int(time.time()) + 60},
                issuer.keys["rsa-1"],
                algorithm="RS256",
                headers={"kid": f"made-up-{n}"},
            )
            assert _send(url, made_up).status_code == 401
        time.sleep(0.6)
        # 40 refused tokens, yet no more fetches than one per half second (and one pending).
        allowed = int((time.monotonic() - began) / 0.5) + 1
        assert 1 <= issuer.jwks_requests - asked <= allowed


def test_the_principal_may_come_from_another_claim(issuer: Issuer) -> None:
    bearer = JwtBearer(issuer.url, AUDIENCE, claim="email")
    with servers.running_server(agent, auth=[bearer]) as url:
        assert _send(url, issuer.token(email="alice@example.com")).status_code == 200
        assert _send(url, issuer.token()).status_code == 401  # no such claim: no principal


def test_an_issuer_away_at_start_up_leaves_every_token_refused_not_the_server_down() -> None:
    gone = Issuer()
    gone._http.server_close()  # never served: nothing answers at its address
    bearer = JwtBearer(gone.url, AUDIENCE, fetch_timeout=1)
    with servers.running_server(agent, auth=[bearer]) as url:
        assert _send(url, gone.token()).status_code == 401
        assert httpx.get(url + "/.well-known/agent-card.json").status_code == 200


def test_serve_takes_the_issuer_and_the_extended_card_on_the_command_line(
    issuer: Issuer, tmp_path: Path
) -> None:
    extended = tmp_path / "extended.json"
    extended.write_text(json.dumps({"name": "More", "description": "For members", "version": "2"}))
    options = ["--jwt-issuer", issuer.url, "--jwt-audience", AUDIENCE]
    options += ["--extended-card", str(extended)]
    with processes.serving("memory", loop=servers.ADAPTER, args=options) as server:
        url = server.wait_for_url()
        headers = {"a2a-version": "1.0", "authorization": f"Bearer {issuer.token()}"}
        card = httpx.get(url + "/extendedAgentCard", headers=headers, timeout=10)
        assert card.status_code == 200, card.text
        assert card.json()["name"] == "More"
        assert (
            httpx.get(url + "/extendedAgentCard", headers={"a2a-version": "1.0"}).status_code == 401
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--jwt-issuer", "https://i.example"],
            "--jwt-issuer https://i.example needs --jwt-audience",
        ),
        (["--jwt-audience", "x"], "--jwt-audience and --jwt-jwks-url go with --jwt-issuer"),
    ],
)
def test_jwt_mistakes_are_one_line(options: list[str], message: str) -> None:
    done = processes.run_to_exit([processes.CRASH_AGENT, "--store", "memory", *options])
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
