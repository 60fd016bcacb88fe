"""What a transport writer needs: the :class:`Server` machine and the actions it emits.

A transport feeds the machine bytes and events (``receive``, ``agent_output``, ``agent_done``,
``tick``, ``client_left``, ``read_done``, ``commit_done``) and, after every call, performs what
``take_actions()`` returns: :class:`Read` and :class:`Commit` on its store (unless the server
keeps a :class:`~a2a_core.store.SyncStore` itself), :class:`StartRun` and :class:`StopRun` on
its agent runs, :class:`Answer`, :class:`StreamOpened` and :class:`Frames` on its connections,
:class:`Notify` through its push sender; over a store shared with other servers,
:class:`Watch` and :class:`Unwatch` on its event bus, telling the machine of each change it
hears of (``changed``). Values a run yields without pausing between them may go to
``agent_output`` together, as one :class:`Outputs` (gathered up to a value that
:func:`ends_run`). ``docs/core.md`` states the rules and shows a whole
transport over an async store.
"""

from ._agent_api import Outputs, ends_run
from .decide._effects import Notify, StartRun, StopRun
from .decide._inputs import ANONYMOUS, Caller
from .decide._push_policy import address_allowed, url_problem
from .front._exchange import Served
from .front._health import HEALTH_PATHS, Health, Probe
from .front._http import HttpRequest, HttpResponse
from .machine._actions import (
    Action,
    Answer,
    Commit,
    Frames,
    OutputTaken,
    Problem,
    Read,
    StreamOpened,
    Unwatch,
    Watch,
)
from .machine._server import Server
from .wire._sse import KEEPALIVE, SSE_HEADERS, sse_event
from .wire._v1 import V1Codec

__all__ = [
    "ANONYMOUS",
    "HEALTH_PATHS",
    "KEEPALIVE",
    "SSE_HEADERS",
    "Action",
    "Answer",
    "Caller",
    "Commit",
    "Frames",
    "Health",
    "HttpRequest",
    "HttpResponse",
    "Notify",
    "OutputTaken",
    "Outputs",
    "Probe",
    "Problem",
    "Read",
    "Served",
    "Server",
    "StartRun",
    "StopRun",
    "StreamOpened",
    "Unwatch",
    "V1Codec",
    "Watch",
    "address_allowed",
    "ends_run",
    "sse_event",
    "url_problem",
]
