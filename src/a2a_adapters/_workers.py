"""``serve --workers N``: N server processes on one listening socket, sharing one store.

The parent binds the address once (so ``--port 0`` is one port for all) and starts each worker
as a fresh interpreter (``python -m a2a_adapters serve …`` with the same arguments) that
inherits the socket's descriptor: no fork of a process that may hold threads, and each worker
is an ordinary replica of the others, with an id and a lease of its own on the shared store.
The kernel spreads the connections over the workers accepting on the socket.

The parent only supervises: it passes SIGTERM/SIGINT on, waits for the workers to finish
gracefully, and starts a new worker in place of one that died (after a pause, so that a worker
that cannot start does not spin), which is what the shared store's leases are for: the new one,
or any other, takes over what the dead one left.
"""

import logging
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

__all__ = ["run_workers"]

log = logging.getLogger("a2a_adapters")

#: Seconds before a worker that died is replaced (doubling while they keep dying at once).
RESTART_FIRST, RESTART_MAX = 0.5, 10.0
#: A worker that lived this long was not failing to start: the pause starts over.
HEALTHY_SECONDS = 30.0
#: Seconds the parent polls its workers at.
POLL = 0.1


def run_workers(count: int, sock: socket.socket, argv: Sequence[str], stop_budget: float) -> int:
    """Run ``count`` workers serving on ``sock`` with the command line ``argv`` (less its
    ``--workers``) until SIGTERM or SIGINT; then stop them, giving each ``stop_budget``
    seconds before it is killed. Returns the exit status for the parent."""
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    fd = sock.fileno()
    command = [sys.executable, "-m", "a2a_adapters", *argv, "--listen-fd", str(fd)]
    workers: list[tuple[subprocess.Popen[bytes], float]] = []
    pause = RESTART_FIRST
    try:
        for _ in range(count):
            workers.append((_start(command, fd), time.monotonic()))
        while not stopping:
            time.sleep(POLL)
            for index, (worker, since) in enumerate(workers):
                status = worker.poll()
                if status is None or stopping:
                    continue
                lived = time.monotonic() - since
                pause = RESTART_FIRST if lived > HEALTHY_SECONDS else min(pause * 2, RESTART_MAX)
                log.error(
                    "worker %d (pid %d) exited with status %s; starting another in %.1fs",
                    index + 1,
                    worker.pid,
                    status,
                    pause,
                )
                # The pause ends early if the parent is told to stop meanwhile: then no new
                # worker is started (only to be stopped), and the stop is not held up by it.
                replace_at = time.monotonic() + pause
                while not stopping and time.monotonic() < replace_at:
                    time.sleep(POLL)
                if stopping:
                    del workers[index]  # it is gone, and was reported above
                    break
                workers[index] = (_start(command, fd), time.monotonic())
        return _stop_all([w for w, _ in workers], stop_budget)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stop_all(workers: list["subprocess.Popen[bytes]"], budget: float) -> int:
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + budget
    failed = 0
    for worker in workers:
        try:
            status = worker.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            log.error("worker pid %d did not stop in time; killing it", worker.pid)
            worker.kill()
            status = worker.wait()
        failed += status not in (0, -signal.SIGTERM)
    return 1 if failed else 0


def _start(command: list[str], fd: int) -> "subprocess.Popen[bytes]":
    # This interpreter, with the command line it was given: nothing from outside is run.
    return subprocess.Popen(command, pass_fds=(fd,))  # noqa: S603
