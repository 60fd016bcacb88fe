"""The command line: ``a2a-sansio serve MODULE:AGENT`` (or ``python -m a2a_adapters serve``).

Every mistake in what was asked is refused before anything is served, in one line that names
the option as the user gave it (the spelling typed, or the environment variable the value came
from) and the value, never a parameter of :func:`serve`: the options whose values ``serve``
would refuse are checked here, by the same rules, as they are parsed. (Only the store's URL is
left to ``serve``, which checks it as it opens the store, naming ``--store``.)
"""

import argparse
import errno
import functools
import importlib
import json
import logging
import math
import os
import socket
import ssl
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

from a2a_core import CoreConfig
from a2a_core.card import AgentCard
from a2a_core.errors import A2AError
from a2a_core.transport import V1Codec

from ._agents import AgentRegistry, load_object
from ._asgi import root_path_of
from ._auth import ApiKeys, Authenticator, BearerTokens
from ._extras import MissingExtra
from ._lifecycle import EngineFailed
from ._limits import ConnectionLimits
from ._logs import LOG_FORMATS, LOG_LEVELS, configure_logging
from ._proxy import trusted_networks
from ._serve import _CORE_DEFAULTS, DEFAULT_MAX_RUNS, Agents, _card_for, _listen, serve
from ._workers import run_workers
from .stores import DEFAULT_STORE, StoreUnavailable

__all__ = ["main"]

_N = TypeVar("_N", int, float)

log = logging.getLogger("a2a_adapters")

#: Exit statuses: a mistake in what was asked, and a refusal by the machine (the address).
USAGE = 2
FAILURE = 1

#: What ``a2a-sansio --help`` says the program is (plain text: argparse prints it as it is).
DESCRIPTION = (
    "An Agent2Agent (A2A) protocol server. Run 'a2a-sansio serve MODULE:OBJECT' to serve an "
    "agent, and 'a2a-sansio serve --help' for its options."
)


