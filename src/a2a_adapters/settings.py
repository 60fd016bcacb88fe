"""Every setting of a server, defined once: :class:`Settings`.

Each field is one setting: its type and default, the check its value must pass, its help, its
command-line option and environment variable (``A2A_`` and the option's name). ``serve()``
and ``build_engine()`` take the fields as keyword arguments (or a whole :class:`Settings`),
the command line is made from them, and so is the manual's settings reference::

    from a2a_adapters import serve
    from a2a_adapters.settings import Settings

    settings = Settings(port=8080, max_runs=100)
    serve(agent, settings)                       # or serve(agent, port=8080, max_runs=100)
    serve(agent, settings, log_level="debug")    # these settings, with one changed

A wrong value raises :class:`TypeError` or :class:`ValueError` naming the field as it is given
(``Settings(port=70000)``); what only several fields decide together (an extended card needs
authentication, TLS a certificate and its key) is checked by :func:`check_together` when the
server is made.
"""

from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

import attrs

from a2a_core import CoreConfig, ErrorMapping
from a2a_core.card import AgentCard
from a2a_core.store import AsyncStore

from ._asgi import root_path_of
from ._auth import Authenticator
from ._limits import ConnectionLimits
from ._logs import LOG_FORMATS, LOG_LEVELS
from ._proxy import trusted_networks
from ._push import PushSender
from ._setting import (
    ENV_PREFIX,
    Choice,
    Many,
    Number,
    Switch,
    Text,
    finite_positive,
    from_environment,
    option_of,
    options,
    seconds,
    setting,
)
from .stores import DEFAULT_STORE

__all__ = [
    "DEFAULT_MAX_RUNS",
    "ENGINE_BASELINE",
    "ENV_PREFIX",
    "GROUPS",
    "Settings",
    "check_together",
    "settings_from_environment",
]

#: How many agent runs may be under way at once by default: far more than one process does
#: useful work on, few enough that a flood of sends is refused (busy) rather than growing
#: memory without bound.
DEFAULT_MAX_RUNS = 10_000

#: The headings settings are grouped under, in ``--help`` and in the manual.
SERVING, STORE, AUTH, PUSH, PROTOCOL, LIMITS, LOGS, SIGNING, SHUTDOWN = GROUPS = (
    "serving",
    "store",
    "authentication",
    "push notifications",
    "streaming and protocol",
    "limits",
    "telemetry and logs",
    "card signing",
    "shutdown",
)

#: A card to ask the core about a setting with: any card will do.
_ANY_CARD = AgentCard(name="a2a-sansio", description="Any card.", version="1")


def _core_judge(field: str) -> Callable[[str, Any], Any]:
    """The core's check of its setting ``field``, with its words (the core is the judge of its
    own settings: this restates none of its rules)."""

    def judge(name: str, value: Any) -> Any:
        CoreConfig(card=_ANY_CARD, **{field: value})
        return value

    return judge


def _core_takes(field: str) -> Callable[[Any], bool]:
    def takes(value: Any) -> bool:
        try:
            CoreConfig(card=_ANY_CARD, **{field: value})
        except (TypeError, ValueError):
            return False
        return True

    return takes


def _core_count(field: str, *, optional: bool = False) -> Number:
    return Number(
        int,
        "a whole number",
        "a positive number",
        lambda n: n >= 1,
        optional=optional,
        judge=_core_judge(field),
    )


def _count(*, optional: bool = False, what: str = "a whole number") -> Number:
    return Number(int, what, "a positive number", lambda n: n >= 1, optional=optional)


def _limit(field: str, kind: type[int] | type[float]) -> Number:
    """A connection limit (:class:`~a2a_adapters.ConnectionLimits`' field ``field``)."""
    if kind is int:
        return _count(optional=field == "max_connections")
    # Any positive number of seconds (inf: no deadline).
    return Number(
        float,
        "a number of seconds",
        "a positive number of seconds",
        lambda s: s > 0,
        python="a number of seconds",
    )


def _duration(field: str) -> Number:
    """Seconds (or a timedelta) that become the core's duration ``field``, which bounds them."""
    judge = _core_judge(field)
    number = seconds(
        "a positive, finite number of seconds (from a microsecond to a century)",
        lambda s: finite_positive(s) and _core_takes(field)(s),
        optional=True,
    )
    return attrs.evolve(number, judge=judge)


