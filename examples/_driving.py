"""One agent run against an ``a2a_core.transport.Server`` that keeps its own store, on any loop.

What the two custom transports share (``examples/h11_trio.py`` on trio, ``jsonrpc_lines.py``
on asyncio): it awaits nothing but the agent, so it runs on either. A transport over an async
store waits for each output's :class:`~a2a_core.transport.OutputTaken` instead
(``examples/async_store.py`` and ``a2a_adapters`` do).
"""

import inspect
from collections.abc import Callable
from contextlib import aclosing
from datetime import UTC, datetime
from typing import Any

from a2a_core import Agent
from a2a_core.transport import Action, OutputTaken, Server, StartRun

__all__ = ["drive", "now"]


def now() -> datetime:
    return datetime.now(UTC)


async def drive(
    server: Server, start: StartRun, agent: Agent, perform: Callable[[list[Action]], None]
) -> None:
    """Run ``start``'s agent to its end, telling ``server`` each value it yields and how it
    ended, and handing every other action to ``perform``. A run whose output stops counting is
    closed at once. Cancel the task running this to stop the run (on :class:`StopRun`)."""
    task_id, run = start.task_id, start.run
    try:
        result: Any = agent(start.context)
        if not inspect.isasyncgen(result):
            server.agent_done(task_id, run, now(), value=await result)
        else:
            async with aclosing(result) as updates:
                async for value in updates:
                    server.agent_output(task_id, run, value, now())
                    if not _counts(server, task_id, run, perform):
                        return  # nothing more from this run counts
            server.agent_done(task_id, run, now())
    except Exception as error:
        server.agent_done(task_id, run, now(), error=error)
    perform(server.take_actions())


def _counts(
    server: Server, task_id: str, run: int, perform: Callable[[list[Action]], None]
) -> bool:
    """Whether the run still counts after its last output (the server decided it already: it
    reads and writes its own store), performing the other actions."""
    actions = server.take_actions()
    taken = [
        a for a in actions if isinstance(a, OutputTaken) and (a.task_id, a.run) == (task_id, run)
    ]
    perform([a for a in actions if not isinstance(a, OutputTaken)])
    return bool(taken) and taken[-1].counts
