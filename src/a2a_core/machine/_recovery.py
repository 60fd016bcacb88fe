"""Upkeep: the expiry sweep, the recovery of what a restart left, and the timer.

The first tick of a server sweeps what expired while no server ran and settles the tasks whose
runs the process before it left counting (no run survives its process). With a shared store
the latter is done again every ``reclaim_every``, for the runs of replicas that died (the store
tells which, by their leases). Each is a small machine of its own, so that a sweep or a
recovery read that fails is simply tried again at a later tick, and never runs twice at once.
"""

from datetime import datetime, timedelta

from ._phases import Phase, Phases

__all__ = ["RECOVERY_PHASES", "SWEEP_PHASES", "RecoveryPhase", "SweepPhase", "Upkeep"]


class RecoveryPhase(Phase):
    """How far the runs a restart (or a dead replica) left have been settled."""

    #: To be read (at the next tick).
    PENDING = "pending"
    #: Being read, a batch at a time.
    READING = "reading"
    #: Settled.
    DONE = "done"


class SweepPhase(Phase):
    """The expiry sweep."""

    #: Never swept: the first tick sweeps what expired while no server ran.
    UNSWEPT = "unswept"
    #: Not sweeping; the timer says when next.
    IDLE = "idle"
    #: A sweep is being decided and committed.
    SWEEPING = "sweeping"


_R = RecoveryPhase
RECOVERY_PHASES: Phases[RecoveryPhase] = Phases(
    "the recovery of runs",
    {
        (_R.PENDING, "read"): _R.READING,
        (_R.READING, "read"): _R.READING,
        (_R.READING, "read to its end"): _R.DONE,
        (_R.READING, "failed"): _R.PENDING,
        (_R.DONE, "reclaim"): _R.PENDING,
    },
)
_S = SweepPhase
SWEEP_PHASES: Phases[SweepPhase] = Phases(
    "the expiry sweep",
    {
        (_S.UNSWEPT, "sweep"): _S.SWEEPING,
        (_S.IDLE, "sweep"): _S.SWEEPING,
        (_S.SWEEPING, "swept"): _S.IDLE,
        (_S.SWEEPING, "failed"): _S.IDLE,
    },
)


class Upkeep:
    """The sweep's and the recovery's phases, when the timer must next fire (``timer``) and
    when a shared store is next searched for what dead replicas left (``reclaim_at``)."""

    def __init__(self, shared: bool, reclaim_every: timedelta) -> None:
        self.recovery = RecoveryPhase.PENDING
        self.sweep = SweepPhase.UNSWEPT
        self.timer: datetime | None = None
        self.reclaim_at: datetime | None = None
        self._shared = shared
        self._reclaim_every = reclaim_every

    def wake_by(self, due: datetime | None) -> None:
        """The timer fires by ``due`` at the latest."""
        if due is not None and (self.timer is None or due < self.timer):
            self.timer = due

    def sweep_due(self, now: datetime) -> bool:
        """Whether a tick at ``now`` starts a sweep (and if so, it is under way)."""
        if self.sweep is _S.SWEEPING:
            return False
        if self.sweep is _S.UNSWEPT or (self.timer is not None and self.timer <= now):
            self.sweep = SWEEP_PHASES[self.sweep, "sweep"]
            self.timer = None
            return True
        return False

    def swept(self, event: str = "swept") -> None:
        """The sweep is over (``"failed"``: it failed, and is tried again by the timer)."""
        self.sweep = SWEEP_PHASES[self.sweep, event]

    def recovering(self) -> bool:
        """Whether a tick starts reading the runs left (and if so, it is under way)."""
        if self.recovery is not _R.PENDING:
            return False
        self.recovery = RECOVERY_PHASES[self.recovery, "read"]
        return True

    def recovery_step(self, event: str) -> None:
        """The recovery read ``event`` (``"read"``, ``"read to its end"``, ``"failed"``)."""
        self.recovery = RECOVERY_PHASES[self.recovery, event]

    def reclaim_due(self, now: datetime) -> bool:
        """Whether it is time to look again for what dead replicas left."""
        if self.reclaim_at is None or self.reclaim_at > now:
            return False
        self.reclaim_at = None
        self.recovery = RECOVERY_PHASES[self.recovery, "reclaim"]
        return True

    def reclaim_later(self, now: datetime, outbox_settled: bool) -> None:
        """Once recovery and the outbox are both through, a shared store is searched again
        later."""
        if self._shared and self.recovery is _R.DONE and outbox_settled and self.reclaim_at is None:
            self.reclaim_at = now + self._reclaim_every

    def deadline(self) -> datetime | None:
        """When the timer or the reclaim is next due."""
        due = self.timer if self.sweep is not _S.SWEEPING else None
        if self.reclaim_at is not None and (due is None or self.reclaim_at < due):
            due = self.reclaim_at
        return due