@functools.cache
def _version() -> str:
    try:
        return f"a2a-sansio {metadata.version('a2a-sansio')}"
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "a2a-sansio (not installed: version unknown)"


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (its usage text is what ``--help`` is for)."""

    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see {self.prog} --help)")


def _fail(message: str, status: int = USAGE) -> NoReturn:
    print(f"a2a-sansio: error: {message}", file=sys.stderr)
    raise SystemExit(status)


def _number(
    kind: Callable[[str], _N], what: str, accept: Callable[[_N], bool], wanted: str
) -> Callable[[str], _N]:
    """An argparse type: ``text`` read as ``kind`` (named ``what``), refused unless ``accept``
    holds (saying it is not ``wanted``)."""

    def parse(text: str) -> _N:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not accept(value):
            shown = repr(text) if kind is float else str(value)  # nan, inf: as written
            raise argparse.ArgumentTypeError(f"{shown} is not {wanted}")
        return value

    return parse


_port = _number(
    int, "a port number", lambda p: 0 <= p <= 65535, "from 0 to 65535 (0: any free port)"
)
_seconds = _number(
    float, "a number of seconds", lambda s: math.isfinite(s) and s > 0,
    "a positive, finite number of seconds",
)  # fmt: skip
_grace = _number(
    float, "a number of seconds", lambda s: math.isfinite(s) and s >= 0,
    "a finite number of seconds, 0 or more",
)  # fmt: skip
# What ConnectionLimits takes: any positive number of seconds (inf: no deadline).
_timeout = _number(float, "a number of seconds", lambda s: s > 0, "a positive number of seconds")
_count = _number(int, "a whole number", lambda n: n >= 1, "a positive number")
_bytes = _number(int, "a whole number of bytes", lambda n: n >= 1, "a positive number of bytes")
_workers = _number(int, "a number of processes", lambda n: 1 <= n <= 256, "from 1 to 256")

#: A card to ask the core about a setting with: any card will do.
_ANY_CARD = AgentCard(name="a2a-sansio", description="Any card.", version="1")


def _core_takes(**setting: Any) -> bool:
    """Whether the core accepts ``setting``. The core is the judge of its own settings, but its
    refusals name its parameters (``public_url``): the options word their own."""
    try:
        CoreConfig(card=_ANY_CARD, **setting)
    except (TypeError, ValueError):
        return False
    return True


def _duration(field: str) -> Callable[[str], float]:
    """An argparse type for seconds that become the core's duration ``field``, which bounds
    them (a timedelta must hold them; a deadline must fit in a datetime)."""
    return _number(
        float,
        "a number of seconds",
        lambda s: math.isfinite(s) and s > 0 and _core_takes(**{field: s}),
        "a positive, finite number of seconds (from a microsecond to a century)",
    )


def _public_url(text: str) -> str:
    if not _core_takes(public_url=text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an http:// or https:// URL")
    return text


def _origin(text: str) -> str:
    if not _core_takes(cors_origins=(text,)):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a browser origin (http:// or https://, a host and maybe a port, "
            "no path; or * for any)"
        )
    return text


def _root_path(text: str) -> str:
    try:
        root_path_of(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a path such as /agents") from None
    return text  # as given: serve() makes it its canonical form


def _proxies(text: str) -> list[str]:
    entries = [part.strip() for part in text.split(",") if part.strip()]
    for entry in entries:
        try:
            trusted_networks([entry])
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{entry!r} is not an IP address or network (or *)"
            ) from None
    return entries


def _host(text: str) -> str:
    if not text:  # a socket bound to "" listens on every address: never by accident
        raise argparse.ArgumentTypeError("'' is not a host name or address")
    return text


#: Every option of ``serve`` may come from the environment, as ``A2A_`` and its name.
ENV_PREFIX = "A2A_"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def env_variable(action: argparse.Action) -> str | None:
    """The environment variable of an option of ``serve`` (``--max-runs``: ``A2A_MAX_RUNS``;
    the agent: ``A2A_AGENT``), or ``None`` for one not meant for people."""
    if action.help == argparse.SUPPRESS or isinstance(
        action, argparse._HelpAction | argparse._VersionAction
    ):
        return None
    return ENV_PREFIX + _long_name(action).lstrip("-").upper().replace("-", "_")


def _long_name(action: argparse.Action) -> str:
    """The option's first long name (``--ssl-certfile``), or the positional's (``agent``)."""
    longs = [option for option in action.option_strings if option.startswith("--")]
    return longs[0] if longs else action.dest


def _serve_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    serve_parser: argparse.ArgumentParser = commands.choices["serve"]
    return serve_parser


def serve_parser() -> argparse.ArgumentParser:
    """The parser of ``serve``: its options in their groups (the settings reference is made
    from it)."""
    return _serve_parser(_parser())


def serve_options() -> list[argparse.Action]:
    """The options of ``serve``, in the order of ``--help``."""
    return list(_serve_parser(_parser())._actions)


def _from_environment(run: argparse.ArgumentParser, env: Mapping[str, str]) -> None:
    """Make each option of ``serve`` that ``env`` sets default to its value there, so that the
    command line, parsed after, wins. A value is read as the option's would be, and a wrong
    one is refused naming its variable. (Repeatable options are filled in after parsing, by
    :func:`_environment_lists`: argparse would add the command line's values to a default.)"""
    for action in run._actions:
        variable = env_variable(action)
        if variable is None or variable not in env or isinstance(action, argparse._AppendAction):
            continue
        text = env[variable]
        if isinstance(action, argparse._StoreTrueAction):
            if text.strip().lower() not in _TRUE + _FALSE:
                _fail(f"{variable}: expected true or false, got {text!r}")
            action.default = text.strip().lower() in _TRUE
        else:
            action.default = _converted(action, variable, text)


def _environment_lists(
    run: argparse.ArgumentParser, args: argparse.Namespace, env: Mapping[str, str]
) -> None:
    """The repeatable options the command line left empty, from ``env`` (values
    comma-separated: tokens and keys have no commas), each read as on the command line."""
    for action in run._actions:
        variable = env_variable(action)
        if variable is None or variable not in env:
            continue
        if isinstance(action, argparse._AppendAction) and not getattr(args, action.dest):
            parts = [part.strip() for part in env[variable].split(",") if part.strip()]
            setattr(args, action.dest, [_converted(action, variable, part) for part in parts])


def _converted(action: argparse.Action, variable: str, text: str) -> object:
    kind = action.type
    try:
        value = kind(text) if callable(kind) else text
    except (argparse.ArgumentTypeError, ValueError) as error:
        _fail(f"{variable}: {error}")
    if action.choices is not None and value not in action.choices:
        _fail(f"{variable}: {text!r} is not one of {', '.join(map(str, action.choices))}")
    return value


def _option_names(
    run: argparse.ArgumentParser, argv: Sequence[str], env: Mapping[str, str]
) -> dict[str, str]:
    """What each option of ``serve`` (by its dest) is called in an error: the spelling the
    command line used, else the environment variable its value came from, else its long name
    (the agent is "agent" on the command line)."""
    typed = _typed(argv)
    names: dict[str, str] = {}
    for action in run._actions:
        variable = env_variable(action)
        if variable is None:
            continue
        if action.dest in typed:
            names[action.dest] = _spelling(action, argv)
        elif variable in env:  # read only when the command line left the option out
            names[action.dest] = variable
        else:
            names[action.dest] = _long_name(action)
    return names


def _typed(argv: Sequence[str]) -> set[str]:
    """The options of ``serve`` that ``argv`` gives. They are parsed again with no defaults at
    all (argparse then sets only what it was given), which also settles abbreviations and
    values that look like options as argparse itself does."""
    parser = _parser()
    for action in _serve_parser(parser)._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv))) - {"command"}


