"""The access log: one line per request on the ``a2a_adapters.access`` logger.

Each line says the method, the path (without its query string, which may carry page tokens),
the status, how long the request took, the client's address, the principal the request was
authenticated as (``-`` for none: an open server, or credentials that failed) and the task the
request named or created (``-`` for none; the core says which, on its answer). It is written
when the request is over, so a stream's line comes when the stream ends and its duration is
how long it was open. Health probes are logged at DEBUG, the rest at INFO: an orchestrator
probing every few seconds is not news.

A request that ended with no response at all (the client left first) is logged with status
499, as nginx does. The middleware costs nothing when the logger is off.
"""

import logging
import time
from collections.abc import Awaitable, Mapping

import attrs

from ._asgi import ASGIApp, Message, Receive, Scope, Send

__all__ = ["VISIT", "AccessLog", "Visit", "visit_of"]

log = logging.getLogger("a2a_adapters.access")

#: Where in the ASGI scope the request's :class:`Visit` is, for the entries to fill in.
VISIT = "a2a.visit"
#: The status logged for a request that ended with no response (the client left).
NO_RESPONSE = 499


@attrs.define
class Visit:
    """What the entries learn of one request, for its line (filled in on the way)."""

    principal: str = "-"
    task_id: str = ""
    #: A health probe: logged at DEBUG.
    probe: bool = False


def visit_of(scope: Mapping[str, object]) -> Visit | None:
    """The request's :class:`Visit`, if the access log is on."""
    visit = scope.get(VISIT)
    return visit if isinstance(visit, Visit) else None


class AccessLog:
    """ASGI middleware: a line on :data:`log` for every HTTP request ``app`` serves."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # Not a coroutine itself: with the log off, what it gives is the application's own,
        # and a request's coroutines are one fewer to pass through at each of its waits. (An
        # ASGI server that guesses an application's ASGI version from its ``__call__`` must be
        # told it is ASGI 3: the applications ``create_app`` makes are Quart's, whose is.)
        if scope["type"] != "http" or not log.isEnabledFor(logging.INFO):
            return self._app(scope, receive, send)
        return self._logged(scope, receive, send)

    async def _logged(self, scope: Scope, receive: Receive, send: Send) -> None:
        visit = scope[VISIT] = Visit()
        status = NO_RESPONSE
        started = time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._app(scope, receive, sending)
        except BaseException:
            if status == NO_RESPONSE:
                status = 500  # what the server answers for an application that raised
            raise
        finally:
            _write(scope, visit, status, (time.perf_counter() - started) * 1000)


def _write(scope: Scope, visit: Visit, status: int, duration_ms: float) -> None:
    level = logging.DEBUG if visit.probe else logging.INFO
    if not log.isEnabledFor(level):
        return
    client = scope.get("client")
    fields = {
        "method": scope.get("method", ""),
        "path": scope.get("path", ""),
        "status": status,
        "duration_ms": round(duration_ms, 2),
        "client": f"{client[0]}:{client[1]}" if client else "-",
        "principal": visit.principal,
        "task_id": visit.task_id or "-",
    }
    log.log(
        level,
        "%s %s %d %.1fms client=%s principal=%s task=%s",
        *fields.values(),
        extra={"access": fields},
    )