_PORT = Number(
    int, "a port number", "from 0 to 65535 (0: any free port)", lambda p: 0 <= p <= 65535
)


def _is_root_path(text: str) -> bool:
    try:
        root_path_of(text)
    except ValueError:
        return False
    return True


def _is_network(text: str) -> bool:
    try:
        trusted_networks([text])
    except ValueError:
        return False
    return True


@attrs.frozen
class _CardSpec:
    """An :class:`AgentCard`, or where one is: ``MODULE:OBJECT`` or a v1.0 card's JSON file."""

    def read(self, text: str) -> object:
        return text

    def check(self, name: str, value: Any) -> Any:
        if value is None or isinstance(value, AgentCard) or (isinstance(value, str) and value):
            return value
        raise TypeError(
            f"{name} must be an AgentCard, or MODULE:OBJECT or a FILE.json naming one, "
            f"got {value!r}"
        )


@attrs.frozen
class _StoreSpec:
    """A store, or the URL of one (``open_store`` checks the URL when it opens it)."""

    def read(self, text: str) -> object:
        return text

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, str | AsyncStore):
            return value
        raise TypeError(f"{name} must be a task store or a store URL, got {value!r}")


@attrs.frozen
class _Objects:
    """Objects Python alone gives (authenticators, a card signer), checked where they are used:
    their repr, or a string given instead, may be a secret, so only types are named."""

    what: str
    several: bool = False

    def read(self, text: str) -> object:  # pragma: no cover - no option reads it
        raise ValueError(f"{text!r} is not {self.what}")

    def check(self, name: str, value: Any) -> Any:
        if self.several:
            if isinstance(value, str) or not isinstance(value, Sequence):
                raise TypeError(
                    f"{name} must be a list of {self.what}, got a {type(value).__name__} "
                    f"(a single one goes in a list: {name}=[...])"
                )
            for each in value:
                if not isinstance(each, Authenticator):
                    raise TypeError(
                        f"{name} must hold {self.what} (BearerTokens, ApiKeys…), "
                        f"got a {type(each).__name__}"
                    )
            return tuple(value)
        if value is not None and not callable(value):
            raise TypeError(f"{name} must be {self.what}, got a {type(value).__name__}")
        return value


def _secret_pair(text: str) -> str | None:
    name, sep, secret = text.partition("=")
    return None if sep and name and secret else "expected NAME=SECRET, with neither part empty"


@attrs.frozen
class _Pairs:
    """``NAME=SECRET`` (a principal's name and the token or key that stands for it). A wrong one
    is not repeated in the error: it may be the secret alone."""

    def read(self, text: str) -> object:
        problem = _secret_pair(text)
        if problem is not None:
            raise ValueError(problem)
        return text

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, str):
            raise TypeError(f"{name} must hold NAME=SECRET strings, got a {type(value).__name__}")
        problem = _secret_pair(value)
        if problem is not None:
            raise ValueError(f"{name}: {problem}")
        return value


