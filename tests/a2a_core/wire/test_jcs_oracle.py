"""Our RFC 8785 canonical JSON against Trail of Bits' ``rfc8785``, the oracle: byte for byte on
generated JSON values and on the RFC's own published examples.

Where the two differ it is by policy, tested as such: integers past ±(2**53 - 1). RFC 8785
(after I-JSON) wants integers within that range, and ``rfc8785`` refuses the rest. To a
verifier in JavaScript every JSON number is a double, and the canonical text of a large
integral double (``9007199254740994``, ``295147905179352830000``) is read by Python as an
integer: ours takes such an integer when the ECMAScript form of its double names it exactly,
and writes that form (what ``rfc8785`` writes for the double), so that what it wrote reads back
and canonicalizes to itself. Any other integer would be rounded: both refuse it.
"""

import json
import math
import struct
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given
from hypothesis import strategies as st

from a2a_core.card import canonical_json
from a2a_core.errors import UsageError

#: The integers both take: what RFC 8785 calls safe.
SAFE = 2**53 - 1

#: Doubles at the edges of ECMAScript's number forms: where the exponent form starts (1e21,
#: 1e-7), signed zero, the smallest subnormal, the largest double, the integer edge, and
#: shortest-digit cases that round.
EDGE_FLOATS = (
    1e21,
    1e-7,
    1e-6,
    -0.0,
    0.0,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    9007199254740992.0,
    -9007199254740992.0,
    9007199254740993.0,
    1e23,
    9.999999999999997e22,
    999999999999999900000.0,
    0.1,
    0.30000000000000004,
    123456789012345680000.0,
    1424953923781206.2,
    4.35,
    0.000001,
    100.0,
)

#: Characters whose UTF-16 order differs from their code points' (U+E000..U+FFFF sort after
#: the surrogate pairs of U+10000 and up), the escapes JSON needs, and the ones it must not
#: escape (DEL, U+2028, U+2029, non-ASCII).
_TRICKY = st.sampled_from(
    ["\ue000", "\ufb33", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff", "\x00", "\x1f",
     "\x7f", "\u2028", "\u2029", '"', "\\", "/", "\b", "\f", "\n", "\r", "\t", "\u0080", "é"]
)  # fmt: skip
#: Any Unicode scalar value: surrogates are not (UTF-8 cannot carry a lone one).
_CHARS = st.characters(exclude_categories=["Cs"])
_ASTRAL = st.characters(min_codepoint=0x10000, exclude_categories=["Cs"])
TEXT = st.text(_CHARS | _ASTRAL | _TRICKY, max_size=12)

NUMBERS = (
    st.integers(-SAFE, SAFE)
    | st.sampled_from([SAFE, -SAFE, 0, 1, -1, 2**31, 2**32, 10**15])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(EDGE_FLOATS)
)
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TEXT, inner, max_size=6),
    max_leaves=25,
)


