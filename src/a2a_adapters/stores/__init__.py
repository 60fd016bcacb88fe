"""Task stores: the backends that implement :class:`a2a_core.store.AsyncStore`."""

from ._memory import MemoryStore

__all__ = ["MemoryStore"]
