"""Delivering push notifications: the core's ``Notify`` effects, POSTed to webhooks.

Written on anyio and httpx, so the same sender serves the asyncio and the trio adapter.

* **Order without interference.** Deliveries to one webhook of one task (``task_id``,
  ``config_id``) go out one at a time, in event order, from their own queue; a slow or failing
  webhook delays only its own queue, never the task or any other webhook. With replicas, the
  events of one task may be committed by several servers, each of which owes the webhook its
  own: a sender told of the others (:attr:`PushSender.ahead`, which the engine sets from a store
  shared by replicas) holds a notification back while another server still owes an earlier one
  of the same webhook, or this one does and has not handed it to the sender yet (one it claimed
  from a replica that died: polling, for at most ``order_wait`` seconds).
* **Retries.** A delivery that fails for a reason that may pass (connection error, timeout, 408,
  429, 5xx) is retried with exponential backoff up to ``max_attempts`` times; a redirect or
  another 4xx is final. Each attempt has a ``timeout`` (10 s by default, as the spec advises).
* **The SSRF guard** (``a2a_core.transport.address_allowed``), on unless the host is
  allow-listed: the host is resolved, *every* address it resolves to must be allowed, and the
  request is sent to the checked address itself (with the original ``Host`` header and TLS server
  name), so a DNS answer that changes between the check and the connection (rebinding) cannot
  redirect it. Redirects are never followed.
* **Contained failures.** Whatever goes wrong with one delivery (a config the HTTP client
  refuses, a resolver error, a bug) is logged with its cause and ends that delivery only; the
  sender, the other webhooks and the engine go on.
* **Draining.** On shutdown the engine waits (within its graceful period) for :meth:`drain`:
  every queued notification sent, or given up on.
"""

import bisect
import ipaddress
import logging
import math
import socket
from collections import deque
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx

from a2a_core.transport import Notify, address_allowed

from ._telemetry import Telemetry

if TYPE_CHECKING:
    from opentelemetry.context import Context

    from ._telemetry import PushSpan, _Untraced

__all__ = ["PushSender", "Resolver", "resolve_host"]

log = logging.getLogger("a2a_adapters.push")

#: Resolves a host name to the addresses to try: ``await resolve(host, port)``.
Resolver = Callable[[str, int], Awaitable[list[str]]]
#: Seconds between looks at whether another server still owes an earlier notification
#: (doubling up to the max).
ORDER_POLL_FIRST, ORDER_POLL_MAX = 0.02, 0.5


async def resolve_host(host: str, port: int) -> list[str]:
    """The host's addresses, via the system resolver (in a worker thread, as anyio does it)."""
    found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(sockaddr[0]) for *_, sockaddr in found))


class _Outcome(Enum):
    DELIVERED = "delivered"
    RETRY = "retry"
    FINAL = "final"


async def _ignore(notify: Notify, attempts: int | None) -> None:
    """What a sender reports to when nobody keeps an outbox."""


class _Refused(Exception):
    """The SSRF guard refused the webhook's address."""


