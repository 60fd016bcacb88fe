"""HTTPS on both adapters, with a self-signed certificate the test makes: the server speaks
TLS only, the card's URLs say https, and a certificate that cannot be loaded is refused at
start-up saying why."""

import ssl
from pathlib import Path

import httpx
import pytest

from a2a_adapters import build_engine
from a2a_adapters._tls import TlsFiles, check
from examples import echo
from tests.a2a_adapters.processes import spawn
from tests.a2a_adapters.support import A2A_HEADERS, CARD_PATH, jsonrpc_url, send_params
from tests.a2a_adapters.tls import self_signed
from tests.servers import create_app, running_app


def _trusting(cert: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))


def _send(url: str, verify: ssl.SSLContext) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params("hi")}
    return httpx.post(url + "/", json=body, headers=A2A_HEADERS, verify=verify, timeout=5)


@pytest.mark.usefixtures("adapter")
def test_the_server_speaks_https_only(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    verify = _trusting(cert)
    app = create_app(build_engine(echo.agent, card=echo.card))
    with running_app(app, tls=TlsFiles(str(cert), str(key))) as url:
        plain_url = url.replace("https://", "http://")
        card = httpx.get(url + CARD_PATH, verify=verify, timeout=5).json()
        sent = _send(url, verify)
        with pytest.raises(httpx.HTTPError):
            httpx.get(plain_url + CARD_PATH, timeout=2)  # no plain HTTP on a TLS port
    assert jsonrpc_url(card) == url + "/"
    assert sent.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_what_cannot_be_loaded_is_refused_saying_why(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    (tmp_path / "other").mkdir()
    other_cert, _ = self_signed(tmp_path / "other")
    check(TlsFiles(str(cert), str(key)))
    with pytest.raises(ValueError, match="no such file"):
        check(TlsFiles(str(tmp_path / "missing.pem"), str(key)))
    with pytest.raises(ValueError, match=f"cannot load the certificate {other_cert}"):
        check(TlsFiles(str(other_cert), str(key)))  # a key of another certificate


def test_the_command_line_serves_https(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    args = ["examples.echo:agent", "--store", "memory", "--port", "0", "--loop", "trio"]
    server = spawn(*args, "--ssl-certfile", str(cert), "--ssl-keyfile", str(key))
    try:
        url = server.wait_for_url()
        sent = _send(url, _trusting(cert))
    finally:
        server.stop()
    assert url.startswith("https://127.0.0.1:")
    assert sent.status_code == 200
