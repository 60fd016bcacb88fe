"""Parsing request bodies within limits: Unicode text only, bounded nesting, bounded items.

Each of these inputs used to get past the parser and fail later (a 500 on every read of the task
that stored it); here each is refused by ``loads`` with the reason and the place, and what
``loads`` accepts can always be written back.
"""

import contextlib
import json
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core import _json
from a2a_core._json import (
    BadValue,
    JsonLimits,
    NotJson,
    TooManyItems,
    dumps,
    loads,
    value_problem,
)

LIMITS = JsonLimits(max_depth=8, max_items=100)


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_strict_utf8_refuses_cesu8_surrogates() -> None:
    with pytest.raises(NotJson, match=r"not UTF-8 text \(byte 0xED at offset 6\)"):
        loads(b'{"a":"\xed\xa0\x80"}')


@pytest.mark.parametrize("escape", [b"\\ud800", b"\\uDFFF", b"\\udbff", b"\\uDc00x"])
def test_a_lone_surrogate_escape_is_refused_by_path(escape: bytes) -> None:
    body = b'{"params":{"parts":[{"text":"ok"},{"text":"a' + escape + b'"}]}}'
    with pytest.raises(BadValue) as raised:
        loads(body)
    assert raised.value.path == "params.parts[1].text"
    assert "lone surrogate" in raised.value.problem
    assert raised.value.document["params"]["parts"][0] == {"text": "ok"}


def test_a_lone_surrogate_in_a_key_is_refused() -> None:
    with pytest.raises(BadValue) as raised:
        loads(b'{"metadata":{"\\ud800":1}}')
    assert raised.value.path == "metadata"
    assert "key" in raised.value.problem


def test_surrogate_pairs_and_escaped_backslashes_are_fine() -> None:
    assert loads(b'{"a":"\\ud83d\\ude00"}') == {"a": "\U0001f600"}
    assert loads(b'{"a":"\\\\ud800"}') == {"a": "\\ud800"}  # a backslash, then text


def test_nesting_at_the_limit_passes_and_past_it_is_refused() -> None:
    assert loads(nested(8), LIMITS) is not None
    with pytest.raises(BadValue, match="nested more than 8 levels deep"):
        loads(nested(9), LIMITS)


def test_the_deep_path_is_named() -> None:
    body = b'{"a":{"b":[0,[[[[[[[]]]]]]]]}}'
    with pytest.raises(BadValue) as raised:
        loads(body, LIMITS)
    assert raised.value.path == "a.b[1][0][0][0][0][0]"


def test_nesting_deeper_than_the_parser_goes_is_a_bad_value_too() -> None:
    with pytest.raises(BadValue, match="nested more than"):
        loads(nested(50_000), JsonLimits(max_items=200_000))


def test_too_many_items_are_refused_before_parsing() -> None:
    body = b"[" + b",".join([b"0"] * 200) + b"]"
    with pytest.raises(TooManyItems) as raised:
        loads(body, LIMITS)
    assert raised.value.found == 201
    assert raised.value.limit == 100


def test_separators_inside_strings_do_not_count() -> None:
    text = "a, b: {c} [d] " * 1_000 + '\\" \\\\'
    document = {"text": text, "escaped": 'x\\",y'}
    assert loads(json.dumps(document).encode(), LIMITS) == document


def test_many_strings_are_counted_as_items() -> None:
    body = json.dumps(["s"] * 500).encode()
    with pytest.raises(TooManyItems):
        loads(body, LIMITS)


@pytest.mark.parametrize("body", [b"{", b'{"a":NaN}', b"1e999", b"\xff\xfe", b"[1,]"])
def test_what_is_not_json_is_not_json(body: bytes) -> None:
    with pytest.raises(NotJson):
        loads(body)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    # Any text, lone surrogates included: what the parser could be handed in escapes.
    | st.text(st.characters(codec=None)),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(st.characters(codec=None), max_size=5), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(json_values)
def test_whatever_loads_accepts_can_be_written_back(value: Any) -> None:
    body = json.dumps(value).encode()  # ASCII, with every surrogate as an escape
    try:
        document = loads(body, JsonLimits(max_depth=6, max_items=60))
    except (BadValue, TooManyItems):
        return
    assert loads(dumps(document), JsonLimits(max_depth=6, max_items=60)) == document


