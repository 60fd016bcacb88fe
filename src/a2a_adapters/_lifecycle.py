"""How a server and the engines its application runs start, stop and fail together.

An application keeps the engines it runs in ``app.extensions[ENGINES]``, so that its server can
begin their shutdown the moment it begins its own (:func:`begin_shutdown`), and stop, and make
the process exit non-zero, when one of them has failed (:func:`until_failed`,
:func:`engine_failure`) rather than go on answering every request with an error.
"""

from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from ._engine import Engine

__all__ = [
    "ENGINES",
    "EngineFailed",
    "begin_shutdown",
    "engine_failure",
    "until_failed",
    "until_ready",
]

#: Where an application keeps the engines it runs.
ENGINES = "a2a_engines"


class EngineFailed(RuntimeError):
    """An engine stopped on its own; the server stopped with it (its cause is chained)."""


def begin_shutdown(app: Any) -> None:
    """Begin the shutdown of every engine ``app`` runs (see ``Engine.begin_shutdown``)."""
    for engine in app.extensions.get(ENGINES, ()):
        engine.begin_shutdown()


async def until_failed(app: Any) -> None:
    """Return as soon as one of the engines ``app`` runs has failed (never, if none does).

    A server runs this beside itself and stops when it returns: a process whose engine is
    gone must exit (non-zero, see :func:`engine_failure`) so that its supervisor restarts it.
    """
    engines: list[Engine] = list(app.extensions.get(ENGINES, ()))
    while engines:
        async with anyio.create_task_group() as group:
            for engine in engines:
                group.start_soon(_stopped_then_cancel, engine, group.cancel_scope)
        if any(engine.failure is not None for engine in engines):
            return
        await anyio.sleep_forever()  # every engine was closed normally: nothing can fail now


async def _stopped_then_cancel(engine: "Engine", scope: anyio.CancelScope) -> None:
    await engine.wait_stopped()
    if engine.failure is not None:
        scope.cancel()


def engine_failure(app: Any) -> EngineFailed | None:
    """What to raise once ``app``'s server has stopped, if one of its engines had failed."""
    for engine in app.extensions.get(ENGINES, ()):
        if engine.failure is not None:
            failed = EngineFailed("the A2A engine stopped after a failure (see the log)")
            failed.__cause__ = engine.failure
            return failed
    return None


async def until_ready(app: Any) -> None:
    """Return once every engine ``app`` runs is ready to handle requests (or has stopped)."""
    for engine in list(app.extensions.get(ENGINES, ())):
        await engine.wait_ready()
