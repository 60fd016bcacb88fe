"""Which extra to install, when an adapter's packages are missing.

``pip install a2a-sansio`` brings the core alone (attrs and cattrs); the adapters' packages come
with the extras. Importing an adapter without them would fail with a bare "No module named
'quart'", which says nothing of what to install: :func:`needs` turns that into an error that
names the extra.
"""

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MissingExtra", "needs"]

#: The modules each extra brings that the adapters import (by their top-level names). Only
#: these are reported as a missing extra: any other missing module is a bug, and left as it is.
MODULES = {
    "asyncio": frozenset({"quart", "werkzeug", "uvicorn", "httptools", "anyio", "httpx"}),
    "trio": frozenset({"trio", "hypercorn", "quart_trio", "httptools"}),
    "redis": frozenset({"coredis"}),
    "signing": frozenset({"jwt", "cryptography"}),
    "oidc": frozenset({"jwt", "cryptography"}),
    "grpc": frozenset({"google", "hypercorn"}),
    # Optional even with the extra's name: without it the adapters emit no telemetry, and say
    # nothing (a2a_adapters._telemetry imports it only if it can).
    "otel": frozenset({"opentelemetry"}),
}


class MissingExtra(ImportError):
    """An adapter was imported without the extra that brings its packages."""


@contextmanager
def needs(extra: str, what: str) -> Iterator[None]:
    """Imports in this block that fail for want of ``extra``'s packages raise
    :class:`MissingExtra`, saying that ``what`` needs it and how to install it."""
    try:
        yield
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in MODULES[extra]:
            raise
        raise MissingExtra(
            f"{what} needs the {extra} extra: pip install 'a2a-sansio[{extra}]' "
            f"(no module named {missing!r})",
            name=error.name,
        ) from None
