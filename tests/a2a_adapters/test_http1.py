"""The trio adapter's own HTTP/1.1 server (``a2a_adapters.trio._http1``), over real sockets on
127.0.0.1 with raw HTTP: keep-alive, pipelining, request bodies (chunked, ``Expect:
100-continue``), streamed responses and the client leaving them, refusals, and shutdown.

It serves a small ASGI application of the test's, so that every byte each side sends is known;
the A2A suites run it under the real application (the ``adapter`` fixture's trio side).
"""

import json
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

from a2a_adapters import ConnectionLimits
from a2a_adapters._asgi import WHOLE
from a2a_adapters._sockets import bind_socket
from a2a_adapters.trio._http1 import PREFACE, Http1Server
from tests.a2a_adapters import rawhttp

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
