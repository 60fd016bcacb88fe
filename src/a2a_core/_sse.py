"""Server-Sent Events framing (the text/event-stream wire format, WHATWG HTML §9.2).

Each event is one ``data:`` line of compact JSON (JSON never contains a raw newline when
serialized compactly, so one line always suffices), an optional ``id:`` (the task event's
sequence number, which a reconnecting client sends back as ``Last-Event-ID``) and an optional
``event:`` name; a blank line ends it. A comment line keeps idle connections alive through
proxies.
"""

__all__ = ["KEEPALIVE", "SSE_HEADERS", "sse_event"]

#: Response headers of every event stream.
SSE_HEADERS: tuple[tuple[str, str], ...] = (
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
)

#: A comment frame: ignored by clients, but it keeps proxies from timing the stream out.
KEEPALIVE = b": keep-alive\n\n"


def sse_event(data: bytes, *, event_id: int | None = None, event: str | None = None) -> bytes:
    """One event frame. ``data`` must not contain a newline."""
    if b"\n" in data or b"\r" in data:
        raise ValueError("SSE data must be a single line")
    head = b""
    if event is not None:
        head += b"event: " + event.encode() + b"\n"
    if event_id is not None:
        head += b"id: " + str(event_id).encode() + b"\n"
    return head + b"data: " + data + b"\n\n"
