"""The engine's clock and ids: the time and the randomness the core takes as arguments."""

import asyncio
import os
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
    # The last reading: a loop whose clock stands still within a turn (uvloop's, in
    # milliseconds) is read several times a request, and gets the same datetime again.
    last_time = float("nan")
    last: datetime | None = None

    def now() -> datetime:
        nonlocal anchor, last_time, last
        if anchor is None:
            loop_time = _loop_time()
            anchor = (datetime.now(UTC), loop_time(), loop_time)
        wall, start, loop_time = anchor
        time = loop_time()
        if time != last_time or last is None:
            last_time, last = time, wall + timedelta(seconds=time - start)
        return last

    return now


def _loop_time() -> Callable[[], float]:
    """The running loop's clock, looked up once (``anyio.current_time`` looks the loop's
    library up on every call, which a busy server pays several times per request)."""
    try:
        return asyncio.get_running_loop().time
    except RuntimeError:  # not on asyncio: trio (whose clock a test may have replaced)
        pass
    try:  # (not sniffio, which the asyncio extra does not bring)
        import trio

        trio.lowlevel.current_task()  # RuntimeError outside trio
    except (ImportError, RuntimeError):
        return anyio.current_time
    return trio.current_time


#: Random bytes read at a time for ids: 256 ids' worth.
_POOL_BYTES = 16 * 256
_pool = bytearray()
# The bits a version-4 UUID fixes: its version (4) and its variant (RFC 9562's, 0b10).
_KEEP = ~((0xF << 76) | (0x3 << 62)) & ((1 << 128) - 1)
_SET = (0x4 << 76) | (0x2 << 62)


def new_uuid() -> str:
    """A random (version 4) UUID, as ``str(uuid.uuid4())`` would give, from random bytes read
    256 ids at a time: ``uuid4`` asks the kernel for 16 bytes each time and builds a ``UUID``
    object to print, about 2 µs where this takes under one, and a send makes several ids."""
    if not _pool:
        _pool.extend(os.urandom(_POOL_BYTES))
    number = int.from_bytes(_pool[-16:]) & _KEEP | _SET
    del _pool[-16:]
    text = f"{number:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


# A process forked from this one (``serve --workers N``) must not hand out the ids left here.
os.register_at_fork(after_in_child=_pool.clear)
