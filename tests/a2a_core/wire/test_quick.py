"""The quick decoding of a send gives exactly what the strict decoder gives, or steps aside.

``_wire_quick.send_request`` may decline any value (the strict decoder then decodes it, or
refuses it with its usual error); what it must never do is accept a value the strict decoder
refuses, or decode one differently. Checked over valid sends of every shape, near-valid ones
(one field wrong) and hostile ones, in both JSON-RPC and HTTP+JSON shapes.
"""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_core import SendMessageRequest
from a2a_core._json import loads
from a2a_core.errors import InvalidParamsError
from a2a_core.testing.strategies import hostile, near_valid, requests, send_requests
from a2a_core.transport import V1Codec
from a2a_core.wire._quick import send_request

codec = V1Codec()
SENDS = {"SendMessage", "SendStreamingMessage"}


def strict(params: Any) -> Any:
    """What the strict decoder makes of ``params``: the request, or the error it raises."""
    try:
        return codec.converter.structure(params, SendMessageRequest)
    except Exception as error:  # any refusal is an outcome to compare
        return error


def check(params: Any) -> None:
    quick = send_request(params)
    if quick is None:
        return
    expected = strict(params)
    assert not isinstance(expected, Exception), f"quick accepted what strict refuses: {params!r}"
    # repr, not ==: 1 == True == 1.0 in Python, and the wire tells them apart.
    assert repr(quick) == repr(expected)


def send_params(raw: bytes) -> Any:
    """A JSON-RPC body's params, if it is a send that parses."""
    try:
        body = loads(raw)
    except ValueError:
        return None
    if type(body) is dict and body.get("method") in SENDS:
        return body.get("params")
    return None


@settings(max_examples=300)
@given(send_requests())
def test_valid_sends_decode_alike(request: SendMessageRequest) -> None:
    params = codec.encode(request)
    check(params)
    check(json.loads(json.dumps(params)))


@settings(max_examples=300)
@given(near_valid("1.0"))
def test_near_valid_sends_decode_or_fail_alike(case: Any) -> None:
    params = send_params(case.request.body)
    if params is not None:
        check(params)


@settings(max_examples=300)
@given(hostile("1.0"))
def test_hostile_sends_decode_or_fail_alike(case: Any) -> None:
    params = send_params(case.request.body)
    if params is not None:
        check(params)


@given(requests("1.0"))
def test_valid_requests_of_any_method_decode_alike(request: Any) -> None:
    params = send_params(request.body)
    if params is not None:
        check(params)


MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}


@pytest.mark.parametrize(
    "params",
    [
        {"message": MESSAGE},
        {"message": MESSAGE, "tenant": "t", "metadata": {"a": [1]}},
        {"message": MESSAGE, "configuration": None, "metadata": None},
        {
            "message": {
                **MESSAGE,
                "contextId": "c",
                "taskId": "t",
                "extensions": ["urn:x"],
                "referenceTaskIds": ["t-0"],
                "parts": [
                    {"text": "a", "mediaType": "text/plain"},
                    {"url": "https://x/y", "filename": "y"},
                    {"data": {"k": 1.5}, "metadata": {"m": True}},
                ],
            },
            "configuration": {
                "acceptedOutputModes": ["text/plain"],
                "historyLength": 3,
                "returnImmediately": True,
            },
        },
    ],
)
def test_well_formed_sends_take_the_quick_way(params: Any) -> None:
    quick = send_request(params)
    assert quick is not None
    assert repr(quick) == repr(strict(params))


@pytest.mark.parametrize(
    "params",
    [
        {"message": {**MESSAGE, "message_id": "snake"}},  # snake_case: the strict way renames
        {"message": {**MESSAGE, "kind": "message"}},  # unknown fields: ignored, the strict way
        {"message": {**MESSAGE, "parts": [{"raw": "aGk="}]}},  # bytes
        {"message": {**MESSAGE, "role": 1}},  # an enum by number
        {"message": MESSAGE, "configuration": {"historyLength": "3"}},  # int as a string
        {"message": MESSAGE, "configuration": {"taskPushNotificationConfig": {"url": "u"}}},
        {"message": {**MESSAGE, "parts": [{"text": "a", "url": "b"}]}},  # two contents
        {"message": {**MESSAGE, "parts": [{}]}},  # no content
        {"message": {**MESSAGE, "role": "ROLE_NOPE"}},
        {"message": {**MESSAGE, "parts": "text"}},
        {"message": {"messageId": "m", "role": "ROLE_USER"}},  # parts missing
        {"message": MESSAGE, "tenant": None},
        {"message": MESSAGE, "configuration": {"historyLength": 2**31}},
        {"message": MESSAGE, "configuration": {"returnImmediately": 1}},
        {},
        [],
    ],
)
def test_anything_unusual_goes_the_strict_way(params: Any) -> None:
    assert send_request(params) is None


@given(st.sampled_from(["text", "url"]), st.sampled_from([17, None, ["x"], {"a": 1}]))
def test_errors_are_the_strict_decoders(member: str, wrong: Any) -> None:
    params = {"message": {**MESSAGE, "parts": [{member: wrong}]}}
    with pytest.raises(InvalidParamsError) as raised:
        codec.decode(SendMessageRequest, params, "params")
    assert raised.value.violations[0].field.startswith("params.message.parts[0]")
