"""What a client may make the server hold (``ConnectionLimits``), on both adapters, over raw
sockets: credentials are checked before the body is read, request heads are bounded, slow or
silent clients are cut off, and connections are capped without locking out those already in.

The timeouts here are short (about a second) so that the tests are quick; the bounds they are
checked against are generous, and each lower bound shows the right timer did the cutting.
"""

import json
import socket
import time
from collections.abc import Iterator

import pytest
from quart import Quart
from quart_trio import QuartTrio

from a2a_adapters import BearerTokens, ConnectionLimits, build_engine
from a2a_adapters import asyncio as asyncio_adapter
from a2a_adapters import trio as trio_adapter
from a2a_adapters._limits import DEFAULT_LIMITS
from examples import echo
from tests import servers
from tests.a2a_adapters import rawhttp
from tests.a2a_adapters.support import CARD_PATH
from tests.servers import running_app

pytestmark = pytest.mark.usefixtures("adapter")

#: Bigger than any socket buffer on the way, so the server cannot have read it by accident.
LARGE = 8 * 1024 * 1024
#: Seconds within which a limit of about a second must have acted (a loaded machine is slow).
ACTS_WITHIN = 6.0
#: The same for the header deadline (1 s), which must act before 5 s (see its test).
HEAD_CUT_WITHIN = 4.0

SEND = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
    }
).encode()
RPC_HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def _serve(limits: ConnectionLimits = DEFAULT_LIMITS, **options: object) -> Iterator[str]:
    engine = build_engine(echo.agent, card=echo.card, **options)  # type: ignore[arg-type]
    with running_app(servers.create_app(engine), limits=limits) as url:
        yield url


# --- authentication before the body -----------------------------------------------------------


@pytest.fixture
def guarded() -> Iterator[str]:
    yield from _serve(auth=[BearerTokens({"s3cret": "alice"})])


def _unauthenticated_large_post(url: str, target: str) -> None:
    """Headers declaring a large body and a few bytes of it: 401 comes back at once, the
    connection closes, and the rest of the body was never needed."""
    with rawhttp.connect(url) as sock:
        sock.sendall(rawhttp.head("POST", target, {**RPC_HEADERS, "Content-Length": str(LARGE)}))
        sock.sendall(b'{"jsonrpc":')
        answer = rawhttp.read_answer(sock)
        assert answer.status == 401
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert answer.headers["connection"] == "close"
        assert rawhttp.closed(sock)


def test_an_unauthenticated_body_is_not_read(guarded: str) -> None:
    _unauthenticated_large_post(guarded, "/")
    _unauthenticated_large_post(guarded, "/message:send")