def _spelling(action: argparse.Action, argv: Sequence[str]) -> str:
    """How ``argv`` spelt the option (``--certfile`` or ``--ssl-certfile``; the last one, as
    the last one's value is the one used), or its long name."""
    spelt = _long_name(action)
    for arg in argv:
        if arg == "--":
            break
        for option in action.option_strings:
            if arg == option or arg.startswith(option + "="):
                spelt = option
    return spelt


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="a2a-sansio", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "serve",
        help="serve an agent over A2A",
        description="Serve an agent over A2A (JSON-RPC, HTTP+JSON, and gRPC if asked) until "
        "SIGTERM or Ctrl-C.",
        epilog=f"Every option may be set in the environment instead, as {ENV_PREFIX} and its "
        "name in capitals (--max-runs: A2A_MAX_RUNS; the agent: A2A_AGENT; true/false for "
        "switches, commas between the values of repeatable options); the command line wins.",
    )
    run.add_argument("--version", action="version", version=_version())
    _add_serving_options(run.add_argument_group("serving"))
    _add_store_options(run.add_argument_group("store"))
    _add_auth_options(run.add_argument_group("authentication"))
    _add_push_options(run.add_argument_group("push notifications"))
    _add_protocol_options(run.add_argument_group("streaming and protocol"))
    _add_limit_options(run.add_argument_group("limits"))
    _add_log_options(run.add_argument_group("telemetry and logs"))
    _add_signing_options(run.add_argument_group("card signing"))
    _add_shutdown_options(run.add_argument_group("shutdown"))
    return parser


def _add_serving_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "agent",
        nargs="?",  # or A2A_AGENT
        help="MODULE:OBJECT naming an async agent function, or a dict of skill id to agent",
    )
    group.add_argument("--host", type=_host, default="127.0.0.1", help="address to listen on")
    group.add_argument("--port", type=_port, default=9999, help="port to listen on (0: any free)")
    group.add_argument(
        "--grpc-port",
        type=_port,
        metavar="PORT",
        help="serve the gRPC binding (lf.a2a.v1.A2AService, HTTP/2; the grpc extra) on PORT too, "
        "and list it on the card (0: any free; on trio it may be --port itself)",
    )
    group.add_argument(
        "--loop",
        choices=["asyncio", "trio"],
        default="asyncio",
        help="the event loop: asyncio (Quart on uvicorn) or trio (QuartTrio on our own HTTP/1.1 "
        "server, HTTP/2 on hypercorn)",
    )
    group.add_argument(
        "--workers",
        type=_workers,
        default=1,
        metavar="N",
        help="serve from N processes on one port (default: 1); they share the store, so it "
        "must be one processes can share (redis://…)",
    )
    # How a worker of --workers gets the socket its parent bound (not for people).
    group.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)
    group.add_argument(
        "--card",
        help="the agent card: MODULE:OBJECT (an AgentCard) or a JSON file in v1.0 card format",
    )
    group.add_argument(
        "--extended-card",
        metavar="MODULE:OBJECT|FILE.json",
        help="the extended agent card, served to authenticated callers (GetExtendedAgentCard); "
        "needs --auth-token, --api-key or --jwt-issuer",
    )
    group.add_argument(
        "--public-url",
        type=_public_url,
        help="the base URL clients reach the server at (default: from each request's Host)",
    )
    group.add_argument(
        "--root-path",
        type=_root_path,
        default="",
        metavar="PATH",
        help="where a proxy in front serves the server (/agents): the card's URLs say so; "
        "requests are served with the prefix or without it (default: the host's root)",
    )
    group.add_argument(
        "--forwarded-allow-ips",
        type=_proxies,
        default=[],
        metavar="IPS",
        help="believe the X-Forwarded-For/-Proto/-Host headers of these proxies (addresses or "
        "networks, comma-separated, or *); default: nobody's",
    )
    group.add_argument(
        "--ssl-certfile",
        "--certfile",
        dest="certfile",
        metavar="PEM",
        help="serve over TLS with this certificate (its chain after it): HTTPS, and gRPC over "
        "TLS; needs --ssl-keyfile (default: plain HTTP)",
    )
    group.add_argument(
        "--ssl-keyfile",
        "--keyfile",
        dest="keyfile",
        metavar="PEM",
        help="the private key of --ssl-certfile",
    )


