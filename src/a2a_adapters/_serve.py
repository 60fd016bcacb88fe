"""``serve(agent)``: the one-line way to run an agent as an A2A server."""

import asyncio
import contextlib
import gc
import importlib
import logging
import math
import signal
import socket
import ssl
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import anyio
import attrs

from a2a_core import Agent, Core, CoreConfig, ErrorMapping
from a2a_core.card import AgentCard, AgentCardSignature, AgentSkill, SecurityRequirement
from a2a_core.grpc import PayloadCodec
from a2a_core.store import AsyncStore

from ._agents import AgentRegistry
from ._asgi import root_path_of
from ._auth import Authenticator
from ._engine import Engine
from ._limits import DEFAULT_LIMITS, ConnectionLimits, raise_fd_limit
from ._logs import check_logging, configure_logging
from ._proxy import trusted_networks
from ._push import PushSender
from ._telemetry import Telemetry
from ._tls import TlsFiles
from .asyncio import bind_socket, create_app, serve_app
from .stores import MemoryStore, StoreUnavailable, open_store

__all__ = ["build_engine", "default_card", "serve"]

log = logging.getLogger("a2a_adapters")

Agents = Agent | Mapping[str, Agent]

#: How many agent runs ``serve`` lets be under way at once by default: far more than one
#: process does useful work on, few enough that a flood of sends is refused (busy) rather
#: than growing memory without bound.
DEFAULT_MAX_RUNS = 10_000

#: The core's own defaults, which the options of the same names here share.
_CORE_DEFAULTS: dict[str, Any] = {
    field.name: field.default
    for field in attrs.fields(CoreConfig)
    if field.default is not attrs.NOTHING
}


def _first_line(obj: object, fallback: str) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else fallback


#: Function names that say nothing of what an agent does: its module's name says more.
_GENERIC_NAMES = frozenset({"agent", "agents", "main", "run", "handle", "handler", "__call__"})


def human_name(identifier: str) -> str:
    """``weather_bot`` as a person would write it: ``Weather Bot``."""
    words = identifier.replace("_", " ").replace("-", " ").split()
    return " ".join(word[:1].upper() + word[1:] for word in words)


def _name_of(agent: object, *, several: bool = False) -> str:
    """What a card calls an agent that came without one: its function's name, or, when that
    is generic (``agent``) or names one of ``several`` (a dict's), its module's
    (``examples.weather_bot`` → ``Weather Bot``)."""
    target = getattr(agent, "func", agent)  # a functools.partial: what it calls
    function = getattr(target, "__name__", "")
    named = function and function not in _GENERIC_NAMES and not function.startswith("<")
    if named and not several:
        return human_name(function)
    module = str(getattr(target, "__module__", "") or "").rpartition(".")[2]
    if module and module != "__main__" and not module.startswith("_"):
        return human_name(module)
    return human_name(function) if function and not function.startswith("<") else "Agent"


def default_card(agent: Agents, name: str | None = None) -> AgentCard:
    """A card for an agent that came without one: named after it (a person's name for it, not
    a Python path), described by its docstring."""
    target = agent if not isinstance(agent, Mapping) else next(iter(agent.values()))
    title = name or _name_of(target, several=isinstance(agent, Mapping))
    return AgentCard(
        name=title, description=_first_line(target, f"The {title} agent."), version="1.0.0"
    )


def _check_skills(card: AgentCard, agents: Mapping[str, Agent]) -> None:
    """Each skill of the card has an agent, and each agent a skill of the card."""
    listed = {skill.id for skill in card.skills}
    unlisted = sorted(set(agents) - listed)
    if unlisted:
        raise ValueError(
            f"the card {card.name!r} does not list the skills {unlisted}, which have agents: "
            "add them to its skills, or serve without a card to have them listed"
        )
    unserved = sorted(listed - set(agents))
    if unserved:
        raise ValueError(
            f"the card {card.name!r} lists the skills {unserved}, which have no agent: "
            "give each an agent, or remove them from its skills"
        )


