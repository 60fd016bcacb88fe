"""The in-memory store: the default, for one process.

The data structure is the core's :class:`~a2a_core.store.MemoryTasks` (synchronous, no I/O); this
wraps it in the store contract. None of the methods awaits anything, so a commit is atomic with
respect to the event loop.
"""

from collections.abc import Sequence

from a2a_core.store import MemoryTasks, Reads, Snapshot, SyncStore, Write

__all__ = ["MemoryStore"]


class MemoryStore:
    """Tasks in this process's memory (gone when it stops)."""

    def __init__(self) -> None:
        self._tasks = MemoryTasks()

    @property
    def inline(self) -> SyncStore | None:
        """The store itself, to be called without awaiting: none of its calls waits for
        anything, so the engine lets the core's machine call it inline. ``None`` for a subclass
        that changes ``read`` or ``commit``: what it added is awaited like any store's."""
        cls = type(self)
        if cls.read is not MemoryStore.read or cls.commit is not MemoryStore.commit:
            return None
        return self._tasks

    def __len__(self) -> int:
        return len(self._tasks)

    async def read(self, reads: Reads) -> Snapshot:
        return self._tasks.read(reads)

    async def commit(self, writes: Sequence[Write]) -> bool:
        return self._tasks.commit(writes)

    async def aclose(self) -> None:
        self._tasks.clear()
