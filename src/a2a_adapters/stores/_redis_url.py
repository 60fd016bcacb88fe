"""A Redis store's URL, checked and shown without coredis: a server opened on another store, with
no ``redis`` extra installed, still tells a mistaken ``--store redis://…`` from a missing extra,
and never prints a password."""

from urllib.parse import parse_qsl, urlsplit, urlunsplit

__all__ = ["SCHEMES", "redacted", "url_problem"]

#: The URL schemes that name a Redis.
SCHEMES = ("redis", "rediss", "unix")


def url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as the address of a Redis (``None``: nothing coredis would
    refuse), so that a mistake is told when the store is made, not at its first call."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        return "expected a redis://, rediss:// or unix:// URL"
    if parts.scheme == "unix":
        if not parts.path:
            return "the Unix socket's path is missing"
    else:
        if not parts.hostname:
            return "the Redis host is missing"
        try:
            parts.port  # noqa: B018  parsing it is the check
        except ValueError:
            return "the port is not a number"
        database = parts.path.strip("/")
        if database and not database.isdigit():
            return f"the database {database!r} is not a number"
    db = dict(parse_qsl(parts.query)).get("db")
    if db is not None and not db.isdigit():
        return f"db={db!r} is not a number"
    return None


def redacted(url: str) -> str:
    """``url`` with its password (if any) shown as ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