def _card_for(card: AgentCard, agent: Agents, auth: Sequence[Authenticator]) -> AgentCard:
    """``card`` checked against the agents it fronts, with the security the server enforces."""
    if isinstance(agent, Mapping):
        if card.skills:
            _check_skills(card, agent)
        else:
            card = attrs.evolve(
                card,
                skills=tuple(
                    AgentSkill(
                        id=skill_id,
                        name=human_name(skill_id),
                        description=_first_line(skill_agent, f"The {skill_id} skill."),
                        tags=("skill",),
                    )
                    for skill_id, skill_agent in agent.items()
                ),
            )
    if auth:
        card = attrs.evolve(
            card,
            security_schemes={**card.security_schemes, **{a.name: a.scheme() for a in auth}},
            # Any one of the schemes is enough: the requirements are alternatives.
            security_requirements=tuple(SecurityRequirement({a.name: ()}) for a in auth),
        )
    return card


def build_engine(
    agent: Agents,
    *,
    card: AgentCard | None = None,
    store: AsyncStore | None = None,
    auth: Sequence[Authenticator] = (),
    task_ttl: timedelta | float | None = None,
    extended_card: AgentCard | None = None,
    public_url: str | None = None,
    max_body_bytes: int = 8 * 1024 * 1024,
    streaming: bool = False,
    push: bool | PushSender = False,
    push_allow_hosts: Sequence[str] = (),
    keepalive_seconds: float = 15.0,
    rest: bool = True,
    error_mapping: ErrorMapping | str = ErrorMapping.V1_0_1,
    idempotent_sends: bool = True,
    on_restart: str = "fail",
    card_v03_fields: bool = True,
    shutdown_grace: float = 5.0,
    max_json_depth: int = _CORE_DEFAULTS["max_json_depth"],
    max_json_items: int = _CORE_DEFAULTS["max_json_items"],
    max_message_parts: int = _CORE_DEFAULTS["max_message_parts"],
    max_push_field_bytes: int = _CORE_DEFAULTS["max_push_field_bytes"],
    max_task_messages: int | None = _CORE_DEFAULTS["max_task_messages"],
    direct_reply_window: timedelta | float | None = _CORE_DEFAULTS["direct_reply_window"],
    max_run_time: timedelta | float | None = None,
    run_idle_time: timedelta | float | None = None,
    max_runs: int | None = None,
    max_runs_per_owner: int | None = None,
    max_streams: int | None = None,
    cors_origins: Sequence[str] = (),
    card_signer: Callable[[bytes], Sequence[AgentCardSignature]] | None = None,
    grpc_port: int | None = None,
    telemetry: Telemetry | None = None,
) -> Engine:
    """The asyncio engine for ``agent``, or for a mapping of skill id to agent.

    ``auth`` lists the accepted authenticators (none: the server runs open, every caller is the
    same anonymous principal); ``task_ttl`` (seconds or a timedelta) makes terminal tasks expire;
    ``streaming`` and ``push`` switch those capabilities on (``push`` may be a configured
    :class:`PushSender`), and ``push_allow_hosts`` exempts hosts from the push SSRF guard;
    idle streams get a keep-alive comment every ``keepalive_seconds``; ``rest`` serves the
    HTTP+JSON binding beside JSON-RPC; ``error_mapping`` picks the spec's error-to-HTTP-status
    table ("1.0.1", current, or "1.0.0", which the v1.0 conformance kit asserts);
    ``shutdown_grace`` is how many seconds running agents (and queued push notifications) get
    to finish when the server stops. The request limits (``max_body_bytes``, ``max_json_depth``,
    ``max_json_items``, ``max_message_parts``, ``max_task_messages``,
    ``max_push_field_bytes``) and
    ``direct_reply_window`` (seconds a streamed send holds its task for a direct reply) are the
    :class:`~a2a_core.CoreConfig` fields of those names, and so is ``on_restart`` (``"fail"``, or
    ``"rerun"``: what becomes of a task whose run a restart cut), and so are the run time limits
    ``max_run_time`` and ``run_idle_time`` (seconds or a timedelta; a run past either is stopped
    and its task failed saying which), and the capacity limits ``max_runs``,
    ``max_runs_per_owner`` and ``max_streams`` (past one, a send or a stream is refused as
    busy, 503 with ``Retry-After``, never queued). ``cors_origins`` lets pages of those
    browser origins (``"*"``: any) call the server: CORS, off when empty. ``card_signer``
    signs every card served (an :class:`a2a_adapters.signing.CardSigner`; one with a
    ``jwks_bytes`` method also has its public keys served at ``/.well-known/jwks.json``).
    ``grpc_port`` serves the gRPC binding too (the ``grpc`` extra), and the card lists it at that
    port; the server is to listen there (``serve_app``'s ``grpc_sock``, or its own port on trio).
    ``telemetry`` is where traces and metrics go (README, "Telemetry"): by default the global
    OpenTelemetry providers, when the ``otel`` extra is installed and an application set them.
    """
    registry = AgentRegistry(agent)  # first: it checks the agents that everything else reads
    auth = _checked_auth(auth)
    if extended_card is not None and not auth:
        raise ValueError("an extended card is served to authenticated callers only: set auth")
    keepalive_seconds = _seconds(keepalive_seconds, "keepalive_seconds")
    config = CoreConfig(
        card=_card_for(card or default_card(agent), agent, auth),
        extended_card=_card_for(extended_card, agent, auth) if extended_card else None,
        public_url=public_url,
        max_body_bytes=max_body_bytes,
        card_modified=datetime.now(UTC).replace(microsecond=0),
        streaming=streaming,
        rest=rest,
        error_mapping=error_mapping,
        idempotent_sends=idempotent_sends,
        on_restart=on_restart,
        card_v03_fields=card_v03_fields,
        push_notifications=push is not False,
        push_allow_hosts=push_allow_hosts,
        task_ttl=task_ttl,
        default_skill="" if registry.default is not None else next(iter(registry.by_skill)),
        max_json_depth=max_json_depth,
        max_json_items=max_json_items,
        max_message_parts=max_message_parts,
        max_push_field_bytes=max_push_field_bytes,
        max_task_messages=max_task_messages,
        direct_reply_window=direct_reply_window,
        max_run_time=max_run_time,
        run_idle_time=run_idle_time,
        max_runs=max_runs,
        max_runs_per_owner=max_runs_per_owner,
        max_streams=max_streams,
        cors_origins=cors_origins,
        card_signer=card_signer,
        card_jwks=_jwks_of(card_signer),
        grpc_port=grpc_port,
    )
    sender = push if isinstance(push, PushSender) else PushSender() if push else None
    return Engine(
        Core(config, grpc=_grpc_payloads() if grpc_port is not None else None),
        store if store is not None else MemoryStore(),  # an empty store is falsy
        registry,
        auth=auth,
        push=sender,
        keepalive_seconds=keepalive_seconds,
        shutdown_grace=shutdown_grace,
        telemetry=telemetry,
    )


