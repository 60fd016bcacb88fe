"""Phase tables: a part's phases as an enum, its legal changes as data.

A part of the machine that goes through phases (a stream reading its log, the push outbox
being read after a restart) keeps one phase value and changes it only by looking the pair
(phase, event) up in its :class:`Phases` table, the way the task state table works
(:mod:`a2a_core.decide._states`). A set of booleans can reach combinations nobody meant (read
and not reading, caught up and behind); a table cannot, and a change that is not in it raises
:class:`IllegalPhase` at once, where it happened, instead of leaving the machine in a state
it would misread later.

A table is a ``dict`` subclass whose only addition is ``__missing__``: a legal change is one
dict lookup done in C, so the tables cost the hot path no Python call.
"""

import enum
from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar

__all__ = ["IllegalPhase", "Phase", "Phases", "phase_diagram"]


class Phase(enum.Enum):
    """A part's phase. Hashed by identity (members are singletons), so a table lookup hashes
    in C rather than by name in Python."""

    __hash__ = object.__hash__


P = TypeVar("P", bound=Phase)


class IllegalPhase(Exception):
    """A part was asked to change phase in a way its table does not allow: a bug in the
    machine, never the client's doing."""

    def __init__(self, part: str, phase: Phase, event: str) -> None:
        self.phase = phase
        self.event = event
        super().__init__(f"{part}: {event!r} is not allowed in phase {phase.name}")


class Phases(dict[tuple[P, str], P], Generic[P]):
    """The legal changes of one part: ``table[phase, event]`` is the next phase."""

    def __init__(self, part: str, changes: Mapping[tuple[P, str], P]) -> None:
        super().__init__(changes)
        self.part = part

    def __missing__(self, key: tuple[P, str]) -> P:
        raise IllegalPhase(self.part, key[0], key[1])

    def events(self) -> Iterable[str]:
        """Every event the table knows, in the order of its entries."""
        return dict.fromkeys(event for _, event in self)


def phase_diagram(table: Mapping[Any, Phase], start: Phase) -> str:
    """``table`` as a Mermaid state diagram (for the manual: generated, never hand-drawn)."""
    lines = ["stateDiagram-v2", f"    [*] --> {start.name.lower()}"]
    for (phase, event), target in table.items():
        lines.append(f"    {phase.name.lower()} --> {target.name.lower()}: {event}")
    return "\n".join(lines) + "\n"
