"""How the Redis store and its event bus log in: a password, ACL users (with a password, with
none, disabled, lacking a command or a channel), TLS with and without verifying the
certificate, a Unix socket. Against a real ``redis-server`` with ACL users the test makes;
whoever Redis says each connection is logged in as (``CLIENT LIST``) is what is checked.

A refused login is the store's :class:`StoreUnavailable`, promptly, in Redis's own words (which
name the cause: ``WRONGPASS``, a certificate that did not verify) and never with the password in
it. A command, key or channel the user may not use is :class:`StoreMisconfigured`, naming it and
the ``ACL SETUSER`` that grants it; a commit refused so has written nothing.
"""

import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from a2a_adapters.stores import RedisStore, StoreMisconfigured, StoreUnavailable
from a2a_adapters.stores._redis_resp import RespError, command, parse
from a2a_core.store import Put, Reads
from tests.a2a_adapters.redis_server import RedisServer
from tests.a2a_adapters.stores.test_conformance import record
from tests.a2a_adapters.tls import self_signed

LOOPS = ("asyncio", "trio")
PASSWORD = "s3cret"
#: The ACL users of the module's Redis, by name: their rules.
USERS = {
    "alice": ["on", ">alice-pw", "~*", "&*", "+@all"],
    "carol": ["on", "nopass", "~*", "&*", "+@all"],  # no password at all
    "bob": ["on", ">bob-pw", "~*", "&*", "+@all", "-evalsha"],
    "dave": ["on", ">dave-pw", "~*", "&*", "+@all", "-script|load"],
    "eve": ["off", ">eve-pw", "~*", "&*", "+@all"],  # disabled
    "frank": ["on", ">frank-pw", "~*", "+@all"],  # no channel: Redis 7's default for a user
    "grace": ["on", ">p@ss/w#rd?", "~*", "&*", "+@all"],  # a URL must percent-encode it
    "h@l:": ["on", ">h-pw", "~*", "&*", "+@all"],  # and a name like this one
    "ivan": ["on", ">ivan-pw", "~*", "&*", "+@all", "-@write"],  # reads only
    "judy": ["on", ">judy-pw", "~*", "&*", "+@all", "-publish"],
}
#: Bounds a refusal comes within (the store's connect timeout, and some).
PROMPTLY = 2.0


def admin(server: RedisServer, *words: str | bytes | int) -> Any:
    """One command on a connection of the test's own, logged in as the default user."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as plain:
        plain.sendall(command("AUTH", PASSWORD) + command(*words))
        data, replies = b"", list[Any]()
        while len(replies) < 2:
            data += plain.recv(65536)
            while (found := parse(data)) is not None:
                reply, end = found
                replies.append(reply)
                data = data[end:]
    assert replies[0] == b"OK"
    return replies[1]


def logged_in(server: RedisServer, user: str) -> list[str]:
    """The last command of each connection Redis has logged in as ``user``."""
    listing = admin(server, "CLIENT", "LIST")
    assert isinstance(listing, bytes)
    found = []
    for line in listing.decode().splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if fields.get("user") == user:
            found.append(fields["cmd"])
    return found


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed(tmp_path_factory.mktemp("redis-login"))


@pytest.fixture(scope="module")
def server(certificate: tuple[Path, Path]) -> Iterator[RedisServer]:
    with RedisServer(password=PASSWORD, tls=certificate) as running:
        for user, rules in USERS.items():
            assert admin(running, "ACL", "SETUSER", user, *rules) == b"OK"
        yield running


def url(server: RedisServer, login: str, *, tls: bool = False, query: str = "") -> str:
    """A URL of the module's Redis with ``login`` (``user:password@``, ``:password@``...)."""
    if tls:
        return f"rediss://{login}127.0.0.1:{server.tls_port}/0{query}"
    return f"redis://{login}127.0.0.1:{server.port}/0{query}"


def ca(server: RedisServer) -> str:
    assert server.tls is not None
    return f"?ssl_ca_certs={server.tls[0]}"