def _grpc_payloads() -> PayloadCodec:
    from .grpc import ProtoPayloads  # the grpc extra: without it, MissingExtra names it

    return ProtoPayloads()


def serve(
    agent: Agents,
    *,
    card: AgentCard | None = None,
    host: str = "127.0.0.1",
    port: int = 9999,
    store: AsyncStore | str | None = None,
    auth: Sequence[Authenticator] = (),
    task_ttl: timedelta | float | None = None,
    extended_card: AgentCard | None = None,
    public_url: str | None = None,
    streaming: bool = True,
    push: bool | PushSender = True,
    push_allow_hosts: Sequence[str] = (),
    max_body_bytes: int = 8 * 1024 * 1024,
    loop: Literal["asyncio", "trio"] = "asyncio",
    error_mapping: ErrorMapping | str = ErrorMapping.V1_0_1,
    idempotent_sends: bool = True,
    on_restart: str = "fail",
    card_v03_fields: bool = True,
    shutdown_grace: float = 5.0,
    limits: ConnectionLimits = DEFAULT_LIMITS,
    max_json_depth: int = _CORE_DEFAULTS["max_json_depth"],
    max_json_items: int = _CORE_DEFAULTS["max_json_items"],
    max_message_parts: int = _CORE_DEFAULTS["max_message_parts"],
    max_push_field_bytes: int = _CORE_DEFAULTS["max_push_field_bytes"],
    max_task_messages: int | None = _CORE_DEFAULTS["max_task_messages"],
    direct_reply_window: timedelta | float | None = _CORE_DEFAULTS["direct_reply_window"],
    card_signer: Callable[[bytes], Sequence[AgentCardSignature]] | None = None,
    sock: socket.socket | None = None,
    grpc_port: int | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    max_run_time: timedelta | float | None = None,
    run_idle_time: timedelta | float | None = None,
    max_runs: int | None = DEFAULT_MAX_RUNS,
    max_runs_per_owner: int | None = None,
    max_streams: int | None = None,
    cors_origins: Sequence[str] = (),
    forwarded_allow_ips: Sequence[str] = (),
    root_path: str = "",
    log_level: str = "info",
    log_format: str = "text",
) -> None:
    """Serve ``agent`` over A2A until interrupted (Ctrl-C or SIGTERM), on asyncio (Quart on
    uvicorn) or on trio (QuartTrio on our own HTTP/1.1 server, HTTP/2 on hypercorn).

    Unlike :func:`build_engine`, which leaves every optional capability off until asked,
    ``serve`` turns streaming and push notifications on, and bounds the agent runs under way
    at once (``max_runs``, :data:`DEFAULT_MAX_RUNS`; ``None`` for no bound). ``limits``
    bounds what clients may make the server hold (connections, request heads, timeouts);
    since ``serve`` owns its process, it first raises the soft descriptor limit to the hard
    one, which the default connection cap follows.

    Should the engine fail (see :class:`~a2a_adapters.EngineFailed`), the server stops and this
    raises, so the process exits non-zero for its supervisor to restart it.

    ``store`` is a store, or a URL naming one (``"memory"``, ``"sqlite:PATH"``: see
    :func:`~a2a_adapters.stores.open_store`); a store opened from a URL is closed on the way out.
    Without one, tasks are kept in memory.

    Every setting is checked before anything starts: a wrong one raises :class:`TypeError` or
    :class:`ValueError` saying which, a store that cannot be opened raises
    :class:`~a2a_adapters.stores.StoreUnavailable` saying why, and an address that cannot be
    listened on raises :class:`OSError` naming it. ``sock``, a socket listening already
    (inherited from a supervisor such as ``serve --workers``, or systemd), is served on instead
    of binding ``host`` and ``port``.

    ``grpc_port`` serves the gRPC binding (``lf.a2a.v1.A2AService``, the ``grpc`` extra) on that
    port of ``host`` too (0: any free port), and the card lists it. On trio it may be ``port``
    itself: HTTP/1.1 and HTTP/2 (h2c, prior knowledge; hypercorn's) share one port. On
    asyncio it needs a port of its own (uvicorn has no HTTP/2): hypercorn listens there, in the
    same loop.

    ``certfile`` and ``keyfile`` (PEM files: the certificate, its chain after it, and its key)
    make every listener speak TLS: HTTPS, and gRPC over TLS (ALPN ``h2``).

    ``forwarded_allow_ips`` lists the proxies (addresses, networks such as ``10.0.0.0/8``, or
    ``"*"``) whose ``X-Forwarded-For``, ``-Proto`` and ``-Host`` headers are believed; by
    default nobody's. ``root_path`` is where a proxy in front serves it (``"/agents"``): the
    card's URLs say so, and requests are served with or without the prefix.

    ``log_level`` (``"debug"`` to ``"critical"``) is the level of the server's own loggers,
    the access log (``a2a_adapters.access``) included; other libraries log warnings and errors
    only. ``log_format`` is ``"text"`` or ``"json"`` (one object a line).
    """
    _check_loop(loop)
    check_logging(log_level, log_format)
    trusted_networks(forwarded_allow_ips)  # checked now, before anything starts
    root_path = root_path_of(root_path)
    _check_address(host, port)
    tls = _tls(certfile, keyfile)
    if grpc_port is not None:
        _check_address(host, grpc_port)
        _grpc_payloads()  # the extra is there, or MissingExtra says which to install
        if loop == "asyncio" and grpc_port == port and port != 0:
            raise ValueError(
                f"grpc_port {grpc_port} is the HTTP port: on asyncio gRPC needs a port of its "
                "own (uvicorn has no HTTP/2); pick another, or serve on trio (loop='trio')"
            )
    opened = open_store(store) if isinstance(store, str) else None
    given = store if not isinstance(store, str) else None
    try:
        _serve_with(
            agent,
            opened if opened is not None else given,
            card,
            (host, port) if sock is None else sock,
            loop,
            limits,
            _Served((log_level, log_format), tuple(forwarded_allow_ips), root_path),
            auth=auth,
            task_ttl=task_ttl,
            extended_card=extended_card,
            public_url=public_url,
            streaming=streaming,
            push=push,
            push_allow_hosts=push_allow_hosts,
            max_body_bytes=max_body_bytes,
            error_mapping=error_mapping,
            idempotent_sends=idempotent_sends,
            on_restart=on_restart,
            card_v03_fields=card_v03_fields,
            shutdown_grace=shutdown_grace,
            max_json_depth=max_json_depth,
            max_json_items=max_json_items,
            max_message_parts=max_message_parts,
            max_push_field_bytes=max_push_field_bytes,
            max_task_messages=max_task_messages,
            direct_reply_window=direct_reply_window,
            max_run_time=max_run_time,
            run_idle_time=run_idle_time,
            max_runs=max_runs,
            max_runs_per_owner=max_runs_per_owner,
            max_streams=max_streams,
            cors_origins=cors_origins,
            card_signer=card_signer,
            grpc_port=grpc_port,
            tls=tls,
        )
    finally:
        close = getattr(opened, "close", None)
        if close is not None:
            close()


