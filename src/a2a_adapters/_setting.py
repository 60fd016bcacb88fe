"""How a setting is defined once: one attrs field holds its type, default, check, help and names.

:class:`~a2a_adapters.settings.Settings` is a frozen attrs class; each of its fields carries an
:class:`Option` in its metadata. Everything else is read off those fields: the command line's
options (argparse), the environment variables (``A2A_`` and the option's name), the keyword
arguments of ``serve()`` and ``build_engine()`` (the field names) and the manual's settings
reference. Adding a setting is adding a field.

A setting's value is checked twice over, by one rule: in Python, by the field's converter (a
wrong value raises :class:`TypeError` or :class:`ValueError` naming the field, as
``port must be from 0 to 65535 (0: any free port), got 70000``), and as text, by its
:class:`Kind`'s ``read`` (which says what the text is not: ``'abc' is not a port number``), so
that the command line and the environment name the option or variable the text came from.
Where the core or :class:`~a2a_adapters.ConnectionLimits` owns a rule, the kind asks them
rather than restating it.
"""

import math
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from typing import Any, Literal, Protocol, TypeVar

import attrs

__all__ = [
    "ENV_PREFIX",
    "Choice",
    "Kind",
    "Many",
    "Number",
    "Option",
    "Scope",
    "Switch",
    "Text",
    "option_of",
    "options",
    "setting",
]

#: Every setting that has an option may come from the environment, as ``A2A_`` and its name.
ENV_PREFIX = "A2A_"

#: Where a setting acts: ``engine`` (what :func:`~a2a_adapters.build_engine` takes too),
#: ``serve`` (listening, logs: ``serve()`` and the command line), ``cli`` (the command line
#: alone: ``--workers`` runs processes, which ``serve()`` does not).
Scope = Literal["engine", "serve", "cli"]

_T = TypeVar("_T")


class Kind(Protocol):
    """How a setting is read from text and checked in Python."""

    def read(self, text: str) -> object:
        """The value ``text`` stands for; :class:`ValueError` saying what it is not."""

    def check(self, name: str, value: Any) -> Any:
        """``value`` as the setting holds it; :class:`TypeError` or :class:`ValueError`
        naming ``name`` and saying what it must be."""


@attrs.frozen
class Number:
    """A number: ``kind`` (int or float) that ``accept`` holds for.

    ``what`` says what the text should have been (``a port number``), ``wanted`` what the number
    should have been (``from 0 to 65535 (0: any free port)``). ``python`` is what Python code
    must pass (``an int``). ``None`` is a value of its own where ``optional``; ``judge``, when
    given, checks a Python value instead of ``accept`` (the core's own check, with its words).
    """

    kind: type[int] | type[float]
    what: str
    wanted: str
    accept: Callable[[Any], bool]
    python: str = "an int"
    optional: bool = False
    judge: Callable[[str, Any], Any] | None = None

    def read(self, text: str) -> object:
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(f"{text!r} is not {self.what}") from None
        if not self.accept(value):
            shown = repr(text) if self.kind is float else str(value)  # nan, inf: as written
            raise ValueError(f"{shown} is not {self.wanted}")
        return value

    def check(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if self.judge is not None:
            return self.judge(name, value)
        kinds = (int, float) if self.kind is float else (int,)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise TypeError(f"{name} must be {self.python}, got {value!r}")
        if not self.accept(value):
            raise ValueError(f"{name} must be {self.wanted}, got {value!r}")
        return value


def seconds(wanted: str, accept: Callable[[float], bool], *, optional: bool = False) -> Number:
    """A number of seconds, which Python may also give as a :class:`~datetime.timedelta`."""

    def judge(name: str, value: Any) -> Any:
        given = value.total_seconds() if isinstance(value, timedelta) else value
        if isinstance(given, bool) or not isinstance(given, int | float):
            raise TypeError(f"{name} must be a number of seconds or a timedelta, got {value!r}")
        if not accept(given):
            raise ValueError(f"{name} must be {wanted}, got {value!r}")
        return float(given)

    return Number(float, "a number of seconds", wanted, accept, optional=optional, judge=judge)


def finite_positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def _anything(text: str) -> bool:
    return True


@attrs.frozen
class Text:
    """A string that ``accept`` holds for (else it is not ``wanted``); ``None`` too, where
    ``optional``."""

    accept: Callable[[str], bool] = _anything
    wanted: str = "a string"
    optional: bool = True

    def read(self, text: str) -> object:
        if not self.accept(text):
            raise ValueError(f"{text!r} is not {self.wanted}")
        return text

    def check(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if not isinstance(value, str):
            raise TypeError(f"{name} must be {self.wanted}, got {value!r}")
        if not self.accept(value):
            raise ValueError(f"{name} must be {self.wanted}, got {value!r}")
        return value


@attrs.frozen
class Choice:
    """One of a few words (or, from Python, an enum member whose value is one: ``also``)."""

    choices: tuple[str, ...]
    also: type | None = None

    def read(self, text: str) -> object:
        if text not in self.choices:
            raise ValueError(f"{text!r} is not one of {', '.join(self.choices)}")
        return text

    def check(self, name: str, value: Any) -> Any:
        if self.also is not None and isinstance(value, self.also):
            return value
        if value not in self.choices:
            known = ", ".join(map(repr, self.choices))
            raise ValueError(f"{name} must be one of {known}, got {value!r}")
        return value


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


@attrs.frozen
class Switch:
    """On or off. Its option, when it has one, turns it to the other of its default (``--no-push``).

    ``also`` lets Python give an object instead of ``True`` (push: a configured sender).
    """

    also: tuple[type, ...] = ()

    def read(self, text: str) -> object:
        said = text.strip().lower()
        if said not in _TRUE + _FALSE:
            raise ValueError(f"expected true or false, got {text!r}")
        return said in _TRUE

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, (bool, *self.also)):
            raise TypeError(f"{name} must be True or False, got {value!r}")
        return value


@attrs.frozen
class Many:
    """Several values of ``item``: an option given once for each (or with commas between, where
    ``commas``), a comma-separated environment variable, a list or tuple in Python."""

    item: Kind
    what: str = "values"
    commas: bool = False
    #: Whether a value may be a secret (a token): then only its type is said.
    secret: bool = False

    def read(self, text: str) -> object:
        return self.item.read(text)

    def split(self, text: str) -> list[object]:
        return [self.item.read(part.strip()) for part in text.split(",") if part.strip()]

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, str | bytes) or not isinstance(value, list | tuple | frozenset | set):
            shown = f"a {type(value).__name__}" if self.secret else repr(value)
            raise TypeError(f"{name} must be a list of {self.what}, got {shown}")
        return tuple(self.item.check(name, each) for each in value)