def _add_store_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--store",
        default=DEFAULT_STORE,
        metavar="URL",
        help="where tasks are kept: sqlite:PATH (a file, created if missing; the default is "
        f"{DEFAULT_STORE.partition(':')[2]} in the current directory; ?synchronous=normal "
        "trades the last commits before a power loss for speed, ?busy_timeout=SECONDS is how "
        "long a commit waits for another process holding the file), memory (gone on exit), "
        "or redis://[:PASSWORD@]HOST:PORT/DB, rediss://… or unix:///PATH?db=N (one Redis "
        "that replicas share, the redis extra; ?prefix=NAME&lease=SECONDS)",
    )
    group.add_argument(
        "--task-ttl",
        type=_duration("task_ttl"),
        metavar="SECONDS",
        help="remove terminal tasks this long after they finished (default: keep them)",
    )
    group.add_argument(
        "--on-restart",
        choices=["fail", "rerun"],
        default="fail",
        help="what becomes of a task whose agent run a restart or crash cut short: fail it with "
        "a record of why (the default), or rerun the agent on the task's last message (only "
        "for agents that may safely run twice)",
    )
    group.add_argument(
        "--no-idempotency",
        action="store_true",
        help="do not deduplicate sends by message id: every send is a new message (the "
        "conformance kit re-sends identical messages and expects new tasks)",
    )


def _add_auth_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--auth-token",
        action="append",
        default=[],
        metavar="NAME=TOKEN",
        help="accept 'Authorization: Bearer TOKEN' as principal NAME (repeatable); "
        "without any --auth-token or --api-key the server runs open",
    )
    group.add_argument(
        "--api-key",
        action="append",
        default=[],
        metavar="NAME=KEY",
        help="accept 'X-API-Key: KEY' as principal NAME (repeatable)",
    )
    group.add_argument(
        "--jwt-issuer",
        metavar="URL",
        help="accept bearer JWTs from this issuer (OpenID Connect: its keys are found through "
        "URL/.well-known/openid-configuration unless --jwt-jwks-url names them; needs the oidc "
        "extra)",
    )
    group.add_argument(
        "--jwt-audience",
        action="append",
        default=[],
        metavar="AUDIENCE",
        help="the audience a JWT must name (repeatable: any one of them; needed with --jwt-issuer)",
    )
    group.add_argument("--jwt-jwks-url", metavar="URL", help="where the issuer's JWKS is")
    group.add_argument(
        "--jwt-claim",
        default="sub",
        metavar="CLAIM",
        help="the JWT claim that names the principal (default: sub)",
    )
    group.add_argument(
        "--jwt-leeway",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="clock skew allowed on a JWT's exp, nbf and iat (default: 30)",
    )


