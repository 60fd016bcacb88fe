"""Upkeep, driven alone: the sweep, the recovery of runs and the reclaim of a shared store."""

from datetime import UTC, datetime, timedelta

from a2a_core.machine import _recovery

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_upkeep_sweeps_first_then_by_the_timer_and_never_twice_at_once() -> None:
    upkeep = _recovery.Upkeep(shared=True, reclaim_every=timedelta(seconds=5))
    assert upkeep.sweep_due(NOW)  # the first tick sweeps
    assert not upkeep.sweep_due(NOW)  # one at a time
    upkeep.wake_by(NOW + timedelta(seconds=1))
    assert upkeep.deadline() is None  # the timer waits for the sweep under way
    upkeep.swept()
    assert upkeep.deadline() == NOW + timedelta(seconds=1)
    assert not upkeep.sweep_due(NOW)
    assert upkeep.sweep_due(NOW + timedelta(seconds=1))
    upkeep.swept("failed")
    assert upkeep.recovering()
    assert not upkeep.recovering()
    upkeep.recovery_step("read to its end")
    upkeep.reclaim_later(NOW, outbox_settled=True)
    assert upkeep.reclaim_at == NOW + timedelta(seconds=5)
    assert not upkeep.reclaim_due(NOW)
    assert upkeep.reclaim_due(NOW + timedelta(seconds=5))
    assert upkeep.recovery is _recovery.RecoveryPhase.PENDING
