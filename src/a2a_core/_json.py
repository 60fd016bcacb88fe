"""JSON in and out, with the limits that keep one request from hurting the server.

A request body is whatever a client chose to send, so parsing it is where a hostile client
first gets to spend the server's time and memory. Three things that Python's ``json`` module
accepts would hurt us later, so they are refused here, before anything is decoded:

* **Text that is not Unicode.** ``json.loads`` reads bytes with ``surrogatepass``, so the CESU-8
  bytes ``ED A0 80`` come in as a lone surrogate; so does the escape ``"\\ud800"``. Python holds
  such a string happily, but it cannot be written back as UTF-8: the task that stored it could
  never be rendered again, and every listing holding it would fail. Bodies are decoded as strict
  UTF-8 (RFC 8259 §8.1) and lone surrogates are refused, naming the field.
* **Deep nesting.** Every later step (the codec, the store, rendering) recurses once or more per
  level, so a document the parser accepts can still exhaust the stack further on. Nesting is
  limited (``max_depth``) and the error names where the limit was passed.
* **Sheer number of values.** Parsing costs time per value, and so does every later step:
  700,000 tiny parts in 8 MiB held the event loop for seconds. The count is bounded
  (``max_items``) *before* parsing, from the separators alone: a value or key other than the
  first always follows one of ``{ [ , :``, so one plus their number (outside strings) bounds
  the items. Counting bytes runs at C speed, so the check costs microseconds on an ordinary
  body and a few milliseconds on the largest one allowed.

The deep checks (nesting, surrogates) walk the parsed document only when the bytes say they
might fail: no more openers than the depth limit means nothing is nested too deeply, and a lone
surrogate can only come from a ``\\uD800`` to ``\\uDFFF`` escape once the bytes are strict UTF-8.
So an ordinary request pays for a handful of ``bytes.count`` calls and nothing else.

Parsing and writing are on every request's path, so both go straight to the C halves of
Python's ``json`` where there are any: one module-level decoder's scanner (``json.loads`` with
options builds a decoder per call, and walks three Python frames to reach the scanner), and the
C encoder built for each value (``json.dumps`` with options builds a ``JSONEncoder`` per call).
What they produce is exactly what ``json.loads`` and ``json.dumps`` produce, errors included:
anything the fast way does not take as it is (leading whitespace, a parse error) goes the long
way, whose messages the errors quote.

The same walk checks values an agent produced (:func:`value_problem`), which never went through
a parser: an agent can put a lone surrogate, a set or a thousand levels of lists into a data
part, and that must fail the agent's output, not every later read of its task.
"""

import json
import math
import re
from collections.abc import Callable
from json.encoder import encode_basestring as _encode_basestring
from typing import Any

import attrs

__all__ = [
    "BadValue",
    "JsonLimits",
    "NotJson",
    "TooManyItems",
    "dumps",
    "encoder",
    "loads",
    "string_problem",
    "value_problem",
]

#: The nesting limit unless configured otherwise: values inside this many arrays or objects.
DEFAULT_MAX_DEPTH = 64
#: The item limit (values and object keys) unless configured otherwise.
DEFAULT_MAX_ITEMS = 10_000


@attrs.frozen
class JsonLimits:
    """How large a request's JSON may be, beside its size in bytes."""

    #: Values may sit inside at most this many arrays or objects.
    max_depth: int = DEFAULT_MAX_DEPTH
    #: At most this many values and object keys in all.
    max_items: int = DEFAULT_MAX_ITEMS


#: Python's C encoder (``None`` where there is none, as ``json.encoder`` itself has it).
_c_make_encoder: Callable[..., Any] | None = json.encoder.c_make_encoder  # type: ignore[attr-defined]

#: The limits of a server that configures none.
DEFAULT_LIMITS = JsonLimits()

#: Every byte but the four that come before any item but the first (``translate`` deletes them).
_NOT_SEPARATORS = bytes(c for c in range(256) if c not in b"{[,:")
#: The same, keeping quotes too.
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'{[,:"')
#: An escape that may stand for a lone surrogate (a pair is joined by the parser, and fine).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class NotJson(ValueError):
    """The body is not JSON (RFC 8259), or not UTF-8."""


class TooManyItems(ValueError):
    """The body holds more values and keys than the limit; it was not parsed."""

    def __init__(self, found: int, limit: int) -> None:
        self.found = found
        self.limit = limit
        super().__init__(
            f"it holds {found} JSON items (values and object keys); the limit is {limit}"
        )


class BadValue(ValueError):
    """The body is JSON, but a value in it is not acceptable; ``path`` says where."""

    def __init__(self, path: str, problem: str, document: Any) -> None:
        self.path = path
        self.problem = problem
        #: The parsed document, so that a JSON-RPC error can still carry the request's id.
        self.document = document
        super().__init__(f"{path or 'the body'}: {problem}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} is too large for a JSON number")
    return value


#: The one decoder of request bodies (strict numbers). Its ``scan_once`` is the C scanner where
#: there is one; the scanner clears its memo after every call, so one serves every request.
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)
_scan_once: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
#: What RFC 8259 counts as whitespace (``str.isspace`` takes more, which JSON does not).
_WHITESPACE = " \t\n\r"


def _parse(text: str) -> Any:
    """``text`` as one JSON document, as ``json.loads`` with the decoder's options parses it."""
    try:
        # The common body: a value from the first character, at most whitespace after it.
        document, end = _scan_once(text, 0)
    except (StopIteration, ValueError):
        end = -1  # leading whitespace, or not JSON: the long way says exactly why
    if end == len(text) or (end > 0 and not text[end:].strip(_WHITESPACE)):
        return document
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)


