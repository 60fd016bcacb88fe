"""A real webhook receiver on 127.0.0.1 for the push tests (``http.server`` in a thread).

It records every request it gets (method, path, headers, body, when) and answers as scripted,
per path: a status, extra headers (a ``Location`` for a redirect), and a delay before answering
(a hanging webhook). Every wait is bounded; closing it releases any request still hanging.
"""

import dataclasses
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio

#: The longest a test waits for deliveries.
DELIVERY_TIMEOUT = 5.0


@dataclass(frozen=True)
class Delivery:
    """One request the receiver got."""

    method: str
    path: str
    #: Header names in lower case.
    headers: Mapping[str, str]
    body: bytes
    #: ``time.monotonic()`` when the request arrived (before any scripted delay).
    at: float
    #: The status it was answered with (what the script said; a sender that gave up waiting
    #: did not read it).
    status: int = 0

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Answer:
    """How the receiver answers one request."""

    status: int = 200
    #: Seconds to wait before answering (released early when the receiver closes).
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


OK = Answer()


class _Server(ThreadingHTTPServer):
    # A sender may open many connections at once (one per webhook queue): the default backlog
    # of 5 would make the kernel drop their SYNs, which a client retries only after a second.
    request_queue_size = 128


class Receiver:
    """Records what reaches it; answers each path by its script (200 when the script is empty)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._deliveries: list[Delivery] = []
        self._scripts: dict[str, deque[Answer]] = defaultdict(deque)
        self._always: dict[str, Answer] = {}
        self._released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                if len(body) < length:
                    # The sender hung up between its headers and the end of its body (a server
                    # stopping mid-send): no webhook would act on half a request, so it is no
                    # delivery.
                    return
                path = self.path
                delivery = Delivery(
                    self.command,
                    path,
                    {name.lower(): value for name, value in self.headers.items()},
                    body,
                    time.monotonic(),
                )
                answer = receiver._record(delivery)
                if answer.delay:
                    receiver._released.wait(answer.delay)
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers:
                        self.send_header(name, value)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender gave up waiting (its timeout) and closed the connection

            do_POST = do_GET = do_PUT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def _record(self, delivery: Delivery) -> Answer:
        with self._lock:
            script = self._scripts[delivery.path]
            answer = script.popleft() if script else self._always.get(delivery.path, OK)
            self._deliveries.append(dataclasses.replace(delivery, status=answer.status))
            return answer

    # --- scripting ------------------------------------------------------------------------------

    def script(self, path: str, *answers: Answer | int) -> None:
        """Answer the next requests to ``path`` with these, in order (then the usual answer)."""
        with self._lock:
            self._scripts[path].extend(a if isinstance(a, Answer) else Answer(a) for a in answers)

    def always(self, path: str, answer: Answer | int) -> None:
        """Answer every request to ``path`` this way once its script is used up."""
        with self._lock:
            self._always[path] = answer if isinstance(answer, Answer) else Answer(answer)

    # --- what arrived ---------------------------------------------------------------------------

    def deliveries(self, path: str | None = None) -> list[Delivery]:
        with self._lock:
            return [d for d in self._deliveries if path is None or d.path == path]

    def wait_for(
        self, count: int, path: str | None = None, *, timeout: float = DELIVERY_TIMEOUT
    ) -> list[Delivery]:
        """The first ``count`` requests (to ``path``), once they are in; fails on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.deliveries(path)
            if len(found) >= count:
                return found
            assert time.monotonic() < deadline, (
                f"{len(found)} of {count} requests reached {path or 'the receiver'}: {found}"
            )
            time.sleep(0.005)

    # --- life -----------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5.0)


@contextmanager
def receiving() -> Iterator[Receiver]:
    """A running receiver on 127.0.0.1, closed afterwards."""
    receiver = Receiver()
    receiver.start()
    try:
        yield receiver
    finally:
        receiver.close()


async def await_deliveries(
    receiver: Receiver,
    count: int,
    path: str | None = None,
    *,
    timeout: float = DELIVERY_TIMEOUT,  # noqa: ASYNC109  polls a receiver in another thread
) -> list[Delivery]:
    """:meth:`Receiver.wait_for` for async tests: polls without blocking the event loop."""
    deadline = time.monotonic() + timeout
    while True:
        found = receiver.deliveries(path)
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, (
            f"{len(found)} of {count} requests reached {path or 'the receiver'}: {found}"
        )
        await anyio.sleep(0.005)