def _add_push_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--no-push", action="store_true", help="do not offer push notifications (webhooks)"
    )
    group.add_argument(
        "--push-allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="let webhooks reach HOST although the SSRF guard refuses it (e.g. 127.0.0.1 for "
        "a local receiver; repeatable)",
    )
    group.add_argument(
        "--max-push-field-bytes",
        type=_count,
        default=_CORE_DEFAULTS["max_push_field_bytes"],
        metavar="N",
        help="refuse push configs with an id, URL, token or credentials of more than N bytes "
        "(-32602; default: 4,096)",
    )


def _add_protocol_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--no-streaming",
        action="store_true",
        help="do not offer SendStreamingMessage and SubscribeToTask",
    )
    group.add_argument(
        "--error-mapping",
        choices=["1.0.1", "1.0.0"],
        default="1.0.1",
        help="the spec's error-to-status table for the REST and gRPC bindings (1.0.0: as the "
        "v1.0 conformance kit expects)",
    )
    group.add_argument(
        "--strict-v1-card",
        action="store_true",
        help="serve the card with v1.0 fields only (the v1.0 conformance kit checks the v1.0 "
        "schema, which allows no v0.3 fields)",
    )
    group.add_argument(
        "--cors-origin",
        type=_origin,
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let pages of this browser origin (https://app.example, or * for any) call the "
        "server: CORS, preflights answered (repeatable; default: off)",
    )


def _add_limit_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--max-body-bytes",
        type=_bytes,
        default=8 * 1024 * 1024,
        metavar="N",
        help="refuse request bodies larger than N bytes, unread (default: 8 MiB)",
    )
    for option, field, kind, metavar, text in _LIMIT_OPTIONS:
        group.add_argument(option, dest=field, type=kind, metavar=metavar, help=text)
    group.add_argument(
        "--max-json-items",
        type=_count,
        default=_CORE_DEFAULTS["max_json_items"],
        metavar="N",
        help="refuse requests holding more than N JSON values and keys, before parsing them "
        "(413; default: 10,000)",
    )
    group.add_argument(
        "--max-json-depth",
        type=_count,
        default=_CORE_DEFAULTS["max_json_depth"],
        metavar="N",
        help="refuse requests whose JSON nests arrays and objects more than N deep (-32602; "
        "default: 64)",
    )
    group.add_argument(
        "--max-message-parts",
        type=_count,
        default=_CORE_DEFAULTS["max_message_parts"],
        metavar="N",
        help="refuse messages of more than N parts (-32602; default: 1,000)",
    )
    group.add_argument(
        "--max-task-messages",
        type=_count,
        default=_CORE_DEFAULTS["max_task_messages"],
        metavar="N",
        help="refuse a follow-up to a task whose history holds N messages (-32602: go on in a "
        "new task of the same context; default: 1,000)",
    )
    group.add_argument(
        "--max-runs",
        type=_count,
        default=DEFAULT_MAX_RUNS,
        metavar="N",
        help="agent runs under way at once at most; a send that would start one more is "
        f"refused as busy (503, Retry-After), never queued (default: {DEFAULT_MAX_RUNS:,})",
    )
    group.add_argument(
        "--max-runs-per-owner",
        type=_count,
        metavar="N",
        help="the same, per caller (principal) (default: no limit but --max-runs)",
    )
    group.add_argument(
        "--max-streams",
        type=_count,
        metavar="N",
        help="streams (SendStreamingMessage, SubscribeToTask) open at once at most; one more "
        "is refused as busy (default: no limit but --max-connections)",
    )
    group.add_argument(
        "--max-run-seconds",
        type=_duration("max_run_time"),
        metavar="SECONDS",
        help="stop an agent run that takes longer, failing its task with a record of why "
        "(default: no limit)",
    )
    group.add_argument(
        "--run-idle-seconds",
        type=_duration("run_idle_time"),
        metavar="SECONDS",
        help="stop an agent run that yields no update for this long (from its start or its "
        "last update), failing its task with a record of why (default: no limit)",
    )


def _add_log_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="info",
        help="the level of the server's own logs and its access log (a line per request, "
        "health probes at debug); other libraries log warnings and errors only (default: info)",
    )
    group.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="text",
        help="logs as text, or as one JSON object a line (default: text)",
    )


def _add_signing_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--sign-card",
        metavar="KEY_FILE",
        help="sign the agent card (and the extended card) with the PEM private key in KEY_FILE "
        "(Ed25519, P-256, P-384 or RSA of 2048 bits or more; needs the signing extra); its "
        "public key is served at /.well-known/jwks.json",
    )
    group.add_argument(
        "--sign-card-kid",
        metavar="KID",
        help="the key id the card's signature names (default: the key's RFC 7638 thumbprint)",
    )
    group.add_argument(
        "--sign-card-jku",
        metavar="URL",
        help="the JWKS URL the card's signature names, for verifiers to fetch the key from "
        "(for example https://agent.example/.well-known/jwks.json; default: none)",
    )


def _add_shutdown_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--shutdown-grace",
        type=_grace,
        default=5.0,
        metavar="SECONDS",
        help="on SIGTERM/Ctrl-C, how long running agents and queued push notifications get to "
        "finish before the server stops them (default: 5)",
    )


#: The connection-limit options: option, ConnectionLimits field, type, metavar, help.
_LIMIT_OPTIONS: tuple[tuple[str, str, Callable[[str], object], str, str], ...] = (
    (
        "--max-connections",
        "max_connections",
        _count,
        "N",
        "open connections at most; more are answered 503 and closed (default: from the "
        "file-descriptor limit, which serve raises to its hard limit)",
    ),
    (
        "--max-header-bytes",
        "max_header_bytes",
        _count,
        "N",
        "refuse request heads larger than N bytes with 431 (default: 32 KiB)",
    ),
    (
        "--max-headers",
        "max_header_count",
        _count,
        "N",
        "refuse requests with more than N header fields with 431 (default: 100)",
    ),
    (
        "--header-timeout",
        "header_timeout",
        _timeout,
        "SECONDS",
        "close a connection whose request head is not complete this long after its first "
        "byte (default: 10)",
    ),
    (
        "--body-timeout",
        "body_timeout",
        _timeout,
        "SECONDS",
        "answer 408 and close when a request body is not complete this long after its head "
        "(default: 60)",
    ),
    (
        "--keep-alive-timeout",
        "keep_alive_timeout",
        _timeout,
        "SECONDS",
        "close a connection with no request under way after this long (default: 5)",
    ),
)