@attrs.frozen
class Option:
    """What a field of :class:`~a2a_adapters.settings.Settings` is beside its type and default.

    ``flag`` is its command-line option (``None``: Python only), ``aliases`` other spellings of
    it; ``switch`` makes the option a flag that takes no value and sets ``switch``'s value. The
    environment variable is ``A2A_`` and the flag's name. ``shown`` is the default as the help
    says it, where the value would not say it well (``8 MiB``, ``no limit``).
    """

    group: str
    help: str
    kind: Kind
    scope: Scope = "engine"
    flag: str | None = None
    aliases: tuple[str, ...] = ()
    metavar: str | None = None
    switch: object = None
    shown: str | None = None

    @property
    def environment(self) -> str | None:
        """``A2A_MAX_RUNS`` for ``--max-runs``; ``None`` for a setting Python alone sets."""
        if self.flag is None:
            return None
        return ENV_PREFIX + self.flag.lstrip("-").upper().replace("-", "_")

    @property
    def repeatable(self) -> bool:
        return isinstance(self.kind, Many) and not self.kind.commas


_OPTION = "a2a_adapters.option"


def setting(
    default: _T,
    kind: Kind,
    *,
    group: str,
    help: str,  # argparse's word for it
    scope: Scope = "engine",
    flag: str | None = None,
    aliases: tuple[str, ...] = (),
    metavar: str | None = None,
    switch: object = None,
    shown: str | None = None,
) -> _T:
    """A field of :class:`~a2a_adapters.settings.Settings`: ``default``, checked by ``kind``."""
    option = Option(group, help, kind, scope, flag, aliases, metavar, switch, shown)

    def convert(value: Any, field: "attrs.Attribute[Any]") -> Any:
        return kind.check(field.name, value)

    field: _T = attrs.field(
        default=default,
        converter=attrs.Converter(convert, takes_field=True),
        metadata={_OPTION: option},
    )
    return field


def option_of(field: "attrs.Attribute[Any]") -> Option:
    option: Option = field.metadata[_OPTION]
    return option


def options(cls: type) -> Iterator[tuple["attrs.Attribute[Any]", Option]]:
    """Each field of ``cls`` with its :class:`Option`, in the order of the class."""
    for field in attrs.fields(cls):
        yield field, option_of(field)


def from_environment(cls: type, env: Mapping[str, str]) -> dict[str, tuple[str, object]]:
    """The settings of ``cls`` that ``env`` sets, by field name: the variable and the value it
    stands for. A value that cannot be read raises :class:`ValueError` naming its variable."""
    found: dict[str, tuple[str, object]] = {}
    for field, option in options(cls):
        variable = option.environment
        if variable is None or variable not in env:
            continue
        text = env[variable]
        try:
            if isinstance(option.kind, Many):
                value: object = option.kind.split(text)
            elif option.switch is not None:
                value = option.switch if Switch().read(text) else field.default
            else:
                value = option.kind.read(text)
        except ValueError as error:
            raise ValueError(f"{variable}: {error}") from None
        found[field.name] = (variable, value)
    return found
