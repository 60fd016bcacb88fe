"""Server-Sent Events frames: one ``data:`` line each, whatever the JSON holds."""

import json

import pytest

from a2a_core.transport import KEEPALIVE, sse_event


def test_a_frame_is_its_event_name_id_and_one_data_line() -> None:
    assert sse_event(b'{"a":1}') == b'data: {"a":1}\n\n'
    assert sse_event(b"{}", event_id=7, event="error") == b"event: error\nid: 7\ndata: {}\n\n"
    assert KEEPALIVE.startswith(b":")  # a comment: clients ignore it


@pytest.mark.parametrize("data", [b'{"a":\n1}', b'{"a":\r1}'])
def test_data_of_more_than_one_line_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError, match="single line"):
        sse_event(data)


@pytest.mark.parametrize("separator", ["\u0085", "\u2028", "\u2029"])
def test_characters_clients_split_lines_at_are_escaped(separator: str) -> None:
    """NEL and the Unicode line and paragraph separators stay raw in JSON text, and clients that
    split lines as ``str.splitlines`` does would cut the event at them: they are sent escaped,
    which means the same to a JSON parser."""
    value = {"text": f"one{separator}two{separator}"}
    frame = sse_event(json.dumps(value, ensure_ascii=False).encode())
    assert separator.encode() not in frame
    line, blank = frame.decode().splitlines()  # one data line, then the blank line ending it
    assert blank == ""
    assert json.loads(line.removeprefix("data: ")) == value
