"""Reading Server-Sent Events off a real HTTP response, for the black-box stream tests.

A small parser (the field rules of WHATWG HTML §9.2.6: ``data``, ``id``, ``event``, comments,
a blank line ends an event) and a reader over an ``httpx`` streamed response that never waits
past a deadline. Nothing here knows the server: it reads bytes off the wire.
"""

import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from tests.a2a_adapters.support import A2A_HEADERS, HTTP_TIMEOUT, endpoint

#: The longest any one stream in these tests may take, start to end.
STREAM_TIMEOUT = 10.0

#: The payload keys of a v1.0 ``StreamResponse`` (exactly one per event).
STREAM_RESPONSE_KEYS = frozenset({"task", "message", "statusUpdate", "artifactUpdate"})


@dataclass(frozen=True)
class Event:
    """One dispatched SSE event: its data lines joined, and the ``id``/``event`` it carried."""

    data: str
    id: str | None = None
    event: str | None = None

    def json(self) -> Any:
        return json.loads(self.data)


@dataclass(frozen=True)
class Comment:
    """A comment line (``: text``), which clients ignore (servers use it as a keep-alive)."""

    text: str


Item = Event | Comment


@dataclass
class SseParser:
    """Turns lines (without their line endings) into events and comments, as they complete."""

    _data: list[str] = field(default_factory=list)
    _id: str | None = None
    _event: str | None = None

    def feed(self, line: str) -> Item | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return Comment(line[1:].removeprefix(" "))
        name, colon, value = line.partition(":")
        if colon:
            value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "event":
            self._event = value
        # ``retry`` and unknown fields are ignored, as the standard says.
        return None

    def _dispatch(self) -> Event | None:
        data, event_id, event = self._data, self._id, self._event
        self._data, self._id, self._event = [], None, None
        if not data:
            return None  # an event without data is not dispatched
        return Event("\n".join(data), event_id, event)


def parse(text: str) -> list[Item]:
    """Every event and comment of a complete SSE body."""
    parser = SseParser()
    found = [parser.feed(line) for line in text.splitlines()]
    found.append(parser.feed(""))
    return [item for item in found if item is not None]


class SseStream:
    """The events of one streamed HTTP response, read as they arrive, within a deadline."""

    def __init__(self, response: httpx.Response, *, timeout: float = STREAM_TIMEOUT) -> None:
        self.response = response
        self.deadline = time.monotonic() + timeout
        self.comments: list[Comment] = []
        #: Whether the server ended the stream (the body is complete).
        self.ended = False
        self._lines = response.iter_lines()
        self._parser = SseParser()

    def next_item(self) -> Item | None:
        """The next event or comment; ``None`` once the server has ended the stream."""
        for line in self._lines:
            assert time.monotonic() < self.deadline, "the stream outlived its deadline"
            item = self._parser.feed(line)
            if isinstance(item, Comment):
                self.comments.append(item)
            if item is not None:
                return item
        self.ended = True
        return self._parser.feed("")

    def next_event(self) -> Event | None:
        """The next event (comments are collected on the way); ``None`` at the end."""
        while True:
            item = self.next_item()
            if item is None or isinstance(item, Event):
                return item

    def events(self, count: int | None = None) -> list[Event]:
        """The next ``count`` events, or (``None``) every event until the server ends it."""
        found: list[Event] = []
        while count is None or len(found) < count:
            event = self.next_event()
            if event is None:
                assert count is None, f"the stream ended after {len(found)} of {count} events"
                break
            found.append(event)
        return found


