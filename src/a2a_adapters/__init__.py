"""a2a_adapters: run the sans-IO A2A core for real, on asyncio (Quart) and trio (QuartTrio).

``serve(agent)`` is all most users need; ``build_engine`` makes the :class:`Engine` the ``asyncio``
and ``trio`` packages serve (or mount into an existing application), and ``stores`` holds the
task stores. It needs the ``asyncio`` extra (``pip install 'a2a-sansio[asyncio]'``), and
the ``trio`` package the ``trio`` extra; without them, importing says which to install.
"""

from ._extras import MissingExtra, needs

try:
    with needs("asyncio", "a2a_adapters"):
        from ._agents import AgentRegistry, load_object
        from ._auth import ANONYMOUS, ApiKeys, Authenticator, BearerTokens
        from ._engine import Engine
        from ._lifecycle import EngineFailed
        from ._limits import ConnectionLimits
        from ._push import PushSender, Resolver, resolve_host
        from ._serve import build_engine, default_card, serve
        from ._streaming import HttpStream
        from ._telemetry import Telemetry
        from ._tls import TlsFiles
        from .settings import Settings
        from .stores import MemoryStore
except MissingExtra as missing:
    # Without the asyncio extra the package still imports (the command line then says in one
    # line what to install, with no traceback); any of its names says it.
    _missing = missing

    def __getattr__(name: str) -> object:
        raise _missing


__all__ = [
    "ANONYMOUS",
    "AgentRegistry",
    "ApiKeys",
    "Authenticator",
    "BearerTokens",
    "ConnectionLimits",
    "Engine",
    "EngineFailed",
    "HttpStream",
    "MemoryStore",
    "PushSender",
    "Resolver",
    "Settings",
    "Telemetry",
    "TlsFiles",
    "build_engine",
    "default_card",
    "load_object",
    "resolve_host",
    "serve",
]
