"""HTTPS on both adapters, with a self-signed certificate the test makes: the server speaks
TLS only, the card's URLs say https, and a certificate that cannot be loaded is refused at
start-up saying why."""

import json
import ssl
from pathlib import Path

import httpx
import pytest

from a2a_adapters import build_engine
from a2a_adapters._tls import TlsFiles, check
from examples import echo
from tests import servers
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


def test_http2_over_tls_without_alpn_reaches_http2_on_trio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TLS client that starts HTTP/2 with prior knowledge, having chosen no ``h2`` by ALPN, is
    read first as HTTP/1.1 and handed to HTTP/2 with what was read: the card comes over h2."""
    import socket

    import h2.config
    import h2.connection
    import h2.events

    cert, key = self_signed(tmp_path)
    context = _trusting(cert)
    context.set_alpn_protocols(["http/1.1"])
    monkeypatch.setattr(servers, "ADAPTER", "trio")  # (asyncio's HTTP/1.1 hands nothing over)
    app = create_app(build_engine(echo.agent, card=echo.card))
    with running_app(app, tls=TlsFiles(str(cert), str(key))) as url:
        host, port = url.removeprefix("https://").split(":")
        with (
            socket.create_connection((host, int(port)), timeout=5) as raw,
            context.wrap_socket(raw, server_hostname=host) as conn,
        ):
            assert conn.selected_alpn_protocol() == "http/1.1"
            client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
            client.initiate_connection()
            headers = [(":method", "GET"), (":path", CARD_PATH), (":scheme", "https")]
            client.send_headers(1, [*headers, (":authority", f"{host}:{port}")], end_stream=True)
            conn.sendall(client.data_to_send())
            status, body, ended = "", b"", False
            while not ended:
                data = conn.recv(65536)
                assert data, "the server closed the connection"
                for event in client.receive_data(data):
                    if isinstance(event, h2.events.ResponseReceived):
                        status = dict(event.headers)[b":status"].decode()
                    elif isinstance(event, h2.events.DataReceived):
                        body += event.data
                        client.acknowledge_received_data(len(event.data), 1)
                    elif isinstance(event, h2.events.StreamEnded):
                        ended = True
                conn.sendall(client.data_to_send())
    assert status == "200"
    assert jsonrpc_url(json.loads(body)) == url + "/"
