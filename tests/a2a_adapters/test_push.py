"""The PushSender on its own: ``Notify`` effects POSTed to a real webhook receiver on 127.0.0.1.

Each test runs the sender's ``run()`` in an anyio task group (on asyncio and on trio) and hands
it ``a2a_core.transport.Notify`` values, as the engine does. The receiver is a real HTTP server
in a thread.

The network the sender sees is fenced in (the ``egress`` fixture): every request it makes is
recorded, and one to anything other than 127.0.0.1 is refused before a socket is opened. So a
guard that let a private address through shows up as a recorded attempt, never as a real
connection; host names are resolved only by stubs (the sender's ``resolve=`` and the fence's own
table), never by DNS.
"""

import itertools
import json
import logging
import re
import socket
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import attrs
import httpx
import pytest

from a2a_adapters import PushSender, Resolver
from a2a_core.transport import Notify
from tests.a2a_adapters.webhooks import (
    DELIVERY_TIMEOUT,
    Answer,
    Delivery,
    Receiver,
    await_deliveries,
    receiving,
)

pytestmark = pytest.mark.anyio


#: A globally routable address (example.com's): only ever a stub's answer, never connected to.
PUBLIC_ADDRESS = "93.184.216.34"
WORKING = "TASK_STATE_WORKING"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


#: The sender is written on anyio: the core behaviours are checked on trio as well.
both_backends = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as running:
        yield running


@pytest.fixture
def other_receiver() -> Iterator[Receiver]:
    with receiving() as running:
        yield running


# --- the fenced network ---------------------------------------------------------------------------


@dataclass
class Egress:
    """Every request the sender tried, and the local names the fence resolves itself."""

    attempts: list[httpx.Request] = field(default_factory=list)
    #: The URL of each attempt, as the sender sent it.
    urls: list[str] = field(default_factory=list)
    #: Host name -> loopback address, for requests the sender sends to a name unresolved.
    hosts: dict[str, str] = field(default_factory=dict)

    def hosts_tried(self) -> list[str]:
        return [httpx.URL(url).host for url in self.urls]


