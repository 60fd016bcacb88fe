"""ASGI as both loops speak it: the types every middleware and server of the adapters is written
against, and the pieces of ASGI more than one of them needs.

Everything that stands between a socket and the engine talks ASGI: uvicorn and hypercorn, the
trio HTTP/1.1 server (``a2a_adapters.trio._http1``), and the middleware in front of the
application (the access log, CORS, trusted proxies, A2A's short way, the limits on HTTP/2). So
the vocabulary is defined here once, on ASGI alone (no loop, no server, no other module of the
adapters, so that any of them may import it), and each module imports it from here.
"""

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quart import Quart

__all__ = [
    "WHOLE",
    "ASGIApp",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "asgi_entry",
    "encoded",
    "root_path_of",
]

#: A connection's (or the lifespan's) ASGI scope.
Scope = MutableMapping[str, Any]
#: An ASGI event, received or sent.
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: An ASGI 3 application. Its arguments are left open: Quart's own ``asgi_app`` is typed with
#: stricter (TypedDict) scopes and events than the middleware here needs.
ASGIApp = Callable[..., Awaitable[None]]

#: A key of an ``http.response.start`` message that says its whole body follows at once, in one
#: ``http.response.body``: a server may then write the head and the body together (the trio
#: server does: one write where hypercorn makes two). Servers that do not know it ignore it.
WHOLE = "a2a.whole"


def asgi_entry(app: "Quart") -> ASGIApp:
    """What the HTTP server calls for ``app`` (Quart's or QuartTrio's), on either loop: its ASGI
    application (``create_app``'s chain: the access log, CORS, A2A's short way, then Quart's),
    without ``Quart.__call__``, a coroutine around it that every wait of every request would
    pass through. It is ASGI 3 (say so to a server that would guess from ``__call__``)."""
    return app.asgi_app


def root_path_of(value: str) -> str:
    """``value`` as a root path: "" (none), or ``/`` and segments, with no final ``/``.
    Raises :class:`ValueError` for anything else."""
    if not isinstance(value, str):
        raise TypeError(f"root_path must be a path such as /agents, got {value!r}")
    if not value or value == "/":
        return ""
    if not value.startswith("/") or any(c in value for c in "?#% \t"):
        raise ValueError(f"root_path must be a path such as /agents, got {value!r}")
    return value.rstrip("/")


def encoded(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """Header fields as ASGI carries them (bytes; latin-1, as HTTP/1.1 defines them)."""
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
