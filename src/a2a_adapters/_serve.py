"""``serve(agent)``: the one-line way to run an agent as an A2A server."""

import difflib
import gc
import importlib
import logging
import socket
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, cast, runtime_checkable

import anyio
import attrs

from a2a_core import Agent, Core, CoreConfig
from a2a_core.card import AgentCard, AgentSkill, SecurityRequirement
from a2a_core.grpc import PayloadCodec
from a2a_core.store import AsyncStore, ClosableStore, PingableStore

from ._agents import AgentRegistry
from ._asgi import root_path_of
from ._auth import Authenticator
from ._engine import Engine
from ._limits import ConnectionLimits, raise_fd_limit
from ._logs import configure_logging
from ._push import PushSender
from ._resolve import Namer, authenticators, card_signer, cards, tls_files
from ._setting import option_of
from ._sockets import bind_socket
from ._telemetry import Telemetry
from ._tls import TlsFiles
from .asyncio import run_server as run_on_asyncio  # the default loop's, loaded with the package
from .settings import ENGINE_BASELINE, Settings, check_together
from .stores import StoreUnavailable, open_store

__all__ = ["build_engine", "default_card", "serve"]

log = logging.getLogger("a2a_adapters")

Agents = Agent | Mapping[str, Agent]


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


def _card_for(
    card: AgentCard,
    agent: Agents,
    auth: Sequence[Authenticator],
    spec: object = None,
    said: str = "card",
) -> AgentCard:
    """``card`` checked against the agents it fronts, with the security the server enforces
    (a card named by ``spec``, a string, is said as ``said`` and ``spec`` when it does not fit)."""
    if isinstance(agent, Mapping):
        if card.skills:
            try:
                _check_skills(card, agent)
            except ValueError as error:
                if isinstance(spec, str):
                    raise ValueError(f"{said} {spec}: {error}") from None
                raise
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


def _unknown(given: Mapping[str, object], where: str) -> None:
    """Refuse a keyword that is no setting, naming the nearest one."""
    known = attrs.fields_dict(Settings)
    for key in given:
        if key not in known:
            near = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise TypeError(f"{key!r} is not a setting of {where}{hint}")


def _settings(
    settings: Settings | None, changes: Mapping[str, Any], where: str, baseline: Mapping[str, Any]
) -> Settings:
    _unknown(changes, where)
    if settings is not None and not isinstance(settings, Settings):
        raise TypeError(f"{where}'s settings must be a Settings, got {type(settings).__name__}")
    base = settings if settings is not None else Settings(**baseline)
    return attrs.evolve(base, **changes) if changes else base


def _field(name: str) -> str:
    return name


def build_engine(
    agent: Agents,
    settings: Settings | None = None,
    *,
    telemetry: Telemetry | None = None,
    **changes: Any,
) -> Engine:
    """The asyncio engine for ``agent``, or for a mapping of skill id to agent.

    ``settings`` (a :class:`~a2a_adapters.settings.Settings`), with any of its fields changed by
    keyword (``build_engine(agent, streaming=True)``), say how it serves; without them it starts
    from :data:`~a2a_adapters.settings.ENGINE_BASELINE`: streaming and push notifications off,
    tasks in memory, no bound on runs. The settings about listening, processes and logs
    (``host``, ``port``, ``loop``…) are :func:`serve`'s: given here, they are refused.
    A ``store`` given as a URL is opened here and closed when the engine stops.

    ``telemetry`` is where traces and metrics go (manual, "Telemetry"): by default the global
    OpenTelemetry providers, when the ``otel`` extra is installed and an application set them.
    """
    for key in changes:
        scope = (
            option_of(attrs.fields_dict(Settings)[key]).scope
            if key in attrs.fields_dict(Settings)
            else "engine"
        )
        if scope != "engine":
            raise TypeError(
                f"{key} is a setting of serve(), which listens: build_engine makes an engine, "
                "which the application serves (serve_app, create_app)"
            )
    chosen = _settings(settings, changes, "build_engine()", ENGINE_BASELINE)
    return _build(agent, chosen, _field, telemetry=telemetry)


