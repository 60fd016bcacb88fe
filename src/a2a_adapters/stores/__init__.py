"""Task stores: the contract, and the backends that implement it."""

from ._base import TaskStore
from ._memory import MemoryStore

__all__ = ["MemoryStore", "TaskStore"]