@attrs.frozen(kw_only=True)
class Settings:
    """Every setting of a server (``a2a-sansio serve --help`` lists them with their options).

    The defaults are ``serve()``'s and the command line's; :data:`ENGINE_BASELINE` says where
    ``build_engine()`` starts instead. ``card``, ``extended_card`` and ``store`` take an object
    or where to find one (``MODULE:OBJECT`` or a card's JSON file; a store's URL).
    """

    # --- serving ----------------------------------------------------------------------------
    host: str = setting(
        "127.0.0.1",
        Text(bool, "a host name or address", optional=False),
        group=SERVING,
        scope="serve",
        flag="--host",
        metavar="HOST",
        help="address to listen on",
    )
    port: int = setting(
        9999,
        _PORT,
        group=SERVING,
        scope="serve",
        flag="--port",
        metavar="PORT",
        help="port to listen on (0: any free)",
    )
    grpc_port: int | None = setting(
        None,
        attrs.evolve(_PORT, optional=True),
        group=SERVING,
        flag="--grpc-port",
        metavar="PORT",
        help="serve the gRPC binding (lf.a2a.v1.A2AService, HTTP/2; the grpc extra) on PORT "
        "too, and list it on the card (0: any free; on trio it may be --port itself)",
    )
    loop: str = setting(
        "asyncio",
        Choice(("asyncio", "trio")),
        group=SERVING,
        scope="serve",
        flag="--loop",
        help="the event loop: asyncio (Quart on uvicorn) or trio (QuartTrio on "
        "our own HTTP/1.1 server, HTTP/2 on hypercorn)",
    )
    workers: int = setting(
        1,
        Number(int, "a number of processes", "from 1 to 256", lambda n: 1 <= n <= 256),
        group=SERVING,
        scope="cli",
        flag="--workers",
        metavar="N",
        help="serve from N processes on one port; they share the store, so it must be one "
        "processes can share (redis://…)",
    )
    card: AgentCard | str | None = setting(
        None,
        _CardSpec(),
        group=SERVING,
        flag="--card",
        metavar="MODULE:OBJECT|FILE.json",
        help="the agent card: MODULE:OBJECT (an AgentCard) or a JSON file in v1.0 card format "
        "(default: one made from the agent's name and docstring)",
    )
    extended_card: AgentCard | str | None = setting(
        None,
        _CardSpec(),
        group=SERVING,
        flag="--extended-card",
        metavar="MODULE:OBJECT|FILE.json",
        help="the extended agent card, served to authenticated callers "
        "(GetExtendedAgentCard); needs --auth-token, --api-key or --jwt-issuer",
    )
    public_url: str | None = setting(
        None,
        Text(_core_takes("public_url"), "an http:// or https:// URL"),
        group=SERVING,
        flag="--public-url",
        metavar="URL",
        help="the base URL clients reach the server at (default: from each request's Host)",
    )
    root_path: str = setting(
        "",
        Text(_is_root_path, "a path such as /agents", optional=False),
        group=SERVING,
        scope="serve",
        flag="--root-path",
        metavar="PATH",
        help="where a proxy in front serves the server (/agents): the card's URLs say so; "
        "requests are served with the prefix or without it (default: the host's root)",
    )
    forwarded_allow_ips: Sequence[str] = setting(
        (),
        Many(
            Text(_is_network, "an IP address or network (or *)"),
            "addresses or networks",
            commas=True,
        ),
        group=SERVING,
        scope="serve",
        flag="--forwarded-allow-ips",
        metavar="IPS",
        help="believe the X-Forwarded-For/-Proto/-Host headers of these proxies (addresses "
        "or networks, comma-separated, or *); default: nobody's",
    )
    certfile: str | None = setting(
        None,
        Text(),
        group=SERVING,
        scope="serve",
        flag="--ssl-certfile",
        aliases=("--certfile",),
        metavar="PEM",
        help="serve over TLS with this certificate (its chain after it): HTTPS, and gRPC over "
        "TLS; needs --ssl-keyfile (default: plain HTTP)",
    )
    keyfile: str | None = setting(
        None,
        Text(),
        group=SERVING,
        scope="serve",
        flag="--ssl-keyfile",
        aliases=("--keyfile",),
        metavar="PEM",
        help="the private key of --ssl-certfile",
    )

    # --- store ------------------------------------------------------------------------------
    store: AsyncStore | str = setting(
        DEFAULT_STORE,
        _StoreSpec(),
        group=STORE,
        flag="--store",
        metavar="URL",
        shown=DEFAULT_STORE,
        help="where tasks are kept: sqlite:PATH (a file, created if missing; "
        "?synchronous=normal trades the last commits before a power loss for speed, "
        "?busy_timeout=SECONDS is how long a commit waits for another process holding the "
        "file), memory (gone on exit), or redis://[:PASSWORD@]HOST:PORT/DB, rediss://… or "
        "unix:///PATH?db=N (one Redis that replicas share, the redis extra; "
        "?prefix=NAME&lease=SECONDS); in Python, a store object too",
    )
    task_ttl: timedelta | float | None = setting(
        None,
        _duration("task_ttl"),
        group=STORE,
        flag="--task-ttl",
        metavar="SECONDS",
        help="remove terminal tasks this long after they finished (default: keep them)",
    )
    on_restart: str = setting(
        "fail",
        Choice(("fail", "rerun")),
        group=STORE,
        flag="--on-restart",
        help="what becomes of a task whose agent run a restart or crash cut short: fail it "
        "with a record of why, or rerun the agent on the task's last message (only for "
        "agents that may safely run twice)",
    )
    idempotent_sends: bool = setting(
        True,
        Switch(),
        group=STORE,
        flag="--no-idempotency",
        switch=False,
        help="do not deduplicate sends by message id: every send is a new message (the "
        "conformance kit re-sends identical messages and expects new tasks)",
    )

    # --- authentication ---------------------------------------------------------------------
    auth_tokens: Sequence[str] = setting(
        (),
        Many(_Pairs(), "NAME=TOKEN strings", secret=True),
        group=AUTH,
        flag="--auth-token",
        metavar="NAME=TOKEN",
        help="accept 'Authorization: Bearer TOKEN' as principal NAME (repeatable); without "
        "any --auth-token, --api-key or --jwt-issuer the server runs open",
    )
    api_keys: Sequence[str] = setting(
        (),
        Many(_Pairs(), "NAME=KEY strings", secret=True),
        group=AUTH,
        flag="--api-key",
        metavar="NAME=KEY",
        help="accept 'X-API-Key: KEY' as principal NAME (repeatable)",
    )
    jwt_issuer: str | None = setting(
        None,
        Text(),
        group=AUTH,
        flag="--jwt-issuer",
        metavar="URL",
        help="accept bearer JWTs from this issuer (OpenID Connect: its keys are found through "
        "URL/.well-known/openid-configuration unless --jwt-jwks-url names them; needs the "
        "oidc extra)",
    )
    jwt_audiences: Sequence[str] = setting(
        (),
        Many(Text(optional=False), "audiences"),
        group=AUTH,
        flag="--jwt-audience",
        metavar="AUDIENCE",
        help="the audience a JWT must name (repeatable: any one of them; needed with --jwt-issuer)",
    )
    jwt_jwks_url: str | None = setting(
        None,
        Text(),
        group=AUTH,
        flag="--jwt-jwks-url",
        metavar="URL",
        help="where the issuer's JWKS is",
    )
    jwt_claim: str = setting(
        "sub",
        Text(bool, "a claim's name", optional=False),
        group=AUTH,
        flag="--jwt-claim",
        metavar="CLAIM",
        help="the JWT claim that names the principal",
    )
    jwt_leeway: float = setting(
        30.0,
        seconds("a positive, finite number of seconds", finite_positive),
        group=AUTH,
        flag="--jwt-leeway",
        metavar="SECONDS",
        shown="30",
        help="clock skew allowed on a JWT's exp, nbf and iat",
    )
    auth: Sequence[Authenticator] = setting(
        (),
        _Objects("authenticators", several=True),
        group=AUTH,
        help="authenticators (BearerTokens, ApiKeys, JwtBearer, or your own), beside those the "
        "settings above make",
    )

    # --- push notifications -----------------------------------------------------------------
    push: bool | PushSender = setting(
        True,
        Switch(also=(PushSender,)),
        group=PUSH,
        flag="--no-push",
        switch=False,
        help="do not offer push notifications (webhooks); in Python, a configured PushSender "
        "turns them on",
    )
    push_allow_hosts: Sequence[str] = setting(
        (),
        Many(Text(optional=False), "host names"),
        group=PUSH,
        flag="--push-allow-host",
        metavar="HOST",
        help="let webhooks reach HOST although the SSRF guard refuses it (e.g. 127.0.0.1 for a "
        "local receiver; repeatable)",
    )
    max_push_field_bytes: int = setting(
        4096,
        _core_count("max_push_field_bytes"),
        group=PUSH,
        flag="--max-push-field-bytes",
        metavar="N",
        shown="4,096",
        help="refuse push configs with an id, URL, token or credentials of more than N bytes "
        "(-32602)",
    )

    # --- streaming and protocol -------------------------------------------------------------
    streaming: bool = setting(
        True,
        Switch(),
        group=PROTOCOL,
        flag="--no-streaming",
        switch=False,
        help="do not offer SendStreamingMessage and SubscribeToTask",
    )
    error_mapping: ErrorMapping | str = setting(
        "1.0.1",
        Choice(("1.0.1", "1.0.0"), ErrorMapping),
        group=PROTOCOL,
        flag="--error-mapping",
        help="the spec's error-to-status table for the REST and gRPC bindings (1.0.0: as the "
        "v1.0 conformance kit expects)",
    )
    card_v03_fields: bool = setting(
        True,
        Switch(),
        group=PROTOCOL,
        flag="--strict-v1-card",
        switch=False,
        help="serve the card with v1.0 fields only (the v1.0 conformance kit checks the v1.0 "
        "schema, which allows no v0.3 fields)",
    )
    cors_origins: Sequence[str] = setting(
        (),
        Many(
            Text(
                lambda text: _core_takes("cors_origins")((text,)),
                "a browser origin (http:// or https://, a host and maybe a port, no path; or * for "
                "any)",
            ),
            "origins",
        ),
        group=PROTOCOL,
        flag="--cors-origin",
        metavar="ORIGIN",
        help="let pages of this browser origin (https://app.example, or * for any) call the "
        "server: CORS, preflights answered (repeatable; default: off)",
    )
    rest: bool = setting(
        True, Switch(), group=PROTOCOL, help="serve the HTTP+JSON (REST) binding beside JSON-RPC"
    )
    keepalive_seconds: float = setting(
        15.0,
        seconds("a positive, finite number of seconds", finite_positive),
        group=PROTOCOL,
        shown="15",
        help="how often an idle stream gets a keep-alive comment",
    )
    direct_reply_window: timedelta | float | None = setting(
        CoreConfig(card=_ANY_CARD).direct_reply_window,
        _duration("direct_reply_window"),
        group=PROTOCOL,
        shown="0.05",
        help="how long, in seconds, a streamed send holds its task back for a direct reply "
        "(None: until the agent's first output)",
    )

    # --- limits -----------------------------------------------------------------------------
    max_body_bytes: int = setting(
        8 * 1024 * 1024,
        _core_count("max_body_bytes"),
        group=LIMITS,
        flag="--max-body-bytes",
        metavar="N",
        shown="8 MiB",
        help="refuse request bodies larger than N bytes, unread",
    )
    max_connections: int | None = setting(
        None,
        _limit("max_connections", int),
        group=LIMITS,
        scope="serve",
        flag="--max-connections",
        metavar="N",
        help="open connections at most; more are answered 503 and closed (default: from the "
        "file-descriptor limit, which serve raises to its hard limit)",
    )
    max_header_bytes: int = setting(
        32 * 1024,
        _limit("max_header_bytes", int),
        group=LIMITS,
        scope="serve",
        flag="--max-header-bytes",
        metavar="N",
        shown="32 KiB",
        help="refuse request heads larger than N bytes with 431",
    )
    max_header_count: int = setting(
        100,
        _limit("max_header_count", int),
        group=LIMITS,
        scope="serve",
        flag="--max-headers",
        metavar="N",
        help="refuse requests with more than N header fields with 431",
    )
    header_timeout: float = setting(
        10.0,
        _limit("header_timeout", float),
        group=LIMITS,
        scope="serve",
        flag="--header-timeout",
        metavar="SECONDS",
        shown="10",
        help="close a connection whose request head is not complete this long after its first byte",
    )
    body_timeout: float = setting(
        60.0,
        _limit("body_timeout", float),
        group=LIMITS,
        scope="serve",
        flag="--body-timeout",
        metavar="SECONDS",
        shown="60",
        help="answer 408 and close when a request body is not complete this long after its head",
    )
    keep_alive_timeout: float = setting(
        5.0,
        _limit("keep_alive_timeout", float),
        group=LIMITS,
        scope="serve",
        flag="--keep-alive-timeout",
        metavar="SECONDS",
        shown="5",
        help="close a connection with no request under way after this long",
    )
    max_json_items: int = setting(
        CoreConfig(card=_ANY_CARD).max_json_items,
        _core_count("max_json_items"),
        group=LIMITS,
        flag="--max-json-items",
        metavar="N",
        shown="10,000",
        help="refuse requests holding more than N JSON values and keys, before parsing them (413)",
    )
    max_json_depth: int = setting(
        CoreConfig(card=_ANY_CARD).max_json_depth,
        _core_count("max_json_depth"),
        group=LIMITS,
        flag="--max-json-depth",
        metavar="N",
        help="refuse requests whose JSON nests arrays and objects more than N deep (-32602)",
    )
    max_message_parts: int = setting(
        CoreConfig(card=_ANY_CARD).max_message_parts,
        _core_count("max_message_parts"),
        group=LIMITS,
        flag="--max-message-parts",
        metavar="N",
        shown="1,000",
        help="refuse messages of more than N parts (-32602)",
    )
    max_task_messages: int | None = setting(
        CoreConfig(card=_ANY_CARD).max_task_messages,
        _count(optional=True),
        group=LIMITS,
        flag="--max-task-messages",
        metavar="N",
        shown="1,000",
        help="refuse a follow-up to a task whose history holds N messages (-32602: go on in "
        "a new task of the same context)",
    )
    max_runs: int | None = setting(
        DEFAULT_MAX_RUNS,
        _core_count("max_runs", optional=True),
        group=LIMITS,
        flag="--max-runs",
        metavar="N",
        shown=f"{DEFAULT_MAX_RUNS:,}",
        help="agent runs under way at once at most; a send that would start one more is "
        "refused as busy (503, Retry-After), never queued",
    )
    max_runs_per_owner: int | None = setting(
        None,
        _core_count("max_runs_per_owner", optional=True),
        group=LIMITS,
        flag="--max-runs-per-owner",
        metavar="N",
        help="the same, per caller (principal) (default: no limit but --max-runs)",
    )
    max_streams: int | None = setting(
        None,
        _core_count("max_streams", optional=True),
        group=LIMITS,
        flag="--max-streams",
        metavar="N",
        help="streams (SendStreamingMessage, SubscribeToTask) open at once at most; one more "
        "is refused as busy (default: no limit but --max-connections)",
    )
    max_run_time: timedelta | float | None = setting(
        None,
        _duration("max_run_time"),
        group=LIMITS,
        flag="--max-run-seconds",
        metavar="SECONDS",
        help="stop an agent run that takes longer, failing its task with a record of why "
        "(default: no limit)",
    )
    run_idle_time: timedelta | float | None = setting(
        None,
        _duration("run_idle_time"),
        group=LIMITS,
        flag="--run-idle-seconds",
        metavar="SECONDS",
        help="stop an agent run that yields no update for this long (from its start or its "
        "last update), failing its task with a record of why (default: no limit)",
    )

    # --- telemetry and logs -----------------------------------------------------------------
    log_level: str = setting(
        "info",
        Choice(LOG_LEVELS),
        group=LOGS,
        scope="serve",
        flag="--log-level",
        help="the level of the server's own logs and its access log (a line per request, "
        "health probes at debug); other libraries log warnings and errors only",
    )
    log_format: str = setting(
        "text",
        Choice(LOG_FORMATS),
        group=LOGS,
        scope="serve",
        flag="--log-format",
        help="logs as text, or as one JSON object a line",
    )

    # --- card signing -----------------------------------------------------------------------
    sign_card: str | None = setting(
        None,
        Text(),
        group=SIGNING,
        flag="--sign-card",
        metavar="KEY_FILE",
        help="sign the agent card (and the extended card) with the PEM private key in KEY_FILE "
        "(Ed25519, P-256, P-384 or RSA of 2048 bits or more; needs the signing extra); its "
        "public key is served at /.well-known/jwks.json",
    )
    sign_card_kid: str | None = setting(
        None,
        Text(),
        group=SIGNING,
        flag="--sign-card-kid",
        metavar="KID",
        help="the key id the card's signature names (default: the key's RFC 7638 thumbprint)",
    )
    sign_card_jku: str | None = setting(
        None,
        Text(),
        group=SIGNING,
        flag="--sign-card-jku",
        metavar="URL",
        help="the JWKS URL the card's signature names, for verifiers to fetch the key from "
        "(for example https://agent.example/.well-known/jwks.json; default: none)",
    )
    card_signer: Any = setting(
        None,
        _Objects("a card signer (bytes in, signatures out)"),
        group=SIGNING,
        help="what signs the cards, instead of --sign-card: a CardSigner, or your own callable "
        "(a KMS); one with a jwks_bytes method has its keys served too",
    )

    # --- shutdown ---------------------------------------------------------------------------
    shutdown_grace: float = setting(
        5.0,
        seconds("a finite number of seconds, 0 or more", lambda s: s >= 0 and s != float("inf")),
        group=SHUTDOWN,
        flag="--shutdown-grace",
        metavar="SECONDS",
        shown="5",
        help="on SIGTERM/Ctrl-C, how long running agents and queued push notifications get to "
        "finish before the server stops them",
    )

    def limits(self) -> ConnectionLimits:
        """The connection limits these settings say."""
        return ConnectionLimits(
            max_connections=self.max_connections,
            max_header_bytes=self.max_header_bytes,
            max_header_count=self.max_header_count,
            header_timeout=self.header_timeout,
            body_timeout=self.body_timeout,
            keep_alive_timeout=self.keep_alive_timeout,
        )


