"""``serve(agent)``: the one-line way to run an agent as an A2A server."""

import asyncio
import logging
import signal
from collections.abc import Mapping
from datetime import UTC, datetime

from a2a_core import Agent, AgentCard, Core, CoreConfig

from ._agents import AgentRegistry
from .quart import Engine, bind_socket, create_app, serve_app
from .stores import MemoryStore, TaskStore

__all__ = ["build_engine", "default_card", "serve"]

log = logging.getLogger("a2a_adapters")


def default_card(agent: Agent | Mapping[str, Agent], name: str | None = None) -> AgentCard:
    """A card for an agent that came without one: named after it, described by its docstring."""
    target = agent if not isinstance(agent, Mapping) else next(iter(agent.values()))
    title = name or getattr(target, "__name__", None) or "agent"
    description = (getattr(target, "__doc__", None) or f"The {title} agent.").strip()
    return AgentCard(name=title, description=description.splitlines()[0], version="1.0.0")


def build_engine(
    agent: Agent | Mapping[str, Agent],
    *,
    card: AgentCard | None = None,
    store: TaskStore | None = None,
    public_url: str | None = None,
    max_body_bytes: int = 8 * 1024 * 1024,
) -> Engine:
    """The asyncio engine for ``agent`` (or a mapping of skill id to agent)."""
    config = CoreConfig(
        card=card or default_card(agent),
        public_url=public_url,
        max_body_bytes=max_body_bytes,
        card_modified=datetime.now(UTC).replace(microsecond=0),
    )
    return Engine(Core(config), store or MemoryStore(), AgentRegistry(agent))


def serve(
    agent: Agent | Mapping[str, Agent],
    *,
    card: AgentCard | None = None,
    host: str = "127.0.0.1",
    port: int = 9999,
    store: TaskStore | None = None,
    public_url: str | None = None,
) -> None:
    """Serve ``agent`` over A2A until interrupted (Ctrl-C or SIGTERM)."""
    engine = build_engine(agent, card=card, store=store, public_url=public_url)
    sock = bind_socket(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    log.warning(
        "A2A server on http://%s:%d/ (card at /.well-known/agent-card.json)", shown_host, bound_port
    )

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await serve_app(create_app(engine), sock, shutdown_trigger=stop.wait)

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(main())
    finally:
        sock.close()
