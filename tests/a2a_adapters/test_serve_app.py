"""What each adapter's ``serve_app`` does as a server, on both adapters: it keeps the listening
socket's backlog, logs the application's errors, and shuts down at once when nothing is in
flight, however many idle keep-alive connections are open."""

import json
import logging
import select
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from quart import Quart

from a2a_adapters import build_engine
from examples import echo
from tests import servers
from tests.a2a_adapters import rawhttp
from tests.a2a_adapters.support import CARD_PATH
from tests.servers import running_app

pytestmark = pytest.mark.usefixtures("adapter")

#: Longer than any test would wait: shutdown must not be waiting for it.
GRACEFUL = 60.0
#: Seconds a shutdown with nothing in flight may take (on a loaded machine).
PROMPT = 4.0


def _app(**options: object) -> Quart:
    app = servers.create_app(build_engine(echo.agent, card=echo.card, **options))  # type: ignore[arg-type]

    @app.route("/hello")
    async def hello() -> str:
        return "hello"

    return app


def _stream_request() -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendStreamingMessage",
            "params": {
                "message": {"messageId": "s-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            },
        }
    ).encode()
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    return rawhttp.head("POST", "/", {**headers, "Content-Length": str(len(body))}) + body


def test_shutdown_with_idle_keep_alive_connections_is_prompt() -> None:
    """Every response has ended (a stream, a Quart route, an A2A call), and one connection
    never sent anything: nothing is in flight, so the server stops at once, not after the
    graceful period."""
    requests = [_stream_request(), rawhttp.head("GET", "/hello"), rawhttp.head("GET", CARD_PATH)]
    idle: list[socket.socket] = []
    try:
        with running_app(_app(streaming=True), graceful_timeout=GRACEFUL) as url:
            idle = [rawhttp.connect(url) for _ in range(len(requests) + 1)]
            for sock, request in zip(idle, requests, strict=False):
                sock.sendall(request)
                assert rawhttp.read_answer(sock).status == 200
            stopping = time.monotonic()
        took = time.monotonic() - stopping
        assert took < PROMPT, f"shutdown took {took:.1f} s with nothing in flight"
        assert all(rawhttp.closed(sock, timeout=1.0) for sock in idle)
    finally:
        for sock in idle:
            sock.close()


def test_the_listening_socket_keeps_its_backlog() -> None:
    """While the server's loop is busy, the kernel completes the handshakes of as many
    connections as the backlog holds (1,024 asked for; hypercorn's own loop re-listens with
    100): a burst of 150 all connect at once instead of waiting for SYN retransmits."""
    entered, release = threading.Event(), threading.Event()
    app = _app()

    @app.route("/busy")
    async def busy() -> str:
        entered.set()
        release.wait(rawhttp.DEADLINE)  # blocks the server's loop: nothing is accepted
        return "done"

    burst: list[socket.socket] = []
    with running_app(app) as url, rawhttp.connect(url) as blocker:
        try:
            blocker.sendall(rawhttp.head("GET", "/busy"))
            assert entered.wait(rawhttp.DEADLINE)
            for _ in range(150):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setblocking(False)
                sock.connect_ex(rawhttp.address(url))
                burst.append(sock)
            deadline = time.monotonic() + 3.0
            pending = set(burst)
            while pending and time.monotonic() < deadline:
                _, writable, _ = select.select([], list(pending), [], 0.1)
                pending -= {
                    s for s in writable if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
                }
            connected = len(burst) - len(pending)
        finally:
            release.set()
            for sock in burst:
                sock.close()
        assert rawhttp.read_answer(blocker).status == 200
    assert connected == len(burst)


@pytest.fixture
def failing() -> Iterator[str]:
    app = _app()
    inner = app.asgi_app

    async def asgi_app(scope: dict[str, object], receive: object, send: object) -> None:
        if scope["type"] == "http" and scope["path"] == "/boom":
            raise RuntimeError("boom from the application")
        await inner(scope, receive, send)  # type: ignore[arg-type]

    app.asgi_app = asgi_app  # type: ignore[method-assign,assignment]
    with running_app(app) as url:
        yield url


def test_an_error_in_the_application_is_logged_with_its_traceback(
    failing: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    with rawhttp.connect(failing) as sock:
        sock.sendall(rawhttp.head("GET", "/boom"))
        assert rawhttp.read_answer(sock).status == 500
    deadline = time.monotonic() + rawhttp.DEADLINE
    while time.monotonic() < deadline:
        logged = [r for r in caplog.records if r.exc_info and "boom from" in str(r.exc_info[1])]
        if logged:
            break
        time.sleep(0.02)
    assert logged, [r.getMessage() for r in caplog.records]
    assert logged[0].levelno == logging.ERROR
