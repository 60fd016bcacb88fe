"""What the benchmark agent does, shared by both servers so they do the same work.

* a message whose id starts with ``fanout-<N>-`` makes the task work, wait
  :data:`FANOUT_DELAY` seconds (for subscribers to connect), then stream ``N`` artifact chunks
  and complete;
* any other message is echoed: the task completes with one text artifact holding the text.
"""

import os

#: Seconds a fan-out task waits for its subscribers (the smoke test shortens it).
FANOUT_DELAY = float(os.environ.get("A2A_BENCH_FANOUT_DELAY", "2.0"))


def fanout_count(message_id: str) -> int | None:
    """``N`` for a ``fanout-<N>-…`` message id, else ``None``."""
    if not message_id.startswith("fanout-"):
        return None
    return int(message_id.split("-", 2)[1])