@attrs.frozen
class _Served:
    """How the servers serve, beside the engine: the logs (level, format), the proxies whose
    forwarded headers are believed, and the root path a proxy serves them under."""

    logs: tuple[str, str]
    forwarded_allow_ips: tuple[str, ...] = ()
    root_path: str = ""


def _serve_with(
    agent: Agents,
    store: AsyncStore | None,
    card: AgentCard | None,
    where: tuple[str, int] | socket.socket,
    loop: str,
    limits: ConnectionLimits,
    served: "_Served",
    **settings: Any,
) -> None:
    grpc_port: int | None = settings.pop("grpc_port", None)
    tls: TlsFiles | None = settings.pop("tls", None)
    build_engine(agent, card=card, store=store, **settings)  # every setting checked, first
    if store is not None:
        _probe_store(store, loop)  # a store that does not answer: refused before listening
    raise_fd_limit()  # before the cap is derived from it, and before the line that says we are up
    sock = _listen(*where) if isinstance(where, tuple) else where
    bound_host, bound_port = sock.getsockname()[:2]
    grpc_sock = None
    try:
        asked = where[1] if isinstance(where, tuple) else bound_port
        same_port = loop == "trio" and grpc_port != 0 and grpc_port in (asked, bound_port)
        if grpc_port is not None and not same_port:
            grpc_sock = _listen(bound_host, grpc_port)
            grpc_port = grpc_sock.getsockname()[1]
        elif grpc_port is not None:
            grpc_port = bound_port  # trio: HTTP/2 (h2c) on the HTTP port
        engine = build_engine(agent, card=card, store=store, grpc_port=grpc_port, **settings)
        where_to = (bound_host, bound_port, grpc_port)
        _run(engine, sock, grpc_sock, loop, limits, where_to, tls, served)
    finally:
        sock.close()
        if grpc_sock is not None:
            grpc_sock.close()