def _limits(args: argparse.Namespace) -> ConnectionLimits:
    given = {}
    for _option, field, *_rest in _LIMIT_OPTIONS:
        value = getattr(args, field)
        if value is not None:
            given[field] = value
    return ConnectionLimits(**given)


def _pairs(option: str, values: Sequence[str]) -> dict[str, str]:
    """``NAME=SECRET`` options as a secret -> name mapping."""
    secrets: dict[str, str] = {}
    for value in values:
        name, sep, secret = value.partition("=")
        if not sep or not name or not secret:
            # The value is not repeated: it may be the secret alone.
            _fail(f"{option}: expected NAME=SECRET, with neither part empty")
        secrets[secret] = name
    return secrets


def _authenticators(args: argparse.Namespace, names: Mapping[str, str]) -> list[Authenticator]:
    found: list[Authenticator] = []
    if args.auth_token:
        found.append(BearerTokens(_pairs(names["auth_token"], args.auth_token)))
    if args.api_key:
        found.append(ApiKeys(_pairs(names["api_key"], args.api_key)))
    if args.jwt_issuer:
        found.append(_jwt_bearer(args, names))
    elif args.jwt_audience or args.jwt_jwks_url:
        _fail("--jwt-audience and --jwt-jwks-url go with --jwt-issuer URL")
    return found


def _jwt_bearer(args: argparse.Namespace, names: Mapping[str, str]) -> Authenticator:
    issuer = f"{names['jwt_issuer']} {args.jwt_issuer}"
    if not args.jwt_audience:
        _fail(f"{issuer} needs --jwt-audience: the audience its tokens must be for")
    try:
        from .oidc import JwtBearer
    except MissingExtra as missing:
        _fail(f"{issuer}: {missing}")
    try:
        return JwtBearer(
            args.jwt_issuer,
            args.jwt_audience,
            jwks_url=args.jwt_jwks_url,
            claim=args.jwt_claim,
            leeway=args.jwt_leeway,
        )
    except ValueError as error:
        _fail(f"{issuer}: {error}")


def _agent(spec: str, name: str) -> Agents:
    """The agent ``spec`` names, checked now, so that a mistake is said with what was typed."""
    agent = _load(spec, name)
    try:
        AgentRegistry(agent)  # type: ignore[arg-type]  # it checks what it got, and says so
    except (TypeError, ValueError) as error:
        _fail(f"{name} {spec}: {error}")
    return cast(Agents, agent)


def _card(spec: str, option: str, agent: Agents) -> AgentCard:
    """The card ``spec`` names, checked against the agents it fronts (each skill has one)."""
    card = _load_card(spec, option)
    try:
        _card_for(card, agent, ())
    except ValueError as error:
        _fail(f"{option} {spec}: {error}")
    return card


def _load_card(spec: str, option: str) -> AgentCard:
    path = Path(spec)
    if path.suffix == ".json":
        try:
            return V1Codec().decode(AgentCard, json.loads(path.read_text()), "card")
        except OSError as error:
            _fail(f"{option} {spec}: {error.strerror}")
        except ValueError as error:
            _fail(f"{option} {spec}: not JSON ({error})")
        except A2AError as error:
            _fail(f"{option} {spec}: not a v1.0 agent card ({error.message})")
    card = _load(spec, option)
    if not isinstance(card, AgentCard):
        _fail(f"{option} {spec}: expected an AgentCard, got {type(card).__name__}")
    return card


def _load(spec: str, what: str) -> object:
    try:
        return load_object(spec)
    except ModuleNotFoundError as error:
        _fail(f"{what} {spec}: no module named {error.name!r}")
    except AttributeError as error:
        _fail(f"{what} {spec}: {error}")
    except (ValueError, ImportError) as error:
        _fail(f"{what} {spec}: {error}")