@pytest.fixture
def egress(monkeypatch: pytest.MonkeyPatch) -> Egress:
    fence = Egress()
    original = httpx.AsyncHTTPTransport.handle_async_request

    async def fenced(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
        fence.attempts.append(request)
        fence.urls.append(str(request.url))
        host = request.url.host
        if host in fence.hosts:
            request.url = request.url.copy_with(host=fence.hosts[host])
        elif host != "127.0.0.1":
            raise httpx.ConnectError(f"the test network reaches 127.0.0.1 only, not {host}")
        return await original(self, request)

    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", fenced)
    return fence


@dataclass
class StubResolver:
    """``resolve(host, port)`` from a fixed table; remembers what it was asked."""

    table: Mapping[str, list[str]]
    calls: list[tuple[str, int]] = field(default_factory=list)

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        return list(self.table.get(host, []))


async def no_dns(host: str, port: int) -> list[str]:
    raise AssertionError(f"the sender resolved {host}:{port}, which this test never expects")


# --- helpers ------------------------------------------------------------------------------------


def fast_sender(
    *,
    resolve: Resolver = no_dns,
    max_attempts: int = 5,
    first_backoff: float = 0.01,
    max_backoff: float = 0.05,
    timeout: float = 2.0,
    max_queued: int = 1000,
) -> PushSender:
    """A sender that retries fast enough for tests and never looks a name up in DNS."""
    return PushSender(
        resolve=resolve,
        max_attempts=max_attempts,
        first_backoff=first_backoff,
        max_backoff=max_backoff,
        timeout=timeout,
        max_queued=max_queued,
    )


def notify(
    url: str,
    *,
    seq: int = 1,
    task: str = "task-1",
    config: str = "config-1",
    guarded: bool = False,
    headers: tuple[tuple[str, str], ...] = (("content-type", "application/a2a+json"),),
    body: bytes | None = None,
) -> Notify:
    """One delivery; its body names its ``seq`` unless given."""
    if body is None:
        body = json.dumps({"seq": seq, "task": task, "config": config}).encode()
    return Notify(task, config, seq, url, headers, body, guarded)


def seqs(deliveries: list[Delivery]) -> list[int]:
    return [int(d.json()["seq"]) for d in deliveries]


@asynccontextmanager
async def running(sender: PushSender) -> AsyncIterator[PushSender]:
    """The sender with its ``run()`` going; cancelled afterwards."""
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(sender.run)
        try:
            yield sender
        finally:
            tasks.cancel_scope.cancel()


async def settle(seconds: float = 0.1) -> None:
    """Give a sender that should do nothing more the chance to do it anyway."""
    await anyio.sleep(seconds)


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --- delivery -----------------------------------------------------------------------------------


@both_backends
async def test_delivers_the_body_and_headers_it_is_given(receiver: Receiver) -> None:
    headers = (
        ("content-type", "application/a2a+json"),
        ("authorization", "Bearer s3cret"),
        ("x-a2a-notification-token", "token-1"),
    )
    body = (
        b'{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}'
    )
    async with running(fast_sender()) as sender:
        sender.send(notify(f"{receiver.url}/hooks/a2a?tenant=x", headers=headers, body=body))
        [delivery] = await await_deliveries(receiver, 1)
        await settle()
    assert delivery.method == "POST"
    assert delivery.path == "/hooks/a2a?tenant=x"
    assert delivery.body == body
    assert delivery.headers["content-type"] == "application/a2a+json"
    assert delivery.headers["authorization"] == "Bearer s3cret"
    assert delivery.headers["x-a2a-notification-token"] == "token-1"
    assert delivery.headers["content-length"] == str(len(body))
    assert delivery.headers["host"] == f"127.0.0.1:{receiver.port}"
    assert len(receiver.deliveries()) == 1, "a delivered event was sent again"


async def test_send_never_blocks_even_before_run_starts(receiver: Receiver) -> None:
    sender = fast_sender()
    started = time.monotonic()
    for seq in range(1, 51):
        sender.send(notify(f"{receiver.url}/queued", seq=seq))
    assert time.monotonic() - started < 0.5
    async with running(sender):
        delivered = await await_deliveries(receiver, 50)
    assert seqs(delivered) == list(range(1, 51))


# --- retries ------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
async def test_a_passing_failure_is_retried_until_delivered(
    receiver: Receiver, status: int
) -> None:
    receiver.script("/hook", status, status)
    async with running(fast_sender(max_attempts=5)) as sender:
        sender.send(notify(f"{receiver.url}/hook"))
        attempts = await await_deliveries(receiver, 3)
        await settle()
    assert len(receiver.deliveries()) == 3, "a delivered event was sent again"
    assert [a.body for a in attempts] == [attempts[0].body] * 3


@both_backends
async def test_gives_up_after_max_attempts_and_moves_on(receiver: Receiver) -> None:
    receiver.always("/down", 500)
    async with running(fast_sender(max_attempts=3)) as sender:
        sender.send(notify(f"{receiver.url}/down", seq=1))
        sender.send(notify(f"{receiver.url}/up", seq=2))  # the same webhook queue, next event
        await await_deliveries(receiver, 1, "/up")
        await settle()
    assert seqs(receiver.deliveries("/down")) == [1, 1, 1]
    assert seqs(receiver.deliveries("/up")) == [2]


@both_backends
async def test_it_reports_each_retried_failure_and_every_end(receiver: Receiver) -> None:
    """What the engine keeps the store's outbox by: a restart goes on from what is reported."""
    reports: list[tuple[int, int | None]] = []

    async def report(notified: Notify, attempts: int | None) -> None:
        reports.append((notified.seq, attempts))

    receiver.script("/flaky", 500, 503)
    receiver.always("/down", 500)
    sender = fast_sender(max_attempts=5)
    sender.report = report
    async with running(sender):
        sender.send(notify(f"{receiver.url}/flaky", seq=1))  # fails twice, then delivered
        # Owed from before a restart, with four attempts made: one more is all it gets.
        resumed = attrs.evolve(notify(f"{receiver.url}/down", seq=7, config="c-2"), attempts=4)
        sender.send(resumed)
        await await_deliveries(receiver, 3, "/flaky")
        await await_deliveries(receiver, 1, "/down")
        await sender.drain()
    assert [r for r in reports if r[0] == 1] == [(1, 1), (1, 2), (1, None)]
    assert [r for r in reports if r[0] == 7] == [(7, None)]
    assert len(receiver.deliveries("/down")) == 1
    assert sender.given_up == 1


async def test_backoff_doubles_and_is_capped(receiver: Receiver) -> None:
    receiver.always("/down", 503)
    sender = fast_sender(max_attempts=4, first_backoff=0.1, max_backoff=0.1)
    async with running(sender):
        sender.send(notify(f"{receiver.url}/down"))
        attempts = await await_deliveries(receiver, 4)
    gaps = [b.at - a.at for a, b in itertools.pairwise(attempts)]
    # Each wait is the backoff (0.1, 0.2, 0.4 uncapped), capped at max_backoff = 0.1.
    assert all(gap >= 0.09 for gap in gaps), gaps
    assert gaps[-1] < 0.35, f"the backoff was not capped at max_backoff: {gaps}"

    receiver.always("/slow-down", 503)
    sender = fast_sender(max_attempts=4, first_backoff=0.05, max_backoff=10.0)
    async with running(sender):
        sender.send(notify(f"{receiver.url}/slow-down"))
        attempts = await await_deliveries(receiver, 4, "/slow-down")
    gaps = [b.at - a.at for a, b in itertools.pairwise(attempts)]
    assert [gap >= 0.05 * 2**i * 0.9 for i, gap in enumerate(gaps)] == [True] * 3, gaps


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422])
async def test_a_client_error_is_final(receiver: Receiver, status: int) -> None:
    receiver.always("/hook", status)
    async with running(fast_sender(max_attempts=5)) as sender:
        sender.send(notify(f"{receiver.url}/hook", seq=1))
        sender.send(notify(f"{receiver.url}/next", seq=2))
        await await_deliveries(receiver, 1, "/next")
        await settle()
    assert seqs(receiver.deliveries("/hook")) == [1], "a 4xx answer was retried"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_is_not_followed(
    receiver: Receiver, other_receiver: Receiver, status: int
) -> None:
    location = f"{other_receiver.url}/elsewhere"
    receiver.always("/moved", Answer(status, headers=(("Location", location),)))
    async with running(fast_sender(max_attempts=5)) as sender:
        sender.send(notify(f"{receiver.url}/moved", seq=1))
        sender.send(notify(f"{receiver.url}/next", seq=2))
        await await_deliveries(receiver, 1, "/next")
        await settle()
    assert other_receiver.deliveries() == [], "the sender followed the redirect"
    assert seqs(receiver.deliveries("/moved")) == [1], "a redirect was retried"


