"""Behind a proxy, on both adapters: ``X-Forwarded-*`` believed only from the peers
configured (nobody by default), changing the card's URLs and the logged client address."""

import logging
from collections.abc import Sequence

import httpx
import pytest

from a2a_adapters import build_engine
from a2a_adapters._proxy import trusted_networks
from examples import echo
from tests.a2a_adapters.support import CARD_PATH, jsonrpc_url, wait_until
from tests.servers import create_app, running_app

pytestmark = pytest.mark.usefixtures("adapter")

FORWARDED = {
    "X-Forwarded-Proto": "https",
    "X-Forwarded-Host": "agents.example",
    "X-Forwarded-For": "203.0.113.9, 127.0.0.1",
}


def _card_url_and_client(
    caplog: pytest.LogCaptureFixture, trusted: Sequence[str] = ()
) -> tuple[str, str]:
    caplog.set_level(logging.INFO, logger="a2a_adapters.access")
    app = create_app(build_engine(echo.agent, card=echo.card))
    with running_app(app, forwarded_allow_ips=trusted) as url:
        card = httpx.get(url + CARD_PATH, headers=FORWARDED).json()
        assert wait_until(lambda: any(r.name == "a2a_adapters.access" for r in caplog.records))
    (record,) = [r for r in caplog.records if r.name == "a2a_adapters.access"]
    return jsonrpc_url(card), record.access["client"]  # type: ignore[attr-defined]


def test_nobodys_forwarded_headers_are_believed_by_default(
    caplog: pytest.LogCaptureFixture,
) -> None:
    card_url, client = _card_url_and_client(caplog)
    assert card_url.startswith("http://127.0.0.1:")
    assert client.startswith("127.0.0.1:")


def test_a_trusted_proxys_headers_are(caplog: pytest.LogCaptureFixture) -> None:
    card_url, client = _card_url_and_client(caplog, ["127.0.0.1"])
    assert card_url == "https://agents.example/"
    assert client == "203.0.113.9:0"  # the nearest hop not a trusted proxy


def test_a_proxy_elsewhere_is_not_believed(caplog: pytest.LogCaptureFixture) -> None:
    card_url, _ = _card_url_and_client(caplog, ["10.0.0.0/8"])
    assert card_url.startswith("http://127.0.0.1:")


def test_trusted_proxies_are_checked() -> None:
    assert trusted_networks(["*"]) is None
    assert [str(n) for n in trusted_networks(["127.0.0.1", "10.0.0.0/8"]) or ()] == [
        "127.0.0.1/32",
        "10.0.0.0/8",
    ]
    with pytest.raises(ValueError, match="'proxy' is not an IP address or network"):
        trusted_networks(["proxy"])
    with pytest.raises(TypeError, match="a list of addresses"):
        trusted_networks("127.0.0.1")
