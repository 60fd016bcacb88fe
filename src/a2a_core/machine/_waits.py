"""Waits: the requests that wait, and until when.

A blocking send waits for its task to settle past the version it saw; a call still being
decided waits for its decision; a gRPC call may carry a deadline (``grpc-timeout``) that ends
its wait, or its stream, with DEADLINE_EXCEEDED. Nothing here decides an answer: it keeps who
waits on what, so that the machine can answer each exactly once, and forget each when its
client leaves.
"""

from datetime import datetime

import attrs

from a2a_core.decide._effects import AwaitTask
from a2a_core.front._http import Dispatch

__all__ = ["Waiter", "Waits"]


@attrs.define
class Waiter:
    """A blocking send waiting for its task to settle past ``version``."""

    exchange: int
    dispatch: Dispatch
    wait: AwaitTask
    version: int
    #: The task's id as its client knows it (``wait.task_id`` is its store key).
    shown_id: str


class Waits:
    """Who waits: ``by_task`` (store key → waiters), ``deciding`` (exchanges whose request is
    still being decided and whose client is still there) and ``due`` (the deadline a client
    gave its exchange, until it is answered)."""

    def __init__(self) -> None:
        self.by_task: dict[str, list[Waiter]] = {}
        self._by_exchange: dict[int, Waiter] = {}
        self.deciding: set[int] = set()
        self.due: dict[int, datetime] = {}

    def __len__(self) -> int:
        return len(self._by_exchange)

    def listen(self, waiter: Waiter) -> None:
        """``waiter`` waits from now on."""
        self._by_exchange[waiter.exchange] = waiter
        self.by_task.setdefault(waiter.wait.task_id, []).append(waiter)

    def get(self, exchange: int) -> Waiter | None:
        """The waiter of ``exchange``, if it waits."""
        return self._by_exchange.get(exchange)

    def take(self, exchange: int) -> Waiter | None:
        """The waiter of ``exchange``, which waits no more."""
        waiter = self._by_exchange.pop(exchange, None)
        if waiter is not None:
            entries = self.by_task[waiter.wait.task_id]
            kept = [e for e in entries if e is not waiter]
            if kept:
                self.by_task[waiter.wait.task_id] = kept
            else:
                del self.by_task[waiter.wait.task_id]
        return waiter

    def of(self, task_id: str) -> list[Waiter]:
        """Who waits on ``task_id`` (a copy: answering one changes the list)."""
        return list(self.by_task.get(task_id, ()))

    def expired(self, now: datetime) -> list[int]:
        """The exchanges whose client's deadline passed by ``now`` (their deadlines go)."""
        gone = [exchange for exchange, due in self.due.items() if due <= now]
        for exchange in gone:
            del self.due[exchange]
        return gone

    def deadline(self) -> datetime | None:
        """The earliest deadline a client gave."""
        return min(self.due.values()) if self.due else None
