"""The server's settings, as the core needs them: fixed for the core's lifetime."""

import enum
import math
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import attrs

from ._json import DEFAULT_MAX_DEPTH, DEFAULT_MAX_ITEMS
from .model._card import AgentCard, AgentCardSignature

#: The origin that allows every origin.
ANY_ORIGIN = "*"


def origin_problem(origin: str) -> str | None:
    """Why ``origin`` cannot be allowed (``None`` if it can): an origin is ``*``, or a scheme,
    a host and maybe a port, as a browser sends it (``https://app.example``), no path."""
    if origin == ANY_ORIGIN:
        return None
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest:
        return "an origin is http:// or https:// and a host (or * for any)"
    if "/" in rest or "?" in rest or "#" in rest or "@" in rest:
        return "an origin has no path, query or user: just scheme://host[:port]"
    return None


#: The most parts a message may hold unless configured otherwise.
DEFAULT_MAX_PARTS = 1_000

__all__ = ["CoreConfig", "ErrorMapping"]


class ErrorMapping(enum.Enum):
    """Which version of the spec's error-to-HTTP-status table the REST binding follows."""

    V1_0_1 = "1.0.1"
    V1_0_0 = "1.0.0"


def _positive(_: object, attribute: "attrs.Attribute[int]", value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an int, got {value!r}")
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1, got {value}")


def _not_negative(_: object, attribute: "attrs.Attribute[int]", value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{attribute.name} must not be negative, got {value}")


#: The longest duration a setting may have: deadlines are instants, and a much later one would
#: not fit in a datetime.
LONGEST = timedelta(days=36_525)


def _duration(value: timedelta | float, name: str) -> timedelta:
    """``value`` (seconds, or a timedelta) as a positive timedelta of at most a century.

    Settings are checked where they are given: a zero, negative, NaN, infinite or enormous
    duration would otherwise surface much later, as a task that expires at once or an overflow
    inside the reducer's deadline arithmetic.
    """
    if isinstance(value, bool) or not isinstance(value, timedelta | int | float):
        raise TypeError(f"{name} must be a number of seconds or a timedelta, got {value!r}")
    seconds = value.total_seconds() if isinstance(value, timedelta) else value
    if not math.isfinite(seconds):
        raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
    if seconds <= 0:
        raise ValueError(f"{name} must be positive, got {seconds:g} seconds")
    if seconds > LONGEST.total_seconds():
        raise ValueError(f"{name} must be at most a century, got {seconds:g} seconds")
    converted = value if isinstance(value, timedelta) else timedelta(seconds=value)
    if not converted:
        raise ValueError(f"{name} must be at least a microsecond, got {seconds:g} seconds")
    return converted


def _ttl(value: timedelta | float | None) -> timedelta | None:
    return None if value is None else _duration(value, "task_ttl")


def _run_time(value: timedelta | float | None) -> timedelta | None:
    return None if value is None else _duration(value, "max_run_time")


def _idle_time(value: timedelta | float | None) -> timedelta | None:
    return None if value is None else _duration(value, "run_idle_time")


#: A bound that may be left off (``None``).
_optional_positive = attrs.validators.optional(_positive)


def _window(value: timedelta | float | None) -> timedelta | None:
    if value is None or (not isinstance(value, bool) and value in (0, timedelta(0))):
        return None if value is None else timedelta(0)
    return _duration(value, "direct_reply_window")


def _error_mapping(value: ErrorMapping | str) -> ErrorMapping:
    try:
        return ErrorMapping(value)
    except ValueError:
        known = ", ".join(repr(mapping.value) for mapping in ErrorMapping)
        raise ValueError(f"error_mapping must be one of {known}, got {value!r}") from None


def _hosts(value: Iterable[str]) -> frozenset[str]:
    # A lone string is iterable too: it would allow-list its characters.
    if isinstance(value, str):
        raise TypeError(f"push_allow_hosts must be a collection of host names, got {value!r}")
    return frozenset(host.lower() for host in value)


def _origins(value: Iterable[str]) -> frozenset[str]:
    if isinstance(value, str):
        raise TypeError(f"cors_origins must be a collection of origins, got {value!r}")
    for origin in value:
        problem = origin_problem(origin) if isinstance(origin, str) else "it is not a string"
        if problem is not None:
            raise ValueError(f"cors_origins: {origin!r}: {problem}")
    return frozenset(origin.lower() for origin in value)


def _card(_: object, attribute: "attrs.Attribute[Any]", value: object) -> None:
    if value is None and attribute.name != "card":
        return
    if not isinstance(value, AgentCard):
        raise TypeError(f"{attribute.name} must be an AgentCard, got {value!r}")


def _rpc_path(_: object, attribute: "attrs.Attribute[str]", value: str) -> None:
    if not value.startswith("/"):
        raise ValueError(f"{attribute.name} must start with '/', got {value!r}")


def _port(_: object, attribute: "attrs.Attribute[int | None]", value: int | None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 65535:
        raise ValueError(f"{attribute.name} must be a port from 1 to 65535, got {value!r}")


def _base_url(_: object, attribute: "attrs.Attribute[str | None]", value: str | None) -> None:
    if value is None:
        return
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{attribute.name} must be an http:// or https:// URL, got {value!r}")


@attrs.frozen
class CoreConfig:
    """Everything that shapes the core's answers.

    ``card`` is the agent's self-description as the user wrote it; the core fills in the
    interfaces (from where the request arrived, unless ``public_url`` pins them) and the
    capabilities (from what this server actually does), so the card cannot claim a feature the
    server lacks.
    """

    card: AgentCard = attrs.field(validator=_card)
    #: Where the JSON-RPC endpoint lives, relative to the server's root.
    rpc_path: str = attrs.field(default="/", validator=_rpc_path)
    #: Serve the HTTP+JSON (REST) binding too, at the server's root (``/message:send``, …).
    rest: bool = True
    #: The port the gRPC binding (``lf.a2a.v1.A2AService``) is served on, which the card then
    #: lists as ``host:port`` (the host that of ``public_url`` or of the request); ``None``: not
    #: served. Serving it also takes a payload codec (``Core(config, grpc=...)``), since the
    #: core itself reads no protobuf.
    grpc_port: int | None = attrs.field(default=None, validator=_port)
    #: Speak the v0.3 and v0.1 JSON-RPC dialects too, and describe the card in v0.3 terms too.
    v03: bool = True
    #: Add v0.3's fields to the card (``url``, ``protocolVersion``…) so v0.3 clients discover us.
    #: The v1.0 card schema allows no extra fields; the v1.0 conformance kit checks it.
    card_v03_fields: bool = True
    #: The externally visible base URL; ``None`` derives it from each request's Host.
    public_url: str | None = attrs.field(default=None, validator=_base_url)
    streaming: bool = False
    push_notifications: bool = False
    extended_card: AgentCard | None = attrs.field(default=None, validator=_card)
    #: Requests with a larger body are refused before they are parsed.
    max_body_bytes: int = attrs.field(default=8 * 1024 * 1024, validator=_positive)
    #: How deeply a request's JSON may nest (arrays and objects inside one another).
    max_json_depth: int = attrs.field(default=DEFAULT_MAX_DEPTH, validator=_positive)
    #: How many JSON values and object keys one request may hold, counted before parsing.
    max_json_items: int = attrs.field(default=DEFAULT_MAX_ITEMS, validator=_positive)
    #: How many parts one message may hold.
    max_message_parts: int = attrs.field(default=DEFAULT_MAX_PARTS, validator=_positive)
    default_page_size: int = attrs.field(default=50, validator=_positive)
    max_page_size: int = attrs.field(default=100, validator=_positive)
    #: ``Cache-Control: max-age`` of the agent card, in seconds.
    card_max_age: int = attrs.field(default=300, validator=_not_negative)
    #: ``Last-Modified`` of the agent card (the adapter passes its start time).
    card_modified: datetime | None = None
    #: Signs the cards served (spec §8.4): given a card's canonical bytes (RFC 8785, see
    #: ``a2a_core.card.canonical_card_bytes``), the signatures to add to it. Keys, algorithms
    #: and the randomness some of them take are the edge's (``a2a_adapters.signing``).
    card_signer: Callable[[bytes], Sequence[AgentCardSignature]] | None = None
    #: A JWKS document (the signer's public keys, JSON) served at ``/.well-known/jwks.json``,
    #: for a signature's ``jku`` to point at. ``None``: no such route.
    card_jwks: bytes | None = None
    error_mapping: ErrorMapping = attrs.field(default=ErrorMapping.V1_0_1, converter=_error_mapping)
    #: Terminal tasks older than this disappear (``None``: they are kept forever). Seconds are
    #: accepted too.
    task_ttl: timedelta | None = attrs.field(default=None, converter=_ttl)
    #: How many expired tasks one tick removes at most (the next tick follows at once).
    sweep_batch: int = attrs.field(default=500, validator=_positive)
    #: The skill a send that names none is routed to ("": the default agent).
    default_skill: str = ""
    #: Hosts push notifications may reach although the SSRF guard would refuse them.
    push_allow_hosts: frozenset[str] = attrs.field(default=frozenset(), converter=_hosts)
    #: Re-sending a message (same id, same owner) returns the task it made, and reusing an id
    #: for another message is refused (-32602). When false every send is new and ids are not
    #: indexed (the conformance kit re-sends identical messages and expects new tasks).
    idempotent_sends: bool = True
    #: How long a streamed send holds back the task snapshot for the agent's first output, so
    #: that an agent answering with a direct message gets a one-message stream. After it, the
    #: client gets the task (its id, to cancel or follow it) without waiting for the agent.
    #: ``None`` holds it until the first output, however long the agent thinks.
    direct_reply_window: timedelta | None = attrs.field(
        default=timedelta(milliseconds=50), converter=_window
    )
    #: The longest an agent run may take (``None``: no limit): past it the run is stopped and
    #: its task failed, saying which limit it passed. Seconds are accepted too.
    max_run_time: timedelta | None = attrs.field(default=None, converter=_run_time)
    #: The longest an agent run may go without an output (an update it yields), from its start
    #: or its last output (``None``: no limit); an agent that only returns is measured from its
    #: start, so for it this is a limit on the whole run.
    run_idle_time: timedelta | None = attrs.field(default=None, converter=_idle_time)
    #: How many agent runs this server may have under way at once (``None``: no bound); a send
    #: that would start one more is refused as busy (:class:`~a2a_core.errors.BusyError`,
    #: ``Retry-After``), never queued. Runs a restart left to rerun are not refused.
    max_runs: int | None = attrs.field(default=None, validator=_optional_positive)
    #: The same, per caller (principal): one caller cannot take every run.
    max_runs_per_owner: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_positive)
    )
    #: How many streams (``SendStreamingMessage``, ``SubscribeToTask``) may be open at once;
    #: one more is refused as busy.
    max_streams: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(_positive)
    )
    #: The browser origins allowed to call the server (CORS; ``"*"``: any). Empty: CORS is off,
    #: and browsers refuse pages of other origins their requests.
    cors_origins: frozenset[str] = attrs.field(default=frozenset(), converter=_origins)
    #: How many push configs one task may hold.
    max_push_configs: int = attrs.field(default=16, validator=_positive)
    #: How many bytes (UTF-8) each field of a push config may hold: its id, URL, token and
    #: authentication. They are stored with the task and sent as request headers with every
    #: notification, so one client's megabyte would be paid for at every event.
    max_push_field_bytes: int = attrs.field(default=4096, validator=_positive)
    #: How many messages a task's history may hold before a follow-up is refused (-32602, the
    #: conversation goes on in a new task of the same context); ``None``: no bound. A task is
    #: an immutable value, so each turn copies its history: the bound keeps a turn's cost (and a
    #: task's size) from growing without end. The agent's own messages count, and are never
    #: refused.
    max_task_messages: int | None = 1000
    #: What a server does, when it starts, with a task whose run the process before it left
    #: submitted or working (no run survives its process): ``"fail"`` it with a record of why,
    #: or ``"rerun"``: start the agent again on the task's last message from the user. Opt in
    #: only for agents that may safely run twice on one message.
    on_restart: str = attrs.field(default="fail", validator=attrs.validators.in_(("fail", "rerun")))

    def __attrs_post_init__(self) -> None:
        if self.max_task_messages is not None and self.max_task_messages < 1:
            raise ValueError(f"max_task_messages must be at least 1, got {self.max_task_messages}")
        if self.default_page_size > self.max_page_size:
            raise ValueError(
                f"default_page_size ({self.default_page_size}) must not exceed "
                f"max_page_size ({self.max_page_size})"
            )
