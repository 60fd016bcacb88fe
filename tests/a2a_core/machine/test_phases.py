"""The machine's phase tables: data that says which changes are legal, and nothing else."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from a2a_core.machine import _follow, _jobs, _outbox, _recovery, _replicas
from a2a_core.machine._phases import IllegalPhase, Phase, Phases, phase_diagram

TABLES: list[tuple[Phases[Any], Phase]] = [
    (_jobs.JOB_PHASES, _jobs.JobPhase.READING),
    (_follow.FOLLOW_PHASES, _follow.FollowPhase.LIVE),
    (_outbox.OUTBOX_PHASES, _outbox.OutboxPhase.UNREAD),
    (_recovery.RECOVERY_PHASES, _recovery.RecoveryPhase.PENDING),
    (_recovery.SWEEP_PHASES, _recovery.SweepPhase.UNSWEPT),
    (_replicas.CHECK_PHASES, _replicas.CheckPhase.READING),
]
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(("table", "start"), TABLES, ids=lambda v: getattr(v, "part", ""))
def test_every_pair_not_in_a_table_raises_and_every_phase_is_reached(
    table: Phases[Any], start: Phase
) -> None:
    phases = type(start)
    for phase in phases:
        for event in table.events():
            if (phase, event) in table:
                assert isinstance(table[phase, event], phases)
            else:
                with pytest.raises(IllegalPhase, match=event):
                    table[phase, event]
    reached, frontier = {start}, [start]
    while frontier:
        phase = frontier.pop()
        for (source, _), target in table.items():
            if source is phase and target not in reached:
                reached.add(target)
                frontier.append(target)
    unreached = set(phases) - reached
    # The outbox starts UNREAD, or OFF when push notifications are off.
    assert unreached <= {_outbox.OutboxPhase.OFF}


def test_a_diagram_has_an_arrow_per_entry() -> None:
    diagram = phase_diagram(_jobs.JOB_PHASES, _jobs.JobPhase.READING)
    assert diagram.startswith("stateDiagram-v2\n    [*] --> reading\n")
    assert diagram.count("-->") == len(_jobs.JOB_PHASES) + 1
    assert "committing --> reading: lost the race" in diagram


def test_the_outbox_holds_what_is_decided_during_its_first_read_and_only_then() -> None:
    from a2a_core import TaskPushNotificationConfig
    from a2a_core.decide._effects import Push
    from a2a_core.store import LoggedEvent

    def push(seq: int) -> Push:
        config = TaskPushNotificationConfig(task_id="t", id="c", url="https://h.example/a")
        return Push("t", config, LoggedEvent(seq, None))  # type: ignore[arg-type]

    outbox = _outbox.Outbox(push=True)
    assert outbox.to_read
    assert not outbox.settled
    outbox.reading()
    assert not outbox.hand_out(push(1))  # held behind the read
    outbox.failed()
    assert outbox.to_read
    assert not outbox.hand_out(push(2))  # still held: the outbox is not read yet
    outbox.reading()
    assert outbox.read_through() == [push(1), push(2)]
    assert outbox.settled
    assert not outbox.to_read
    assert outbox.hand_out(push(3))
    assert not outbox.hand_out(push(3))  # out already, until reported
    outbox.reclaim()
    outbox.reading()
    assert outbox.hand_out(push(4))  # a later read holds nothing back
    with pytest.raises(IllegalPhase):
        outbox.reclaim()  # not while it is being read


def test_push_off_leaves_no_outbox_to_read() -> None:
    outbox = _outbox.Outbox(push=False)
    assert outbox.settled
    assert not outbox.to_read
    outbox.reclaim()
    assert outbox.phase is _outbox.OutboxPhase.OFF


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


def test_a_replica_check_rung_again_while_reading_is_read_once_more() -> None:
    replicas = _replicas.Replicas(shared=True)
    assert replicas.check("t")
    assert not replicas.check("t")
    assert not replicas.check("t")
    assert replicas.checked("t")  # read once more, not twice
    assert replicas.check("t")
    assert not replicas.checked("t")
    assert replicas.check("t")
    replicas.failed("t")
    assert replicas.recheck == {"t"}
    assert replicas.check("t")  # a failed read is no longer under way