@given(json_values)
def test_a_value_with_a_lone_surrogate_is_always_refused(value: Any) -> None:
    body = json.dumps(value).encode()
    try:
        dumps(value)
    except UnicodeEncodeError:
        with pytest.raises((BadValue, TooManyItems)):
            loads(body, JsonLimits(max_depth=1_000, max_items=1_000))


@pytest.mark.parametrize(
    ("value", "path", "problem"),
    [
        ({"a": {1, 2}}, "data.a", "is a set"),
        ({"a": [float("nan")]}, "data.a[0]", "is nan"),
        ({"a": "\udc80"}, "data.a", "lone surrogate"),
        ({1: "x"}, "data", "key of type int"),
        ({"a b": [[[[[[[[[]]]]]]]]]}, 'data["a b"][0][0][0][0][0][0][0]', "nested more than 8"),
    ],
)
def test_value_problem_names_what_is_not_json_and_where(
    value: Any, path: str, problem: str
) -> None:
    found = value_problem(value, max_depth=8, root="data")
    assert found is not None
    assert found[0] == path
    assert problem in found[1]


def test_value_problem_accepts_json_values() -> None:
    assert value_problem({"a": [1, 2.5, None, True, "é", {"b": ()}]}) is None


# --- the fast ways are the same ways -----------------------------------------------------------


def strict_loads(text: str) -> Any:
    """What ``loads`` parsed with before its fast way: ``json.loads`` with its options."""
    return json.loads(text, parse_constant=_json._no_constant, parse_float=_json._finite_float)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1}',
        ' {"a":1}',
        '{"a":1}\n',
        '{"a":1} \t\r\n',
        "\ufeff{}",
        '{"a":1}\u00a0',
        '{"a":1}\x0b',
        '{"a":1} x',
        '{"a":1}{}',
        "",
        "   ",
        "[1,]",
        '{"a":NaN}',
        "[1e999]",
        '"text"',
        "12 ",
        "nul",
    ],
)
def test_the_fast_parse_accepts_and_refuses_what_json_loads_does(text: str) -> None:
    try:
        expected: Any = strict_loads(text)
    except ValueError as error:
        expected = NotJson(str(error))
    try:
        found: Any = loads(text)
    except NotJson as error:
        found = error
    assert repr(found) == repr(expected)


@given(json_values, st.sampled_from(["", " ", "\n", "\r\n\t "]))
def test_the_fast_parse_gives_what_json_loads_gives(value: Any, after: str) -> None:
    text = json.dumps(value) + after
    try:
        document = loads(text, JsonLimits(max_depth=100, max_items=10_000))
    except BadValue:
        return
    assert json.dumps(document) == json.dumps(strict_loads(text))


@contextlib.contextmanager
def encoding(kind: str) -> Iterator[None]:
    """Within, ``encoder()`` makes encoders of that kind: Python's C encoder, or its pure-Python
    one (as on Pythons without ``_json``: the standard library's fallback is off too)."""
    if kind == "C":
        yield
        return
    with (
        mock.patch.object(_json, "_c_make_encoder", None),
        mock.patch.object(json.encoder, "c_make_encoder", None),
    ):
        yield


@pytest.mark.parametrize("kind", ["C", "Python"])
@given(value=json_values)
def test_the_encoder_writes_what_json_dumps_writes(kind: str, value: Any) -> None:
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    with encoding(kind):
        assert _json.encoder()(value) == expected


@pytest.mark.parametrize("kind", ["C", "Python"])
def test_the_encoder_sorts_and_defaults_as_json_dumps(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "Python":
        monkeypatch.setattr(_json, "_c_make_encoder", None)
        monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = _json.encoder(sort_keys=True, default=lambda value: sorted(value))
    value = {"b": {3, 1}, "a": [1.5, float("nan"), "é"], "c": None}
    assert encode(value) == json.dumps(
        value,
        sort_keys=True,
        default=lambda v: sorted(v),
        separators=(",", ":"),
        ensure_ascii=False,
    )
    with pytest.raises(TypeError, match="not JSON serializable"):
        _json.encoder()(object())


@pytest.mark.parametrize("kind", ["C", "Python"])
def test_a_circular_value_fails_and_leaves_the_encoder_whole(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "Python":
        monkeypatch.setattr(_json, "_c_make_encoder", None)
        monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = _json.encoder()
    shared: list[Any] = []
    circular: list[Any] = [shared, []]
    circular[1].append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        encode(circular)
    # The list that was being written when it failed is not taken for circular later.
    assert encode([shared, shared]) == "[[],[]]"
