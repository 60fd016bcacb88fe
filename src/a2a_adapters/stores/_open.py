"""Stores named by URL, as the command line and ``serve(store=...)`` take them."""

import os
from pathlib import Path
from urllib.parse import parse_qsl

from a2a_core.store import AsyncStore

from ._memory import MemoryStore
from ._sqlite import SqliteStore, StoreUnavailable

__all__ = ["DEFAULT_STORE", "open_store"]

#: Where the command line keeps tasks unless told: a file in the directory it is started in.
DEFAULT_STORE = "sqlite:a2a-tasks.db"

_FORMS = "memory, or sqlite:PATH (optionally ?synchronous=normal)"


def open_store(url: str) -> AsyncStore:
    """The store ``url`` names: ``memory`` (tasks in this process, gone when it stops), or
    ``sqlite:PATH`` (a SQLite file, created if missing; ``sqlite:///abs/path`` works too, and
    ``?synchronous=normal`` trades the last commits before a power loss for speed).

    Raises :class:`ValueError` for a URL of no known form and :class:`StoreUnavailable` for a
    store that cannot be opened (with the reason and the path)."""
    if url == "memory":
        return MemoryStore()
    scheme, colon, rest = url.partition(":")
    if scheme != "sqlite" or not colon:
        raise ValueError(f"--store {url!r}: expected {_FORMS}")
    where, _, query = rest.partition("?")
    if where.startswith("//"):  # sqlite:///abs/path and sqlite://rel/path, as SQLAlchemy writes
        where = where[2:]
    if not where:
        raise ValueError(f"--store {url!r}: the SQLite file's path is missing")
    options = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(options) - {"synchronous"})
    if unknown:
        raise ValueError(f"--store {url!r}: unknown option {unknown[0]!r} (known: synchronous)")
    path = Path(os.path.expanduser(where))
    if not path.parent.is_dir():
        raise StoreUnavailable(f"cannot open the task store {path}: no directory {path.parent}")
    return SqliteStore(path, synchronous=options.get("synchronous", "FULL"))