def _build(
    agent: Agents,
    settings: Settings,
    name: Namer,
    *,
    telemetry: Telemetry | None = None,
    grpc_port: int | None = None,
) -> Engine:
    """The engine ``settings`` describe; ``grpc_port``, when given, is the port gRPC listens on
    (``serve`` binds it first, so that ``0`` is a port the card can name)."""
    registry = AgentRegistry(agent)  # first: it checks the agents that everything else reads
    check_together(settings, name)
    auth = authenticators(settings, name)
    card, extended_card = cards(settings, name)
    signer = card_signer(settings, name)
    served_grpc = grpc_port if grpc_port is not None else settings.grpc_port
    config = CoreConfig(
        card=_card_for(card or default_card(agent), agent, auth, settings.card, name("card")),
        extended_card=_card_for(
            extended_card, agent, auth, settings.extended_card, name("extended_card")
        )
        if extended_card
        else None,
        public_url=settings.public_url,
        max_body_bytes=settings.max_body_bytes,
        card_modified=datetime.now(UTC).replace(microsecond=0),
        streaming=settings.streaming,
        rest=settings.rest,
        error_mapping=settings.error_mapping,
        idempotent_sends=settings.idempotent_sends,
        on_restart=settings.on_restart,
        card_v03_fields=settings.card_v03_fields,
        push_notifications=settings.push is not False,
        push_allow_hosts=settings.push_allow_hosts,
        task_ttl=settings.task_ttl,
        default_skill="" if registry.default is not None else next(iter(registry.by_skill)),
        max_json_depth=settings.max_json_depth,
        max_json_items=settings.max_json_items,
        max_message_parts=settings.max_message_parts,
        max_push_field_bytes=settings.max_push_field_bytes,
        max_task_messages=settings.max_task_messages,
        direct_reply_window=settings.direct_reply_window,
        max_run_time=settings.max_run_time,
        run_idle_time=settings.run_idle_time,
        max_runs=settings.max_runs,
        max_runs_per_owner=settings.max_runs_per_owner,
        max_streams=settings.max_streams,
        cors_origins=settings.cors_origins,
        card_signer=signer,
        card_jwks=_jwks_of(signer),
        grpc_port=served_grpc,
    )
    push = settings.push
    sender = push if isinstance(push, PushSender) else PushSender() if push else None
    given = settings.store
    # A store opened here is closed when the engine stops; but for memory, whose tasks stay
    # readable.
    store = open_store(given) if isinstance(given, str) else given
    owned = isinstance(given, str) and given != "memory"
    return Engine(
        Core(config, grpc=_grpc_payloads() if served_grpc is not None else None),
        store,
        registry,
        auth=auth,
        push=sender,
        keepalive_seconds=settings.keepalive_seconds,
        shutdown_grace=settings.shutdown_grace,
        telemetry=telemetry,
        owns_store=owned,
    )


def _grpc_payloads() -> PayloadCodec:
    from .grpc import ProtoPayloads  # the grpc extra: without it, MissingExtra names it

    return ProtoPayloads()


def serve(
    agent: Agents,
    settings: Settings | None = None,
    *,
    sock: socket.socket | None = None,
    telemetry: Telemetry | None = None,
    **changes: Any,
) -> None:
    """Serve ``agent`` over A2A until interrupted (Ctrl-C or SIGTERM), on asyncio (Quart on
    uvicorn) or on trio (QuartTrio on our own HTTP/1.1 server, HTTP/2 on hypercorn).

    ``settings`` (a :class:`~a2a_adapters.settings.Settings`), with any of its fields changed by
    keyword (``serve(agent, port=8080, max_runs=100)``), say how: every setting of the command
    line, by the same name, with the same default (the manual's settings reference lists them).
    Unlike :func:`build_engine`, ``serve`` turns streaming and push notifications on, keeps
    tasks in SQLite (``sqlite:a2a-tasks.db``: a file in the current directory) and bounds the
    agent runs under way at once. Since it owns its process, it first raises the soft
    descriptor limit to the hard one, which the default connection cap follows.

    Every setting is checked before anything starts: a wrong one raises :class:`TypeError` or
    :class:`ValueError` saying which, a store that cannot be opened or does not answer raises
    :class:`~a2a_adapters.stores.StoreUnavailable` saying why, and an address that cannot be
    listened on raises :class:`OSError` naming it. ``sock``, a socket listening already
    (inherited from a supervisor such as ``serve --workers``, or systemd), is served on instead
    of binding ``host`` and ``port``. ``telemetry`` is as for :func:`build_engine`.

    Should the engine fail (see :class:`~a2a_adapters.EngineFailed`), the server stops and this
    raises, so the process exits non-zero for its supervisor to restart it.
    """
    chosen = _settings(settings, changes, "serve()", {})
    if chosen.workers != 1:
        raise ValueError(
            f"workers={chosen.workers}: serve() serves from one process; run "
            "'a2a-sansio serve --workers N' for several"
        )
    serve_with(agent, chosen, _field, sock=sock, telemetry=telemetry)


