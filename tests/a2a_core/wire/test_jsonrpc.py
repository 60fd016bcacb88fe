"""The JSON-RPC 2.0 envelope's helpers: the id of a request that failed, and error bodies."""

import json

import pytest

from a2a_core._json import JsonLimits
from a2a_core.errors import TaskNotFoundError
from a2a_core.wire._jsonrpc import error_body, peek_id


@pytest.mark.parametrize(
    ("body", "found"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "GetTask"}', 7),
        (b'{"id": "a", "params": {"text": "\\ud800"}}', "a"),  # a lone surrogate further in
        (b'{"id": 2.5, "params": [[[[[[]]]]]]}', 2.5),  # nested past the limit
        (b'{"id": "\\udc00"}', None),  # an id that is not text is no id
        (b'{"id": [1]}', None),
        (b"[1, 2]", None),
        (b"not json", None),
        (
            b'{"id": 1, "x": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}',
            None,
        ),  # too many items
    ],
)
def test_the_id_is_read_from_any_body_that_parses(body: bytes, found: object) -> None:
    """An error that is not about the body (a wrong content type) still names the request:
    its id is read from any JSON object, even one holding a value the request could not."""
    assert peek_id(body, JsonLimits(max_depth=4, max_items=16)) == found


def test_an_error_body_has_data_only_when_the_dialect_gives_details() -> None:
    error = TaskNotFoundError("no such task")
    assert json.loads(error_body(3, error, None)) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32001, "message": "no such task"},
    }
    assert json.loads(error_body(None, error, [{"reason": "TASK_NOT_FOUND"}])) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32001,
            "message": "no such task",
            "data": [{"reason": "TASK_NOT_FOUND"}],
        },
    }
