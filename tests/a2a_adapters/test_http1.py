"""The trio adapter's own HTTP/1.1 server (``a2a_adapters.trio._http1``), over real sockets on
127.0.0.1 with raw HTTP: keep-alive, pipelining, request bodies (chunked, ``Expect:
100-continue``), streamed responses and the client leaving them, refusals, shutdown, request
smuggling (framing two readers could read two ways), and the limits and timeouts: what users of
a server library get from its own tests, kept here for the server written in its place.

It serves a small ASGI application of the test's, so that every byte each side sends is known;
the A2A suites run it under the real application (the ``adapter`` fixture's trio side).
"""

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import partial
from typing import Any

import attrs
import pytest
import trio

from a2a_adapters import ConnectionLimits, build_engine
from a2a_adapters._asgi import WHOLE
from a2a_adapters._sockets import bind_socket
from a2a_adapters.trio._http1 import PREFACE, READ_AHEAD, READ_SIZE, Http1Server
from examples import echo
from tests import servers
from tests.a2a_adapters import rawhttp
from tests.a2a_adapters.support import CARD_PATH

Message = dict[str, Any]

LIMITS = ConnectionLimits(
    max_header_bytes=4096, max_header_count=20, keep_alive_timeout=5, body_timeout=1.0
)


@attrs.define
class Served:
    url: str
    #: What the application saw: ("disconnect", path) when ``receive`` said the client left,
    #: ("done", path) when a response was complete.
    events: list[tuple[str, str]]
    #: What connections handed over to HTTP/2 had read.
    handed_over: list[bytes]
    #: Stops the server (as ``serve_app`` does): idle connections close at once.
    stop: Any = None

    def saw(self, event: tuple[str, str], timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if event in self.events:
                return True
            time.sleep(0.02)
        return False


async def _read_body(receive: Any) -> bytes | None:
    body = b""
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += bytes(message.get("body", b""))
        if not message.get("more_body", False):
            return body


def _app(events: list[tuple[str, str]]) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        path = scope["path"]
        if path == "/fail":
            raise RuntimeError("the application failed")
        if path == "/stream":
            await _stream(receive, send, events)
            return
        if path == "/unread":  # answers without reading the body (as a 401 does)
            headers = [(b"content-length", b"2")]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": b"no"})
            events.append(("done", path))
            return
        if path == "/short":  # promises more than it sends
            headers = [(b"content-length", b"10")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b"abc"})
            return
        if path == "/split":  # a header that would split the response
            headers = [(b"x-evil", b"a\r\nset-cookie: b")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        if path == "/slow":
            await trio.sleep(0.5)
        if path == "/hold":  # holds its connection a while (pipelined requests wait)
            await trio.sleep(2.0)
        body = await _read_body(receive)
        if body is None:
            events.append(("disconnect", path))
            return
        answer = json.dumps(
            {
                "method": scope["method"],
                "path": path,
                "query": scope["query_string"].decode(),
                "body": body.decode("latin-1"),
                "version": scope["http_version"],
                # What the application was given, once it has the whole body (trailers came).
                **({"headers": _fields(scope["headers"])} if path == "/headers" else {}),
            }
        ).encode()
        if path == "/chunked":  # no content-length: the server chunks it
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": answer[:5], "more_body": True})
            await send({"type": "http.response.body", "body": answer[5:]})
        else:
            headers = [(b"content-type", b"application/json")]
            headers.append((b"content-length", str(len(answer)).encode()))
            start = {"type": "http.response.start", "status": 200, "headers": headers}
            await send({**start, WHOLE: True})
            await send({"type": "http.response.body", "body": answer})
        events.append(("done", path))

    return app


def _fields(headers: list[tuple[bytes, bytes]]) -> list[list[str]]:
    return [[name.decode("latin-1"), value.decode("latin-1")] for name, value in headers]


async def _stream(receive: Any, send: Any, events: list[tuple[str, str]]) -> None:
    """Server-sent events, one every 50 ms, until the client leaves."""
    await _read_body(receive)
    headers = [(b"content-type", b"text/event-stream")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    async with trio.open_nursery() as nursery:

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            events.append(("disconnect", "/stream"))
            nursery.cancel_scope.cancel()

        nursery.start_soon(watch)
        for index in range(1000):
            event = b"data: %d\n\n" % index
            await send({"type": "http.response.body", "body": event, "more_body": True})
            await trio.sleep(0.05)


@contextmanager
def serving(limits: ConnectionLimits = LIMITS, graceful: float = 3.0) -> Iterator[Served]:
    """The test application on our HTTP/1.1, in a thread with its own trio loop."""
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    served = Served(f"http://127.0.0.1:{port}", [], [])
    ready = threading.Event()
    errors: list[BaseException] = []

    async def main() -> None:
        server = Http1Server(_app(served.events), limits, {}, secure=False)
        listener = trio.SocketListener(trio.socket.from_stdlib_socket(sock.dup()))
        stopped = trio.Event()
        token = trio.lowlevel.current_trio_token()

        def stop() -> None:
            with suppress(trio.RunFinishedError):  # (stopped already)
                trio.from_thread.run_sync(stopped.set, trio_token=token)

        served.stop = stop

        async def handle(stream: trio.SocketStream) -> None:
            peer, here = stream.socket.getpeername(), stream.socket.getsockname()
            read = await server.serve(stream, peer[:2], here[:2])
            if read is not None:
                served.handed_over.append(read)
                await stream.aclose()

        async with trio.open_nursery() as connections:
            async with trio.open_nursery() as accepting:
                serve = partial(trio.serve_listeners, handler_nursery=connections)
                accepting.start_soon(serve, handle, [listener])
                ready.set()
                await stopped.wait()
                accepting.cancel_scope.cancel()
            server.stop()
            connections.cancel_scope.deadline = trio.current_time() + graceful

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as error:
            errors.append(error)
            ready.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield served
    finally:
        if served.stop is not None:
            served.stop()
        thread.join(10)
        sock.close()
        assert not thread.is_alive()
        if errors:
            raise errors[0]


@pytest.fixture
def server() -> Iterator[Served]:
    with serving() as served:
        yield served


def _post(target: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    fields = {"Content-Length": str(len(body)), **(headers or {})}
    return rawhttp.head("POST", target, fields) + body


def _json(answer: rawhttp.Answer) -> Any:
    return json.loads(answer.body)


def _read_until(sock: socket.socket, marker: bytes, timeout: float = rawhttp.DEADLINE) -> bytes:
    deadline = time.monotonic() + timeout
    data = b""
    while marker not in data:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _answers(sock: socket.socket, count: int) -> list[rawhttp.Answer]:
    """``count`` responses with a ``content-length`` each, however they arrive together."""
    data = b""
    answers: list[rawhttp.Answer] = []
    deadline = time.monotonic() + rawhttp.DEADLINE
    while len(answers) < count:
        head, found, rest = data.partition(b"\r\n\r\n")
        if found:
            status_line, *lines = head.decode("latin-1").split("\r\n")
            headers = {}
            for line in lines:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers["content-length"])
            if len(rest) >= length:
                answers.append(rawhttp.Answer(int(status_line.split()[1]), headers, rest[:length]))
                data = rest[length:]
                continue
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection before answering"
        data += chunk
    return answers


# --- keep-alive and pipelining ----------------------------------------------------------------


def test_requests_on_one_kept_alive_connection(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        for n in range(3):
            sock.sendall(_post(f"/echo?n={n}", b"hello %d" % n))
            answer = rawhttp.read_answer(sock)
            assert answer.status == 200
            assert "connection" not in answer.headers
            assert "date" in answer.headers
            assert _json(answer) == {
                "method": "POST",
                "path": "/echo",
                "query": f"n={n}",
                "body": f"hello {n}",
                "version": "1.1",
            }


def test_pipelined_requests_are_answered_in_order(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(
            _post("/slow", b"first") + _post("/echo", b"second") + rawhttp.head("GET", "/third")
        )
        answers = _answers(sock, 3)
    assert [_json(a)["body"] for a in answers] == ["first", "second", ""]
    assert [_json(a)["path"] for a in answers] == ["/slow", "/echo", "/third"]


def test_a_response_without_length_is_chunked(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(_post("/chunked", b"body"))
        answer = rawhttp.read_answer(sock)
        assert answer.headers["transfer-encoding"] == "chunked"
        chunks = answer.body.split(b"\r\n")
        assert json.loads(chunks[1] + chunks[3])["body"] == "body"
        sock.sendall(rawhttp.head("GET", "/after"))  # the connection carries on
        assert _json(rawhttp.read_answer(sock))["path"] == "/after"


def test_connection_close_and_http_1_0_close_after_the_answer(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(rawhttp.head("GET", "/echo", {"Connection": "close"}))
        assert rawhttp.read_answer(sock).headers["connection"] == "close"
        assert rawhttp.closed(sock)
    with rawhttp.connect(server.url) as sock:
        sock.sendall(b"GET /chunked HTTP/1.0\r\n\r\n")  # no length: the close ends the body
        data = _read_until(sock, b"\x00")
        head, _, body = data.partition(b"\r\n\r\n")
        assert b"transfer-encoding" not in head
        assert b"connection: close" in head
        assert json.loads(body)["version"] == "1.0"


def test_a_head_request_gets_no_body(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(rawhttp.head("HEAD", "/echo") + rawhttp.head("GET", "/next"))
        data = _read_until(sock, b'"/next"')
        first, _, rest = data.partition(b"\r\n\r\n")
        assert first.startswith(b"HTTP/1.1 200 ")
        assert b"content-length: " in first  # the length a GET would have had
        assert rest.startswith(b"HTTP/1.1 200 ")  # and no body before the next answer


# --- request bodies -----------------------------------------------------------------------------


def test_a_chunked_request_body_reaches_the_application_whole(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(rawhttp.head("POST", "/echo", {"Transfer-Encoding": "chunked"}))
        for part in (b"hel", b"lo ", b"world"):
            sock.sendall(b"%x\r\n%b\r\n" % (len(part), part))
            time.sleep(0.05)
        sock.sendall(b"0\r\n\r\n")
        assert _json(rawhttp.read_answer(sock))["body"] == "hello world"


def test_expect_100_continue_is_answered_when_the_body_is_read(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        body = b"after the go-ahead"
        sock.sendall(
            rawhttp.head(
                "POST", "/echo", {"Content-Length": str(len(body)), "Expect": "100-continue"}
            )
        )
        interim = _read_until(sock, b"\r\n\r\n")
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        assert _json(rawhttp.read_answer(sock))["body"] == body.decode()


def test_a_body_left_unread_closes_the_connection(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(rawhttp.head("POST", "/unread", {"Content-Length": "100000"}) + b"{")
        answer = rawhttp.read_answer(sock)
        assert answer.status == 401
        assert answer.headers["connection"] == "close"
        assert rawhttp.closed(sock)


def test_a_body_not_whole_in_time_gets_408(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(rawhttp.head("POST", "/echo", {"Content-Length": "10"}) + b"abc")
        answer = rawhttp.read_answer(sock)
        assert answer.status == 408
        assert _json(answer)["error"]["status"] == "DEADLINE_EXCEEDED"
        assert rawhttp.closed(sock)
    assert server.saw(("disconnect", "/echo"))


# --- refusals -----------------------------------------------------------------------------------


def _refused(url: str, request: bytes, status: int) -> dict[str, Any]:
    with rawhttp.connect(url) as sock:
        sock.sendall(request)
        answer = rawhttp.read_answer(sock)
        assert answer.status == status, answer
        assert answer.headers["connection"] == "close"
        assert answer.headers["content-type"] == "application/json"
        assert rawhttp.closed(sock)
    error: dict[str, Any] = _json(answer)["error"]
    assert error["code"] == status
    assert "Traceback" not in error["message"]
    return error


def test_oversized_heads_are_refused_with_431(server: Served) -> None:
    _refused(server.url, rawhttp.head("GET", "/echo", {"X-Big": "b" * 5000}), 431)
    fields = {f"X-Field-{n}": "v" for n in range(25)}
    _refused(server.url, rawhttp.head("GET", "/echo", fields), 431)
    # A head that never ends is cut off too (not buffered until it does).
    endless = rawhttp.head("GET", "/echo", end=False) + b"X-Endless: " + b"e" * 9000
    _refused(server.url, endless, 431)


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"NOT HTTP AT ALL\r\n\r\n",
        b"GET /a b c HTTP/1.1\r\nHost: test\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: test\r\nBad Header\r\n\r\n",
        b"GET / HTTP/1.1\r\n\r\n",  # HTTP/1.1 without Host
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET /\xc3\xa9 HTTP/1.1\r\nHost: test\r\n\r\n",
    ],
    ids=["garbage", "target", "header", "no-host", "length-and-chunked", "not-ascii"],
)
def test_malformed_requests_get_400(server: Served, request_bytes: bytes) -> None:
    assert _refused(server.url, request_bytes, 400)["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize("version", [b"HTTP/2.0", b"HTTP/1.2", b"HTTP/0.9", b"HTTP/3.0"])
def test_other_http_versions_get_505(server: Served, version: bytes) -> None:
    _refused(server.url, b"GET / " + version + b"\r\nHost: test\r\n\r\n", 505)


def test_a_malformed_request_after_a_good_one_is_refused_after_its_answer(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(_post("/echo", b"good") + b"BAD REQUEST\r\n\r\n")
        good, bad = _answers(sock, 2)
        assert _json(good)["body"] == "good"
        assert bad.status == 400
        assert rawhttp.closed(sock)


def test_an_application_error_is_a_500_without_traceback(
    server: Served, caplog: pytest.LogCaptureFixture
) -> None:
    error = _refused(server.url, rawhttp.head("GET", "/fail"), 500)
    assert error["status"] == "INTERNAL"
    assert "application failed" not in error["message"]
    assert any(r.exc_info for r in caplog.records if r.name == "a2a_adapters.trio")


def test_a_header_with_a_line_break_is_a_500(server: Served) -> None:
    _refused(server.url, rawhttp.head("GET", "/split"), 500)


def test_a_body_short_of_its_length_closes_the_connection(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(rawhttp.head("GET", "/short"))
        data = _read_until(sock, b"\x00")  # until the server closes
    assert data.startswith(b"HTTP/1.1 200 ")
    assert data.endswith(b"\r\n\r\nabc")


# --- streamed responses -------------------------------------------------------------------------


def test_a_stream_is_flushed_per_message_and_ends_when_the_client_leaves(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(rawhttp.head("GET", "/stream"))
        data = _read_until(sock, b"data: 1\n\n", timeout=5)
        assert data.startswith(b"HTTP/1.1 200 ")
        assert b"transfer-encoding: chunked" in data
        assert b"data: 0\n\n" in data
    assert server.saw(("disconnect", "/stream")), "the application never heard the client left"


# --- HTTP/2 -------------------------------------------------------------------------------------


def test_http2s_preface_is_handed_over_with_what_was_read(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        for byte in range(len(PREFACE)):  # however it arrives
            sock.sendall(PREFACE[byte : byte + 1])
            time.sleep(0.001)
        sock.sendall(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")  # an empty SETTINGS frame
        assert rawhttp.closed(sock)
    assert len(server.handed_over) == 1
    assert server.handed_over[0].startswith(PREFACE)


# --- shutdown -----------------------------------------------------------------------------------


def test_shutdown_closes_idle_connections_at_once_and_finishes_answers_under_way() -> None:
    with serving() as served:
        idle = rawhttp.connect(served.url)
        busy = rawhttp.connect(served.url)
        idle.sendall(rawhttp.head("GET", "/echo"))
        assert rawhttp.read_answer(idle).status == 200
        busy.sendall(rawhttp.head("GET", "/slow"))
        time.sleep(0.1)
        stopping = time.monotonic()
        served.stop()
        assert rawhttp.closed(idle, timeout=1.0)
        assert time.monotonic() - stopping < 1.0
        answer = rawhttp.read_answer(busy)
        assert answer.status == 200
        assert answer.headers["connection"] == "close"
        assert rawhttp.closed(busy)
        idle.close()
        busy.close()


# --- request smuggling --------------------------------------------------------------------------
#
# Whatever a client sends, the server either refuses it (400 or 431, then closes) or reads it one
# unambiguous way: the application never sees two requests where one was sent, nor a body framed
# otherwise than the client (and any proxy in front, reading it the strict way) framed it.

SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n"
#: Its length, as a Content-Length says it.
LENGTH = b"%d" % len(SMUGGLED)


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)


def _head(*lines: bytes, start: bytes = b"POST /echo HTTP/1.1") -> bytes:
    return b"\r\n".join([start, b"Host: t", *lines]) + b"\r\n\r\n"


def _refused_unserved(served: Served, request: bytes, status: int = 400) -> dict[str, Any]:
    """The request is refused with ``status`` and its connection closed, and the application
    served nothing on it: neither the request nor what was smuggled in it."""
    error = _refused(served.url, request, status)
    assert [event for event in served.events if event[0] == "done"] == []
    return error


@pytest.mark.parametrize(
    "request_bytes",
    [
        _head(b"Transfer-Encoding: gzip") + SMUGGLED,
        _head(b"Transfer-Encoding: gzip, chunked") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: identity, chunked") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: chunked, identity") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: chunked, chunked") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: xchunked") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: chunked;q=1") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: chunked", b"Transfer-Encoding: identity") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding:") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding : chunked", b"Content-Length: 5") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: gzip", b"Content-Length: " + LENGTH) + SMUGGLED,
        _head(b"Content-Length: " + LENGTH, b"Transfer-Encoding: chunked") + _chunked(SMUGGLED),
        _head(b"Transfer-Encoding: chunked", b"Content-Length: 0", start=b"POST /echo HTTP/1.0")
        + _chunked(SMUGGLED),
    ],
    ids=[
        "gzip",
        "gzip-then-chunked",
        "identity-then-chunked",
        "chunked-then-identity",
        "chunked-twice",
        "xchunked",
        "chunked-with-parameter",
        "two-fields-chunked-identity",
        "two-fields-chunked-chunked",
        "empty",
        "space-before-colon",
        "gzip-and-length",
        "length-then-chunked",
        "http-1.0-chunked-and-length",
    ],
)
def test_a_transfer_encoding_other_than_chunked_alone_is_refused(
    server: Served, request_bytes: bytes
) -> None:
    """Only ``chunked`` is a transfer coding the server can undo; with any other (or with a
    Content-Length beside it) the body's end, or its bytes, would be a guess."""
    _refused_unserved(server, request_bytes)


@pytest.mark.parametrize(
    "fields",
    [
        (b"Transfer-Encoding: CHUNKED",),
        (b"transfer-encoding:\tChunked  ",),
        (b"TE: trailers, deflate", b"Transfer-Encoding: chunked"),
    ],
    ids=["upper-case", "tab-and-spaces", "te-is-another-field"],
)
def test_a_chunked_body_is_read_one_way_whatever_the_case_and_spacing(
    server: Served, fields: tuple[bytes, ...]
) -> None:
    """Field names and coding names are case-insensitive, and the spaces around a value are not
    part of it: each is a chunked body, and what follows it is the next request."""
    request = _head(*fields) + _chunked(SMUGGLED) + rawhttp.head("GET", "/next")
    with rawhttp.connect(server.url) as sock:
        sock.sendall(request)
        first, second = _answers(sock, 2)
    assert _json(first)["body"] == SMUGGLED.decode()
    assert _json(second)["path"] == "/next"
    assert ("done", "/smuggled") not in server.events


def test_a_chunked_http_1_0_request_is_answered_once_and_its_connection_closed(
    server: Served,
) -> None:
    """HTTP/1.0 has no chunked coding: its framing is suspect (RFC 9112, 6.1), so whatever
    follows it on the connection is never read as a request."""
    request = _head(b"Transfer-Encoding: chunked", start=b"POST /echo HTTP/1.0")
    with rawhttp.connect(server.url) as sock:
        sock.sendall(request + _chunked(b"abc") + SMUGGLED)
        data = _read_until(sock, b"\x00")  # until the server closes
    assert data.count(b"HTTP/1.1 ") == 1
    assert b"connection: close" in data
    assert json.loads(data.partition(b"\r\n\r\n")[2])["body"] == "abc"
    assert ("done", "/smuggled") not in server.events


@pytest.mark.parametrize(
    "length",
    [
        [b"Content-Length: " + LENGTH, b"Content-Length: " + LENGTH],
        [b"Content-Length: 0", b"Content-Length: " + LENGTH],
        [b"Content-Length: %b, %b" % (LENGTH, LENGTH)],
        [b"Content-Length: -" + LENGTH],
        [b"Content-Length: +" + LENGTH],
        [b"Content-Length: 0x%x" % len(SMUGGLED)],
        [b"Content-Length: 3 5"],
        [b"Content-Length: %b.0" % LENGTH],
        [b"Content-Length: 1" + b"0" * 30],
        [b"Content-Length:"],
    ],
    ids=[
        "twice-equal",
        "twice-different",
        "list",
        "negative",
        "plus",
        "hex",
        "space-inside",
        "decimal",
        "overflow",
        "empty",
    ],
)
def test_a_content_length_that_is_not_one_decimal_number_is_refused(
    server: Served, length: list[bytes]
) -> None:
    _refused_unserved(server, _head(*length) + SMUGGLED)


def test_header_values_reach_the_application_without_the_spaces_around_them(
    server: Served,
) -> None:
    request = b"GET /headers HTTP/1.1\r\nHost:  test \t\r\nAuthorization:\tBearer t0ken  \r\n"
    with rawhttp.connect(server.url) as sock:
        sock.sendall(request + b"X-Empty: \r\n\r\n")
        answer = _json(rawhttp.read_answer(sock))
    assert answer["headers"] == [
        ["host", "test"],
        ["authorization", "Bearer t0ken"],
        ["x-empty", ""],
    ]


def test_a_content_length_with_leading_zeros_and_spaces_is_that_number(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(
            _head(b"Content-Length:  0%b " % LENGTH) + SMUGGLED + rawhttp.head("GET", "/next")
        )
        first, second = _answers(sock, 2)
    assert _json(first)["body"] == SMUGGLED.decode()
    assert _json(second)["path"] == "/next"
    assert ("done", "/smuggled") not in server.events


@pytest.mark.parametrize(
    "request_bytes",
    [
        _head(b"X-A: a", b" folded") + SMUGGLED,
        _head(b"X-A: a", b"\tfolded") + SMUGGLED,
        _head(b"Transfer-Encoding: identity", b" chunked", b"Content-Length: " + LENGTH) + SMUGGLED,
        _head(b" Transfer-Encoding: chunked", b"Content-Length: " + LENGTH) + SMUGGLED,
        b"POST /echo HTTP/1.1\nHost: t\nContent-Length: %b\n\n" % LENGTH + SMUGGLED,
        b"POST /echo HTTP/1.1\r\nHost: t\nContent-Length: %b\r\n\r\n" % LENGTH + SMUGGLED,
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %b\n\r\n" % LENGTH + SMUGGLED,
        b"POST /echo HTTP/1.1\rHost: t\r\nContent-Length: %b\r\n\r\n" % LENGTH + SMUGGLED,
        b"POST /echo HTTP/1.1\r\nHost: t\r\nX-A: a\rContent-Length: %b\r\n\r\n" % LENGTH + SMUGGLED,
        _head(b"Host: elsewhere", b"Content-Length: " + LENGTH) + SMUGGLED,
    ],
    ids=[
        "obs-fold-space",
        "obs-fold-tab",
        "obs-fold-transfer-encoding",
        "space-before-first-field",
        "bare-lf-everywhere",
        "bare-lf-after-a-field",
        "bare-lf-ending-the-head",
        "bare-cr-after-the-request-line",
        "bare-cr-inside-a-field",
        "two-hosts",
    ],
)
def test_a_head_a_strict_reader_would_read_otherwise_is_refused_with_400(
    server: Served, request_bytes: bytes
) -> None:
    """Line folding, bare LF or CR for CRLF, a second Host: each a way for two readers of one
    head to disagree. All are 400 (never 505: nothing is wrong with the version)."""
    assert _refused_unserved(server, request_bytes)["status"] == "INVALID_ARGUMENT"


def _chunked_head(target: str = "/echo") -> bytes:
    return rawhttp.head("POST", target, {"Transfer-Encoding": "chunked"})


@pytest.mark.parametrize(
    "body",
    [
        b"3\nabc\r\n0\r\n\r\n",
        b"3\r\nabc\n0\r\n\r\n",
        b"3\r\nabc\r\n0\n\n",
        b"3;ext\nabc\r\n0\r\n\r\n",
        b"3\r\nabcX0\r\n\r\n",
        b"3\r\nabcdef\r\n0\r\n\r\n",
        b"1" + b"0" * 16 + b"3\r\nabc\r\n0\r\n\r\n",
        b"f" * 17 + b"\r\nabc\r\n0\r\n\r\n",
        b"-3\r\nabc\r\n0\r\n\r\n",
        b"0x3\r\nabc\r\n0\r\n\r\n",
        b"3 \r\nabc\r\n0\r\n\r\n",
        b"\r\n3\r\nabc\r\n0\r\n\r\n",
        b"3\r\nabc\r\n0\r\nContent-Length: 9\r\n\r\n",
    ],
    ids=[
        "bare-lf-after-size",
        "bare-lf-after-data",
        "bare-lf-last-chunk",
        "bare-lf-after-extension",
        "no-crlf-after-data",
        "data-longer-than-size",
        "size-overflows-64-bits",
        "size-of-17-digits",
        "negative-size",
        "hex-prefix",
        "space-after-size",
        "empty-size-line",
        "content-length-trailer",
    ],
)
def test_a_malformed_chunked_body_is_refused_with_400(server: Served, body: bytes) -> None:
    """Known to be malformed once the head is in, the request is refused before the application
    is called; found malformed while the application reads it, the application is told the
    client left, and the client why (not just hung up on). Both, for each case."""
    _refused_unserved(server, _chunked_head() + body + SMUGGLED)
    assert server.events == []
    with rawhttp.connect(server.url) as sock:
        # The 100 Continue says the application is reading: the body comes after it.
        fields = {"Transfer-Encoding": "chunked", "Expect": "100-continue"}
        sock.sendall(rawhttp.head("POST", "/echo", fields))
        assert _read_until(sock, b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body + SMUGGLED)
        answer = rawhttp.read_answer(sock)
        assert answer.status == 400
        assert answer.headers["connection"] == "close"
        assert _json(answer)["error"]["message"].startswith("malformed request: ")
        assert rawhttp.closed(sock)
    assert server.saw(("disconnect", "/echo"))
    assert [event for event in server.events if event[0] == "done"] == []


def test_a_malformed_chunked_body_is_refused_before_a_handler_that_never_reads_it(
    server: Served,
) -> None:
    """Known to be malformed before the application is called: it is not called (a handler
    that answers without reading the body would otherwise answer it)."""
    _refused_unserved(server, rawhttp.head("POST", "/unread", {"Transfer-Encoding": "gzip"}))
    _refused_unserved(server, _chunked_head("/unread") + b"zz\r\n")


def _flood(sock: socket.socket, first: bytes, more: bytes, *, limit: int) -> tuple[int, bytes]:
    """Send ``first``, then ``more`` again and again until the server answers or hangs up;
    return the bytes sent and the start of the answer. Fails the test once ``limit`` bytes
    are sent (or after :data:`rawhttp.DEADLINE`) with neither."""
    sock.sendall(first)
    sent = len(first)
    deadline = time.monotonic() + rawhttp.DEADLINE
    while sent < limit and time.monotonic() < deadline:
        try:
            sock.sendall(more)
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(more)
        # (A moment's wait each time: the server runs in a thread of this process, and a
        # client that never let go of the interpreter would measure its own speed.)
        if rawhttp.readable(sock, 0.001):
            break
    else:
        raise AssertionError(f"the server took {sent} bytes without answering")
    try:
        answer = _read_until(sock, b"\r\n\r\n", timeout=5)
    except ConnectionResetError:
        answer = b""
    return sent, answer


def test_an_endless_chunk_extension_is_cut_off_not_read_until_the_body_timeout(
    server: Served,
) -> None:
    """Chunk extensions never reach the application (nor count against its body limit): the
    size line they sit on is bounded as a head is."""
    with rawhttp.connect(server.url) as sock:
        start = time.monotonic()
        sent, answer = _flood(sock, _chunked_head() + b"3;a=", b"b" * 512, limit=1024 * 1024)
        took = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert sent < 64 * 1024
    assert took < LIMITS.body_timeout


def test_trailers_are_read_and_dropped_never_merged_into_the_head(server: Served) -> None:
    """A trailer field is not a header: one that was (``Authorization``, a second ``Host``)
    would reach the application past whatever checked the head."""
    trailers = b"0\r\nAuthorization: Bearer forged\r\nHost: elsewhere\r\nX-Trailer: t\r\n\r\n"
    with rawhttp.connect(server.url) as sock:
        sock.sendall(_chunked_head("/headers") + b"3\r\nabc\r\n" + trailers)
        answer = _json(rawhttp.read_answer(sock))
        sock.sendall(rawhttp.head("GET", "/next"))  # and the connection carries on
        assert _json(rawhttp.read_answer(sock))["path"] == "/next"
    assert answer["body"] == "abc"
    assert answer["headers"] == [["host", "test"], ["transfer-encoding", "chunked"]]


def test_an_endless_trailer_field_is_cut_off_with_431(server: Served) -> None:
    """httptools keeps a field whole until it ends: a trailer that never ends is bounded as
    a head is, not buffered until the body timeout."""
    with rawhttp.connect(server.url) as sock:
        first = _chunked_head() + b"3\r\nabc\r\n0\r\nX-Endless: "
        sent, answer = _flood(sock, first, b"e" * 512, limit=4 * 1024 * 1024)
    assert answer.startswith(b"HTTP/1.1 431 "), answer
    assert sent < 64 * 1024


def test_too_many_trailer_fields_are_refused_with_431(server: Served) -> None:
    fields = b"".join(b"X-T-%d: v\r\n" % n for n in range(LIMITS.max_header_count + 5))
    _refused(server.url, _chunked_head() + b"3\r\nabc\r\n0\r\n" + fields + b"\r\n", 431)


def test_a_chunk_size_past_the_body_limit_is_413_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The body limit is the application's (the real one here): a chunk that declares more
    is read up to the limit and answered then, not waited for."""
    monkeypatch.setattr(servers, "ADAPTER", "trio")
    engine = build_engine(echo.agent, card=echo.card, max_body_bytes=1024)
    with servers.running_app(servers.create_app(engine)) as url, rawhttp.connect(url) as sock:
        head = rawhttp.head(
            "POST",
            "/",
            {"Transfer-Encoding": "chunked", "Content-Type": "application/json"},
        )
        sock.sendall(head + b"10000000000\r\n" + b"x" * 2048)  # a chunk of 2**40 bytes
        answer = rawhttp.read_answer(sock, timeout=5)
        assert answer.status == 413
        assert answer.headers["connection"] == "close"
        assert rawhttp.closed(sock)


def test_an_upgrade_is_not_followed_and_nothing_after_it_is_read_as_a_request(
    server: Served,
) -> None:
    fields = {"Connection": "Upgrade", "Upgrade": "websocket"}
    with rawhttp.connect(server.url) as sock:
        sock.sendall(rawhttp.head("GET", "/echo", fields) + SMUGGLED)
        data = _read_until(sock, b"\x00")  # until the server closes
    assert data.count(b"HTTP/1.1 ") == 1
    assert data.startswith(b"HTTP/1.1 200 ")
    assert b"connection: close" in data
    assert ("done", "/smuggled") not in server.events


@pytest.mark.parametrize(
    "fields",
    [{"Content-Length": str(len(SMUGGLED))}, {"Transfer-Encoding": "chunked"}],
    ids=["length", "chunked"],
)
def test_an_upgrade_with_a_body_is_refused_not_served_without_it(
    server: Served, fields: dict[str, str]
) -> None:
    """httptools has llhttp skip the body of a request asking for an upgrade (taken for the
    other protocol's bytes): served, it would reach the application empty."""
    body = SMUGGLED if "Content-Length" in fields else _chunked(SMUGGLED)
    upgrade = {"Connection": "Upgrade", "Upgrade": "h2c", **fields}
    _refused_unserved(server, rawhttp.head("POST", "/echo", upgrade) + body)


# --- pipelining ---------------------------------------------------------------------------------


def test_many_requests_in_one_write_are_each_answered_once_in_order(server: Served) -> None:
    count = 50
    with rawhttp.connect(server.url) as sock:
        sock.sendall(b"".join(rawhttp.head("GET", f"/echo?n={n}") for n in range(count)))
        answers = _answers(sock, count)
    assert [_json(a)["query"] for a in answers] == [f"n={n}" for n in range(count)]
    deadline = time.monotonic() + 5  # (the last is noted just after its answer is written)
    while server.events.count(("done", "/echo")) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.events.count(("done", "/echo")) == count


def test_a_request_pipelined_after_a_chunked_body_is_the_next_request(server: Served) -> None:
    with rawhttp.connect(server.url) as sock:
        sock.sendall(_chunked_head() + _chunked(SMUGGLED) + rawhttp.head("GET", "/next"))
        first, second = _answers(sock, 2)
    assert _json(first)["body"] == SMUGGLED.decode()
    assert _json(second)["path"] == "/next"
    assert ("done", "/smuggled") not in server.events


def test_a_body_that_holds_a_request_is_a_body(server: Served) -> None:
    """A GET with a Content-Length has a body like any request: what is in it is not read as a
    request, and what follows it is."""
    request = rawhttp.head("GET", "/echo", {"Content-Length": str(len(SMUGGLED))}) + SMUGGLED
    with rawhttp.connect(server.url) as sock:
        sock.sendall(request + rawhttp.head("GET", "/next"))
        first, second = _answers(sock, 2)
    assert _json(first)["body"] == SMUGGLED.decode()
    assert _json(second)["path"] == "/next"
    assert ("done", "/smuggled") not in server.events


def _socket_buffers() -> int:
    """The most a server's socket could hold unread, with a client's 64 KiB send buffer."""
    with open("/proc/sys/net/ipv4/tcp_rmem") as rmem:
        most = int(rmem.read().split()[2])
    return most + 2 * 64 * 1024


@pytest.mark.skipif(not os.path.exists("/proc/sys/net/ipv4/tcp_rmem"), reason="Linux only")
def test_pipelined_requests_are_not_read_ahead_without_bound(server: Served) -> None:
    """While a request is served, the server reads on (to notice its client leave) but no
    further than the next request: a client sending more meets TCP's flow control, and the
    server's memory holds nothing of it."""
    body = b"p" * 32 * 1024
    pipelined = _post("/echo", body)
    bound = _socket_buffers() + READ_AHEAD + 2 * READ_SIZE + len(pipelined)
    sent = 0
    with rawhttp.connect(server.url) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        sock.sendall(rawhttp.head("GET", "/stream"))  # served until the client leaves
        sock.setblocking(False)
        deadline = time.monotonic() + rawhttp.DEADLINE
        stuck_since: float | None = None
        while sent <= bound + 16 * 1024 * 1024 and time.monotonic() < deadline:
            try:
                sent += sock.send(pipelined)
                stuck_since = None
            except BlockingIOError:
                now = time.monotonic()
                stuck_since = stuck_since or now
                if now - stuck_since > 0.5:  # the server no longer reads
                    break
                time.sleep(0.01)
    assert sent <= bound, f"the server took {sent} bytes of requests it had not come to"
    assert ("done", "/echo") not in server.events
    assert server.saw(("disconnect", "/stream"))


# --- limits and timeouts ----------------------------------------------------------------------

#: Timeouts short enough for quick tests, far enough apart to tell which timer acted.
QUICK = attrs.evolve(LIMITS, keep_alive_timeout=0.5, header_timeout=1.0, body_timeout=1.0)
#: Seconds within which a limit of about a second must have acted (a loaded machine is slow).
ACTS_WITHIN = 4.0


@pytest.mark.parametrize(
    ("first", "more"),
    [
        (rawhttp.head("GET", "/echo", end=False) + b"X-Endless: ", b"e" * 64),
        (b"GET /", b"a" * 64),
        (rawhttp.head("GET", "/echo", end=False), b"X-A: b\r\n" * 8),
    ],
    ids=["endless-field", "endless-target", "endless-tiny-fields"],
)
def test_a_head_over_the_byte_limit_in_many_small_writes_is_cut_off_with_431(
    server: Served, first: bytes, more: bytes
) -> None:
    """However the head is cut up, what the server holds of it is counted: it is refused
    once over the limit (4 KiB here), not buffered until it ends."""
    with rawhttp.connect(server.url) as sock:
        sent, answer = _flood(sock, first, more, limit=4 * 1024 * 1024)
    assert answer.startswith(b"HTTP/1.1 431 "), answer
    assert sent < 64 * 1024
    assert server.events == []


def test_a_request_line_over_the_byte_limit_is_431(server: Served) -> None:
    _refused_unserved(server, rawhttp.head("GET", "/" + "a" * LIMITS.max_header_bytes), 431)


def test_many_tiny_header_fields_are_refused_by_count_within_the_byte_limit(
    server: Served,
) -> None:
    fields = b"".join(b"a:%d\r\n" % (n % 10) for n in range(200))
    assert len(fields) < LIMITS.max_header_bytes
    request = b"GET /echo HTTP/1.1\r\nHost: t\r\n" + fields + b"\r\n"
    assert "201 header fields" in _refused_unserved(server, request, 431)["message"]


def test_a_trickled_head_is_cut_off_at_the_header_timeout() -> None:
    """A byte every 0.1 s is never idle for the keep-alive timeout (0.5 s), yet the head is cut
    off once it has taken the header timeout (1 s) from its first byte."""
    trickle = rawhttp.head("GET", "/echo", {"X-Slow": "s" * 200}, end=False)
    with serving(QUICK) as served, rawhttp.connect(served.url) as sock:
        took = rawhttp.send_slowly(sock, trickle, every=0.1, timeout=ACTS_WITHIN)
        assert rawhttp.closed(sock)
        assert served.events == []
    assert 0.9 <= took < ACTS_WITHIN


def test_a_head_begun_and_left_is_closed_at_the_header_timeout_not_the_keep_alive_one() -> None:
    with serving(QUICK) as served, rawhttp.connect(served.url) as sock:
        sock.sendall(b"GET /echo HTTP/1.1\r\n")
        start = time.monotonic()
        assert rawhttp.closed(sock, timeout=ACTS_WITHIN)
        took = time.monotonic() - start
    assert 0.9 <= took < ACTS_WITHIN


def test_an_idle_connection_is_closed_at_the_keep_alive_timeout() -> None:
    with serving(QUICK) as served:
        with rawhttp.connect(served.url) as sock:  # never used
            start = time.monotonic()
            assert rawhttp.closed(sock, timeout=ACTS_WITHIN)
            assert 0.4 <= time.monotonic() - start < ACTS_WITHIN
        with rawhttp.connect(served.url) as sock:  # between requests
            sock.sendall(rawhttp.head("GET", "/echo"))
            assert rawhttp.read_answer(sock).status == 200
            start = time.monotonic()
            assert rawhttp.closed(sock, timeout=ACTS_WITHIN)
            assert 0.4 <= time.monotonic() - start < ACTS_WITHIN


def test_a_trickled_body_gets_408_at_the_body_timeout() -> None:
    """The body deadline runs from the end of the head: a byte now and then does not move it."""
    with serving(QUICK) as served, rawhttp.connect(served.url) as sock:
        sock.sendall(rawhttp.head("POST", "/echo", {"Content-Length": "100"}))
        start = time.monotonic()
        rawhttp.send_slowly(sock, b"b" * 100, every=0.1, timeout=ACTS_WITHIN)
        answer = rawhttp.read_answer(sock)
        took = time.monotonic() - start
        assert answer.status == 408
        assert answer.headers["connection"] == "close"
        assert rawhttp.closed(sock)
        assert served.saw(("disconnect", "/echo"))
    assert 0.9 <= took < ACTS_WITHIN


def test_connections_over_the_cap_get_503_while_slow_clients_hold_it_then_room_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cap counts connections, not requests (``serve_app`` keeps it, before HTTP/1.1): two
    slow clients, one idle between requests and one trickling its next head, fill a cap of two;
    the next connection is answered 503 at once; the timeouts that close the slow ones make room
    again."""
    monkeypatch.setattr(servers, "ADAPTER", "trio")
    capped = attrs.evolve(QUICK, max_connections=2, keep_alive_timeout=1.5, header_timeout=1.5)
    engine = build_engine(echo.agent, card=echo.card)
    with servers.running_app(servers.create_app(engine), limits=capped) as url:
        # Each answered once, so each is admitted before the next connection comes (the
        # server's accepting tasks run in no set order).
        idle = _admitted(url)
        trickling = _admitted(url)
        trickling.sendall(b"GET / HTTP/1.1\r\n")
        try:
            with rawhttp.connect(url) as extra:
                extra.sendall(rawhttp.head("GET", CARD_PATH))
                answer = rawhttp.read_answer(extra)
                assert answer.status == 503
                assert answer.headers["retry-after"] == "1"
                assert answer.headers["connection"] == "close"
                assert rawhttp.closed(extra)
            assert rawhttp.closed(idle, timeout=ACTS_WITHIN)
            assert rawhttp.closed(trickling, timeout=ACTS_WITHIN)
        finally:
            idle.close()
            trickling.close()
        _admitted(url).close()


def _admitted(url: str) -> socket.socket:
    """A connection the server answered (retried while a closed one is still counted: it
    leaves the count a moment after its client sees it close)."""
    deadline = time.monotonic() + ACTS_WITHIN
    while True:
        sock = rawhttp.connect(url)
        sock.sendall(rawhttp.head("GET", CARD_PATH))
        try:
            if rawhttp.read_answer(sock).status == 200:
                return sock
        except ConnectionError:
            pass
        sock.close()
        assert time.monotonic() < deadline, "the server admitted no connection"
        time.sleep(0.05)
