"""What every wire dialect's converter shares: strict JSON typing and error paths.

cattrs is lenient by default (``str(123)`` for a string field, ``bool("false")`` for a boolean,
any iterable for a list), which would let malformed requests through with a silently different
meaning. The hooks here accept exactly the JSON type the field needs, so that bad input becomes a
-32602 error naming the field instead of a wrong task.

Decoding errors are reported with the *wire* path of the offending field (``params.message.parts``
rather than cattrs' ``$.message.parts``), because that is what the client wrote.
"""

import base64
import binascii
import enum
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.fns import identity
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from a2a_core._errors import FieldViolation
from a2a_core._json import dumps, loads
from a2a_core.model._task import ALWAYS_KEY, SERVER_ONLY_KEY

__all__ = [
    "ascii_int",
    "camel",
    "dumps",
    "format_timestamp",
    "format_timestamp_precise",
    "loads",
    "make_converter",
    "parse_timestamp",
    "register_exact",
    "violations",
]

T = TypeVar("T")

_INT32 = (-(2**31), 2**31 - 1)


def camel(name: str) -> str:
    """``context_id`` -> ``contextId`` (the proto3 JSON name of a field)."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def ascii_int(text: str, *, max_digits: int = 18) -> int | None:
    """``text`` as a non-negative integer if it is one written in ASCII digits, else ``None``.

    ``str.isdigit`` also accepts digits such as ``"²"`` that ``int`` then rejects, and ``int``
    refuses strings over 4300 digits: client-controlled headers must not reach either.
    """
    if not text or len(text) > max_digits or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def format_timestamp(value: datetime) -> str:
    """ProtoJSON timestamp: UTC, ``Z`` suffix, millisecond precision (years zero-padded)."""
    # (The core stamps times in UTC already: no conversion, which would be a call, for those.)
    t = value if value.tzinfo is UTC or value.tzinfo is None else value.astimezone(UTC)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        f".{t.microsecond // 1000:03d}Z"
    )


def format_timestamp_precise(value: datetime) -> str:
    """ProtoJSON timestamp with every microsecond (ProtoJSON allows 0, 3, 6 or 9 digits): what
    a store writes, since the order of tasks and the pages of a listing depend on them."""
    t = value if value.tzinfo is UTC or value.tzinfo is None else value.astimezone(UTC)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        f".{t.microsecond:06d}Z"
    )


def parse_timestamp(value: str) -> datetime:
    """Parse an RFC 3339 timestamp; naive times are taken as UTC. Raises ``ValueError``."""
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


# --- strict primitive hooks -------------------------------------------------------------------


def _str(value: Any, _: Any) -> str:
    if type(value) is not str:
        raise TypeError(f"expected a string, got {_json_type(value)}")
    return value


def _bool(value: Any, _: Any) -> bool:
    if type(value) is not bool:
        raise TypeError(f"expected true or false, got {_json_type(value)}")
    return value


def _int(value: Any, _: Any) -> int:
    # ProtoJSON writes 64-bit integers as strings and accepts strings for every integer type.
    if (type(value) is str and value.lstrip("-").isdigit()) or (
        type(value) is float and value.is_integer()
    ):
        value = int(value)
    if type(value) is not int:
        raise TypeError(f"expected an integer, got {_json_type(value)}")
    if not _INT32[0] <= value <= _INT32[1]:
        raise ValueError(f"integer {value} is out of range")
    return value


def _bytes(value: Any, _: Any) -> bytes:
    text = _str(value, None)
    padded = text + "=" * (-len(text) % 4)
    try:
        if "-" in text or "_" in text:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("expected base64-encoded bytes") from None


def _timestamp(value: Any, _: Any) -> datetime:
    text = _str(value, None)
    try:
        return parse_timestamp(text)
    except ValueError:
        raise ValueError(f"expected an RFC 3339 timestamp, got {text!r}") from None


def _object(value: Any, _: Any) -> Mapping[str, Any]:
    if type(value) is not dict:
        raise TypeError(f"expected a JSON object, got {_json_type(value)}")
    return value


def _string_map(value: Any, _: Any) -> Mapping[str, str]:
    obj = _object(value, None)
    for key, item in obj.items():
        if type(item) is not str:
            raise TypeError(f"expected string values, got {_json_type(item)} for {key!r}")
    return obj


def _json_type(value: Any) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "an array"
        case dict():
            return "an object"
    return type(value).__name__  # pragma: no cover - not produced by a JSON parser


def _enum_hook(enum_type: type[enum.Enum], numbers: Mapping[int, enum.Enum]) -> Callable[..., Any]:
    by_name = {member.value: member for member in enum_type}

    def structure(value: Any, _: Any) -> enum.Enum:
        if type(value) is str and value in by_name:
            return by_name[value]
        if type(value) is int and value in numbers:
            return numbers[value]
        allowed = ", ".join(by_name)
        raise ValueError(f"expected one of {allowed}, got {value!r}")

    return structure


def make_converter(
    enums: Mapping[type[enum.Enum], Mapping[int, enum.Enum]],
    *,
    timestamp: Callable[[datetime], str] | None = None,
) -> cattrs.Converter:
    """A strict converter with camelCase attrs classes, for one dialect to specialise.

    ``enums`` maps each enum type to its proto numbers (ProtoJSON accepts numbers too);
    ``timestamp`` writes a datetime (:func:`format_timestamp`, milliseconds, unless told).
    """
    conv = cattrs.Converter(detailed_validation=True, forbid_extra_keys=False)
    conv.register_structure_hook(str, _str)
    conv.register_structure_hook(bool, _bool)
    conv.register_structure_hook(int, _int)
    conv.register_structure_hook(bytes, _bytes)
    conv.register_structure_hook(datetime, _timestamp)
    register_exact(conv, Mapping[str, Any], _object)
    register_exact(conv, Mapping[str, str], _string_map)
    conv.register_structure_hook_func(_is_tuple, _tuple_hook_factory(conv))

    conv.register_unstructure_hook(datetime, timestamp or format_timestamp)
    conv.register_unstructure_hook(bytes, lambda b: base64.b64encode(b).decode())
    for enum_type, numbers in enums.items():
        conv.register_structure_hook(enum_type, _enum_hook(enum_type, numbers))
        conv.register_unstructure_hook(enum_type, lambda member: member.value)

    conv.register_structure_hook_factory(attrs.has, lambda cls: _structure_attrs(conv, cls))
    known = frozenset(enums)
    conv.register_unstructure_hook_factory(
        attrs.has, lambda cls: _unstructure_attrs(conv, cls, known)
    )
    return conv


def register_exact(
    conv: cattrs.Converter,
    type_: Any,
    structure: Callable[[Any, Any], Any],
    unstructure: Callable[[Any], Any] | None = None,
) -> None:
    """Register hooks for a parametrised type such as ``Mapping[str, str]`` (not a class)."""
    conv.register_structure_hook_func(lambda t: t == type_, structure)
    if unstructure is not None:
        conv.register_unstructure_hook_func(lambda t: t == type_, unstructure)


def _is_tuple(type_: Any) -> bool:
    args = get_args(type_)
    return get_origin(type_) is tuple and len(args) == 2 and args[1] is Ellipsis


def _tuple_hook_factory(conv: cattrs.Converter) -> Callable[[Any, Any], tuple[Any, ...]]:
    def structure(value: Any, type_: Any) -> tuple[Any, ...]:
        if type(value) is not list:
            raise TypeError(f"expected an array, got {_json_type(value)}")
        item_type = get_args(type_)[0]
        items = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                items.append(conv.structure(item, item_type))
            except Exception as exc:
                exc.__notes__ = [
                    *getattr(exc, "__notes__", ()),
                    IterableValidationNote(
                        f"Structuring {type_} @ index {index}", index, item_type
                    ),
                ]
                errors.append(exc)
        if errors:
            raise IterableValidationError(f"While structuring {type_}", errors, type_)
        return tuple(items)

    return structure


def _structure_attrs(conv: cattrs.Converter, cls: type[Any]) -> Callable[[Any, Any], Any]:
    renames = {a.name: camel(a.name) for a in attrs.fields(cls) if camel(a.name) != a.name}
    overrides = {name: override(rename=wire) for name, wire in renames.items()}
    overrides |= {a.name: override(omit=True) for a in attrs.fields(cls) if _server_only(a)}
    inner = make_dict_structure_fn(cls, conv, **overrides)  # type: ignore[arg-type]

    def structure(value: Any, type_: Any) -> Any:
        if type(value) is not dict:
            raise TypeError(f"expected a JSON object, got {_json_type(value)}")
        # ProtoJSON parsers accept the proto field name (snake_case) as well as the JSON name.
        if renames and not renames.keys().isdisjoint(value):
            value = {renames.get(k, k): v for k, v in value.items()}
        return inner(value, type_)

    return structure


def _unstructure_attrs(
    conv: cattrs.Converter, cls: type[Any], enums: frozenset[type[enum.Enum]]
) -> Callable[[Any], Any]:
    """The function writing a ``cls`` as its JSON object.

    It writes what cattrs' ``make_dict_unstructure_fn`` would (camelCase keys, default values
    left out unless the wire requires the field, server-only fields never), key for key, but
    is generated for our model's field types: cattrs calls a hook per field, a generator per
    repeated field, two frames per optional one and a property per enum, where here a plain
    value is read as it is, an enum member gives its value by attribute, an optional field left
    out when ``None`` is written by its inner type's hook, and a tuple of objects is one list
    comprehension calling their class's function. Every reply of a send renders a task, so this
    is most of what encoding a reply costs. A class with a field this does not know how to
    write so (a factory default, an attrs converter, a field not in ``__init__``) is left to
    cattrs.
    """
    fields = attrs.fields(cls)
    if any(
        isinstance(a.default, attrs.Factory)  # type: ignore[arg-type]
        or a.converter is not None
        or not a.init
        or isinstance(a.type, str)
        for a in fields
    ):
        return _cattrs_unstructure_attrs(conv, cls)
    globs: dict[str, Any] = {}
    always: list[str] = []
    omitted: list[str] = []
    for a in fields:
        if _server_only(a):
            continue
        value = f"instance.{a.name}"
        omit = a.default is not attrs.NOTHING and not a.metadata.get(ALWAYS_KEY)
        written = _written(conv, a.type, value, a.name, globs, enums, maybe_none=True)
        if not omit:
            always.append(f"{camel(a.name)!r}: {written},")
        elif a.default is None:
            # (cattrs asks ``!= None``; for the model's values, str, tuples, dicts, objects,
            # that is ``is not None``, and the hook need not handle None.)
            written = _written(conv, a.type, value, a.name, globs, enums, maybe_none=False)
            omitted.append(f"  if {value} is not None:\n    res[{camel(a.name)!r}] = {written}")
        else:
            globs[f"_default_{a.name}"] = a.default
            omitted.append(
                f"  if {value} != _default_{a.name}:\n    res[{camel(a.name)!r}] = {written}"
            )
    source = "\n".join(
        [
            f"def unstructure_{cls.__name__}(instance):",
            "  res = {",
            *[f"    {line}" for line in always],
            "  }",
            *omitted,
            "  return res",
        ]
    )
    exec(compile(source, f"<a2a unstructure {cls.__qualname__}>", "exec"), globs)  # noqa: S102
    function: Callable[[Any], Any] = globs[f"unstructure_{cls.__name__}"]
    return function


def _written(
    conv: cattrs.Converter,
    type_: Any,
    value: str,
    name: str,
    globs: dict[str, Any],
    enums: frozenset[type[enum.Enum]],
    *,
    maybe_none: bool,
) -> str:
    """The expression writing ``value`` (source text) of type ``type_`` as JSON."""
    args = get_args(type_)
    if get_origin(type_) in (Union, UnionType) and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        written = _written(conv, inner, value, name, globs, enums, maybe_none=False)
        return f"(None if {value} is None else {written})" if maybe_none else written
    if type_ in enums:
        return f"{value}._value_"  # (what the enum hook writes, ``.value``, minus a property)
    hook = conv.get_unstructure_hook(type_)
    if hook == identity:
        return value
    if _is_tuple(type_):
        item = args[0]
        item_hook = conv.get_unstructure_hook(item)
        if item_hook == identity:
            return f"list({value})"
        # (A tuple of enums would go through the enum hook below; the model has none.)
        globs[f"_item_{name}"] = item_hook
        return f"[_item_{name}(item) for item in {value}]"
    globs[f"_hook_{name}"] = hook
    return f"_hook_{name}({value})"


def _cattrs_unstructure_attrs(conv: cattrs.Converter, cls: type[Any]) -> Callable[[Any], Any]:
    # Default values are omitted (proto3 JSON), except where the wire requires the field.
    overrides = {
        a.name: override(omit=True)
        if _server_only(a)
        else override(rename=camel(a.name), omit_if_default=not a.metadata.get(ALWAYS_KEY))
        for a in attrs.fields(cls)
    }
    return make_dict_unstructure_fn(
        cls,
        conv,
        _cattrs_omit_if_default=True,
        **overrides,  # type: ignore[arg-type]
    )


def _server_only(field: "attrs.Attribute[Any]") -> bool:
    return bool(field.metadata.get(SERVER_ONLY_KEY))


def violations(exc: BaseException, path: str) -> list[FieldViolation]:
    """Flatten a cattrs error tree into violations named by wire path (e.g. ``params.id``)."""
    if isinstance(exc, ClassValidationError | IterableValidationError):
        found: list[FieldViolation] = []
        for sub in exc.exceptions:
            found.extend(violations(sub, _sub_path(sub, path)))
        return found
    if isinstance(exc, ForbiddenExtraKeysError):  # pragma: no cover - extras are ignored
        return [FieldViolation(path, str(exc))]
    if isinstance(exc, KeyError):
        return [FieldViolation(path, "required field is missing")]
    return [FieldViolation(path, str(exc) or type(exc).__name__)]


def _sub_path(exc: BaseException, path: str) -> str:
    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, AttributeValidationNote):
            # The root of a REST body has no name: its fields are named by themselves.
            return f"{path}.{camel(note.name)}" if path else camel(note.name)
        if isinstance(note, IterableValidationNote):
            return f"{path}[{note.index}]"
    return path
