"""How responses leave the servers: an answer the core made whole goes out in one write.

Both servers write a response's head when the application starts it and its body when it sends
it; each adapter puts the two in one write (uvicorn's: the writes of one turn of the loop; the
trio server: a head whose body follows at once), since on loopback each write is a system call
that also runs the receiver's side of TCP. Two writes to a client already waiting on loopback
are read apart, so a client's first read tells.
"""

import json
import socket
import threading
from urllib.parse import urlsplit

import anyio

from a2a_core import AgentContext
from examples import echo
from tests import servers
from tests.servers import running_server


def _first_read(url: str, request: bytes, times: int) -> list[bytes]:
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    reads = []
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as client:
        for _ in range(times):  # each response of a kept-alive connection alike
            client.sendall(request)
            reads.append(client.recv(65536))
    return reads


def test_a_whole_answer_goes_out_in_one_write(adapter: servers.Adapter) -> None:
    with running_server(echo.agent) as url:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}})
        request = (
            f"POST / HTTP/1.1\r\nhost: {urlsplit(url).netloc}\r\n"
            "content-type: application/json\r\na2a-version: 1.0\r\n"
            f"content-length: {len(body)}\r\n\r\n{body}"
        ).encode()
        for first in _first_read(url, request, 5):
            head, _, rest = first.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200"), first
            (length,) = [
                int(line.partition(b":")[2])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ]
            assert len(rest) == length, first
            assert json.loads(rest)["error"]["code"] == -32001


def test_a_stream_s_head_and_first_event_do_not_wait_for_more(adapter: servers.Adapter) -> None:
    # A stream's writes are not held past their turn: its head and first event arrive while
    # the task still runs (the agent waits until the test has read them).
    release = threading.Event()

    async def agent(ctx: AgentContext) -> str:
        with anyio.fail_after(10):
            while not release.is_set():  # noqa: ASYNC110  a thread's Event; the test sets it
                await anyio.sleep(0.01)
        return "done"

    with running_server(agent, streaming=True) as url:
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendStreamingMessage",
                "params": {"message": message},
            }
        )
        request = (
            f"POST / HTTP/1.1\r\nhost: {urlsplit(url).netloc}\r\n"
            "content-type: application/json\r\na2a-version: 1.0\r\naccept: text/event-stream\r\n"
            f"content-length: {len(body)}\r\n\r\n{body}"
        ).encode()
        parts = urlsplit(url)
        assert parts.hostname is not None
        assert parts.port is not None
        with socket.create_connection((parts.hostname, parts.port), timeout=5) as client:
            client.sendall(request)
            seen = b""
            while b"TASK_STATE_SUBMITTED" not in seen:
                chunk = client.recv(65536)
                assert chunk, seen
                seen += chunk
            assert seen.startswith(b"HTTP/1.1 200"), seen
            release.set()