@given(JSON_VALUES)
@example({"\ufb33": 1, "\U0001f600": 2, "\ue000": 3, "\uffff": 4, "\U00010000": 5})
@example([1e21, 1e-7, -0.0, 5e-324, SAFE, -SAFE, 1e23, 0.1])
@example({"": {"": [{}, [], ""]}})
def test_ours_is_byte_for_byte_the_oracles(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@given(JSON_VALUES)
def test_canonical_bytes_read_back_canonicalize_to_themselves(value: Any) -> None:
    written = canonical_json(value)
    assert canonical_json(json.loads(written)) == written


@given(st.dictionaries(TEXT, st.integers(0, 9), min_size=2, max_size=12))
def test_keys_are_ordered_as_the_oracle_orders_them(value: dict[str, int]) -> None:
    # The order is the only freedom an object has: every permutation of the same keys gives
    # the oracle's one text.
    expected = rfc8785.dumps(value)
    for items in (sorted(value.items()), sorted(value.items(), reverse=True)):
        assert canonical_json(dict(items)) == expected


# --- RFC 8785's published examples ----------------------------------------------------------


def both(value: Any) -> bytes:
    """The canonical bytes of ``value``, once both implementations agreed on them."""
    ours = canonical_json(value)
    assert ours == rfc8785.dumps(value)
    return ours


def test_section_3_2_2_the_serialization_example() -> None:
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert both(json.loads(source)) == expected.encode()


def test_section_3_2_3_the_sorting_example() -> None:
    source = (
        '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return",'
        ' "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One",'
        ' "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control",'
        ' "\\u00f6": "Latin Small Letter O With Diaeresis"}'
    )
    written = both(json.loads(source))
    assert list(json.loads(written).values()) == [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small Letter O With Diaeresis",
        "Euro Sign",
        "Emoji: Grinning Face",
        "Hebrew Letter Dalet With Dagesh",
    ]
    assert written.startswith(b'{"\\r":"Carriage Return","1":"One","\xc2\x80":"Control"')


def test_section_3_2_4_utf8_is_written_as_is_never_normalized() -> None:
    written = both(json.loads('{"Unnormalized Unicode":"A\\u030a"}'))
    assert written == bytes.fromhex(
        "7b 22 55 6e 6e 6f 72 6d 61 6c 69 7a 65 64 20 55 6e 69 63 6f 64 65 22 3a 22 41 cc 8a 22 7d"
    )


#: RFC 8785 Appendix B: IEEE 754 doubles (by their bits) and their canonical form.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def _double(bits: str) -> float:
    (value,) = struct.unpack(">d", bytes.fromhex(bits))
    return float(value)


@pytest.mark.parametrize(("bits", "text"), APPENDIX_B)
def test_appendix_b_numbers(bits: str, text: str) -> None:
    assert both(_double(bits)) == text.encode()


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"])
def test_appendix_b_nan_and_infinity_are_refused_by_both(bits: str) -> None:
    value = _double(bits)
    assert math.isnan(value) or math.isinf(value)
    with pytest.raises(UsageError):
        canonical_json(value)
    with pytest.raises(rfc8785.CanonicalizationError):
        rfc8785.dumps(value)


# --- where the two differ, by policy ----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2**53, "9007199254740992"),
        (-(2**53), "-9007199254740992"),
        (2**53 + 2, "9007199254740994"),
        (10**16, "10000000000000000"),
        (295147905179352830000, "295147905179352830000"),  # Appendix B's 2**68, as written
        (10**21, "1e+21"),
        (-(10**30), "-1e+30"),
    ],
)
def test_an_integer_past_2_53_that_a_double_writes_exactly_is_ours_to_write(
    value: int, text: str
) -> None:
    assert canonical_json(value) == rfc8785.dumps(float(value)) == text.encode()
    with pytest.raises(rfc8785.IntegerDomainError):
        rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value",
    [
        2**53 + 1,  # no double: it would be rounded to 2**53
        -(2**53) - 1,
        2**68,  # a double, but written 295147905179352830000: another integer
        10**400,  # past the largest double
    ],
)
def test_an_integer_the_canonical_form_would_change_is_refused_by_both(value: int) -> None:
    with pytest.raises(UsageError, match="not exact"):
        canonical_json(value)
    with pytest.raises(rfc8785.IntegerDomainError):
        rfc8785.dumps(value)


@given(st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(EDGE_FLOATS))
@example(9007199254740994.0)
@example(2.0**68)
@example(1e20)
def test_the_oracles_text_of_any_double_read_back_by_python_is_ours_again(value: float) -> None:
    # Python reads an integral number without exponent as an int, however large: a verifier
    # holding a card parsed so must canonicalize it to the bytes its signer signed.
    written = rfc8785.dumps(value)
    assert canonical_json(json.loads(written)) == written


def test_a_lone_surrogate_is_refused_by_both() -> None:
    with pytest.raises(UsageError):
        canonical_json({"a": "\ud800"})
    with pytest.raises(rfc8785.CanonicalizationError):
        rfc8785.dumps({"a": "\ud800"})
