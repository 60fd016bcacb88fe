"""Replicas: which tasks this server watches on a shared store, and which it is reading
because they changed elsewhere.

Several servers may decide over one store; the versioned commits keep them from losing each
other's writes. What one must also learn is when *another* changed a task it waits on, streams
or runs: it watches those (and only those: a task cared for only in passing within one call
costs nothing), and reads a task again when its doorbell rings. A ring during that read means
the read may be stale: the task is read once more after (its check's phase).
"""

from collections.abc import Callable

from ._actions import Action, Unwatch, Watch
from ._phases import Phase, Phases

__all__ = ["CHECK_PHASES", "CheckPhase", "Replicas"]


class CheckPhase(Phase):
    """A read of a task that changed elsewhere."""

    #: Being read.
    READING = "reading"
    #: Being read, and it changed again meanwhile: read once more after.
    READING_AGAIN = "reading, changed again"


_C = CheckPhase
CHECK_PHASES: Phases[CheckPhase] = Phases(
    "a replica check",
    {
        (_C.READING, "changed again"): _C.READING_AGAIN,
        (_C.READING_AGAIN, "changed again"): _C.READING_AGAIN,
    },
)


class Replicas:
    """The tasks watched, those whose watchers may have changed (``touched``), the checks
    under way, and those to try again at the next tick (``recheck``)."""

    def __init__(self, shared: bool) -> None:
        self.shared = shared
        self._watched: set[str] = set()
        #: Tasks whose watchers here may have changed since the last :meth:`watch`.
        self.touched: set[str] = set()
        self._checking: dict[str, CheckPhase] = {}
        self.recheck: set[str] = set()

    def touch(self, task_id: str) -> None:
        """Who here cares about ``task_id`` may have changed."""
        if self.shared:
            self.touched.add(task_id)

    def watch(self, cared: Callable[[str], bool], act: Callable[[Action], None]) -> None:
        """Watch the touched tasks someone here (``cared``) has come to care about, and stop
        watching those nobody does any more."""
        if not self.touched:
            return  # alone on its store, a server watches nothing: most calls end here
        touched, self.touched = self.touched, set()
        for task_id in sorted(touched):
            if cared(task_id):
                if task_id not in self._watched:
                    self._watched.add(task_id)
                    act(Watch(task_id))
            elif task_id in self._watched:
                self._watched.discard(task_id)
                act(Unwatch(task_id))

    def check(self, task_id: str) -> bool:
        """Whether to read ``task_id`` now (else a read of it is under way: it is read once
        more after)."""
        phase = self._checking.get(task_id)
        if phase is not None:
            self._checking[task_id] = CHECK_PHASES[phase, "changed again"]
            return False
        self._checking[task_id] = CheckPhase.READING
        return True

    def checked(self, task_id: str) -> bool:
        """The read of ``task_id`` came back; whether to read it once more."""
        return self._checking.pop(task_id, None) is CheckPhase.READING_AGAIN

    def failed(self, task_id: str) -> None:
        """The read of ``task_id`` failed: it is tried again at the next tick."""
        self._checking.pop(task_id, None)
        self.recheck.add(task_id)