#: Where ``build_engine()`` starts, where it differs from :class:`Settings`' defaults: an engine
#: embedded in an application offers no optional capability until asked, keeps its tasks in
#: memory, and leaves the bound on runs to the application.
ENGINE_BASELINE: Mapping[str, object] = {
    "streaming": False,
    "push": False,
    "max_runs": None,
    "store": "memory",
}


def _no_name(field: str) -> str:
    return field


def check_together(settings: Settings, name: Callable[[str], str] = _no_name) -> None:
    """What several settings decide together, checked; ``name`` says what a setting is called
    where it was given (its field, or the option or variable it came from)."""
    authenticated = bool(
        settings.auth or settings.auth_tokens or settings.api_keys or settings.jwt_issuer
    )

    def said(field: str) -> str:
        return f"{name(field)} {getattr(settings, field)}"

    def flag(field: str) -> str:
        option = option_of(attrs.fields_dict(Settings)[field])
        return name(field) if name is _no_name else str(option.flag)

    if settings.extended_card is not None and not authenticated:
        raise ValueError(
            f"{said('extended_card')}: the extended card is served to authenticated callers "
            f"only: add {flag('auth_tokens')}, {flag('api_keys')} or {flag('jwt_issuer')}"
            if isinstance(settings.extended_card, str)
            else "an extended card is served to authenticated callers only: set auth"
        )
    if settings.certfile is not None and settings.keyfile is None:
        raise ValueError(
            f"{said('certfile')} needs {flag('keyfile')}: the certificate's private key"
        )
    if settings.keyfile is not None and settings.certfile is None:
        raise ValueError(
            f"{said('keyfile')} needs {flag('certfile')}: the certificate it is the key of"
        )
    if settings.jwt_issuer is None and (settings.jwt_audiences or settings.jwt_jwks_url):
        raise ValueError(
            f"{flag('jwt_audiences')} and {flag('jwt_jwks_url')} go with {flag('jwt_issuer')} URL"
        )
    if settings.jwt_issuer is not None and not settings.jwt_audiences:
        raise ValueError(
            f"{said('jwt_issuer')} needs {flag('jwt_audiences')}: the audience its tokens "
            "must be for"
        )
    if settings.sign_card is None and (settings.sign_card_kid or settings.sign_card_jku):
        raise ValueError(
            f"{flag('sign_card_kid')} and {flag('sign_card_jku')} go with "
            f"{flag('sign_card')} KEY_FILE"
        )
    if settings.sign_card is not None and settings.card_signer is not None:
        raise ValueError(f"{said('sign_card')}: the cards have a card_signer already")
    asyncio_port = settings.loop == "asyncio" and settings.grpc_port == settings.port != 0
    if asyncio_port:
        raise ValueError(
            f"{said('grpc_port')} is the HTTP port ({name('port')}): on asyncio gRPC needs a "
            "port of its own (uvicorn has no HTTP/2); pick another, or serve on trio "
            f"({flag('loop')} trio)"
        )


def settings_from_environment(env: Mapping[str, str]) -> dict[str, tuple[str, object]]:
    """The settings ``env`` sets (``A2A_PORT=8080``), by field name: the variable each came
    from and its value. A value that cannot be read raises :class:`ValueError` naming its
    variable (``A2A_PORT: 'abc' is not a port number``)."""
    return from_environment(Settings, env)


def fields_in(scope: str) -> list[str]:
    """The names of the settings of ``scope`` (``engine``, ``serve``, ``cli``)."""
    return [field.name for field, option in options(Settings) if option.scope == scope]