def test_an_authenticated_client_is_served_as_before(guarded: str) -> None:
    with rawhttp.connect(guarded) as sock:
        headers = {**RPC_HEADERS, "Authorization": "Bearer s3cret"}
        sock.sendall(rawhttp.head("POST", "/", {**headers, "Content-Length": str(len(SEND))}))
        sock.sendall(SEND)
        answer = rawhttp.read_answer(sock)
    assert answer.status == 200
    assert json.loads(answer.body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_the_blueprint_checks_credentials_before_the_body_too() -> None:
    engine = build_engine(echo.agent, card=echo.card, auth=[BearerTokens({"s3cret": "alice"})])
    if servers.ADAPTER == "trio":
        app: Quart = QuartTrio("mounted")
        app.register_blueprint(trio_adapter.a2a_blueprint(engine), url_prefix="/a2a")
        trio_adapter.run_engine(app, engine)  # type: ignore[arg-type]
    else:
        app = Quart("mounted")
        app.register_blueprint(asyncio_adapter.a2a_blueprint(engine), url_prefix="/a2a")
        asyncio_adapter.run_engine(app, engine)
    with running_app(app) as url:
        _unauthenticated_large_post(url, "/a2a/")


# --- the request head ---------------------------------------------------------------------------

HEAD_LIMITS = ConnectionLimits(max_header_bytes=4096, max_header_count=20)


@pytest.fixture
def small_heads() -> Iterator[str]:
    yield from _serve(HEAD_LIMITS)


def _refused_with_431(url: str, request: bytes) -> None:
    with rawhttp.connect(url) as sock:
        sock.sendall(request)
        answer = rawhttp.read_answer(sock)
        assert answer.status == 431, answer
        assert answer.headers["connection"] == "close"
        assert rawhttp.closed(sock)


def test_a_head_over_the_byte_limit_is_refused(small_heads: str) -> None:
    _refused_with_431(small_heads, rawhttp.head("GET", CARD_PATH, {"X-Big": "b" * 5000}))


def test_a_head_with_too_many_fields_is_refused(small_heads: str) -> None:
    fields = {f"X-Field-{n}": "v" for n in range(25)}
    _refused_with_431(small_heads, rawhttp.head("GET", CARD_PATH, fields))


def test_a_head_within_the_limits_is_served(small_heads: str) -> None:
    fields = {f"X-Field-{n}": "v" * 100 for n in range(15)}
    with rawhttp.connect(small_heads) as sock:
        sock.sendall(rawhttp.head("GET", CARD_PATH, fields))
        assert rawhttp.read_answer(sock).status == 200


def test_an_endless_head_is_not_buffered(small_heads: str) -> None:
    """A head that never ends: the server refuses it (431, or just closing) long before the
    client has sent what a buffering server would keep."""
    sent = 0
    chunk = b"X-More: " + b"m" * 4000 + b"\r\n"
    with rawhttp.connect(small_heads) as sock:
        sock.sendall(rawhttp.head("GET", CARD_PATH, end=False))
        deadline = time.monotonic() + rawhttp.DEADLINE
        refused = False
        while sent < LARGE and time.monotonic() < deadline:
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                refused = True
                break
            sent += len(chunk)
            if rawhttp.readable(sock, 0):
                refused = True
                break
        assert refused, f"the server took {sent} bytes of an unfinished head"
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            data = b""
        assert data == b"" or data.startswith(b"HTTP/1.1 431 ")
    assert sent < LARGE


# --- timeouts -----------------------------------------------------------------------------------

TIMEOUTS = ConnectionLimits(keep_alive_timeout=0.5, header_timeout=1.0, body_timeout=1.0)


@pytest.fixture
def impatient() -> Iterator[str]:
    yield from _serve(TIMEOUTS)


def test_a_connection_that_never_sends_is_closed(impatient: str) -> None:
    with rawhttp.connect(impatient) as sock:
        start = time.monotonic()
        assert rawhttp.closed(sock, timeout=ACTS_WITHIN)
        assert time.monotonic() - start >= 0.4


#: A keep-alive timeout long enough that closing at it and closing at twice it are told apart
#: whatever the machine's load (trio closed a silent new connection at twice the timeout).
SILENT = ConnectionLimits(keep_alive_timeout=1.5, header_timeout=10.0)


def test_a_silent_new_connection_is_closed_at_the_keep_alive_timeout_not_after() -> None:
    for url in _serve(SILENT):
        with rawhttp.connect(url) as sock:
            start = time.monotonic()
            assert rawhttp.closed(sock, timeout=ACTS_WITHIN)
            took = time.monotonic() - start
        assert 1.4 <= took < 2.5, took


def test_an_idle_keep_alive_connection_is_closed(impatient: str) -> None:
    with rawhttp.connect(impatient) as sock:
        sock.sendall(rawhttp.head("GET", CARD_PATH))
        assert rawhttp.read_answer(sock).status == 200
        start = time.monotonic()
        assert rawhttp.closed(sock, timeout=ACTS_WITHIN)
        assert time.monotonic() - start >= 0.4


def test_a_trickling_head_is_cut_off_at_the_header_timeout(impatient: str) -> None:
    """A byte every 0.2 s: never idle for the keep-alive timeout, yet cut off once the head has
    taken the header timeout (1 s) from its first byte."""
    trickle = rawhttp.head("GET", CARD_PATH, {"X-Slow": "s" * 200}, end=False)
    with rawhttp.connect(impatient) as sock:
        took = rawhttp.send_slowly(sock, trickle, every=0.2, timeout=ACTS_WITHIN)
        assert rawhttp.closed(sock)
    # Well before hypercorn's own keep-alive timer (5 s), which ran until a head was complete.
    assert 0.9 <= took < HEAD_CUT_WITHIN


@pytest.mark.parametrize("trickle", [True, False], ids=["trickling", "silent"])
def test_a_body_not_whole_in_time_gets_408(impatient: str, trickle: bool) -> None:
    with rawhttp.connect(impatient) as sock:
        sock.sendall(rawhttp.head("POST", "/", {**RPC_HEADERS, "Content-Length": str(len(SEND))}))
        start = time.monotonic()
        if trickle:
            rawhttp.send_slowly(sock, SEND, every=0.2, timeout=ACTS_WITHIN)
        answer = rawhttp.read_answer(sock)
        took = time.monotonic() - start
        assert answer.status == 408
        assert answer.headers["connection"] == "close"
        assert json.loads(answer.body)["error"]["status"] == "DEADLINE_EXCEEDED"
        assert rawhttp.closed(sock)
    assert 0.9 <= took < ACTS_WITHIN


def test_a_body_in_time_is_served(impatient: str) -> None:
    with rawhttp.connect(impatient) as sock:
        sock.sendall(rawhttp.head("POST", "/", {**RPC_HEADERS, "Content-Length": str(len(SEND))}))
        time.sleep(0.3)
        sock.sendall(SEND)
        assert rawhttp.read_answer(sock).status == 200


# --- the connection cap -------------------------------------------------------------------------

CAPPED = ConnectionLimits(max_connections=3, keep_alive_timeout=60)


def _card(sock: socket.socket) -> int:
    sock.sendall(rawhttp.head("GET", CARD_PATH))
    return rawhttp.read_answer(sock).status


def _admitted(url: str) -> socket.socket:
    """A connection the server admitted (retried while a closed one is still counted)."""
    deadline = time.monotonic() + rawhttp.DEADLINE
    while time.monotonic() < deadline:
        sock = rawhttp.connect(url)
        try:
            if _card(sock) == 200:
                return sock
        except (ConnectionError, OSError):
            pass
        sock.close()
        time.sleep(0.05)
    raise AssertionError("the server admitted no connection")


def test_connections_over_the_cap_are_refused_and_the_others_keep_working() -> None:
    for url in _serve(CAPPED):
        admitted = [_admitted(url) for _ in range(3)]
        try:
            for _ in range(3):  # over the cap, every time, and at once
                with rawhttp.connect(url) as extra:
                    extra.sendall(rawhttp.head("GET", CARD_PATH))
                    answer = rawhttp.read_answer(extra)
                    assert answer.status == 503
                    assert answer.headers["retry-after"] == "1"
                    assert answer.headers["connection"] == "close"
                    assert rawhttp.closed(extra)
            assert [_card(sock) for sock in admitted] == [200, 200, 200]
            admitted.pop().close()
            admitted.append(_admitted(url))  # room again once one has closed
            assert [_card(sock) for sock in admitted] == [200, 200, 200]
        finally:
            for sock in admitted:
                sock.close()
