"""The engine's clock and ids: the time and the randomness the core takes as arguments."""

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import anyio

__all__ = ["new_uuid", "wall_clock"]


def wall_clock() -> Callable[[], datetime]:
    """A clock that reads the loop's own time, anchored to the wall clock at its first reading.

    Following the loop's clock (not ``datetime.now``) is what lets a test drive expiry with
    ``trio.testing.MockClock``: the engine's sense of time jumps with the loop's.
    """
    anchor: tuple[datetime, float, Callable[[], float]] | None = None

    def now() -> datetime:
        nonlocal anchor
        if anchor is None:
            loop_time = _loop_time()
            anchor = (datetime.now(UTC), loop_time(), loop_time)
        wall, start, loop_time = anchor
        return wall + timedelta(seconds=loop_time() - start)

    return now


def _loop_time() -> Callable[[], float]:
    """The running loop's clock, looked up once (``anyio.current_time`` looks the loop's
    library up on every call, which a busy server pays several times per request)."""
    try:
        return asyncio.get_running_loop().time
    except RuntimeError:  # not on asyncio: trio
        return anyio.current_time


def new_uuid() -> str:
    return str(uuid.uuid4())