def _check_tls(args: argparse.Namespace, names: Mapping[str, str]) -> None:
    """The TLS files load together, or neither is given (as serve() would insist, but said
    with the options' names and values)."""
    if args.certfile is None and args.keyfile is None:
        return
    cert, key = f"{names['certfile']} {args.certfile}", f"{names['keyfile']} {args.keyfile}"
    if args.keyfile is None:
        _fail(f"{cert} needs --ssl-keyfile: the certificate's private key")
    if args.certfile is None:
        _fail(f"{key} needs --ssl-certfile: the certificate it is the key of")
    for said, path in ((cert, args.certfile), (key, args.keyfile)):
        try:  # ssl's own error would not say which file it could not read
            with open(path, "rb"):
                pass
        except OSError as error:
            _fail(f"{said}: {error.strerror}")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
            args.certfile, args.keyfile
        )
    except (OSError, ssl.SSLError) as error:
        _fail(f"{cert} with {key}: cannot serve TLS with them ({error})")


def _cannot_listen(
    error: OSError, args: argparse.Namespace, names: Mapping[str, str], port: str
) -> str:
    """What went wrong listening on the port of option ``port`` (its dest), and what to do."""
    message = error.strerror or str(error)
    number = getattr(args, port)
    if error.errno == errno.EADDRINUSE:
        return (
            f"{names[port]} {number}: {message}; stop what listens there, or pick another "
            f"{names[port]} (0: any free port)"
        )
    if error.errno == errno.EACCES and 0 < number < 1024:
        return (
            f"{names[port]} {number}: {message}; ports below 1024 need privileges: pick another "
            f"{names[port]}"
        )
    return (
        f"{names['host']} {args.host}: {message}; {names['host']} must name an address of this "
        "machine (127.0.0.1, ::1, 0.0.0.0…)"
    )


def _supervise(args: argparse.Namespace, argv: list[str], names: Mapping[str, str]) -> int:
    """Bind once, then run the workers on that socket (see ``a2a_adapters._workers``)."""
    try:
        sock = _listen(args.host, args.port)
    except OSError as error:
        _fail(_cannot_listen(error, args, names, "port"), FAILURE)
    host, port = sock.getsockname()[:2]
    configure_logging(args.log_level, args.log_format)
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if args.certfile else "http"
    log.info(
        "A2A server on %s://%s:%d%s/ with %d workers",
        scheme,
        shown,
        port,
        root_path_of(args.root_path),
        args.workers,
    )
    try:
        return run_workers(args.workers, sock, _without_workers(argv), args.shutdown_grace + 5)
    finally:
        sock.close()


def _without_workers(argv: list[str]) -> list[str]:
    """``argv`` less its ``--workers N`` (or ``--workers=N``), for the workers themselves."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--workers":
            skip = True
        elif not arg.startswith("--workers="):
            kept.append(arg)
    return kept


def _check_trio() -> None:
    """The trio adapter's packages are an extra: say which, before anything is loaded."""
    try:
        importlib.import_module("a2a_adapters.trio")
    except MissingExtra as missing:
        _fail(str(missing))


def _card_signer(args: argparse.Namespace, names: Mapping[str, str]) -> Any:
    """The card signer ``--sign-card`` asks for (``None`` without it); a key that will not
    load, or a missing extra, is one line and exit status 2."""
    if args.sign_card is None:
        if args.sign_card_kid or args.sign_card_jku:
            _fail("--sign-card-kid and --sign-card-jku go with --sign-card KEY_FILE")
        return None
    try:
        from .signing import CardSigner
    except MissingExtra as missing:
        _fail(f"{names['sign_card']} {args.sign_card}: {missing}")
    try:
        return CardSigner.from_file(args.sign_card, kid=args.sign_card_kid, jku=args.sign_card_jku)
    except ValueError as error:
        _fail(f"{names['sign_card']}: {error}")  # the error names the file


def _said_of_store(message: str, names: Mapping[str, str]) -> str:
    """A store's error (open_store words its errors for the command line, as ``--store URL:
    ...``) naming the option as the user gave it: ``A2A_STORE``, if it came from there."""
    return (
        names["store"] + message.removeprefix("--store")
        if message.startswith("--store ")
        else message
    )


