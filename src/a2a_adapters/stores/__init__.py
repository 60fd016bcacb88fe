"""Task stores: the backends that implement :class:`a2a_core.store.AsyncStore`."""

from typing import TYPE_CHECKING, Any

from ._memory import MemoryStore
from ._open import DEFAULT_STORE, open_store
from ._sqlite import SCHEMA_VERSION, SqliteStore, StoreUnavailable

if TYPE_CHECKING:
    from ._redis import RedisStore


def __getattr__(name: str) -> Any:
    # The Redis store needs coredis, the redis extra's: imported when asked for, so that a
    # server on memory or SQLite runs without it.
    if name == "RedisStore":
        from a2a_adapters._extras import needs

        with needs("redis", "a2a_adapters.stores.RedisStore"):
            from ._redis import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_STORE",
    "SCHEMA_VERSION",
    "MemoryStore",
    "RedisStore",
    "SqliteStore",
    "StoreUnavailable",
    "open_store",
]
