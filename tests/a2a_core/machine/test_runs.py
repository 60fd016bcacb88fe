"""Runs and capacity, driven alone: which run counts, the limits, the clocks."""

from datetime import UTC, datetime, timedelta

from a2a_core import CoreConfig
from a2a_core._errors import BusyError
from a2a_core.card import AgentCard
from a2a_core.machine._runs import Reserved, Runs

NOW = datetime(2026, 1, 1, tzinfo=UTC)
CARD = AgentCard(name="a", description="d", version="1")


def runs(**limits: object) -> Runs:
    return Runs(CoreConfig(card=CARD, **limits))  # type: ignore[arg-type]


def test_a_run_answered_after_a_later_one_is_not_started_and_a_later_one_replaces() -> None:
    table = runs()
    assert table.begin("t", 2, NOW, "") == 0
    assert table.begin("t", 1, NOW, "") is None  # its commit was answered late: never counts
    assert table.current == {"t": 2}
    assert table.begin("t", 3, NOW, "") == 2  # the run it replaces is stopped by the caller
    assert not table.end("t", 2)  # not the one counting
    assert table.end("t", 3)
    assert table.current == {}


def test_limits_count_runs_under_way_and_reserved_and_per_owner() -> None:
    table = runs(max_runs=2, max_runs_per_owner=1, max_streams=1)
    assert table.limited
    table.begin("t1", 1, NOW, "alice")
    assert isinstance(table.reserve("alice", 1, False, 0), BusyError)  # her one run is going
    held = table.reserve("bob", 1, False, 0)
    assert isinstance(held, Reserved)
    assert held == Reserved("bob", 1, False)
    table.reserved[7] = held
    refused = table.reserve("carol", 1, False, 0)  # one running and one reserved: the limit
    assert isinstance(refused, BusyError)
    assert "limit is 2" in str(refused)
    assert isinstance(table.reserve("carol", 0, True, 1), BusyError)  # a stream is open
    del table.reserved[7]
    table.end("t1", 1)
    assert table.reserve("alice", 1, False, 0) == Reserved("alice", 1, False)


def test_a_run_past_its_idle_time_is_timed_out_and_one_that_spoke_is_looked_at_later() -> None:
    table = runs(run_idle_time=timedelta(seconds=10))
    table.begin("quiet", 1, NOW, "")
    table.begin("talks", 1, NOW, "")
    table.spoke("talks", 1, NOW + timedelta(seconds=8))
    later = NOW + timedelta(seconds=10)
    [(task_id, run, why)] = table.timed_out(later)
    assert (task_id, run, why.idle) == ("quiet", 1, True)
    assert table.timers[0][0] == NOW + timedelta(seconds=18)  # re-armed from its last word
    table.end("talks", 1)
    assert table.timed_out(NOW + timedelta(seconds=30)) == []  # an ended run's timer is stale
