"""What the machine asks of the outside world: the actions a transport performs.

Plain frozen values, so that a transport dispatches on them with ``match`` and the type
checker proves each is handled, and a test can compare what a machine asked for with ``==``.
The table of what a transport does with each is in :mod:`a2a_core.machine._server`.
"""

from typing import TypeGuard

import attrs

from a2a_core.decide._effects import Notify, StartRun, StopRun
from a2a_core.front._exchange import Served
from a2a_core.front._http import HttpResponse
from a2a_core.store._contract import Reads, Write
from a2a_core.wire._sse import KEEPALIVE

__all__ = [
    "Action",
    "Answer",
    "Commit",
    "Frames",
    "OutputTaken",
    "Problem",
    "Read",
    "StreamOpened",
    "Unwatch",
    "Watch",
    "answers",
]


@attrs.frozen
class Read:
    """Read ``reads`` from the store; answer with :meth:`Server.read_done`."""

    op: int
    reads: Reads


@attrs.frozen
class Commit:
    """Commit ``writes`` (all or none, compare-and-set); answer with :meth:`Server.commit_done`."""

    op: int
    writes: tuple[Write, ...]


@attrs.frozen
class Answer:
    """The response to exchange ``exchange`` (then the exchange is over)."""

    exchange: int
    response: HttpResponse


@attrs.frozen
class StreamOpened:
    """Exchange ``exchange`` is answered with a stream: send this head and ``frames`` now;
    later frames come as :class:`Frames`. ``ended``: the stream is complete already (then send
    ``trailers`` after the frames). ``keepalive`` is what to send after a long silence (an SSE
    comment; nothing on gRPC, whose keep-alive is HTTP/2's own PING)."""

    exchange: int
    status: int
    headers: tuple[tuple[str, str], ...]
    frames: tuple[bytes, ...]
    ended: bool
    trailers: tuple[tuple[str, str], ...] = ()
    keepalive: bytes = KEEPALIVE
    #: The id of the task streamed, as its client knows it (for an access log; "" if unknown).
    task_id: str = ""
    #: What the request was (for a transport's traces and metrics; never sent).
    served: Served | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Frames:
    """More of the streamed response to exchange ``exchange`` (in order); ``ended``: send nothing
    more but ``trailers`` (gRPC's status), and close it."""

    exchange: int
    frames: tuple[bytes, ...]
    ended: bool
    trailers: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class OutputTaken:
    """The output the run last yielded is decided; ``counts``: the run may go on. When it may
    not (it finished its task, or was stopped or replaced), it need report nothing more."""

    task_id: str
    run: int
    counts: bool


@attrs.frozen
class Problem:
    """Something went wrong that no client can be told: the transport logs it. ``store_away``:
    it went wrong because the store could not be reached, which the transport has seen (and
    may have said) already: it may log it more quietly."""

    message: str
    store_away: bool = False


@attrs.frozen
class Watch:
    """(Shared store only.) Hear of changes other servers make to task ``task_id``: someone
    here now waits on it, follows it or runs it. Once listening, call :meth:`Server.changed`
    for it, since a change may have come just before the watch began."""

    task_id: str


@attrs.frozen
class Unwatch:
    """(Shared store only.) Nobody here cares about task ``task_id`` any more."""

    task_id: str


#: What the outside world must do (see the module's docstring).
Action = (
    Read
    | Commit
    | StartRun
    | StopRun
    | Answer
    | StreamOpened
    | Frames
    | Notify
    | OutputTaken
    | Problem
    | Watch
    | Unwatch
)


def answers(action: Action) -> TypeGuard[Answer | StreamOpened | Frames]:
    """Whether ``action`` is the end of its exchange's answer."""
    match action:
        case Answer():
            return True
        case StreamOpened(ended=ended) | Frames(ended=ended):
            return ended
    return False