def rpc_body(method: str, params: Any, rpc_id: str | int | None = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


def stream_headers(last_event_id: str | int | None = None) -> dict[str, str]:
    headers = {**A2A_HEADERS, "Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    return headers


@contextmanager
def open_stream(
    url: str,
    method: str,
    params: Any,
    *,
    rpc_id: str | int | None = 1,
    last_event_id: str | int | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = STREAM_TIMEOUT,
    read_timeout: float = HTTP_TIMEOUT,
) -> Iterator[SseStream]:
    """POST a streaming JSON-RPC call; the open event stream (closed, on exit, by the client).

    Fails unless the server answered 200 with ``text/event-stream``. ``timeout`` bounds the
    whole stream; ``read_timeout`` the wait for any one chunk of it.
    """
    sent = {**stream_headers(last_event_id), **(headers or {})}
    with (
        httpx.Client(timeout=httpx.Timeout(HTTP_TIMEOUT, read=read_timeout)) as client,
        client.stream(
            "POST", endpoint(url), json=rpc_body(method, params, rpc_id), headers=sent
        ) as response,
    ):
        assert response.status_code == 200, response.read().decode()
        content_type = response.headers["content-type"]
        assert content_type.startswith("text/event-stream"), content_type
        yield SseStream(response, timeout=timeout)


def read_stream(
    url: str, method: str, params: Any, **options: Any
) -> tuple[list[Event], list[Comment]]:
    """Open a stream and read it to its end: its events and its comments."""
    with open_stream(url, method, params, **options) as stream:
        events = stream.events()
        return events, stream.comments


# --- what the frames hold -----------------------------------------------------------------------


def result_of_event(event: Event, *, rpc_id: str | int | None = 1) -> dict[str, Any]:
    """The v1.0 ``StreamResponse`` of one frame, checked: a JSON-RPC response with our id."""
    document = event.json()
    assert document["jsonrpc"] == "2.0", document
    assert document["id"] == rpc_id, document
    assert "error" not in document, document
    result: dict[str, Any] = document["result"]
    assert len(result) == 1, result
    assert set(result) <= STREAM_RESPONSE_KEYS, result
    return result


def results(events: list[Event], *, rpc_id: str | int | None = 1) -> list[dict[str, Any]]:
    return [result_of_event(event, rpc_id=rpc_id) for event in events]


def kind_of(result: Mapping[str, Any]) -> str:
    """The payload key of a ``StreamResponse``: task, message, statusUpdate or artifactUpdate."""
    [kind] = result
    return kind


def kinds(events: list[Event], *, rpc_id: str | int | None = 1) -> list[str]:
    return [kind_of(result) for result in results(events, rpc_id=rpc_id)]


def ids_of(events: list[Event]) -> list[int]:
    """The SSE ``id`` of each event, as numbers (fails on an event without one)."""
    found: list[int] = []
    for event in events:
        assert event.id is not None, f"an event without an id: {event}"
        assert event.id.isdigit(), event.id
        found.append(int(event.id))
    return found


def state_in(result: Mapping[str, Any]) -> str | None:
    """The task state a ``task`` or ``statusUpdate`` frame reports (``None`` for the others)."""
    for key in ("task", "statusUpdate"):
        if key in result:
            state: str = result[key]["status"]["state"]
            return state
    return None


def states_of(events: list[Event], *, rpc_id: str | int | None = 1) -> list[str | None]:
    return [state_in(result) for result in results(events, rpc_id=rpc_id)]


def consecutive(ids: list[int]) -> bool:
    return ids == list(range(ids[0], ids[0] + len(ids))) if ids else True


# --- agents the tests hold back -------------------------------------------------------------------


class Gate:
    """Opened by the test (its own thread); awaited by an agent on the server's event loop.

    The wait is bounded: an agent whose test never opens the gate fails its task instead of
    hanging the server.
    """

    def __init__(self) -> None:
        self._open = threading.Event()

    def open(self) -> None:
        self._open.set()

    @property
    def is_open(self) -> bool:
        return self._open.is_set()

    async def wait(self, timeout: float = STREAM_TIMEOUT) -> None:  # noqa: ASYNC109  polls a thread's Event
        deadline = time.monotonic() + timeout
        while not self._open.is_set():
            if time.monotonic() >= deadline:
                raise TimeoutError("the test never opened the gate")
            await anyio.sleep(0.005)
