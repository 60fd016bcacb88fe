"""The event bus of replicas that share a Redis store: doorbells over one PubSub connection.

Every commit of the Redis store publishes a doorbell on its task's channel, naming the replica
that committed and carrying the events it logged (unless they are large). A replica subscribes
to the channels of the tasks its machine watches (those it streams, waits on or runs: the
machine's ``Watch`` and ``Unwatch`` actions) on **one** connection, however many clients it
serves, and on each ring from another replica tells its machine, which hands the events to the
streams whose cursors they follow on from, and reads the task's log for any other. A ring may
be lost, so nothing depends on one: after every (re)subscription the bus rings each task itself,
with no events, and the machine looks at the store again. A lost connection costs latency,
never an event.

It also keeps this replica's lease alive (renewed three times per lease period), which is
how the others know it still holds its runs and its notifications; a clean stop gives the
lease up, so that nothing waits for it to lapse.
"""

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import anyio
from anyio.abc import TaskStatus

from a2a_adapters._outage import Outage
from a2a_core.errors import UsageError
from a2a_core.store import LoggedEvent, load_event

__all__ = ["RedisBus"]

#: How the bus tells its machine of a change: the task's key, and the events the ring carried
#: (none when it carried none: then the task's log is read).
Ring = Callable[[str, tuple[LoggedEvent, ...]], Awaitable[None]]

log = logging.getLogger("a2a_adapters")

#: Seconds between attempts to reach Redis again after the bus lost it (doubling up to the max).
RECONNECT_FIRST, RECONNECT_MAX = 0.05, 2.0


class Doorbells(Protocol):
    """What the bus needs of its store (``RedisStore`` offers it)."""

    replica: str
    lease: float

    def ring_channel(self, task_key: str) -> str: ...

    def subscriber(self) -> Awaitable[AbstractAsyncContextManager[Any]]: ...

    def renew_lease(self) -> Awaitable[None]: ...

    def drop_lease(self) -> Awaitable[None]: ...


class RedisBus:
    """Doorbells for the tasks a replica watches, and its lease (run in the engine's group)."""

    def __init__(self, store: Doorbells) -> None:
        self._store = store
        #: task key -> its channel, for every task the machine watches.
        self._wanted: dict[str, str] = {}
        self._tasks: dict[str, str] = {}  # channel -> task key
        self._changed = anyio.Event()
        #: How many times the bus (re)connected; for tests and logs.
        self.connections = 0
        #: Redis away, said once per outage: the bus's subscription, and this replica's lease.
        self.outage = Outage(
            "the event bus's Redis",
            log,
            consequence="changes other replicas make are heard of once it is back",
        )
        self.lease_outage = Outage(
            "this replica's lease",
            log,
            went="cannot be renewed",
            back="is renewed again",
            consequence="another replica takes its runs over if that lasts longer than the lease",
        )

    def watch(self, task_key: str) -> None:
        """Ring for ``task_key`` from now on (the machine asked: ``Watch``)."""
        if task_key not in self._wanted:
            channel = self._store.ring_channel(task_key)
            self._wanted[task_key] = channel
            self._tasks[channel] = task_key
            self._changed.set()

    def unwatch(self, task_key: str) -> None:
        """Stop ringing for ``task_key`` (``Unwatch``)."""
        channel = self._wanted.pop(task_key, None)
        if channel is not None:
            self._tasks.pop(channel, None)
            self._changed.set()

    @property
    def watching(self) -> int:
        """How many tasks the bus rings for."""
        return len(self._wanted)

    async def run(
        self,
        ring: Ring,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Keep the lease and the subscriptions until cancelled; ``ring(task_key, events)``
        tells the machine of a change. It reports started once it holds its lease (a run this
        replica starts before would count as nobody's, for another replica to claim), or once
        it tried to, with Redis away (requests then get the store's errors, and the bus keeps
        trying)."""
        try:
            await self._renew()
            task_status.started()
            async with anyio.create_task_group() as group:
                group.start_soon(self._keep_lease)
                await self._subscribe_forever(ring)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                try:
                    await self._store.drop_lease()
                except Exception as error:  # the others will see the lease lapse instead
                    log.warning("could not give up this replica's lease: %r", error)

    async def _keep_lease(self) -> None:
        while True:
            await anyio.sleep(self._store.lease / 3)
            await self._renew()

    async def _renew(self) -> None:
        try:
            await self._store.renew_lease()
        except Exception as error:
            self.lease_outage.failed(error)
        else:
            self.lease_outage.answered()

    async def _subscribe_forever(self, ring: Ring) -> None:
        delay = RECONNECT_FIRST
        while True:
            try:
                # A lost connection ends here, so that every task is subscribed to (and rung)
                # again.
                channel = await self._store.subscriber()
                async with channel as pubsub:
                    self.connections += 1
                    self.outage.answered()
                    delay = RECONNECT_FIRST
                    async with anyio.create_task_group() as group:
                        group.start_soon(self._listen, pubsub, ring)
                        await self._follow_wanted(pubsub, ring)
            except Exception as error:
                self.outage.failed(f"{error!r}; reconnecting, at most {RECONNECT_MAX:g} s apart")
            await anyio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX)

    async def _follow_wanted(self, pubsub: Any, ring: Ring) -> None:
        """Subscribe to what is wanted and unsubscribe from what is not, as it changes. Each
        new subscription rings its task once acknowledged: a change may have come before."""
        subscribed: set[str] = set()
        while True:
            self._changed = anyio.Event()
            wanted = set(self._tasks)
            new = sorted(wanted - subscribed)
            gone = sorted(subscribed - wanted)
            if gone:
                await pubsub.unsubscribe(*gone)
                subscribed.difference_update(gone)
            if new:
                await pubsub.subscribe(*new)
                subscribed.update(new)
                for channel in new:
                    task_key = self._tasks.get(channel)
                    if task_key is not None:
                        await ring(task_key, ())
            if set(self._tasks) == subscribed:
                await self._changed.wait()

    async def _listen(self, pubsub: Any, ring: Ring) -> None:
        me = self._store.replica.encode()
        while True:
            message = await pubsub.get_message()
            channel, data = _text(message["channel"]), message["data"]
            task_key = self._tasks.get(channel)
            if task_key is None:
                continue
            sender, _, logged = _bytes(data).partition(b"\n")
            if sender != me:  # our own commits we know of already
                await ring(task_key, _events(logged))


def _events(logged: bytes) -> tuple[LoggedEvent, ...]:
    """The events a ring carried (number, then text, a line each), or none if they would not
    decode: then whoever follows the task reads its log, as for a ring that carried none."""
    lines = logged.split(b"\n") if logged else []
    try:
        return tuple(
            LoggedEvent(int(lines[n]), load_event(lines[n + 1])) for n in range(0, len(lines), 2)
        )
    except (ValueError, IndexError, UsageError) as error:
        log.warning("a doorbell carried events that did not decode (%s); reading the log", error)
        return ()


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _bytes(value: str | bytes) -> bytes:
    return value.encode() if isinstance(value, str) else value