@asynccontextmanager
async def subscribed(store: RedisStore, *channels: str) -> AsyncIterator[list[dict[str, Any]]]:
    """The store's event-bus subscriber on ``channels``, its messages gathered as they come."""
    got: list[dict[str, Any]] = []
    async with await store.subscriber() as subscriber, anyio.create_task_group() as group:

        async def gather() -> None:
            while True:
                got.append(await subscriber.get_message())

        group.start_soon(gather)
        await subscriber.subscribe(*channels)
        yield got
        group.cancel_scope.cancel()


async def until(check: Any) -> None:
    with anyio.fail_after(5):
        while not check():  # noqa: ASYNC110  what it waits for is another task's list
            await anyio.sleep(0.005)


async def used(store: RedisStore, task_id: str) -> None:
    """A commit, a read of it, and its doorbell heard by the store's own subscriber."""
    async with subscribed(store, store.ring_channel(task_id)) as rings:
        assert await store.commit([Put(record(task_id), 0)])
        assert (await store.read(Reads(task_id=task_id))).task is not None
        await until(lambda: len(rings) == 1)


def refused(store: RedisStore, call: str = "read") -> StoreUnavailable:
    """The store's refusal of a ``call``, which came promptly."""

    async def scenario() -> StoreUnavailable:
        started = time.monotonic()
        try:
            if call == "read":
                await store.read(Reads(task_id="t1"))
            else:
                await store.commit([Put(record("refused"), 0)])
        except StoreUnavailable as failure:
            assert time.monotonic() - started < PROMPTLY
            return failure
        finally:
            await store.aclose()
        raise AssertionError(f"{call} was not refused")

    return anyio.run(scenario)


# --- who the store logs in as -------------------------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("link", ["tcp", "tls"])
def test_a_user_and_password_log_in_as_that_user(server: RedisServer, loop: str, link: str) -> None:
    tls = link == "tls"
    store = RedisStore(
        url(server, "alice:alice-pw@", tls=tls, query=ca(server) if tls else ""),
        prefix=f"alice-{loop}-{link}",
    )

    async def scenario() -> None:
        try:
            await used(store, "t1")
            async with subscribed(store, "ring:alice"):
                commands = logged_in(server, "alice")
                assert "evalsha" in commands  # the calls' connection
                assert "subscribe" in commands  # the bus's
        finally:
            await store.aclose()

    anyio.run(scenario, backend=loop)


def test_a_user_with_no_password_is_logged_in_as_that_user(server: RedisServer) -> None:
    # Not as the default user: a URL naming a user means that user, password or none.
    store = RedisStore(url(server, "carol@"), prefix="carol")

    async def scenario() -> None:
        try:
            await used(store, "t1")
            async with subscribed(store, "ring:carol"):
                assert sorted(logged_in(server, "carol")) == ["evalsha", "subscribe"]
        finally:
            await store.aclose()

    anyio.run(scenario)


def test_a_password_alone_logs_in_as_the_default_user(server: RedisServer) -> None:
    store = RedisStore(url(server, f":{PASSWORD}@"), prefix="default")

    async def scenario() -> None:
        try:
            await used(store, "t1")
            assert "evalsha" in logged_in(server, "default")
        finally:
            await store.aclose()

    anyio.run(scenario)


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("login", "secret"),
    [
        ("alice:wrong-pw@", "wrong-pw"),
        (":not-it@", "not-it"),
        ("eve:eve-pw@", "eve-pw"),  # a disabled user
        ("nobody:nobody-pw@", "nobody-pw"),
    ],
)
def test_a_refused_login_says_so_in_redis_words_without_the_password(
    server: RedisServer, login: str, secret: str
) -> None:
    failure = refused(RedisStore(url(server, login), prefix="refused", connect_timeout=0.5))
    message = str(failure)
    assert "WRONGPASS" in message
    assert secret not in message
    assert ":***@" in message
    assert isinstance(failure.__cause__, RespError)


def test_no_login_where_redis_wants_one_is_refused_in_redis_words(server: RedisServer) -> None:
    failure = refused(RedisStore(url(server, ""), prefix="anonymous", connect_timeout=0.5))
    # (Redis 7 answers an unauthenticated request of more than ten words with a protocol
    # error that says as much, and closes the connection.)
    assert "NOAUTH" in str(failure) or "unauthenticated" in str(failure)

    assert str(anyio.run(bus_refusal, url(server, ""))).startswith("NOAUTH")


