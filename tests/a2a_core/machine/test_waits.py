"""Waits, driven alone: who waits on what, and whose deadline passed."""

from datetime import UTC, datetime, timedelta
from typing import Any

from a2a_core.decide._effects import AwaitTask
from a2a_core.machine._waits import Waiter, Waits

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def waiter(exchange: int, task_id: str) -> Waiter:
    dispatch: Any = None  # never looked at here
    return Waiter(exchange, dispatch, AwaitTask(task_id), 1, task_id)


def test_a_waiter_taken_leaves_its_task_and_the_last_one_leaves_no_entry() -> None:
    waits = Waits()
    first, second = waiter(1, "t"), waiter(2, "t")
    waits.listen(first)
    waits.listen(second)
    assert len(waits) == 2
    assert waits.of("t") == [first, second]
    assert waits.take(1) is first
    assert waits.take(1) is None
    assert waits.by_task == {"t": [second]}
    waits.take(2)
    assert waits.by_task == {}
    assert waits.get(2) is None


def test_only_passed_deadlines_expire_and_each_once() -> None:
    waits = Waits()
    waits.due[1] = NOW
    waits.due[2] = NOW + timedelta(seconds=5)
    assert waits.deadline() == NOW
    assert waits.expired(NOW) == [1]
    assert waits.expired(NOW) == []
    assert waits.deadline() == NOW + timedelta(seconds=5)
