"""The in-memory store: the default, for one process.

The data structure is the core's :class:`~a2a_core.store.MemoryTasks` (synchronous, no I/O); this
wraps it in the store contract. None of the methods awaits anything, so a commit is atomic with
respect to the event loop.
"""

from collections.abc import Sequence

from a2a_core.store import MemoryTasks, Reads, Snapshot, Write

__all__ = ["MemoryStore"]


class MemoryStore:
    """Tasks in this process's memory (gone when it stops)."""

    def __init__(self) -> None:
        self._tasks = MemoryTasks()

    def __len__(self) -> int:
        return len(self._tasks)

    async def read(self, reads: Reads) -> Snapshot:
        return self._tasks.read(reads)

    async def commit(self, writes: Sequence[Write]) -> bool:
        return self._tasks.commit(writes)

    async def aclose(self) -> None:
        self._tasks.clear()