@both_backends
async def test_a_connection_error_is_retried(egress: Egress, receiver: Receiver) -> None:
    dead = f"http://127.0.0.1:{closed_port()}/hook"
    async with running(fast_sender(max_attempts=3)) as sender:
        sender.send(notify(dead, seq=1))
        sender.send(notify(f"{receiver.url}/next", seq=2))
        await await_deliveries(receiver, 1, "/next")
    assert egress.urls == [dead, dead, dead, f"{receiver.url}/next"]


@both_backends
async def test_a_timeout_is_retried(receiver: Receiver) -> None:
    receiver.always("/stuck", Answer(delay=2.0))
    sender = fast_sender(max_attempts=2, timeout=0.2)
    async with running(sender):
        sender.send(notify(f"{receiver.url}/stuck", seq=1))
        sender.send(notify(f"{receiver.url}/next", seq=2))
        await await_deliveries(receiver, 1, "/next")
    stuck = receiver.deliveries("/stuck")
    assert seqs(stuck) == [1, 1]
    assert stuck[1].at - stuck[0].at >= 0.2, "the second attempt came before the timeout"


# --- ordering and isolation ---------------------------------------------------------------------


@both_backends
async def test_order_per_task_and_config_survives_retries(receiver: Receiver) -> None:
    receiver.script("/ordered", 500, 503, 200, 429, 200, 200, 502)
    async with running(fast_sender(max_attempts=5)) as sender:
        for seq in range(1, 7):
            sender.send(notify(f"{receiver.url}/ordered", seq=seq))
        await await_deliveries(receiver, 10, "/ordered")
        await settle()
    # 1 fails twice, 2 once, 3 passes, 4 once, 5 and 6 pass: the order never goes back.
    assert seqs(receiver.deliveries("/ordered")) == [1, 1, 1, 2, 2, 3, 4, 4, 5, 6]


