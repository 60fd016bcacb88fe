"""Task stores: the backends that implement :class:`a2a_core.store.AsyncStore`."""

from ._memory import MemoryStore
from ._sqlite import SCHEMA_VERSION, SqliteStore, StoreUnavailable

__all__ = ["SCHEMA_VERSION", "MemoryStore", "SqliteStore", "StoreUnavailable"]
