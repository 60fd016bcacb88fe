"""Serving the Agent Card: what it claims, where it points, and how clients cache it.

The card is the one document a client trusts before it has talked to us, so it must not lie:
the capabilities come from the server's configuration (what the server really does), never from
the user's template, and the interface URLs point where the server is actually reached.

The rendered bytes and their ETag are cached per base URL. The cache is small and bounded
because the base URL comes from the request's Host header, which a client controls.
"""

import hashlib
from collections import OrderedDict
from datetime import UTC
from email.utils import format_datetime
from typing import Any
from urllib.parse import urlsplit

import attrs

from a2a_core._config import CoreConfig
from a2a_core.model._card import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a_core.wire._jcs import canonical_card_bytes
from a2a_core.wire._strict import dumps
from a2a_core.wire._v03 import card_v03_fields, merge_missing
from a2a_core.wire._v1 import V1Codec

__all__ = ["CardRenderer", "RenderedCard", "complete_card"]

#: The protocol version our v1.0 interfaces declare.
PROTOCOL_VERSION = "1.0"
_CACHE_SIZE = 8


def complete_card(config: CoreConfig, card: AgentCard | None = None) -> AgentCard:
    """A card (the public one by default) with what the wire requires filled in and the
    capabilities set from what the server really does."""
    card = card or config.card
    skills = card.skills or (
        AgentSkill(id="default", name=card.name, description=card.description, tags=("default",)),
    )
    capabilities = AgentCapabilities(
        streaming=config.streaming,
        push_notifications=config.push_notifications,
        extensions=card.capabilities.extensions,
        extended_agent_card=config.extended_card is not None,
    )
    return attrs.evolve(card, skills=skills, capabilities=capabilities)


@attrs.frozen
class RenderedCard:
    """A card's JSON bytes and the validators a client may cache it by."""

    body: bytes
    etag: str


class CardRenderer:
    """Renders the public card for a base URL, memoizing the last few."""

    def __init__(self, config: CoreConfig, codec: V1Codec) -> None:
        self._config = config
        self._codec = codec
        self._card = complete_card(config)
        self._extended = (
            complete_card(config, config.extended_card) if config.extended_card else None
        )
        self._cache: OrderedDict[str, RenderedCard] = OrderedDict()
        modified = config.card_modified
        if modified is not None:
            modified = modified.astimezone(UTC) if modified.tzinfo else modified.replace(tzinfo=UTC)
        self.last_modified = format_datetime(modified, usegmt=True) if modified else None

    def card(self, base_url: str, *, extended: bool = False) -> AgentCard:
        """The card as served from ``base_url`` (``public_url`` wins when configured)."""
        card = self._extended if extended and self._extended else self._card
        if card.supported_interfaces:
            return self._signed(card)  # the user pinned the interfaces explicitly
        root = (self._config.public_url or base_url).rstrip("/")
        interfaces = [
            AgentInterface(
                url=root + self._config.rpc_path,
                protocol_binding="JSONRPC",
                protocol_version=PROTOCOL_VERSION,
            )
        ]
        if self._config.rest:
            interfaces.append(
                AgentInterface(
                    url=root, protocol_binding="HTTP+JSON", protocol_version=PROTOCOL_VERSION
                )
            )
        if self._config.grpc_port is not None:
            # gRPC's interface is a bare host:port (v1.0.1 §5.3), reached over HTTP/2.
            interfaces.append(
                AgentInterface(
                    url=f"{_host_of(root)}:{self._config.grpc_port}",
                    protocol_binding="GRPC",
                    protocol_version=PROTOCOL_VERSION,
                )
            )
        if self._config.v03:
            # The same endpoint speaks v0.3 too (told apart by method names).
            interfaces.append(
                AgentInterface(
                    url=root + self._config.rpc_path,
                    protocol_binding="JSONRPC",
                    protocol_version="0.3",
                )
            )
        return self._signed(attrs.evolve(card, supported_interfaces=tuple(interfaces)))

    def _signed(self, card: AgentCard) -> AgentCard:
        """``card`` with the signer's signatures added (after any it came with). Signed as
        served, interfaces included: a signature over a template would not cover the URLs a
        client is told to trust."""
        signer = self._config.card_signer
        if signer is None:
            return card
        canonical = canonical_card_bytes(self._codec.encode(card))
        return attrs.evolve(card, signatures=(*card.signatures, *signer(canonical)))

    def with_v03_fields(self, card: dict[str, Any]) -> dict[str, Any]:
        """A card's JSON with the v0.3 fields added where v1.0 has no such key, so that
        clients of either version read it (as the reference SDK serves it)."""
        if not (self._config.v03 and self._config.card_v03_fields):
            return card
        jsonrpc = next(
            (
                i["url"]
                for i in card.get("supportedInterfaces", [])
                if i.get("protocolBinding") == "JSONRPC"
            ),
            "",
        )
        return merge_missing(card, card_v03_fields(card, jsonrpc))

    def render(self, base_url: str) -> RenderedCard:
        """The card's bytes and ETag for ``base_url``."""
        key = self._config.public_url or base_url
        rendered = self._cache.get(key)
        if rendered is None:
            body = dumps(self.with_v03_fields(self._codec.encode(self.card(base_url))))
            rendered = RenderedCard(body, f'"{hashlib.sha256(body).hexdigest()[:32]}"')
            self._cache[key] = rendered
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return rendered


def _host_of(url: str) -> str:
    """The host of ``url`` as it goes before a port (an IPv6 address in brackets)."""
    host = urlsplit(url).hostname or "localhost"
    return f"[{host}]" if ":" in host else host


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (weak comparison, RFC 9110 §13.1.2)."""
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == etag:
            return True
    return False