def _run(
    engine: Engine,
    sock: socket.socket,
    grpc_sock: socket.socket | None,
    loop: str,
    limits: ConnectionLimits,
    where: tuple[str, int, int | None],
    tls: "TlsFiles | None",
    served: "_Served",
) -> None:
    bound_host, bound_port, grpc_port = where
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    root_path = served.root_path
    configure_logging(*served.logs)
    log.info(
        "A2A server on %s://%s:%d%s/ (card at %s/.well-known/agent-card.json)",
        "https" if tls else "http",
        shown_host,
        bound_port,
        root_path,
        root_path,
    )

    if grpc_port is not None:
        over = "HTTP/2 over TLS" if tls else "HTTP/2"
        log.info("A2A gRPC (lf.a2a.v1.A2AService, %s) on %s:%d", over, shown_host, grpc_port)
    tune_gc()
    if loop == "trio":
        _serve_trio(engine, sock, limits, grpc_sock, tls, served)
    else:
        _serve_asyncio(engine, sock, limits, grpc_sock, tls, served)
    # The servers' own lines about it are held back with their other INFO chatter.
    log.info("A2A server stopped")


#: How long :func:`serve` gives a store that can be probed (Redis, SQLite) to answer before it
#: refuses to start: long enough for a Redis that is starting beside it, short enough that a
#: wrong address is told at once, not served as 503s.
STORE_START_SECONDS = 5.0


