"""The push outbox: notifications handed out, and the outbox read after a restart.

Every push notification a decision owes is in the store's outbox until its fate (delivered, or
given up on) is recorded there, so a restart delivers what the process before it still owed.
That read comes first: notifications decided while it is under way are *held*, because one
webhook's older notifications may still be in the outbox (in a later batch) and must go
first. With a shared store the outbox is read again every ``reclaim_every``, for what replicas
that died left; those later reads hold nothing back. A notification out is kept (``owed``)
until it is reported, so that none is handed out twice.
"""

from a2a_core.decide._effects import Push
from a2a_core.store._contract import Pending, Sent

from ._phases import Phase, Phases

__all__ = ["OUTBOX_PHASES", "Outbox", "OutboxPhase"]


class OutboxPhase(Phase):
    """How far the outbox has been read."""

    #: Push notifications are off: there is no outbox to read.
    OFF = "off"
    #: Not read yet (the first tick reads it).
    UNREAD = "unread"
    #: The first read is under way: what is decided meanwhile is held.
    FIRST_READING = "first reading"
    #: The first read failed: what is decided is still held; the next tick reads again.
    FIRST_FAILED = "first read failed"
    #: Read to its end.
    READ = "read"
    #: (Shared store.) Due to be read again for what replicas that died left.
    DUE = "due"
    #: (Shared store.) Being read again; nothing is held.
    REREADING = "rereading"


_O = OutboxPhase
OUTBOX_PHASES: Phases[OutboxPhase] = Phases(
    "the push outbox",
    {
        (_O.UNREAD, "read"): _O.FIRST_READING,
        (_O.FIRST_READING, "read"): _O.FIRST_READING,
        (_O.FIRST_READING, "read to its end"): _O.READ,
        (_O.FIRST_READING, "failed"): _O.FIRST_FAILED,
        (_O.FIRST_FAILED, "read"): _O.FIRST_READING,
        (_O.READ, "reclaim"): _O.DUE,
        (_O.OFF, "reclaim"): _O.OFF,
        (_O.DUE, "read"): _O.REREADING,
        (_O.REREADING, "read"): _O.REREADING,
        (_O.REREADING, "read to its end"): _O.READ,
        (_O.REREADING, "failed"): _O.DUE,
    },
)
_TO_READ = frozenset((_O.UNREAD, _O.FIRST_FAILED, _O.DUE))
_HOLDING = frozenset((_O.FIRST_READING, _O.FIRST_FAILED))


class Outbox:
    """The notifications out (``owed``), those held behind the first read, and the outbox's
    phase."""

    def __init__(self, push: bool) -> None:
        self.phase = OutboxPhase.UNREAD if push else OutboxPhase.OFF
        self.owed: set[tuple[str, str, int]] = set()
        self._held: list[Push] = []
        self._read_owed: set[tuple[str, str, int]] = set()  # handed out from it meanwhile

    @property
    def to_read(self) -> bool:
        """Whether a tick should read it now."""
        return self.phase in _TO_READ

    @property
    def settled(self) -> bool:
        """Whether it is read to its end (or there is none)."""
        return self.phase is _O.READ or self.phase is _O.OFF

    def hand_out(self, push: Push) -> bool:
        """Whether ``push`` goes out now (else it is out already, or held)."""
        if self.phase in _HOLDING:
            self._held.append(push)
            return False
        return self.out(push)

    def out(self, push: Push) -> bool:
        """Whether ``push`` goes out now: not unless it is out already."""
        key = (push.task_id, push.config.id, push.event.seq)
        if key in self.owed:
            return False
        self.owed.add(key)
        return True

    def reading(self) -> None:
        """A batch of it is being read."""
        self.phase = OUTBOX_PHASES[self.phase, "read"]

    def failed(self) -> None:
        """Reading it failed; the next tick tries again."""
        self.phase = OUTBOX_PHASES[self.phase, "failed"]

    def reclaim(self) -> None:
        """(Shared store.) Read it again, for what replicas that died left."""
        self.phase = OUTBOX_PHASES[self.phase, "reclaim"]

    def batch(self, owed: tuple[Pending, ...]) -> tuple[list[tuple[Push, int]], list[Sent]]:
        """What a batch read from the outbox hands out again (with each one's attempts so
        far), and the notes of those nobody is owed any more (their config was deleted)."""
        out: list[tuple[Push, int]] = []
        gone: list[Sent] = []
        for pending in owed:
            record, event = pending.record, pending.event
            config = next((c for c in record.push_configs if c.id == pending.config_id), None)
            if config is None:
                gone.append(Sent(record.id, pending.config_id, event.seq))
                continue
            self._read_owed.add((record.id, config.id, event.seq))
            push = Push(record.id, config, event)
            if self.out(push):
                out.append((push, pending.attempts))
        return out, gone

    def read_through(self) -> list[Push]:
        """It is read to its end: what was held meanwhile goes out now, after it (what the
        outbox held of it already went, in its webhook's order, and is not handed out
        twice)."""
        self.phase = OUTBOX_PHASES[self.phase, "read to its end"]
        held, self._held = self._held, []
        read, self._read_owed = self._read_owed, set()
        return [
            push
            for push in held
            if (push.task_id, push.config.id, push.event.seq) not in read and self.out(push)
        ]
