"""What the benchmark agent does, shared by both servers so they do the same work.

* a message whose id starts with ``fanout-<N>-`` makes the task work, wait
  :data:`FANOUT_DELAY` seconds (for subscribers to connect), then stream ``N`` artifact chunks
  and complete;
* a message whose id starts with ``ticks-<N>-<DELAY_MS>-<SPACING_MS>-`` makes the task work,
  wait ``DELAY_MS`` (for a subscriber to connect, on another replica say), then send ``N``
  updates ``SPACING_MS`` apart and complete. Each update replaces the artifact ``tick`` with
  one whose text is :func:`tick_text` (its number and the ``time.monotonic_ns()`` at which the
  agent made it: the clock is the machine's, the same in every process). A replaced artifact
  keeps the task the same size; a status message each time would move the last one into the
  history, and a task re-written whole at each commit would grow with every update;
* any other message is echoed: the task completes with one text artifact holding the text.
"""

import os
import time
from typing import NamedTuple

#: Seconds a fan-out task waits for its subscribers (the smoke test shortens it).
FANOUT_DELAY = float(os.environ.get("A2A_BENCH_FANOUT_DELAY", "2.0"))


def fanout_count(message_id: str) -> int | None:
    """``N`` for a ``fanout-<N>-…`` message id, else ``None``."""
    if not message_id.startswith("fanout-"):
        return None
    return int(message_id.split("-", 2)[1])


class Ticks(NamedTuple):
    """The script of a ``ticks-`` task: how many updates, after what delay, how far apart."""

    updates: int
    delay: float
    spacing: float


def ticks_script(message_id: str) -> Ticks | None:
    """The :class:`Ticks` of a ``ticks-<N>-<DELAY_MS>-<SPACING_MS>-…`` message id, else ``None``."""
    if not message_id.startswith("ticks-"):
        return None
    count, delay, spacing = message_id.split("-", 4)[1:4]
    return Ticks(int(count), int(delay) / 1000, int(spacing) / 1000)


def tick_text(index: int) -> str:
    """The text of the ``index``-th tick, stamped now: ``tick:INDEX:MONOTONIC_NS;``."""
    return f"tick:{index}:{time.monotonic_ns()};"
