"""The JSON Canonicalization Scheme (RFC 8785), and the canonical form of an Agent Card.

A signed card (spec §8.4) is signed over bytes that signer and verifier must derive alike from
the card's JSON, whatever the key order, whitespace or number spelling of the copy each holds:
JCS is that derivation. It is pure string work, so it lives in the core, where the card is
rendered; the signature itself (keys, algorithms, randomness) is the edge's.

What JCS asks beyond ``json.dumps(sort_keys=True)``, and why each rule is here:

* keys sorted by their UTF-16 code units, not by code points (the two differ for characters
  past U+FFFF against those in U+E000 to U+FFFF): verifiers written in JavaScript, Java or C# sort
  so;
* numbers in ECMAScript's ``Number.prototype.toString`` form (``1e+30``, ``0.002``, ``4.5``,
  ``100``), from the shortest digits that round-trip the double. JSON numbers are doubles to
  a verifier in JavaScript, so an integer past 2**53 is taken only when that form names it
  exactly (``2**53 + 2``, ``10**21`` as ``1e+21``): the canonical text of such a double, read
  back by Python as an integer, canonicalizes to itself. Any other is refused rather than
  silently rounded (two integers would sign alike);
* strings with only the mandatory escapes, and no lone surrogate (not representable in UTF-8).

The card's canonical form is the one the A2A SDKs verify: its ProtoJSON object without
``signatures``, with empty strings, lists and objects left out (a protobuf round trip drops
them, so a verifier holding a parsed card could not see them).
"""

import json
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from a2a_core._errors import UsageError

__all__ = ["MAX_DEPTH", "canonical_card_bytes", "canonical_json"]

#: Arrays and objects nested in one another, at most (a card is far shallower; a bound keeps
#: the recursion off the interpreter's stack limit).
MAX_DEPTH = 64
#: The largest integer every double holds exactly.
_EXACT = 2**53
#: A string as JSON with only the escapes JSON requires (one encoder for every string: making
#: one per call, as ``json.dumps`` with options does, was most of the canonicalization's time).
_quoted = json.JSONEncoder(ensure_ascii=False).encode


def canonical_json(value: Any) -> bytes:
    """``value`` (JSON data: dicts with string keys, lists, strings, numbers, booleans,
    ``None``) as RFC 8785 canonical UTF-8 bytes. :class:`UsageError` if it is not JSON data."""
    parts: list[str] = []
    _write(value, parts, 1)
    try:
        return "".join(parts).encode("utf-8")
    except UnicodeEncodeError as error:
        raise UsageError(f"a string holds a lone surrogate: {error.reason}") from None


def canonical_card_bytes(card: Mapping[str, Any]) -> bytes:
    """The bytes an Agent Card's signatures sign: its JSON without ``signatures`` and without
    empty values, canonicalized."""
    body = {key: value for key, value in card.items() if key != "signatures"}
    return canonical_json(_without_empty(body, 1))


def _write(value: Any, parts: list[str], depth: int) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, str):
        parts.append(_quoted(value))
    elif isinstance(value, int):
        parts.append(str(value) if abs(value) <= _EXACT else _large_integer(value))
    elif isinstance(value, float):
        parts.append(_number(value))
    elif isinstance(value, Mapping):
        _deeper(depth)
        if not all(isinstance(key, str) for key in value):
            raise UsageError("a JSON object's keys must be strings")
        parts.append("{")
        for n, key in enumerate(sorted(value, key=_utf16)):
            if n:
                parts.append(",")
            parts.append(_quoted(key))
            parts.append(":")
            _write(value[key], parts, depth + 1)
        parts.append("}")
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        _deeper(depth)
        parts.append("[")
        for n, item in enumerate(value):
            if n:
                parts.append(",")
            _write(item, parts, depth + 1)
        parts.append("]")
    else:
        raise UsageError(f"{type(value).__name__} is not JSON data")


def _deeper(depth: int) -> None:
    if depth > MAX_DEPTH:
        raise UsageError(f"JSON nested deeper than {MAX_DEPTH} levels")


def _utf16(key: str) -> bytes:
    # Big-endian code units compare, byte by byte, as the units do.
    return key.encode("utf-16-be", "surrogatepass")


def _large_integer(value: int) -> str:
    """The ECMAScript form of an integer past 2**53, if it names that integer exactly."""
    try:
        text = _number(float(value))
    except OverflowError:  # past the largest double
        text = ""
    if not text or Decimal(text) != value:
        # (Python will not write an integer of thousands of digits, nor would it help.)
        shown = str(value) if value.bit_length() < 256 else f"of {value.bit_length()} bits"
        raise UsageError(f"the integer {shown} is not exact as a JSON number (past 2**53)")
    return text


def _number(value: float) -> str:
    """ECMAScript's Number.prototype.toString of a double (ECMA-262 §6.1.6.1.20)."""
    if not math.isfinite(value):
        raise UsageError(f"{value} is not a JSON number")
    if value == 0:
        return "0"  # -0 too
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that read back as the same double, as ECMAScript asks.
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    # value = 0.DIGITS x 10**point (the exponent is an int: the value is finite)
    point = int(exponent) + len(digit_tuple)
    count = len(digits)
    if count <= point <= 21:
        text = digits + "0" * (point - count)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        power = point - 1
        mantissa = digits[0] + ("." + digits[1:] if count > 1 else "")
        text = f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"
    return sign + text


def _without_empty(value: Any, depth: int) -> Any:
    """``value`` less its empty strings, lists and objects (``None`` if it is one itself)."""
    if isinstance(value, Mapping):
        _deeper(depth)
        kept = {}
        for key, item in value.items():
            cleaned = _without_empty(item, depth + 1)
            if cleaned is not None:
                kept[key] = cleaned
        return kept or None
    if isinstance(value, list | tuple):
        _deeper(depth)
        items = [c for c in (_without_empty(v, depth + 1) for v in value) if c is not None]
        return items or None
    if value == "" and isinstance(value, str):
        return None
    return value
