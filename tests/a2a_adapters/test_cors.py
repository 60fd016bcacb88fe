"""CORS over real HTTP, on both adapters: off by default; with origins, preflights are
answered before credentials and answers to allowed origins say so."""

import httpx
import pytest

from a2a_adapters import BearerTokens
from examples import echo
from tests.a2a_adapters.support import A2A_HEADERS, endpoint, rpc, send_params
from tests.servers import running_server

pytestmark = pytest.mark.usefixtures("adapter")

APP = "https://app.example"
PREFLIGHT = {
    "Origin": APP,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, a2a-version",
}


def test_cors_is_off_by_default() -> None:
    with running_server(echo.agent, card=echo.card) as url:
        preflight = httpx.options(endpoint(url), headers=PREFLIGHT)
        sent = rpc(url, "SendMessage", send_params("hi"), headers={**A2A_HEADERS, "Origin": APP})
    assert "access-control-allow-origin" not in preflight.headers
    assert "access-control-allow-origin" not in sent.headers


def test_an_allowed_origin_gets_its_preflight_and_its_answers() -> None:
    auth = [BearerTokens({"secret": "alice"})]
    with running_server(echo.agent, card=echo.card, auth=auth, cors_origins=[APP]) as url:
        preflight = httpx.options(endpoint(url), headers=PREFLIGHT)  # no credentials
        headers = {**A2A_HEADERS, "Origin": APP, "Authorization": "Bearer secret"}
        sent = rpc(url, "SendMessage", send_params("hi"), headers=headers)
        refused = rpc(url, "SendMessage", send_params("hi"), headers={**A2A_HEADERS, "Origin": APP})
        other = httpx.options(
            endpoint(url), headers={**PREFLIGHT, "Origin": "https://evil.example"}
        )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == APP
    assert "authorization" in preflight.headers["access-control-allow-headers"]
    assert sent.status_code == 200
    assert sent.headers["access-control-allow-origin"] == APP
    # A 401 is readable by the page too (it says why, and WWW-Authenticate what to send).
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == APP
    assert "www-authenticate" in refused.headers["access-control-expose-headers"]
    assert other.status_code == 403
    assert "access-control-allow-origin" not in other.headers
