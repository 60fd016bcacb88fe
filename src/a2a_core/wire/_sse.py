"""Server-Sent Events framing (the text/event-stream wire format, WHATWG HTML §9.2).

Each event is one ``data:`` line of compact JSON (JSON never contains a raw newline when
serialized compactly, so one line always suffices), an optional ``id:`` (the task event's
sequence number, which a reconnecting client sends back as ``Last-Event-ID``) and an optional
``event:`` name; a blank line ends it. A comment line keeps idle connections alive through
proxies.

The stream's lines end only at CR or LF, but JSON leaves NEL (U+0085) and the Unicode line and
paragraph separators (U+2028, U+2029) raw inside strings, and clients that split lines the way
Python's ``str.splitlines`` does (httpx's ``iter_lines``, which the official a2a-sdk client
reads streams with) cut an event in two at them. So they are written as JSON escapes, which
mean the same to every JSON parser.
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


#: The UTF-8 of characters that some clients take for line breaks, and their JSON escapes.
_LINE_BREAKS = (
    (b"\xc2\x85", b"\\u0085"),
    (b"\xe2\x80\xa8", b"\\u2028"),
    (b"\xe2\x80\xa9", b"\\u2029"),
)


def sse_event(data: bytes, *, event_id: int | None = None, event: str | None = None) -> bytes:
    """One event frame of JSON ``data``, which must be a single line."""
    if b"\n" in data or b"\r" in data:
        raise ValueError("SSE data must be a single line")
    if b"\xc2\x85" in data or b"\xe2\x80\xa8" in data or b"\xe2\x80\xa9" in data:
        for raw, escaped in _LINE_BREAKS:
            data = data.replace(raw, escaped)
    head = b""
    if event is not None:
        head += b"event: " + event.encode() + b"\n"
    if event_id is not None:
        head += b"id: " + str(event_id).encode() + b"\n"
    return head + b"data: " + data + b"\n\n"
