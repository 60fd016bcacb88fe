"""Extensions as service parameters: what a client declares, what the card requires, what is
active for a request.

A client declares the extensions it speaks in the ``A2A-Extensions`` header (v0.3 clients
sent ``X-A2A-Extensions``; gRPC carries the same as ``a2a-extensions`` metadata), URIs
separated by commas, and a message may name more in its ``extensions``. The card declares the
extensions the agent supports, some ``required``: a request that does not declare every
required one is refused (ExtensionSupportRequiredError, -32008) before anything is decided,
since an agent that requires an extension cannot answer a client that would not understand it
(spec §3.3.4). An extension is active for a request when the client declared it and the card
supports it; the answer names the active ones in its own ``A2A-Extensions`` header, and the
agent sees what the client declared (``AgentContext.requested_extensions``).

Pure data work on headers and the card: it is the same for every binding.
"""

from collections.abc import Mapping

from a2a_core._errors import ExtensionSupportRequiredError
from a2a_core.model._card import AgentCard

__all__ = ["HEADER", "active", "declared", "missing_required", "refusal"]

#: The header that carries extensions, both ways (lower case, as the core compares them).
HEADER = "a2a-extensions"
_HEADERS = (HEADER, "x-a2a-extensions")
_NONE: frozenset[str] = frozenset()


def declared(headers: Mapping[str, str]) -> frozenset[str]:
    """The extension URIs a request's headers declare (empty entries dropped). Their number
    and length are bounded by the adapter's limit on a request's head."""
    if HEADER not in headers and _HEADERS[1] not in headers:
        return _NONE  # as most requests declare: no generator and set built for nothing
    found = (uri.strip() for name in _HEADERS for uri in headers.get(name, "").split(","))
    return frozenset(uri for uri in found if uri)


def missing_required(card: AgentCard, declared_uris: frozenset[str]) -> tuple[str, ...]:
    """The card's required extensions the client did not declare, in the card's order."""
    return tuple(
        extension.uri
        for extension in card.capabilities.extensions
        if extension.required and extension.uri and extension.uri not in declared_uris
    )


def refusal(missing: tuple[str, ...]) -> ExtensionSupportRequiredError:
    """The error for a request that lacks the required extensions ``missing``."""
    names = ", ".join(missing)
    return ExtensionSupportRequiredError(
        f"A required extension is not supported by the client: the agent requires {names}; "
        f"declare {'it' if len(missing) == 1 else 'them'} in the A2A-Extensions header",
        metadata={"extensions": names},
    )


def active(card: AgentCard, declared_uris: frozenset[str]) -> tuple[str, ...]:
    """The extensions active for a request: declared by the client and supported by the card
    (in the card's order, so the header an answer carries is stable)."""
    return tuple(
        extension.uri
        for extension in card.capabilities.extensions
        if extension.uri in declared_uris
    )