@both_backends
async def test_a_notification_waits_while_another_server_owes_an_earlier_one(
    receiver: Receiver,
) -> None:
    # Events 1 and 2 of the task are owed by another server (a replica) until it delivers them;
    # 3 is this server's. Meanwhile another task's notification goes at once.
    owed_elsewhere = {1, 2}
    asked: list[tuple[str, int, int]] = []

    async def ahead(notification: Notify, handled: int) -> bool:
        asked.append((notification.task_id, notification.seq, handled))
        return notification.task_id == "task-1" and any(
            seq < notification.seq for seq in owed_elsewhere
        )

    sender = fast_sender()
    sender.ahead = ahead
    url = f"{receiver.url}/ordered"
    async with running(sender):
        sender.send(notify(url, seq=3))
        sender.send(notify(url, task="task-2", seq=1))
        await await_deliveries(receiver, 1, "/ordered")
        await settle(0.2)
        assert seqs(receiver.deliveries("/ordered")) == [1]  # task-2's, not task-1's 3
        # The other server goes down before delivering them; this one claims them (the engine
        # hands them to its sender as it reads the outbox): they go first, then 3.
        owed_elsewhere.clear()
        sender.send(notify(url, seq=2))
        sender.send(notify(url, seq=1))
        await await_deliveries(receiver, 4, "/ordered")
        await settle()
    task_1 = [d for d in receiver.deliveries("/ordered") if d.json()["task"] == "task-1"]
    assert seqs(task_1) == [1, 2, 3]
    # Each is asked about with the latest event its webhook's queue gave up (sent, or being
    # sent): so that the store counts only this server's owed ones not handed over yet.
    assert ("task-1", 3, 0) in asked
    assert ("task-1", 1, 0) in asked
    assert ("task-1", 2, 1) in asked
    assert ("task-1", 3, 2) in asked
    assert ("task-2", 1, 0) in asked


async def test_a_notification_held_back_too_long_is_sent_anyway(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    async def ahead(notification: Notify, handled: int) -> bool:
        return True  # an earlier one left owed for good (its delivery never recorded)

    sender = PushSender(resolve=no_dns, order_wait=0.2)
    sender.ahead = ahead
    started = time.monotonic()
    async with running(sender):
        sender.send(notify(f"{receiver.url}/late", seq=5))
        [delivered] = await await_deliveries(receiver, 1, "/late")
    assert delivered.at - started >= 0.2
    assert "still owed elsewhere after 0.2s; sending it anyway" in caplog.text


@both_backends
async def test_a_hanging_webhook_delays_no_other(receiver: Receiver) -> None:
    receiver.always("/hangs", Answer(delay=3.0))
    sender = fast_sender(max_attempts=1, timeout=1.0)
    async with running(sender):
        sender.send(notify(f"{receiver.url}/hangs", task="t1", config="slow", seq=1))
        await await_deliveries(receiver, 1, "/hangs")
        sent = time.monotonic()
        # Another config of the same task, and another task.
        sender.send(notify(f"{receiver.url}/fast", task="t1", config="fast", seq=2))
        sender.send(notify(f"{receiver.url}/fast", task="t2", config="slow", seq=3))
        fast = await await_deliveries(receiver, 2, "/fast")
    assert sorted(seqs(fast)) == [2, 3]
    assert max(d.at for d in fast) - sent < 0.5, "a hanging webhook held up other deliveries"


async def test_a_backlog_keeps_the_newest_events_in_order(receiver: Receiver) -> None:
    receiver.script("/busy", Answer(delay=0.3))
    sender = fast_sender(max_queued=3)
    async with running(sender):
        sender.send(notify(f"{receiver.url}/busy", seq=1))
        await await_deliveries(receiver, 1, "/busy")
        for seq in range(2, 11):
            sender.send(notify(f"{receiver.url}/busy", seq=seq))
        await await_deliveries(receiver, 2, "/busy")
        await settle(0.3)
    delivered = seqs(receiver.deliveries("/busy"))
    assert delivered[0] == 1
    assert delivered[-1] == 10, f"the newest event was dropped: {delivered}"
    assert delivered == sorted(set(delivered)), delivered
    assert len(delivered) <= 4, delivered


@pytest.mark.parametrize(("max_queued", "more"), [(1, 1), (3, 5)])
async def test_an_overflow_drops_exactly_the_events_it_reports(
    receiver: Receiver, caplog: pytest.LogCaptureFixture, max_queued: int, more: int
) -> None:
    # The event in flight is not waiting: an overflow may drop only events still queued, and
    # must say which. (It once evicted the one in flight, then lost another without a word.)
    receiver.script("/busy", Answer(delay=0.3))
    last = 1 + more
    with caplog.at_level(logging.WARNING, logger="a2a_adapters.push"):
        async with running(fast_sender(max_queued=max_queued)) as sender:
            sender.send(notify(f"{receiver.url}/busy", seq=1))
            await await_deliveries(receiver, 1, "/busy")  # event 1 is being delivered
            for seq in range(2, last + 1):
                sender.send(notify(f"{receiver.url}/busy", seq=seq))
            await anyio.sleep(0.3)  # event 1's delivery ends
            await settle(0.2)
    delivered = seqs(receiver.deliveries("/busy"))
    dropped = [
        int(found.group(1))
        for record in caplog.records
        if (found := re.search(r"dropped event (\d+)", record.getMessage()))
    ]
    assert not set(delivered) & set(dropped), f"reported dropped, yet delivered: {dropped}"
    assert sorted(delivered + dropped) == list(range(1, last + 1)), (
        f"lost without a word: delivered {delivered}, reported dropped {dropped}"
    )
    assert delivered[-1] == last


# --- the SSRF guard -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "[::1]",
        "169.254.169.254",
        "0.0.0.0",  # noqa: S104  an address the guard refuses, not a bind
        "[::ffff:127.0.0.1]",
        "[::127.0.0.1]",
        "[::169.254.169.254]",
        "[fec0::1]",
    ],
)
async def test_the_guard_refuses_private_addresses_without_connecting(
    egress: Egress, receiver: Receiver, address: str
) -> None:
    resolver = StubResolver({})
    refused = f"http://{address}:{receiver.port}/hook"
    async with running(fast_sender(resolve=resolver, max_attempts=3)) as sender:
        sender.send(notify(refused, seq=1, guarded=True))
        sender.send(notify(f"{receiver.url}/next", seq=2))  # same queue: runs after the refusal
        await await_deliveries(receiver, 1, "/next")
    assert receiver.deliveries("/hook") == []
    assert egress.hosts_tried() == ["127.0.0.1"], "the guard let a private address through"
    assert egress.urls == [f"{receiver.url}/next"]
    assert resolver.calls == [], "an IP literal needs no resolving"