def _probe_store(store: AsyncStore, loop: str) -> None:
    """Raise :class:`~a2a_adapters.stores.StoreUnavailable` saying why, if ``store`` does not
    answer its probe within :data:`STORE_START_SECONDS` (tried again every quarter second)."""
    ping: Callable[[], Any] | None = getattr(store, "ping", None)
    if not callable(ping):
        return  # a store with nothing to reach (in memory)

    async def probe() -> None:
        deadline = anyio.current_time() + STORE_START_SECONDS
        while True:
            try:
                with anyio.fail_after(max(deadline - anyio.current_time(), 0.01)):
                    await ping()
                return
            except (StoreUnavailable, TimeoutError) as error:
                cause = str(error) or "no answer"
                if anyio.current_time() + 0.25 >= deadline:
                    raise StoreUnavailable(
                        f"{cause} (tried for {STORE_START_SECONDS:g} s before starting)"
                    ) from None
            await anyio.sleep(0.25)

    anyio.run(probe, backend=loop)


#: The event loops :func:`serve` runs on.
LOOPS = ("asyncio", "trio")


def _check_loop(loop: object) -> None:
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {', '.join(map(repr, LOOPS))}, got {loop!r}")
    if loop == "trio":  # its packages are an extra: without them, MissingExtra names it
        importlib.import_module("a2a_adapters.trio")


def _check_address(host: object, port: object) -> None:
    if not isinstance(host, str) or not host:
        raise TypeError(f"host must be a host name or address, got {host!r}")
    if isinstance(port, bool) or not isinstance(port, int):
        raise TypeError(f"port must be an int, got {port!r}")
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be from 0 to 65535 (0: any free port), got {port}")


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, or an :class:`OSError` that says which address failed."""
    try:
        return bind_socket(host, port)
    except OSError as error:
        shown = f"[{host}]" if ":" in host else host
        reason = error.strerror or str(error)
        raise OSError(error.errno, f"cannot listen on {shown}:{port}: {reason}") from None


def _tls(certfile: str | None, keyfile: str | None) -> "TlsFiles | None":
    """The TLS files, checked now: a certificate and a key that load together, or neither."""
    if certfile is None and keyfile is None:
        return None
    if not certfile or not keyfile:
        raise ValueError("TLS needs both a certificate (certfile) and its key (keyfile)")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as error:
        raise ValueError(f"cannot use {certfile!r} with {keyfile!r} for TLS: {error}") from None
    return TlsFiles(certfile, keyfile)


def _checked_auth(auth: Sequence[Authenticator]) -> Sequence[Authenticator]:
    # One authenticator passed alone would be iterated (or fail to be) deep inside the card.
    # Only types are named: an authenticator's repr, or a string given instead, may be a secret.
    if isinstance(auth, str) or not isinstance(auth, Sequence):
        raise TypeError(
            f"auth must be a list of authenticators, got a {type(auth).__name__} "
            "(a single one goes in a list: auth=[...])"
        )
    for each in auth:
        if not callable(getattr(each, "principal", None)):
            raise TypeError(
                "auth must hold authenticators (BearerTokens, ApiKeys…), "
                f"got a {type(each).__name__}"
            )
    return auth


def _jwks_of(signer: object) -> bytes | None:
    """The JWKS a signer publishes for its signatures' ``jku``, if it has one."""
    jwks = getattr(signer, "jwks_bytes", None)
    return jwks() if callable(jwks) else None


