"""The store contract every backend implements.

A store does three things: return the records a decision needs (:meth:`TaskStore.read`), apply a
decision's writes atomically and only if every expected version still holds
(:meth:`TaskStore.commit`), and close. It decides nothing: filtering, paging and ownership rules
come from the core's :class:`~a2a_core.Reads`, so every backend behaves the same, which the
conformance suite in ``tests/a2a_adapters/stores`` checks for each of them.
"""

from collections.abc import Sequence
from typing import Protocol

from a2a_core import Reads, Snapshot, Write

__all__ = ["TaskStore"]


class TaskStore(Protocol):
    """An async task store with compare-and-set writes."""

    async def read(self, reads: Reads) -> Snapshot:
        """The records ``reads`` names: a task by id, and/or a page of a listing."""
        ...

    async def commit(self, writes: Sequence[Write]) -> bool:
        """Apply all ``writes`` or none: ``False`` if any expected version no longer holds."""
        ...

    async def aclose(self) -> None:
        """Release the store's resources."""
        ...