class PushSender:
    """Sends ``Notify`` effects; :meth:`run` must be running (it owns the delivery tasks)."""

    def __init__(
        self,
        *,
        resolve: Resolver = resolve_host,
        timeout: float = 10.0,
        max_attempts: int = 5,
        first_backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_queued: int = 1000,
        order_wait: float = 60.0,
    ) -> None:
        self._resolve = resolve
        self._order_wait = order_wait
        self._timeout = timeout
        self._max_attempts = max_attempts
        self._first_backoff = first_backoff
        self._max_backoff = max_backoff
        self._max_queued = max_queued
        self._queues: dict[tuple[str, str], deque[Notify]] = {}
        # Per queue, the latest event taken off it (sent, or being sent): what :attr:`ahead`
        # is told, so that it counts only this server's notifications not handed over yet.
        self._handled: dict[tuple[str, str], int] = {}
        # Dropped from a full queue, to be reported (send() cannot await the report).
        self._dropped: list[Notify] = []
        # New queues are announced to run(), which starts a task to drain each.
        self._announce, self._announced = anyio.create_memory_object_stream[tuple[str, str]](
            math.inf
        )
        #: Set whenever nothing is queued or in flight.
        self._idle = anyio.Event()
        self._idle.set()
        #: Told how each notification fares: ``(notify, None)`` once it is delivered or given
        #: up on, ``(notify, n)`` when its n-th attempt failed and it will be tried again. The
        #: engine keeps the store's outbox by it, so that a restart resumes where this stopped.
        self.report: Callable[[Notify, int | None], Awaitable[None]] = _ignore
        #: Notifications given up on: retries exhausted, or dropped from a full queue.
        self.given_up = 0
        self._flying = 0
        #: ``ahead(notify, handled)``: whether another server still owes an earlier notification
        #: of the same task to the same webhook, or this one does after event ``handled`` (the
        #: latest this sender took off that webhook's queue), not handed to the sender yet
        #: (``None``: no other server delivers this store's notifications). Set by the engine
        #: for a store shared by replicas; a notification waits while it says so.
        self.ahead: Callable[[Notify, int], Awaitable[bool]] | None = None
        #: Spans and counts of the attempts: none until the engine gives its own.
        self.telemetry = Telemetry(enabled=False)
        #: The context current when each notification was queued (telemetry on), by
        #: (task, config, event): its delivery spans are children of it.
        self._contexts: dict[tuple[str, str, int], Context] = {}

    def send(self, notify: Notify) -> None:
        """Queue a delivery (never blocks)."""
        context = self.telemetry.context()
        if context is not None:
            self._contexts[notify.task_id, notify.config_id, notify.seq] = context
        key = (notify.task_id, notify.config_id)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
            self._announce.send_nowait(key)
            if self._idle.is_set():
                self._idle = anyio.Event()
        elif len(queue) >= self._max_queued:
            dropped = queue.popleft()
            log.warning(
                "webhook %s is %d events behind: dropped event %d of task %s",
                dropped.url,
                len(queue) + 1,
                dropped.seq,
                dropped.task_id,
            )
            self.given_up += 1
            self._dropped.append(dropped)
            self._contexts.pop((dropped.task_id, dropped.config_id, dropped.seq), None)
        if queue and queue[-1].seq > notify.seq:
            # An earlier event's, handed out late (a dead replica's, claimed by this server while
            # a later one waits for it): it goes first.
            bisect.insort(queue, notify, key=lambda n: n.seq)
        else:
            queue.append(notify)

    @property
    def pending(self) -> int:
        """Notifications queued or being delivered (a retry's wait included)."""
        return self._flying + sum(len(queue) for queue in self._queues.values())

    async def drain(self) -> None:
        """Return once every queued notification has been sent or given up on."""
        while not self._idle.is_set():
            await self._idle.wait()

    async def run(self) -> None:
        """Deliver until cancelled."""
        transport = httpx.AsyncHTTPTransport(retries=0)
        async with (
            httpx.AsyncClient(
                transport=transport, follow_redirects=False, trust_env=False
            ) as client,
            anyio.create_task_group() as tasks,
            self._announced,
        ):
            async for key in self._announced:
                tasks.start_soon(self._drain, key, client)

    async def _drain(self, key: tuple[str, str], client: httpx.AsyncClient) -> None:
        queue = self._queues[key]
        try:
            while queue:
                await self._await_turn(key, queue)
                # Taken off the queue before it is sent, so that an overflow drops the oldest
                # *waiting* event, never the one in flight.
                notify = queue.popleft()
                self._handled[key] = max(self._handled.get(key, 0), notify.seq)
                self._flying += 1
                try:
                    await self._deliver(notify, client)
                except Exception:
                    self.given_up += 1
                    log.exception(
                        "push notification %d of task %s to %s failed; dropped it",
                        notify.seq,
                        notify.task_id,
                        notify.url,
                    )
                finally:
                    self._flying -= 1
                await self._reported(notify, None)
                while self._dropped:
                    await self._reported(self._dropped.pop(), None)
        finally:
            del self._queues[key]
            self._handled.pop(key, None)
            if not self._queues:
                self._idle.set()

    async def _await_turn(self, key: tuple[str, str], queue: deque[Notify]) -> None:
        """Return once no server owes an earlier notification than the head of ``queue`` that
        is not in it or sent (or after ``order_wait`` seconds: an entry left owed for good, whose
        delivery its server failed to record, holds nothing back forever)."""
        if self.ahead is None:
            return
        deadline = anyio.current_time() + self._order_wait
        delay = ORDER_POLL_FIRST
        while True:
            head = queue[0]
            try:
                waiting = await self.ahead(head, self._handled.get(key, 0))
            except Exception as error:  # the store is away: it cannot say, so ask again
                log.warning("could not tell whether an earlier notification is owed: %s", error)
                waiting = True
            if queue[0] is not head:
                continue  # an earlier one came meanwhile: ask about it
            if not waiting:
                return
            if anyio.current_time() >= deadline:
                log.warning(
                    "webhook %s: an earlier notification of task %s than event %d is still "
                    "owed elsewhere after %gs; sending it anyway",
                    head.url,
                    head.task_id,
                    head.seq,
                    self._order_wait,
                )
                return
            await anyio.sleep(delay)
            delay = min(delay * 2, ORDER_POLL_MAX)

    async def _reported(self, notify: Notify, attempts: int | None) -> None:
        try:
            await self.report(notify, attempts)
        except Exception:
            log.exception(
                "the end of push notification %d of task %s was not recorded",
                notify.seq,
                notify.task_id,
            )

    async def _deliver(self, notify: Notify, client: httpx.AsyncClient) -> None:
        parent = self._contexts.pop((notify.task_id, notify.config_id, notify.seq), None)
        # A notification a restart found owed goes on from the attempts it had made.
        for attempt in range(notify.attempts + 1, self._max_attempts + 1):
            last = attempt >= self._max_attempts
            with self.telemetry.push(notify, attempt, parent) as traced:
                outcome = await self._attempt(notify, client, traced, last)
            if outcome is not _Outcome.RETRY:
                return
            if attempt < self._max_attempts:
                await self._reported(notify, attempt)
                delay = min(self._first_backoff * 2 ** (attempt - 1), self._max_backoff)
                await anyio.sleep(delay)
        self.given_up += 1
        log.warning(
            "gave up on webhook %s for task %s event %d after %d attempts",
            notify.url,
            notify.task_id,
            notify.seq,
            self._max_attempts,
        )

    async def _attempt(
        self,
        notify: Notify,
        client: httpx.AsyncClient,
        traced: "PushSpan | _Untraced",
        last: bool = False,
    ) -> _Outcome:
        outcome, status, error = await self._post(notify, client, traced)
        # What telemetry says: delivered, failed and to be tried again, or failed for good.
        retried = outcome is _Outcome.RETRY and not last
        traced.ended(
            "delivered" if outcome is _Outcome.DELIVERED else "retry" if retried else "failed",
            status,
            error,
        )
        return outcome

    async def _post(
        self, notify: Notify, client: httpx.AsyncClient, traced: "PushSpan | _Untraced"
    ) -> tuple[_Outcome, int | None, str]:
        """How one attempt fared: its outcome, the webhook's status if it answered, and why
        it failed if it did not."""
        try:
            url, headers, extensions = await self._target(notify)
            traced.sending(url, headers)
            response = await client.post(
                url,
                content=notify.body,
                headers=headers,
                extensions=extensions,
                timeout=self._timeout,
            )
        except _Refused as refused:
            log.warning("webhook %s refused by the SSRF guard: %s", notify.url, refused)
            return _Outcome.FINAL, None, "refused"
        except httpx.LocalProtocolError as error:
            log.exception("webhook %s: the notification cannot be sent", notify.url)
            return _Outcome.FINAL, None, type(error).__qualname__
        except (httpx.TransportError, OSError) as error:
            log.info("webhook %s failed (%s); will retry", notify.url, type(error).__name__)
            return _Outcome.RETRY, None, type(error).__qualname__
        except Exception as error:
            # Not the network: the request itself cannot be made (httpx refuses a header or
            # the URL, the host name cannot be encoded...). Trying again cannot help.
            log.exception("webhook %s: the notification cannot be sent", notify.url)
            return _Outcome.FINAL, None, type(error).__qualname__
        status = response.status_code
        if 200 <= status < 300:
            return _Outcome.DELIVERED, status, ""
        if status in (408, 425, 429) or status >= 500:
            return _Outcome.RETRY, status, ""
        log.warning("webhook %s answered %d; not retrying", notify.url, status)
        return _Outcome.FINAL, status, ""

    async def _target(self, notify: Notify) -> tuple[str, dict[str, str], dict[str, Any]]:
        """Where to connect: the checked address itself, when the guard applies."""
        headers = dict(notify.headers)
        if not notify.guarded:
            return notify.url, headers, {}
        parts = urlsplit(notify.url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            addresses = [str(ipaddress.ip_address(host))]
        except ValueError:
            addresses = await self._resolve(host, port)
        refused = [a for a in addresses if not address_allowed(a)]
        if not addresses or refused:
            raise _Refused(
                f"{host} resolves to {', '.join(refused) or 'nothing'}; "
                f"--push-allow-host {host} (push_allow_hosts) allows it"
            )
        address = addresses[0]
        literal = f"[{address}]" if ":" in address else address
        netloc = f"{literal}:{parts.port}" if parts.port else literal
        pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
        headers["host"] = parts.netloc.rpartition("@")[2]
        extensions: dict[str, Any] = {"sni_hostname": host} if parts.scheme == "https" else {}
        return pinned, headers, extensions
