"""Stores named by URL, as the command line and ``serve(store=...)`` take them."""

import os
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from a2a_adapters._extras import needs
from a2a_core.store import AsyncStore, StoreUnavailable

from ._memory import MemoryStore
from ._redis_url import SCHEMES as _REDIS_SCHEMES
from ._redis_url import redacted, url_problem
from ._sqlite import SqliteStore

__all__ = ["DEFAULT_STORE", "open_store"]

#: Where the command line keeps tasks unless told: a file in the directory it is started in.
DEFAULT_STORE = "sqlite:a2a-tasks.db"

_FORMS = (
    "memory, sqlite:PATH (optionally ?synchronous=normal&busy_timeout=SECONDS), "
    "redis://[:PASSWORD@]HOST:PORT/DB, rediss://[:PASSWORD@]HOST:PORT/DB (TLS) or "
    "unix:///PATH/TO/redis.sock?db=N "
    "(the Redis forms optionally with ?prefix=NAME&lease=SECONDS)"
)
#: What a Redis URL may say beyond where the server is: the store's own settings, and the
#: database and TLS files that coredis reads from the URL itself.
_REDIS_OPTIONS = ("prefix", "lease", "db")
_TLS_OPTIONS = (
    "ssl_ca_certs",
    "ssl_certfile",
    "ssl_keyfile",
    "ssl_cert_reqs",
    "ssl_check_hostname",
)


def open_store(url: str) -> AsyncStore:
    """The store ``url`` names:

    - ``memory``: tasks in this process, gone when it stops;
    - ``sqlite:PATH``: a SQLite file, created if missing (``sqlite:///abs/path`` works too, and
      ``?synchronous=normal`` trades the last commits before a power loss for speed;
      ``?busy_timeout=SECONDS``, 5 unless given, is how long a commit waits for another
      process holding the file's write lock before the store counts as unavailable);
    - ``redis://[:PASSWORD@]HOST:PORT/DB``, ``rediss://…`` (TLS; ``?ssl_ca_certs=FILE`` and
      coredis' other ``ssl_*`` options apply) or ``unix:///PATH/TO/redis.sock?db=N``: a Redis
      that several replicas share, optionally with ``?prefix=NAME`` (the start of every key,
      ``a2a`` unless given) and ``?lease=SECONDS`` (how long a replica's lease holds its runs).

    Raises :class:`ValueError` for a URL of no known form or with an unknown option, and
    :class:`StoreUnavailable` for a SQLite store that cannot be opened (with the reason and
    the path; a Redis store connects on first use, and says so then)."""
    if url == "memory":
        return MemoryStore()
    scheme, colon, rest = url.partition(":")
    if scheme in _REDIS_SCHEMES and rest.startswith("//"):
        return _open_redis(url)
    if scheme != "sqlite" or not colon:
        raise ValueError(f"--store {redacted(url)!r}: expected {_FORMS}")
    where, _, query = rest.partition("?")
    if where.startswith("//"):  # sqlite:///abs/path and sqlite://rel/path, as SQLAlchemy writes
        where = where[2:]
    if not where:
        raise ValueError(f"--store {url!r}: the SQLite file's path is missing")
    options = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(options) - {"synchronous", "busy_timeout"})
    if unknown:
        raise ValueError(
            f"--store {url!r}: unknown option {unknown[0]!r} (known: synchronous, busy_timeout)"
        )
    busy = options.get("busy_timeout", "5")
    try:
        busy_timeout = float(busy)
    except ValueError:
        raise ValueError(
            f"--store {url!r}: busy_timeout={busy!r} is not a number of seconds"
        ) from None
    path = Path(os.path.expanduser(where))
    if not path.parent.is_dir():
        raise StoreUnavailable(f"cannot open the task store {path}: no directory {path.parent}")
    return SqliteStore(
        path, synchronous=options.get("synchronous", "FULL"), busy_timeout=busy_timeout
    )


def _open_redis(url: str) -> AsyncStore:
    parts = urlsplit(url)
    shown = redacted(url)
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    known = _REDIS_OPTIONS + (_TLS_OPTIONS if parts.scheme == "rediss" else ())
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(
            f"--store {shown!r}: unknown option {unknown[0]!r} (known: {', '.join(known)})"
        )
    prefix = options.pop("prefix", "a2a")
    lease = options.pop("lease", "5")
    try:
        seconds = float(lease)
    except ValueError:
        raise ValueError(f"--store {shown!r}: lease={lease!r} is not a number of seconds") from None
    # What is left (the database, TLS files) is coredis' to read from the URL.
    # (Rebuilt by hand: urlunsplit would write unix:///path as unix:/path.)
    where = url.partition("?")[0] + (f"?{urlencode(options)}" if options else "")
    problem = url_problem(where)
    if problem is not None:
        raise ValueError(f"--store {shown!r}: {problem}")
    with needs("redis", f"--store {shown}"):  # coredis is the redis extra's
        from ._redis import RedisStore
    try:
        return RedisStore(where, prefix=prefix, lease=seconds)
    except ValueError as error:
        raise ValueError(f"--store {shown!r}: {error}") from None