async def test_the_guard_refuses_the_metadata_service(egress: Egress, receiver: Receiver) -> None:
    async with running(fast_sender(resolve=no_dns)) as sender:
        sender.send(notify("http://169.254.169.254/latest/meta-data/", seq=1, guarded=True))
        sender.send(notify(f"{receiver.url}/next", seq=2))
        await await_deliveries(receiver, 1, "/next")
    assert egress.hosts_tried() == ["127.0.0.1"]


@pytest.mark.parametrize(
    "addresses",
    [
        ["127.0.0.1"],
        ["::1"],
        [PUBLIC_ADDRESS, "10.0.0.7"],
        ["192.168.1.20", PUBLIC_ADDRESS],
        [PUBLIC_ADDRESS, "::ffff:169.254.169.254"],
        ["::127.0.0.1"],
        [PUBLIC_ADDRESS, "64:ff9b:1::a00:1"],
        [],
    ],
)
async def test_the_guard_refuses_a_name_unless_every_address_is_public(
    egress: Egress, receiver: Receiver, addresses: list[str]
) -> None:
    resolver = StubResolver({"hooks.test": addresses})
    async with running(fast_sender(resolve=resolver, max_attempts=3)) as sender:
        sender.send(notify(f"http://hooks.test:{receiver.port}/hook", seq=1, guarded=True))
        sender.send(notify(f"{receiver.url}/next", seq=2))
        await await_deliveries(receiver, 1, "/next")
    assert resolver.calls == [("hooks.test", receiver.port)]
    assert egress.hosts_tried() == ["127.0.0.1"], "a refused name was connected to"
    assert receiver.deliveries("/hook") == []


