"""Message fingerprints never change: stores keep them across releases.

A task stored by SQLite or Redis carries the fingerprint of every message it accepted, and an
idempotent re-send is recognised by comparing a new fingerprint with the stored one. A release
that computed another text for the same message would refuse every re-send of a message sent
before the upgrade as "a different body". So the digests of fixed messages are pinned here, and
the encoder that computes them is checked against the walk it replaced (the fingerprint of
releases up to this one), over messages of every shape, on both of ``json``'s encoders.
"""

import base64
import enum
import hashlib
import json
from datetime import UTC, datetime
from typing import Any
from unittest import mock

import attrs
import pytest
from hypothesis import given, settings

from a2a_core import Message, Part, Role, _json
from a2a_core.model import _records
from a2a_core.model._records import message_fingerprint
from tests.a2a_core.support import messages

#: Messages of every shape, and the fingerprint each has had since stores first kept them.
PINNED: list[tuple[Message, str]] = [
    (Message("m-1", Role.USER, (Part(text="hello"),)), "zKGYY8I+2t9kieSe8X+r4/Xf"),
    (
        Message("m-2", Role.USER, (Part(text="and then?"),), context_id="ctx-1", task_id="task-1"),
        "6BgH5JM+UD0ZfSu93V/lFCxF",
    ),
    (
        Message(
            "m-3",
            Role.USER,
            (
                Part(text="Grüße, 世界 😀", media_type="text/plain"),
                Part(raw=b"\x00\xffbytes", filename="a.bin", media_type="application/octet-stream"),
                Part(url="https://example.com/f.png", filename="f.png"),
                Part(
                    data={"z": [1, 2.5, None, True], "a": {"y": "é", "b": -0.0}}, metadata={"k": 1}
                ),
            ),
            metadata={"zeta": 1e300, "alpha": [{"b": 1, "a": 2}], "mid": 'quote " and \\ slash'},
            extensions=("https://ext.example/1", "urn:x"),
            reference_task_ids=("t-9", "t-8"),
        ),
        "5O2uAKOpMIlvyl8TPTUfOtxQ",
    ),
    (Message("m-4", Role.AGENT, (Part(data=[]),), metadata={}), "H5In6AsCU5YljFcsJk1xKLCW"),
    (
        # Values a client cannot send but an embedder's code can build: still one digest.
        Message(
            "m-5",
            Role.UNSPECIFIED,
            (Part(data={"when": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC), "raw": b"x"}),),
            metadata={"tuple": (1, "two"), "nested": {"role": Role.AGENT}},
        ),
        "EHrnmvH0sLMZ6qwqMwWUuOKO",
    ),
]


def walked_fingerprint(message: Message) -> str:
    """The fingerprint as releases before the C encoder computed it: a walk in Python to plain
    data, then ``json.dumps``. The reference the encoder must agree with, byte for byte."""

    def canonical(value: Any) -> Any:
        match value:
            case str() | int() | float() | bool() | None:
                return value
            case enum.Enum():
                return value.value
            case bytes():
                return base64.b64encode(value).decode()
            case datetime():
                return value.isoformat()
            case tuple() | list():
                return [canonical(v) for v in value]
            case dict():
                return {key: canonical(item) for key, item in value.items()}
            case _ if attrs.has(type(value)):
                return [canonical(getattr(value, f.name)) for f in attrs.fields(type(value))]
        return value

    text = json.dumps(canonical(message), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return base64.b64encode(hashlib.sha256(text.encode()).digest()[:18]).decode()


@pytest.fixture(params=["C", "Python"])
def encoder_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs on the C encoder and on the pure-Python one (Pythons without ``_json``)."""
    if request.param == "Python":
        monkeypatch.setattr(_json, "_c_make_encoder", None)
        monkeypatch.setattr(json.encoder, "c_make_encoder", None)
        python = _json.encoder(sort_keys=True, default=_records._canonical)
        monkeypatch.setattr(_records, "_canonical_json", python)
    return str(request.param)


@pytest.mark.parametrize(("message", "fingerprint"), PINNED)
def test_fingerprints_are_pinned(message: Message, fingerprint: str, encoder_kind: str) -> None:
    assert message_fingerprint(message) == fingerprint
    assert walked_fingerprint(message) == fingerprint


def test_the_pinned_text_of_an_echo(encoder_kind: str) -> None:
    # The canonical text itself, so that a change shows what changed.
    text = _records._canonical_json(PINNED[0][0])
    assert text == '["m-1","ROLE_USER",[["hello",null,null,null,null,"",""]],"","",null,[],[]]'


@settings(max_examples=300)
@given(messages)
def test_fingerprint_matches_the_walk_it_replaced(message: Message) -> None:
    assert message_fingerprint(message) == walked_fingerprint(message)


@given(messages)
def test_python_encoder_gives_the_same_fingerprint(message: Message) -> None:
    expected = _records._canonical_json(message)
    with mock.patch.object(json.encoder, "c_make_encoder", None):
        python = json.JSONEncoder(
            separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=_records._canonical
        ).encode(message)
    assert python == expected


def test_a_value_json_has_no_form_of_fails_as_json_dumps_does() -> None:
    message = Message("m", Role.USER, (Part(data={"x": object()}),))
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        message_fingerprint(message)


@attrs.frozen
class _One:
    only: str


@attrs.frozen
class _NoFields:
    pass


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        (Part(text="x"), ("x", None, None, None, None, "", "")),
        (_One("x"), ("x",)),
        (_NoFields(), ()),
    ],
    ids=["several", "one", "none"],
)
def test_an_attrs_value_is_the_tuple_of_its_fields_whatever_their_number(
    value: Any, fields: tuple[Any, ...]
) -> None:
    """(``operator.attrgetter`` of a single name gives the value itself, not a 1-tuple: a class
    of one field must still be a list in the canonical JSON, not its bare value.)"""
    assert _records._canonical(value) == fields
    assert _records._canonical(value) == fields  # and again, from the getter kept for the class
