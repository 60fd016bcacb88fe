"""The machine's phase tables: data that says which changes are legal, and nothing else."""

from datetime import UTC, datetime
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
