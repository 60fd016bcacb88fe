"""Serving behind a reverse proxy: whose ``X-Forwarded-*`` headers are believed.

A proxy in front of the server (nginx, a cloud load balancer) ends the client's connection and
opens its own, so the server sees the proxy's address, plain HTTP where the client spoke HTTPS,
and perhaps its own host name. The proxy says what the client's were in ``X-Forwarded-For``,
``X-Forwarded-Proto`` and ``X-Forwarded-Host``; but anyone can send those headers, so they are
believed only from the addresses configured (``forwarded_allow_ips``), and from nobody by
default. What they change is what the card's URLs say (scheme and host), and the client
address the access log shows.

Both adapters use this one middleware (uvicorn's own proxy-header handling, on by default for
127.0.0.1, is turned off, so the two adapters behave alike).
"""

import ipaddress
from collections.abc import Iterable
from typing import Any

from ._asgi import ASGIApp, Scope

__all__ = ["TrustedProxies", "trusted_networks"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Believe every peer (only for a server no client can reach but through the proxy).
ANY = "*"


def trusted_networks(entries: Iterable[str]) -> tuple[Network, ...] | None:
    """The networks ``entries`` name (addresses, ``10.0.0.0/8``-style networks), or ``None``
    for ``*`` (every peer). Raises :class:`ValueError` naming an entry that is neither."""
    if isinstance(entries, str):
        raise TypeError(f"forwarded_allow_ips must be a list of addresses, got {entries!r}")
    networks: list[Network] = []
    for entry in entries:
        if entry.strip() == ANY:
            return None
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"forwarded_allow_ips: {entry!r} is not an IP address or network (or *)"
            ) from None
    return tuple(networks)


def _trusted(address: str, networks: tuple[Network, ...] | None) -> bool:
    if networks is None:
        return True
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False  # not an IP peer (a Unix socket): nothing to match
    return any(ip in network for network in networks)


def _last(value: str) -> str:
    """The last of a header's comma-separated values: what the nearest proxy said."""
    return value.rsplit(",", 1)[-1].strip()


class TrustedProxies:
    """ASGI middleware: the client's scheme, address and host from the ``X-Forwarded-*``
    headers of a peer in ``networks`` (``None``: any peer); other peers' are ignored."""

    def __init__(self, app: ASGIApp, networks: tuple[Network, ...] | None) -> None:
        self._app = app
        self._networks = networks

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        client = scope.get("client")
        if scope["type"] == "http" and client and _trusted(client[0], self._networks):
            scope = self._forwarded(scope)
        await self._app(scope, receive, send)

    def _forwarded(self, scope: Scope) -> Scope:
        found: dict[bytes, str] = {}
        for name, value in scope["headers"]:
            if name in (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host"):
                joined = found.get(name)
                text = value.decode("latin-1")
                found[name] = f"{joined}, {text}" if joined else text
        if not found:
            return scope
        scope = dict(scope)
        proto = _last(found.get(b"x-forwarded-proto", "")).lower()
        if proto in ("http", "https"):
            scope["scheme"] = proto
        hops = [hop.strip() for hop in found.get(b"x-forwarded-for", "").split(",") if hop.strip()]
        if hops:
            # From the nearest hop back: the first one not a trusted proxy is the client.
            client = next(
                (hop for hop in reversed(hops) if not _trusted(hop, self._networks)), hops[0]
            )
            scope["client"] = (client, 0)
        host = _last(found.get(b"x-forwarded-host", ""))
        if host:
            headers = [(n, v) for n, v in scope["headers"] if n != b"host"]
            scope["headers"] = [(b"host", host.encode("latin-1")), *headers]
        return scope
