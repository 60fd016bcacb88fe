"""Task stores: the backends that implement :class:`a2a_core.store.AsyncStore`."""

from ._memory import MemoryStore
from ._open import DEFAULT_STORE, open_store
from ._redis import RedisStore
from ._sqlite import SCHEMA_VERSION, SqliteStore, StoreUnavailable

__all__ = [
    "DEFAULT_STORE",
    "SCHEMA_VERSION",
    "MemoryStore",
    "RedisStore",
    "SqliteStore",
    "StoreUnavailable",
    "open_store",
]