async def bus_refusal(store_url: str) -> RespError:
    """What the event bus's subscriber hears of a subscription Redis refused."""
    store = RedisStore(store_url, prefix="bus-refusal")
    try:
        async with await store.subscriber() as subscriber, anyio.create_task_group() as group:
            group.start_soon(subscriber.subscribe, "ring:refused")
            with anyio.fail_after(5):
                try:
                    await subscriber.get_message()
                except RespError as error:
                    group.cancel_scope.cancel()  # (the subscription's wait for Redis's word)
                    return error
    finally:
        await store.aclose()
    raise AssertionError("the subscription was not refused")


def test_a_user_not_allowed_evalsha_is_told_so_by_name(server: RedisServer) -> None:
    store = RedisStore(url(server, "bob:bob-pw@"), prefix="bob")

    async def scenario() -> None:
        try:
            await store.ping()  # logged in: what is refused is the command
            started = time.monotonic()
            with pytest.raises(StoreMisconfigured, match=r"NOPERM .*'evalsha'") as failure:
                await store.read(Reads(task_id="t1"))
            assert time.monotonic() - started < PROMPTLY
            assert "ACL SETUSER bob +evalsha ~bob:*" in str(failure.value)
            assert "bob-pw" not in str(failure.value)
            with pytest.raises(StoreMisconfigured, match=r"NOPERM .*'evalsha'"):
                await store.commit([Put(record("t1"), 0)])
            await store.ping()  # and the connection goes on
        finally:
            await store.aclose()

    anyio.run(scenario)


def test_a_user_not_allowed_to_load_scripts_works_only_while_redis_has_them(
    server: RedisServer,
) -> None:
    dave = RedisStore(url(server, "dave:dave-pw@"), prefix="dave")
    alice = RedisStore(url(server, "alice:alice-pw@"), prefix="dave")

    async def scenario() -> None:
        try:
            assert admin(server, "SCRIPT", "FLUSH") == b"OK"
            with pytest.raises(StoreMisconfigured, match=r"NOPERM .*'script\|load'") as failure:
                await dave.read(Reads(task_id="t1"))
            assert "ACL SETUSER dave +script|load" in str(failure.value)
            await alice.read(Reads(task_id="t1"))  # loads the scripts...
            assert (await dave.read(Reads(task_id="t1"))).task is None  # ...which dave may run
        finally:
            await dave.aclose()
            await alice.aclose()

    anyio.run(scenario)


def test_a_user_not_allowed_the_doorbell_channels_has_its_subscription_refused(
    server: RedisServer,
) -> None:
    refusal = str(anyio.run(bus_refusal, url(server, "frank:frank-pw@")))
    assert refusal.startswith("NOPERM")
    assert "channel" in refusal


@pytest.mark.parametrize(
    ("user", "refused", "grant"),
    [
        # No channel at all (Redis 7's default for a new user): the doorbell's PUBLISH.
        ("frank", "'publish' on the channel {p}:{{t1}}:ring", "ACL SETUSER frank &{p}:*"),
        ("judy", "'publish' on the channel {p}:{{t1}}:ring", "ACL SETUSER judy &{p}:*"),
        # Reads only: the first write the commit would make.
        ("ivan", "'hset' on the key {p}:{{t1}}", "ACL SETUSER ivan +hset ~{p}:*"),
    ],
)
def test_a_commit_by_a_user_not_allowed_a_command_it_needs_is_refused_and_writes_nothing(
    server: RedisServer, user: str, refused: str, grant: str
) -> None:
    # Redis keeps what a script wrote before a command of it failed: the commit checks every
    # command and channel it needs before its first write, and says which one is missing.
    prefix = f"refused-{user}"
    store = RedisStore(url(server, f"{user}:{user}-pw@"), prefix=prefix)
    keys = f"{prefix}:*"

    async def scenario() -> None:
        try:
            started = time.monotonic()
            with pytest.raises(StoreMisconfigured) as failure:
                await store.commit([Put(record("t1"), 0)])
            assert time.monotonic() - started < PROMPTLY
            message = str(failure.value)
            assert f"NOPERM this user may not run {refused.format(p=prefix)}" in message
            assert grant.format(p=prefix) in message
            assert f"{user}-pw" not in message
            assert (await store.read(Reads(task_id="t1"))).task is None
        finally:
            await store.aclose()

    anyio.run(scenario)
    assert admin(server, "KEYS", keys) == []  # not a key of it written


