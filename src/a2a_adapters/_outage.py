"""Logging an outage once: a store (or its event bus) that is away for an hour is two lines in
the log, when it went and when it came back, not one per failed operation.

Everything that needs the store while it is away fails, and each failure has its own way of
being retried (a request is answered 503 and its client retries; an agent's output is held; the
expiry sweep, the outbox and the bus try again on their own). What an operator needs from the
log is that the store is away, since when, and that it is back: each further failure is logged
at DEBUG, for whoever wants to see them.
"""

import logging
import time
from collections.abc import Callable

__all__ = ["Outage"]


class Outage:
    """What is known of one dependency's outage: whether it is away, since when, and how many
    operations failed meanwhile."""

    def __init__(
        self,
        subject: str,
        log: logging.Logger,
        *,
        consequence: str = "",
        went: str = "is unavailable",
        back: str = "answers again",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.subject = subject
        self._went, self._back = went, back
        #: What the outage means for clients, said once when it begins.
        self.consequence = consequence
        self._log = log
        self._clock = clock
        self._since: float | None = None
        self.failures = 0
        #: How many outages there were (for tests and the logs).
        self.outages = 0

    @property
    def away(self) -> bool:
        return self._since is not None

    def failed(self, cause: object) -> None:
        """An operation on it failed because it is away."""
        self.failures += 1
        if self._since is None:
            self._since = self._clock()
            self.outages += 1
            said = f"; {self.consequence}" if self.consequence else ""
            self._log.warning("%s %s: %s%s", self.subject, self._went, cause, said)
        else:
            self._log.debug("%s still %s: %s", self.subject, self._went, cause)

    def answered(self) -> None:
        """An operation on it succeeded: if it was away, it is back."""
        if self._since is None:
            return
        lasted = self._clock() - self._since
        self._log.warning(
            "%s %s, after %.1f s (%d operations failed meanwhile)",
            self.subject,
            self._back,
            lasted,
            self.failures,
        )
        self._since, self.failures = None, 0