def loads(body: bytes | str, limits: JsonLimits = DEFAULT_LIMITS, *, root: str = "") -> Any:
    """Parse a request body as strict JSON, within the limits.

    Raises :class:`NotJson` (not UTF-8, not JSON, ``NaN``, numbers too large for a double),
    :class:`TooManyItems` (checked before parsing) or :class:`BadValue` (too deep, a lone
    surrogate; ``root`` prefixes the path it names).
    """
    raw = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotJson(
            f"the body is not UTF-8 text (byte 0x{raw[error.start]:02X} at offset {error.start})"
        ) from None
    max_depth, max_items = limits.max_depth, limits.max_items
    found = _item_bound(raw, max_items)
    if found > max_items:
        raise TooManyItems(found, max_items)
    try:
        document = _parse(text)
    except RecursionError:
        document = _TOO_DEEP
    except ValueError as error:
        raise NotJson(str(error)) from None
    if document is _TOO_DEEP:
        raise BadValue(root, f"nested more than {max_depth} levels deep", None)
    deep = raw.count(b"{") + raw.count(b"[") > max_depth
    if deep or (b"\\u" in raw and _SURROGATE_ESCAPE.search(raw)):
        problem = value_problem(document, max_depth=max_depth, root=root)
        if problem is not None:
            raise BadValue(*problem, document)
    return document


_TOO_DEEP = object()


def _item_bound(raw: bytes, limit: int) -> int:
    """An upper bound on the items in ``raw`` that is exact enough to hold to ``limit``.

    First from all the separators (most bodies stop here); past the limit, only from those
    outside strings. That needs the strings found: escaped backslashes and quotes are dropped
    first, so that every quote left delimits a string. Each step is one C-level pass over the
    bytes (``translate`` keeps only the bytes that matter), never a Python loop over them.
    """
    bound = 1 + len(raw.translate(None, _NOT_SEPARATORS))
    if bound <= limit:
        return bound
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = raw.translate(None, _NOT_STRUCTURE)
    strings = structure.count(b'"') // 2
    if strings > limit:
        return strings  # every string is an item: no need to look further
    outside = b"".join(structure.split(b'"')[::2])
    return 1 + len(outside)


def encoder(
    *, sort_keys: bool = False, default: Callable[[Any], Any] | None = None
) -> Callable[[Any], str]:
    """A function writing a value as ``json.dumps(value, separators=(",", ":"),
    ensure_ascii=False, sort_keys=sort_keys, default=default)`` does, the same text, with
    none of its set-up per call.

    Where Python has its C encoder, that is what runs. A C encoder is made per value (a C
    object, cheap): it keeps the containers it is inside in a ``markers`` dict to catch a
    circular value, and one that failed leaves its entries behind, so a shared one could
    later call an innocent value circular. Elsewhere, a ``JSONEncoder`` made once does it.
    """
    python = json.JSONEncoder(
        separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys, default=default
    )
    if _c_make_encoder is None:
        return python.encode
    make, hook, strings = _c_make_encoder, python.default, _encode_basestring

    def encode(value: Any) -> str:
        return "".join(make({}, hook, strings, None, ":", ",", sort_keys, False, True)(value, 0))

    return encode


#: The compact writer of :func:`dumps`.
_compact = encoder()


def dumps(value: Any) -> bytes:
    """Serialize compactly (one line, so it fits in one SSE ``data:`` field)."""
    return _compact(value).encode()


def string_problem(text: str) -> str | None:
    """What makes ``text`` unwritable as UTF-8 (a lone surrogate), or ``None``."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"holds a lone surrogate (U+{ord(text[error.start]):04X} at character "
            f"{error.start}), which is not Unicode text"
        )
    return None


def value_problem(
    value: Any, *, max_depth: int = DEFAULT_MAX_DEPTH, root: str = ""
) -> tuple[str, str] | None:
    """Where and why ``value`` is not a JSON value we can store and write back, or ``None``.

    A JSON value here is ``None``, a bool, a finite number, a string of Unicode text, a list of
    JSON values or a dict of such strings to JSON values, nested at most ``max_depth`` deep.
    """
    # Iterative, so that the walk itself cannot run out of stack on what it is checking; the
    # path of a node is only built when a problem is found, by a second walk.
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        problem = _node_problem(node, depth, max_depth)
        if problem is not None:
            return _locate(value, node, root), problem
        if type(node) is dict:
            for key, item in node.items():
                if type(key) is not str:
                    return _locate(value, node, root), f"has a key of type {type(key).__name__}"
                key_problem = string_problem(key)
                if key_problem is not None:
                    return _locate(value, node, root), f"has a key that {key_problem}"
                stack.append((item, depth + 1))
        elif type(node) in (list, tuple):
            stack.extend((item, depth + 1) for item in node)
    return None


def _node_problem(node: Any, depth: int, max_depth: int) -> str | None:
    kind = type(node)
    if kind is str:
        return string_problem(node)
    if kind is dict or kind is list or kind is tuple:
        if depth >= max_depth:
            return f"is nested more than {max_depth} levels deep"
        return None
    if node is None or kind is bool or kind is int:
        return None
    if kind is float:
        return None if math.isfinite(node) else f"is {node}, which is not a JSON number"
    return f"is a {kind.__name__}, which is not a JSON value"


def _locate(value: Any, target: Any, root: str) -> str:
    """The path of ``target`` (found by identity) within ``value``."""
    stack: list[tuple[Any, str]] = [(value, root)]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if type(node) is dict:
            stack.extend((item, _member(path, key)) for key, item in node.items())
        elif type(node) in (list, tuple):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(node))
    return root  # pragma: no cover - the target is always within the value


def _member(path: str, key: Any) -> str:
    name = str(key)
    if name.isidentifier() and name.isascii():
        return f"{path}.{name}" if path else name
    return f"{path}[{json.dumps(name)}]"