def test_a_commit_refused_for_its_doorbell_is_applied_once_the_channels_are_granted(
    server: RedisServer,
) -> None:
    assert admin(server, "ACL", "SETUSER", "kim", "on", ">kim-pw", "~*", "+@all") == b"OK"
    store = RedisStore(url(server, "kim:kim-pw@"), prefix="kim")

    async def scenario() -> None:
        try:
            with pytest.raises(StoreMisconfigured, match="ACL SETUSER kim &kim:"):
                await store.commit([Put(record("t1"), 0)])
            assert admin(server, "ACL", "SETUSER", "kim", "&kim:*") == b"OK"
            await used(store, "t1")  # committed, read, and its doorbell heard
        finally:
            await store.aclose()

    anyio.run(scenario)


@pytest.mark.parametrize(
    ("user", "login"),
    [("grace", "grace:p%40ss%2Fw%23rd%3F@"), ("h@l:", "h%40l%3A:h-pw@")],
)
def test_a_percent_encoded_user_and_password_are_decoded(
    server: RedisServer, user: str, login: str
) -> None:
    store = RedisStore(url(server, login), prefix=f"decoded-{user}")

    async def scenario() -> None:
        try:
            await used(store, "t1")  # the store's calls and the bus's subscriber alike
            async with subscribed(store, "ring:decoded"):
                assert sorted(logged_in(server, user)) == ["evalsha", "subscribe"]
        finally:
            await store.aclose()

    anyio.run(scenario)
    assert store.where.endswith(f":***@127.0.0.1:{server.port}/0")  # no password shown


# --- TLS and sockets ----------------------------------------------------------------------------


def test_tls_refuses_a_certificate_it_cannot_verify(server: RedisServer) -> None:
    # rediss:// verifies unless told not to: a self-signed certificate with no ssl_ca_certs.
    failure = refused(RedisStore(url(server, f":{PASSWORD}@", tls=True), prefix="tls"))
    assert "CERTIFICATE_VERIFY_FAILED" in str(failure)
    assert PASSWORD not in str(failure)


@pytest.mark.parametrize("loop", LOOPS)
def test_tls_without_verifying_when_told_so(server: RedisServer, loop: str) -> None:
    unverified = url(server, f":{PASSWORD}@", tls=True, query="?ssl_cert_reqs=none")
    store = RedisStore(unverified, prefix=f"unverified-{loop}")

    async def scenario() -> None:
        try:
            await used(store, "t1")
        finally:
            await store.aclose()

    anyio.run(scenario, backend=loop)


@pytest.mark.parametrize(
    ("tls", "said"),
    [
        (False, "Redis closed the connection"),  # (Redis's TLS port took plain text for a hello)
        (True, "no connection to Redis within 1 s"),  # (and Redis waits for a line's end)
    ],
)
def test_the_wrong_side_of_tls_is_refused_within_the_connect_timeout(
    server: RedisServer, tls: bool, said: str
) -> None:
    # rediss:// to the plain port, or redis:// to the TLS port: neither waits out the timeout
    # of a call, and each says what it saw.
    port = server.port if tls else server.tls_port
    scheme = "rediss" if tls else "redis"
    wrong = f"{scheme}://:{PASSWORD}@127.0.0.1:{port}/0{ca(server) if tls else ''}"
    failure = refused(RedisStore(wrong, prefix="wrong-side", connect_timeout=1, timeout=5))
    assert said in str(failure)
    assert PASSWORD not in str(failure)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_unix_socket_with_a_password(loop: str) -> None:
    async def scenario(socket_url: str) -> None:
        store = RedisStore(socket_url, prefix="unix")
        try:
            await used(store, "t1")
        finally:
            await store.aclose()

    with RedisServer(unix_socket=True, password=PASSWORD) as running:
        assert running.url.startswith(f"unix://:{PASSWORD}@/")
        anyio.run(scenario, running.url, backend=loop)