def _seconds(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive, finite number of seconds, got {value!r}")
    return float(value)


def _serve_asyncio(
    engine: Engine,
    sock: socket.socket,
    limits: ConnectionLimits,
    grpc_sock: socket.socket | None = None,
    tls: "TlsFiles | None" = None,
    served: "_Served | None" = None,
) -> None:
    # uvicorn handles SIGINT/SIGTERM once it serves (it stops gracefully, then re-raises the
    # signal). Until then (the loop and the app are still being made), a signal is remembered
    # here and stops the server as soon as it starts, instead of being lost: a SIGTERM that came
    # then used to leave the server running until it was killed. The re-raised signal lands
    # here too, which ends the process normally (exit status 0).
    asked: list[int] = []
    wake: list[Callable[[], object]] = []

    def remember(signum: int, frame: object) -> None:
        asked.append(signum)
        for wake_up in wake:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing to stop
                wake_up()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, remember)

    async def until_asked() -> None:
        loop, stop = asyncio.get_running_loop(), asyncio.Event()
        wake.append(lambda: loop.call_soon_threadsafe(stop.set))
        if not asked:
            await stop.wait()

    with asyncio.Runner(loop_factory=fast_loop_factory()) as runner:
        runner.run(
            serve_app(
                create_app(engine, root_path=served.root_path if served else ""),
                sock,
                limits=limits,
                shutdown_trigger=until_asked,
                grpc_sock=grpc_sock,
                tls=tls,
                forwarded_allow_ips=served.forwarded_allow_ips if served else (),
            )
        )


#: Allocations between young-generation collections (CPython's default is 700).
GC_YOUNG_THRESHOLD = 20_000


def tune_gc() -> None:
    """Make the cyclic garbage collector pause a serving process less often.

    Each request allocates hundreds of short-lived containers, so with CPython's default
    thresholds the collector runs every request or two, and every few hundred requests it walks
    the older generations, stored tasks included: at concurrency 64 those walks set the p99
    latency (measured with the benchmarks: 163 ms, against 39 ms with the collector off). Fewer
    young collections mean far fewer of those walks; freezing what start-up allocated (modules,
    classes, the application) keeps them out of every walk. Called by :func:`serve` and the CLI,
    which own their process; an application embedding the engine keeps its own settings.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


def fast_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (a dependency on CPython off Windows).

    It is a drop-in asyncio loop written on libuv; measured with the benchmarks, it takes about
    a third off the asyncio adapter's cost per request. ``None`` means asyncio's own loop.
    """
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _serve_trio(
    engine: Engine,
    sock: socket.socket,
    limits: ConnectionLimits,
    grpc_sock: socket.socket | None = None,
    tls: "TlsFiles | None" = None,
    served: "_Served | None" = None,
) -> None:
    import trio

    from .trio import create_app, serve_app

    async def until_signalled() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                return

    async def main() -> None:
        await serve_app(
            create_app(engine, root_path=served.root_path if served else ""),
            sock,
            shutdown_trigger=until_signalled,
            limits=limits,
            grpc_sock=grpc_sock,
            tls=tls,
            forwarded_allow_ips=served.forwarded_allow_ips if served else (),
        )

    trio.run(main)
