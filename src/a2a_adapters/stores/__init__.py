"""Task stores: the backends that implement :class:`a2a_core.store.AsyncStore`.

:class:`StoreUnavailable` and :class:`StoreMisconfigured` are the storage contract's errors
(:mod:`a2a_core.store`), which every store raises."""

from typing import TYPE_CHECKING, Any

from a2a_core.store import StoreMisconfigured, StoreUnavailable

from ._memory import MemoryStore
from ._open import DEFAULT_STORE, open_store
from ._sqlite import SCHEMA_VERSION, SqliteStore

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
    "StoreMisconfigured",
    "StoreUnavailable",
    "open_store",
]
