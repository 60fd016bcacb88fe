"""RFC 8785 canonical JSON, and the canonical form of a card its signatures sign."""

import json
import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core.card import canonical_card_bytes, canonical_json
from a2a_core.errors import UsageError


def test_the_rfc_example_is_canonicalized_as_the_rfc_gives_it() -> None:
    # RFC 8785 §3.2.2: input written with odd numbers, escapes and whitespace.
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(source)) == expected.encode()


def test_keys_sort_by_utf16_code_units() -> None:
    # RFC 8785 §3.2.3: 😀 (a surrogate pair, D83D DE00) sorts before U+FB33, although its code
    # point is greater.
    keys = ["\u20ac", "\r", "\ufb33", "1", "\U0001f600", "\u0080", "\u00f6", "</script>"]
    value = {key: n for n, key in enumerate(keys)}
    text = canonical_json(value).decode()
    order = [json.loads("{" + pair + "}") for pair in text[1:-1].split(",")]
    assert [next(iter(o)) for o in order] == [
        "\r",
        "1",
        "</script>",
        "\u0080",
        "\u00f6",
        "\u20ac",
        "\U0001f600",
        "\ufb33",
    ]


@pytest.mark.parametrize(
    ("bits", "text"),
    [
        # RFC 8785 Appendix B: IEEE 754 doubles and their ECMAScript form.
        (0x0000000000000000, "0"),
        (0x8000000000000000, "0"),
        (0x0000000000000001, "5e-324"),
        (0x8000000000000001, "-5e-324"),
        (0x7FEFFFFFFFFFFFFF, "1.7976931348623157e+308"),
        (0xFFEFFFFFFFFFFFFF, "-1.7976931348623157e+308"),
        (0x4340000000000000, "9007199254740992"),
        (0xC340000000000000, "-9007199254740992"),
        (0x4430000000000000, "295147905179352830000"),
        (0x44B52D02C7E14AF5, "9.999999999999997e+22"),
        (0x44B52D02C7E14AF6, "1e+23"),
        (0x44B52D02C7E14AF7, "1.0000000000000001e+23"),
        (0x444B1AE4D6E2EF4E, "999999999999999700000"),
        (0x444B1AE4D6E2EF4F, "999999999999999900000"),
        (0x444B1AE4D6E2EF50, "1e+21"),
        (0x3EB0C6F7A0B5ED8C, "9.999999999999997e-7"),
        (0x3EB0C6F7A0B5ED8D, "0.000001"),
        (0x41B3DE4355555553, "333333333.3333332"),
        (0x41B3DE4355555554, "333333333.33333325"),
        (0x41B3DE4355555555, "333333333.3333333"),
        (0x41B3DE4355555556, "333333333.3333334"),
        (0x41B3DE4355555557, "333333333.33333343"),
        (0xBECBF647612F3696, "-0.0000033333333333333333"),
        (0x43143FF3C1CB0959, "1424953923781206.2"),
    ],
)
def test_numbers_take_their_ecmascript_form(bits: int, text: str) -> None:
    (value,) = struct.unpack(">d", bits.to_bytes(8, "big"))
    assert canonical_json(value) == text.encode()


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_number_reads_back_as_the_same_double(value: float) -> None:
    written = canonical_json(value)
    assert float(written) == value or (value == 0 and float(written) == 0)


def test_integers_are_written_as_integers_and_inexact_ones_are_refused() -> None:
    assert canonical_json([0, -1, 2**53, 100.0]) == b"[0,-1,9007199254740992,100]"
    with pytest.raises(UsageError, match="2\\*\\*53"):
        canonical_json(2**53 + 1)


@pytest.mark.parametrize(
    "value", [math.nan, math.inf, {1: "a"}, b"bytes", {"a": object()}, "\ud800"]
)
def test_what_is_not_json_data_is_refused(value: object) -> None:
    with pytest.raises(UsageError):
        canonical_json(value)


def test_nesting_is_bounded() -> None:
    nested: object = []
    for _ in range(63):
        nested = [nested]
    assert canonical_json(nested) == b"[" * 64 + b"]" * 64
    with pytest.raises(UsageError, match="deeper"):
        canonical_json([nested])


def test_strings_keep_non_ascii_and_escape_only_what_json_must() -> None:
    assert canonical_json("é\u2028/\x7f\x01\t") == '"é\u2028/\x7f\\u0001\\t"'.encode()


def test_a_cards_canonical_form_leaves_out_its_signatures_and_empty_values() -> None:
    card = {
        "name": "Agent ✓",
        "description": "",
        "version": "1.0.0",
        "skills": [{"id": "s", "tags": [], "examples": [""]}],
        "capabilities": {"streaming": False, "extensions": []},
        "defaultInputModes": [],
        "signatures": [{"protected": "x", "signature": "y"}],
        "provider": {},
        "count": 0,
    }
    assert (
        canonical_card_bytes(card)
        == (
            '{"capabilities":{"streaming":false},"count":0,"name":"Agent ✓",'
            '"skills":[{"id":"s"}],"version":"1.0.0"}'
        ).encode()
    )
