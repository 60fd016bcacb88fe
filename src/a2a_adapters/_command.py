"""The ``a2a-sansio`` command's entry point (and ``python -m a2a_adapters``): the command line
itself, or, without the packages it needs, one line saying which extra to install."""

import sys
from collections.abc import Sequence

from ._extras import MissingExtra, needs

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line (imported here, where the absence of its packages can be said)."""
    try:
        with needs("asyncio", "the a2a-sansio command"):
            from .cli import main as run
    except MissingExtra as missing:
        print(f"a2a-sansio: error: {missing}", file=sys.stderr)
        raise SystemExit(2) from None
    run(argv)