#: The stores several processes can share (the others keep tasks in one process).
SHARED_STORES = ("redis", "rediss", "unix")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line. A mistake in the arguments, the agent or the card, and an address
    that cannot be listened on, end the process with one line on stderr (exit status 2 for
    what was asked, 1 for what the machine refused), never a traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    run = _serve_parser(parser)
    _from_environment(run, os.environ)
    args = parser.parse_args(argv)
    _environment_lists(run, args, os.environ)
    names = _option_names(run, argv, os.environ)
    if args.agent is None:
        _fail(f"name the agent: MODULE:OBJECT, or {ENV_PREFIX}AGENT in the environment")
    if args.loop == "trio":
        _check_trio()
    agent = _agent(args.agent, names["agent"])
    card = _card(args.card, names["card"], agent) if args.card else None
    extended = (
        _card(args.extended_card, names["extended_card"], agent) if args.extended_card else None
    )
    signer = _card_signer(args, names)
    auth = _authenticators(args, names)
    if extended is not None and not auth:
        _fail(
            f"{names['extended_card']} {args.extended_card}: the extended card is served to "
            "authenticated callers only: add --auth-token, --api-key or --jwt-issuer"
        )
    _check_tls(args, names)
    # A worker (given its socket) serves, whatever A2A_WORKERS says: it must not supervise.
    if args.workers > 1 and args.listen_fd is None:
        if args.grpc_port is not None:
            _fail("--grpc-port serves from one process: it does not go with --workers")
        if args.store.partition(":")[0] not in SHARED_STORES:
            _fail(
                f"{names['workers']} {args.workers} needs a store the processes can share "
                f"(--store redis://HOST:PORT/DB); {args.store} keeps tasks in one process"
            )
        sys.exit(_supervise(args, argv, names))
    if args.loop == "asyncio" and args.grpc_port == args.port != 0:
        _fail(
            f"{names['grpc_port']} {args.grpc_port} is the HTTP port ({names['port']}): on "
            "asyncio gRPC needs a port of its own (uvicorn has no HTTP/2); pick another, or "
            "serve on trio (--loop trio)"
        )
    # Bound here and handed to serve(), so that a port in use here is --port's, and one that
    # serve() cannot listen on can only be --grpc-port's.
    if args.listen_fd is not None:
        sock = socket.socket(fileno=args.listen_fd)
    else:
        try:
            sock = _listen(args.host, args.port)
        except OSError as error:
            _fail(_cannot_listen(error, args, names, "port"), FAILURE)
    try:
        serve(
            agent,
            card=card,
            host=args.host,
            port=args.port,
            store=args.store,
            public_url=args.public_url,
            auth=auth,
            extended_card=extended,
            task_ttl=args.task_ttl,
            streaming=not args.no_streaming,
            push=not args.no_push,
            push_allow_hosts=args.push_allow_host,
            max_body_bytes=args.max_body_bytes,
            loop=args.loop,
            error_mapping=args.error_mapping,
            idempotent_sends=not args.no_idempotency,
            on_restart=args.on_restart,
            card_v03_fields=not args.strict_v1_card,
            shutdown_grace=args.shutdown_grace,
            limits=_limits(args),
            max_json_items=args.max_json_items,
            max_json_depth=args.max_json_depth,
            max_message_parts=args.max_message_parts,
            max_push_field_bytes=args.max_push_field_bytes,
            max_task_messages=args.max_task_messages,
            card_signer=signer,
            sock=sock,
            grpc_port=args.grpc_port,
            certfile=args.certfile,
            keyfile=args.keyfile,
            max_run_time=args.max_run_seconds,
            run_idle_time=args.run_idle_seconds,
            max_runs=args.max_runs,
            max_runs_per_owner=args.max_runs_per_owner,
            max_streams=args.max_streams,
            cors_origins=args.cors_origin,
            forwarded_allow_ips=args.forwarded_allow_ips,
            root_path=args.root_path,
            log_level=args.log_level,
            log_format=args.log_format,
        )
    except MissingExtra as missing:
        said = str(missing)
        if said.startswith("the gRPC binding"):  # the one extra serve() itself asks for
            said = f"{names['grpc_port']} {args.grpc_port}: {said}"
        _fail(_said_of_store(said, names))
    except EngineFailed as failed:
        # The cause is logged already; exit non-zero so that a supervisor restarts us.
        _fail(str(failed), FAILURE)
    except StoreUnavailable as unavailable:
        _fail(str(unavailable), FAILURE)
    # serve() checks every setting, then listens, before it serves anything; once serving, the
    # servers (uvicorn, hypercorn) handle and log every error, so these come from start-up.
    # Every setting of ours was checked above, with its option's name: what is left is the
    # store's URL, which only opening the store checks.
    except (TypeError, ValueError) as error:
        _fail(_said_of_store(str(error), names))
    except OSError as error:
        if args.grpc_port is None:
            _fail(error.strerror or str(error), FAILURE)
        # This process listens on --port already: the port serve() could not have is gRPC's.
        _fail(_cannot_listen(error, args, names, "grpc_port"), FAILURE)
    finally:
        sock.close()  # serve() closes it too, unless it stopped before it got that far


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