@both_backends
async def test_the_guard_connects_to_the_address_it_checked(egress: Egress) -> None:
    resolver = StubResolver({"hooks.test": [PUBLIC_ADDRESS]})
    async with running(fast_sender(resolve=resolver, max_attempts=1)) as sender:
        sender.send(notify("http://hooks.test:8080/a2a/hook?x=1", seq=1, guarded=True))
        sender.send(notify("https://hooks.test/secure", seq=2, guarded=True))
        deadline = time.monotonic() + 5
        while len(egress.attempts) < 2:
            assert time.monotonic() < deadline, egress.attempts
            await anyio.sleep(0.005)
    plain, secure = egress.attempts
    # Pinned to the resolved address (no second lookup can redirect it), the name kept as Host.
    assert str(plain.url) == f"http://{PUBLIC_ADDRESS}:8080/a2a/hook?x=1"
    assert plain.headers["host"] == "hooks.test:8080"
    assert str(secure.url) == f"https://{PUBLIC_ADDRESS}/secure"
    assert secure.headers["host"] == "hooks.test"
    assert secure.extensions.get("sni_hostname") == "hooks.test"
    assert resolver.calls == [("hooks.test", 8080), ("hooks.test", 443)]


@both_backends
async def test_an_allow_listed_webhook_skips_the_guard(egress: Egress, receiver: Receiver) -> None:
    egress.hosts["receiver.test"] = "127.0.0.1"  # the fence's own local name table
    async with running(fast_sender(resolve=no_dns)) as sender:
        sender.send(notify(f"{receiver.url}/by-address", seq=1, guarded=False))
        sender.send(notify(f"http://receiver.test:{receiver.port}/by-name", seq=2, guarded=False))
        await await_deliveries(receiver, 1, "/by-address")
        [by_name] = await await_deliveries(receiver, 1, "/by-name")
    assert by_name.headers["host"] == f"receiver.test:{receiver.port}"
    assert egress.hosts_tried() == ["127.0.0.1", "receiver.test"]


@both_backends
async def test_the_same_name_guarded_is_refused(egress: Egress, receiver: Receiver) -> None:
    egress.hosts["receiver.test"] = "127.0.0.1"
    resolver = StubResolver({"receiver.test": ["127.0.0.1"]})
    async with running(fast_sender(resolve=resolver)) as sender:
        sender.send(notify(f"http://receiver.test:{receiver.port}/hook", seq=1, guarded=True))
        sender.send(notify(f"{receiver.url}/next", seq=2))
        await await_deliveries(receiver, 1, "/next")
    assert receiver.deliveries("/hook") == []
    assert egress.hosts_tried() == ["127.0.0.1"]


# --- contained failures and draining --------------------------------------------------------


@both_backends
@pytest.mark.parametrize(
    "bad",
    [
        (("x-a2a-notification-token", "caf\u00e9"),),  # non-ASCII: httpx refuses the header
        (("authorization", "Bearer \ud800"),),  # a lone surrogate
        (("x-a2a-notification-token", "a\r\nx-injected: 1"),),
    ],
)
async def test_a_notification_that_cannot_be_sent_harms_no_other(
    receiver: Receiver, bad: tuple[tuple[str, str], ...], caplog: pytest.LogCaptureFixture
) -> None:
    async with running(fast_sender()) as sender:
        sender.send(notify(f"{receiver.url}/same", seq=1, headers=bad))
        sender.send(notify(f"{receiver.url}/same", seq=2))  # the same queue, after it
        sender.send(notify(f"{receiver.url}/other", seq=3, config="config-2"))
        delivered = await await_deliveries(receiver, 2)
        await settle()
        sender.send(notify(f"{receiver.url}/later", seq=4, config="config-3"))
        delivered += await await_deliveries(receiver, 1, path="/later")
    assert sorted(seqs(delivered)) == [2, 3, 4]
    assert "cannot be sent" in caplog.text


@both_backends
async def test_a_resolver_that_fails_is_contained(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(host: str, port: int) -> list[str]:
        raise UnicodeError("label too long")

    async with running(fast_sender(resolve=broken)) as sender:
        sender.send(notify("http://a-name.example/hook", guarded=True))
        sender.send(notify(f"{receiver.url}/fine", seq=2, config="config-2"))
        [delivered] = await await_deliveries(receiver, 1)
    assert seqs([delivered]) == [2]
    assert "UnicodeError" in caplog.text


@both_backends
async def test_drain_waits_for_every_queued_notification(receiver: Receiver) -> None:
    receiver.always("/slow", Answer(delay=0.3))
    async with running(fast_sender()) as sender:
        await sender.drain()  # nothing queued: returns at once
        for seq in range(1, 4):
            sender.send(notify(f"{receiver.url}/slow", seq=seq))
        with anyio.fail_after(DELIVERY_TIMEOUT):
            await sender.drain()
        assert seqs(receiver.deliveries()) == [1, 2, 3]