def serve_with(
    agent: Agents,
    settings: Settings,
    name: Namer,
    *,
    sock: socket.socket | None = None,
    telemetry: Telemetry | None = None,
) -> None:
    """:func:`serve`, saying each setting as ``name`` calls it (the command line's way)."""
    preflight(agent, settings, name)
    tls = tls_files(settings, name)
    configure = (settings.log_level, settings.log_format)
    store = settings.store
    opened = open_store(store) if isinstance(store, str) else None
    try:
        chosen = attrs.evolve(settings, store=opened) if opened is not None else settings
        _serve_with(
            agent,
            chosen,
            name,
            (settings.host, settings.port) if sock is None else sock,
            _Served(
                configure, tuple(settings.forwarded_allow_ips), root_path_of(settings.root_path)
            ),
            tls,
            telemetry,
        )
    finally:
        if isinstance(opened, ClosableStore):
            opened.close()


def preflight(agent: Agents, settings: Settings, name: Namer) -> None:
    """Every check :func:`serve` makes before it opens the store or listens: the loop, the
    address, the TLS files, the extras asked for, and the engine the settings describe (the
    agents, the cards, authentication, signing, the core's settings), built on a store in
    memory."""
    _check_loop(settings.loop)
    _check_address(settings.host, settings.port)
    tls_files(settings, name)
    if settings.grpc_port is not None:
        _grpc_payloads()  # the extra is there, or MissingExtra says which to install
    # Port 0 is whichever port is free: the card names the one bound; any will do here.
    grpc_port = settings.grpc_port or (None if settings.grpc_port is None else 1)
    _build(agent, attrs.evolve(settings, store="memory"), name, grpc_port=grpc_port)


@attrs.frozen
class _Served:
    """How the servers serve, beside the engine: the logs (level, format), the proxies whose
    forwarded headers are believed, and the root path a proxy serves them under."""

    logs: tuple[str, str]
    forwarded_allow_ips: tuple[str, ...] = ()
    root_path: str = ""


def _serve_with(
    agent: Agents,
    settings: Settings,
    name: Namer,
    where: tuple[str, int] | socket.socket,
    served: _Served,
    tls: TlsFiles | None,
    telemetry: Telemetry | None,
) -> None:
    grpc_port = settings.grpc_port
    _probe_store(
        cast(AsyncStore, settings.store), settings.loop
    )  # serve_with opened it  # refused before listening if it does not answer
    raise_fd_limit()  # before the cap is derived from it, and before the line that says we are up
    sock = _listen(*where) if isinstance(where, tuple) else where
    bound_host, bound_port = sock.getsockname()[:2]
    grpc_sock = None
    try:
        asked = where[1] if isinstance(where, tuple) else bound_port
        same_port = settings.loop == "trio" and grpc_port != 0 and grpc_port in (asked, bound_port)
        if grpc_port is not None and not same_port:
            grpc_sock = _listen(bound_host, grpc_port)
            grpc_port = grpc_sock.getsockname()[1]
        elif grpc_port is not None:
            grpc_port = bound_port  # trio: HTTP/2 (h2c) on the HTTP port
        engine = _build(agent, settings, name, telemetry=telemetry, grpc_port=grpc_port)
        where_to = (bound_host, bound_port, grpc_port)
        _run(engine, sock, grpc_sock, settings.loop, settings.limits(), where_to, tls, served)
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
    run_server = run_on_asyncio
    if loop == "trio":
        from .trio import run_server as run_on_trio

        run_server = run_on_trio
    run_server(
        engine,
        sock,
        limits=limits,
        grpc_sock=grpc_sock,
        tls=tls,
        root_path=root_path,
        forwarded_allow_ips=served.forwarded_allow_ips,
    )
    # The servers' own lines about it are held back with their other INFO chatter.
    log.info("A2A server stopped")


#: How long :func:`serve` gives a store that can be probed (Redis, SQLite) to answer before it
#: refuses to start: long enough for a Redis that is starting beside it, short enough that a
#: wrong address is told at once, not served as 503s.
STORE_START_SECONDS = 5.0


def _probe_store(store: AsyncStore, loop: str) -> None:
    """Raise :class:`~a2a_adapters.stores.StoreUnavailable` saying why, if ``store`` does not
    answer its probe within :data:`STORE_START_SECONDS` (tried again every quarter second),
    and :class:`~a2a_adapters.stores.StoreMisconfigured` at once if it refuses it."""
    if not isinstance(store, PingableStore):
        return  # a store with nothing to reach (in memory)
    ping = store.ping

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


@runtime_checkable
class _PublishesKeys(Protocol):
    """A card signer that publishes the keys its signatures' ``jku`` names (``CardSigner``); a
    signer given as a bare function publishes none."""

    def jwks_bytes(self) -> bytes: ...


def _jwks_of(signer: object) -> bytes | None:
    """The JWKS a signer publishes for its signatures' ``jku``, if it has one."""
    return signer.jwks_bytes() if isinstance(signer, _PublishesKeys) else None


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
