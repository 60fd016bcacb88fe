"""Tasks in Redis: the store several server replicas share, on asyncio and trio alike.

Written on anyio, so trio runs it as asyncio does (redis-py's asyncio client would not). Its
calls go out as RESP on bare sockets of its own (``_redis_resp``, ``_redis_calls``: a general
client's pipeline was the largest part of an event's way between replicas); coredis, built on
anyio too, reads the URL's options and serves :meth:`RedisStore.pubsub`.

Each call of the store contract is one Lua script, one round trip: a commit checks every
expected version and message id and then writes the records, their events, message ids,
listing and expiry indexes and owed notifications, all or nothing, and rings each changed
task's doorbell (a PUBLISH) for the replicas streaming it; a read gathers every part of its
snapshot in one consistent view. Redis runs one script at a time, so two replicas racing on
one version are decided there: exactly one wins.

Records and events are kept in their stored form (:func:`a2a_core.store.dump_record`), the same
as SQLite's, with what the scripts need beside them in the task's hash (version, run, state,
status time...), so that no script parses JSON. The keys of one task share a hash tag
(``PREFIX:{KEY}``, ``PREFIX:{KEY}:ev``...); the listing, expiry and claim indexes are global
keys, so a commit touches keys of several slots: the store wants a standalone Redis (or a
primary behind Sentinel), not Cluster. docs/stores.md has the table of keys.

Replicas take over each other's work by leases: every replica's runs and owed notifications are
recorded as its own, and a replica whose lease lapsed (it stopped renewing: it died) has them
claimed by whichever replica asks first (:class:`RunningQuery`, :class:`OutboxQuery`), in the
same script that finds them, so two replicas never both take over one run.
"""

import asyncio
import hashlib
import json
import re
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import coredis
import sniffio
from anyio.lowlevel import RunVar
from coredis.patterns.pubsub import PubSub
from coredis.retry import NoRetryPolicy

from a2a_core.errors import UsageError
from a2a_core.store import (
    Cursor,
    Delete,
    Expired,
    ListQuery,
    LoggedEvent,
    Owner,
    Page,
    Pending,
    Put,
    Reads,
    Snapshot,
    StoreMisconfigured,
    StoreUnavailable,
    TaskRecord,
    Write,
    dump_event,
    load_event,
    load_record,
)

from ._redis_bus import RedisBus
from ._redis_calls import CallPool
from ._redis_lua import COMMIT, OWED, READ, RENEW
from ._redis_pubsub import PubSubConnection
from ._redis_resp import Address, RespError, command
from ._redis_url import redacted, url_problem
from ._rows import from_micros, micros, row

__all__ = ["DEFAULT_URL", "RedisStore"]

#: Where a store connects unless told: database 0 of a Redis on this host.
DEFAULT_URL = "redis://127.0.0.1:6379/0"
#: Digits of an event number in an outbox entry, so that entries sort by number as text.
_SEQ_DIGITS = 20
#: Each script by name: its SHA1 (what EVALSHA names it by) and its source.
_SCRIPTS = {
    name: (hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest(), source)
    for name, source in {"commit": COMMIT, "owed": OWED, "read": READ, "renew": RENEW}.items()
}


class RedisStore:
    """Tasks, their event logs, message ids and owed notifications in a Redis shared by replicas.

    ``url`` is ``redis://[[USER]:PASSWORD@]HOST:PORT/DB``, ``rediss://…`` (TLS) or
    ``unix:///PATH/TO/redis.sock?db=N`` (a user name and password percent-encoded, as
    redis-py reads them). Every key starts with ``prefix:``, so servers of
    different deployments may share one Redis. ``replica`` names this server process among
    the replicas (a random id unless given); ``lease`` is how long, in seconds, a
    :meth:`renew_lease` keeps this replica's runs its own. ``connect_timeout`` and ``timeout``
    bound connecting and each call, so that a Redis that is down or hung makes a call fail
    with :class:`StoreUnavailable` (naming the URL, its password hidden, and the cause) instead
    of hanging. A command, key or channel its user may not use is
    :class:`StoreMisconfigured`, naming it and the ACL rule that grants it.

    One instance serves one event loop at a time (asyncio or trio); it connects lazily, on the
    first call inside the running loop, and again by itself after Redis comes back. A loop it
    was used on that has ended takes its connections with it, so the same instance may serve
    one loop after another (as tests do), and :meth:`aclose` (or :meth:`close`, once the loop
    is gone) ends it; both may be called more than once.

    Leases: a replica that serves on this store should call :meth:`renew_lease` well within
    every ``lease`` seconds for as long as it runs, and :meth:`drop_lease` when it stops
    cleanly. Until it has renewed once, and after its lease lapses, its runs and notifications
    count as nobody's: another replica's :class:`~a2a_core.store.RunningQuery` (or
    :class:`~a2a_core.store.OutboxQuery`) claims them. (So does its own: a replica that
    restarts under the same ``replica`` name should recover before it renews.)

    For the event bus, which follows tasks across replicas: each commit publishes, for every
    task it changed, the committing replica's name on :meth:`ring_channel` ``(key)`` — a
    doorbell meaning "the task's log or record moved: read it from your cursor" (a replica
    ignores its own rings). :attr:`bus` is that bus, which the engine runs (see
    ``_redis_bus``). :meth:`pubsub` gives a coredis
    :class:`~coredis.patterns.pubsub.PubSub` on the same Redis (enter it with ``async with``
    and ``subscribe`` to the channels); a ring may be lost (a reconnect), an event never is,
    so a subscriber re-reads its cursors after reconnecting.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        prefix: str = "a2a",
        replica: str | None = None,
        lease: float = 5.0,
        connect_timeout: float = 1.0,
        timeout: float = 10.0,
    ) -> None:
        problem = url_problem(url)
        if problem is not None:
            raise ValueError(f"{redacted(url)}: {problem}")
        if not prefix or "{" in prefix or "}" in prefix:
            raise ValueError(f"prefix={prefix!r}: expected a non-empty name without braces")
        if not lease > 0:
            raise ValueError(f"lease={lease!r}: expected a number of seconds above 0")
        self.url = url
        #: The URL with its password hidden, as messages show it.
        self.where = redacted(url)
        #: The start of every key of this store.
        self.prefix = prefix
        #: This server process's name among the replicas sharing the store.
        self.replica = replica if replica is not None else uuid.uuid4().hex[:12]
        #: Seconds a :meth:`renew_lease` holds this replica's runs.
        self.lease = lease
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        # One client per event loop: a coredis client belongs to the loop it was entered on.
        self._links: RunVar[_Link] = RunVar(f"a2a-redis-{id(self)}")
        self._closed = False
        #: The event bus a server runs over this store (``Engine`` finds it here): doorbells
        #: for the tasks it watches, and this replica's lease.
        self.bus = RedisBus(self)

    # --- names --------------------------------------------------------------------------------

    def key(self, task_key: str) -> str:
        """The hash that holds the task stored under ``task_key`` (its record and state)."""
        return f"{self.prefix}:{{{task_key}}}"

    def events_key(self, task_key: str) -> str:
        """The stream of the task's events, whose ids are ``0-<event number>``."""
        return f"{self.key(task_key)}:ev"

    def ring_channel(self, task_key: str) -> str:
        """The channel on which each commit that changes the task publishes its key."""
        return f"{self.key(task_key)}:ring"

    # --- the store contract -------------------------------------------------------------------

    async def read(self, reads: Reads) -> Snapshot:
        reply = await self._run("read", _read_arguments(self, reads))
        task, named, by_message, listing, expiry, log, running, outbox = reply
        return Snapshot(
            task=_record(task),
            named=_record(named),
            by_message=_record(by_message),
            page=_page(listing, reads.listing) if reads.listing is not None else None,
            expired=_expired(expiry) if reads.expiry is not None else None,
            log=tuple(
                LoggedEvent(_seq(log[n]), load_event(log[n + 1])) for n in range(0, len(log), 2)
            ),
            running=tuple(load_record(text) for text in running if isinstance(text, bytes)),
            outbox=_pending(outbox),
        )

    async def commit(self, writes: Sequence[Write]) -> bool:
        if not writes:
            return True
        token = uuid.uuid4().hex
        arguments = _commit_arguments(self, writes, token)
        # Shielded: once the script is sent Redis runs it whole, so the caller waits for the
        # answer rather than leaving a written commit reported as nothing.
        with anyio.CancelScope(shield=True):
            try:
                reply = await self._reply("commit", arguments)
            except StoreUnavailable as failure:
                # The script may have run before the connection broke: a commit reported
                # failed must have written nothing (a run it started would be nobody's).
                if not await self._applied(token, failure):
                    raise
                return True
        # An error reply is an answer: the script did not run, or stopped before its first
        # write (every check, permissions included, comes first), so nothing is to be asked.
        return bool(self._answer(reply))

    async def _applied(self, token: str, failure: StoreUnavailable) -> bool:
        """Whether the commit of ``token`` was applied, asked of Redis for as long as it takes
        to reconnect twice. A Redis that answers no ran nothing of it: the connection the
        script went on was gone by the time another could ask. One that does not answer in
        that time leaves it unknown, which is said (and it counts as not applied)."""
        deadline = anyio.current_time() + 2 * self.connect_timeout
        pause = 0.02
        while True:
            try:
                link = await self._link()
                request = command("EXISTS", f"{self.prefix}:done:{token}")
                found = self._answer(await self._call(link, request))
            except StoreUnavailable:
                if anyio.current_time() + pause > deadline:
                    raise StoreUnavailable(
                        f"{failure}; whether that commit was applied is not known"
                    ) from failure
                await anyio.sleep(pause)
                pause = min(pause * 2, 0.25)
            else:
                return bool(found)

    async def ping(self) -> None:
        """Answer a readiness probe: Redis answers PING (raises :class:`StoreUnavailable`
        saying why not)."""
        link = await self._link()
        self._answer(await self._call(link, command("PING")))

    async def aclose(self) -> None:
        """Close this loop's connections (a loop that has ended took its own with it)."""
        self._closed = True
        link = self._links.get(None)
        if link is not None:
            await link.close()

    def close(self) -> None:
        """Refuse further calls (what :meth:`aclose` does, with no loop: the loops it was used
        on, having ended, closed their connections)."""
        self._closed = True

    # --- leases -------------------------------------------------------------------------------

    async def renew_lease(self) -> None:
        """Hold this replica's runs and notifications for ``lease`` more seconds, by the Redis
        server's clock (so replicas' clocks need not agree)."""
        await self._run("renew", [self.prefix, self.replica, round(self.lease * 1000)])

    async def drop_lease(self) -> None:
        """Give up the lease at once (a clean shutdown): what this replica still holds may be
        claimed by the others straight away."""
        await self._run("renew", [self.prefix, self.replica, 0])

    # --- the order of notifications across replicas -----------------------------------------

    async def owed_elsewhere(
        self, task_key: str, config_id: str, seq: int, *, mine_after: int | None = None
    ) -> bool:
        """Whether another replica still owes the notification of an earlier event of the task
        to the same config (a push sender waits for those to go first: one webhook's
        notifications keep the order of their events, whichever replica committed each).

        With ``mine_after``, this replica's own notifications after that event (and before
        ``seq``) count too: those it claimed from a replica that died, or owes from before a
        restart, which its sender has not been handed yet. Redis moves a claimed notification
        to this replica the moment the claim is read, before the engine hands it on: without
        this, a later notification waiting for the dead replica's would go in that gap."""
        arguments: list[str | int] = [self.prefix, self.replica, task_key]
        arguments += [config_id, f"{seq:0{_SEQ_DIGITS}d}"]
        arguments.append("" if mine_after is None else f"{mine_after:0{_SEQ_DIGITS}d}")
        return bool(await self._run("owed", arguments))

    # --- the event bus's access ---------------------------------------------------------------

    async def subscriber(self) -> PubSubConnection:
        """The event bus's connection: a bare-socket subscriber (``_redis_pubsub``) to the same
        Redis as the store's calls. Enter it with ``async with``."""
        link = await self._link()
        return PubSubConnection(link.calls.address, timeout=self.connect_timeout + self.timeout)

    async def pubsub(self, **options: Any) -> PubSub[bytes]:
        """A coredis PubSub on this store's Redis, for this loop (enter it with ``async
        with``). ``options`` go to :meth:`coredis.Redis.pubsub`. It takes a connection of its
        own, and ends with the store."""
        link = await self._link()
        return link.client.pubsub(**options)

    # --- calls --------------------------------------------------------------------------------

    async def _run(self, script: str, arguments: list[str | int]) -> Any:
        return self._answer(await self._reply(script, arguments))

    async def _reply(self, script: str, arguments: list[str | int]) -> Any:
        """The reply of ``script`` run with ``arguments``: an error reply is returned, as a
        :class:`RespError` value; no reply at all raises :class:`StoreUnavailable`."""
        link = await self._link()
        sha, source = _SCRIPTS[script]
        request = command("EVALSHA", sha, 0, *arguments)
        reply = await self._call(link, request)
        if isinstance(reply, RespError) and str(reply).startswith("NOSCRIPT"):
            # A Redis restarted (or told SCRIPT FLUSH) has forgotten the scripts, and so did not
            # run this one: loading it and sending again is safe. A second NOSCRIPT is the
            # store's failure like any other.
            loaded = await self._call(link, command("SCRIPT", "LOAD", source))
            if isinstance(loaded, RespError):
                return loaded
            reply = await self._call(link, request)
        return reply

    async def _call(self, link: "_Link", request: bytes) -> Any:
        """``request``'s reply; a failure to reach Redis or to hear from it in time is
        :class:`StoreUnavailable`."""
        try:
            return await link.calls.call(request)
        except (
            OSError,
            TimeoutError,
            RespError,  # a login refused, or what is not RESP
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            anyio.EndOfStream,
        ) as error:
            cause = str(error) or type(error).__name__
            raise StoreUnavailable(f"the task store {self.where} failed: {cause}") from error

    def _answer(self, reply: Any) -> Any:
        """``reply``, unless Redis answered an error: a script's refusal of its arguments is
        the caller's :class:`UsageError`; a command, key or channel this user may not use is
        :class:`StoreMisconfigured`, saying which and what to grant; anything else
        :class:`StoreUnavailable` (for ``BUSY``, ``LOADING``, ``READONLY`` and ``MASTERDOWN``,
        saying what that means)."""
        if not isinstance(reply, RespError):
            return reply
        message = str(reply)
        if message.startswith("A2A_USAGE "):
            raise UsageError(message.removeprefix("A2A_USAGE "))
        if message.startswith("NOPERM") or _SCRIPT_REFUSED in message:
            raise StoreMisconfigured(
                f"the task store {self.where} refused a command: {message} ({self._grant(message)})"
            )
        away = _AWAY.get(message.partition(" ")[0])
        if away is not None:
            raise StoreUnavailable(f"the task store {self.where} is unavailable, {away}: {message}")
        raise StoreUnavailable(f"the task store {self.where} failed: {message}")

    def _grant(self, refusal: str) -> str:
        """What to grant this store's Redis user, by what Redis refused it."""
        user = unquote(urlsplit(self.url).username or "") or "default"
        if "channel" in refusal:
            return (
                f"user {user!r} needs to publish to and subscribe to the store's channels: "
                f"ACL SETUSER {user} &{self.prefix}:*"
            )
        if "keys" in refusal:
            return f"user {user!r} needs the store's keys: ACL SETUSER {user} ~{self.prefix}:*"
        named = re.search(r"'([a-z|]+)'", refusal)
        if named is not None:
            return (
                f"user {user!r} needs the command {named[1]!r} on the store's keys: "
                f"ACL SETUSER {user} +{named[1]} ~{self.prefix}:*"
            )
        return (
            f"user {user!r} needs the store's commands and keys: "
            f"ACL SETUSER {user} +@all ~{self.prefix}:* &{self.prefix}:*"
        )

    async def _link(self) -> "_Link":
        """This loop's client, started on first use (and again after it ended)."""
        if self._closed:
            raise StoreUnavailable(f"the task store {self.where} is closed")
        link = self._links.get(None)
        if link is None or link.ended:
            link = _Link(self)
            self._links.set(link)
            link.start()
        if not link.ready.is_set():  # waiting on a set event would still yield to the loop
            await link.ready.wait()
        if link.ended:
            raise StoreUnavailable(f"the task store {self.where} failed: {link.error}")
        return link


class _Link:
    """One event loop's connections: the pool of the store's calls, and a coredis client (for
    :meth:`RedisStore.pubsub`) held open by a task of its own.

    A coredis client is an async context manager whose connections live in its task group, so
    it must be entered and left by one task. The store's calls come from many tasks, the first
    of them at any time: so the client is entered by a task that lives as long as the loop (an
    asyncio task, or a trio system task) and left when the store closes, or when the loop
    ends and cancels it.
    """

    def __init__(self, store: RedisStore) -> None:
        self.client: coredis.Redis[bytes] = coredis.Redis.from_url(
            store.url,
            decode_responses=False,
            # A user name or password holding '@', ':', '/'... is percent-encoded in a URL,
            # and decoded here (as redis-py does), as is a Unix socket's path.
            decode_components=True,
            connect_timeout=store.connect_timeout,
            stream_timeout=store.timeout,
            pool_timeout=store.timeout,
            # Never resend a script on a lost connection: a commit may have been applied.
            retry_policy=NoRetryPolicy(),
        )
        # Reached as coredis reaches it: its address, credentials and TLS settings are those
        # coredis took from the URL (and its query's options).
        pool = self.client.connection_pool
        options, location = pool.connection_kwargs, pool.location
        address = Address(
            host=str(getattr(location, "host", "")),
            port=int(getattr(location, "port", 0)),
            unix_path=str(getattr(location, "path", "")),
            username=options.get("username") or "",
            password=options.get("password") or "",
            ssl=options.get("ssl_context"),
            db=int(options.get("db") or 0),
        )
        self.calls = CallPool(address, connect_timeout=store.connect_timeout, timeout=store.timeout)
        self.ready = anyio.Event()
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self.ended = False
        self.error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if sniffio.current_async_library() == "trio":
            import trio  # only when running on it: the store needs no trio on asyncio

            trio.lowlevel.spawn_system_task(self._hold, name="a2a redis client")
        else:
            # The loop keeps only a weak reference to a task: the link holds it.
            self._task = asyncio.get_running_loop().create_task(
                self._hold(), name="a2a redis client"
            )

    async def _hold(self) -> None:
        try:
            async with self.client:
                self.ready.set()
                await self._stop.wait()
        except Exception as error:  # a task of the loop's own: its failure is the next call's
            self.error = error
        finally:
            self.ended = True
            with anyio.CancelScope(shield=True):
                await self.calls.aclose()
            self.ready.set()
            self._done.set()

    async def close(self) -> None:
        self._stop.set()
        await self._done.wait()


#: Error replies that mean Redis cannot serve the store for now (it is an outage, retried as
#: one), by their first word: what each means.
_AWAY = {
    "BUSY": "running a script that has not ended (SCRIPT KILL or FUNCTION KILL stops it)",
    "LOADING": "loading its data after a restart",
    "READONLY": "a read-only replica (the store writes to the primary)",
    "MASTERDOWN": "a replica that lost its primary and serves no stale data",
}
#: What Redis says of a command a script ran that its user may not (in an ``ERR`` reply).
_SCRIPT_REFUSED = "The user executing the script can't"


# --- arguments ------------------------------------------------------------------------------------


def _json(*parts: str) -> str:
    """Names and values as one unambiguous piece of a key (each may hold any character)."""
    return json.dumps(parts, separators=(",", ":"))


def _indexes(store: RedisStore, record: TaskRecord) -> list[str]:
    """The four listing indexes a task is in: its owner's, the owner's in its context, the
    owner's in its state, and in both (each scored by status time, so a page is a range)."""
    owner, context, state = record.owner, record.task.context_id, record.state.value
    p, who = store.prefix, (owner.principal, owner.tenant)
    return [
        f"{p}:o:{_json(*who)}",
        f"{p}:oc:{_json(*who, context)}",
        f"{p}:os:{_json(*who, state)}",
        f"{p}:ocs:{_json(*who, context, state)}",
    ]


def _listing_index(store: RedisStore, query: ListQuery) -> str:
    p, owner = store.prefix, query.owner
    who = (owner.principal, owner.tenant)
    state = query.state.value if query.state is not None else None
    if query.context_id and state is not None:
        return f"{p}:ocs:{_json(*who, query.context_id, state)}"
    if query.context_id:
        return f"{p}:oc:{_json(*who, query.context_id)}"
    if state is not None:
        return f"{p}:os:{_json(*who, state)}"
    return f"{p}:o:{_json(*who)}"


def _messages_key(store: RedisStore, owner: Owner) -> str:
    """The hash of ``owner``'s message ids, each to the key of the task holding it."""
    return f"{store.prefix}:m:{_json(owner.principal, owner.tenant)}"


def _outbox_field(config_id: str, seq: int) -> str:
    return f"{config_id}\0{seq:0{_SEQ_DIGITS}d}"


def _commit_arguments(store: RedisStore, writes: Sequence[Write], token: str) -> list[str | int]:
    """The commit script's arguments (the script checks them all before it writes)."""
    arguments: list[str | int] = [store.prefix, store.replica, token]
    for write in writes:
        if isinstance(write, Put):
            record, events = write.record, write.events
            stored = row(record)
            arguments += [
                "P",
                stored.key,
                write.expected,
                stored.version,
                stored.record,
                record.run,
                stored.running,
                stored.terminal,
                stored.state,
                stored.updated,
                stored.seq,
                stored.principal,
                stored.tenant,
                stored.context_id,
                *_indexes(store, record),
                _messages_key(store, record.owner),
                stored.messages,
                *(message_id for message_id, _ in record.messages),
                len(events),
            ]
            for logged in events:
                arguments += [logged.seq, dump_event(logged.event)]
            arguments.append(len(write.outbox))
            arguments += [_outbox_field(config_id, seq) for config_id, seq in write.outbox]
        elif isinstance(write, Delete):
            arguments += ["D", write.task_id, write.expected]
        else:
            attempts = "" if write.attempts is None else write.attempts
            arguments += ["S", write.task_id, _outbox_field(write.config_id, write.seq), attempts]
    return arguments


def _read_arguments(store: RedisStore, reads: Reads) -> list[str | int]:
    arguments: list[str | int] = [store.prefix, store.replica, reads.task_id, reads.named]
    if reads.message is not None:
        arguments += [_messages_key(store, reads.message.owner), reads.message.message_id]
    else:
        arguments += ["", ""]
    if (listing := reads.listing) is not None:
        low = "-inf" if listing.updated_since is None else micros(listing.updated_since)
        cursor = listing.cursor
        arguments += [
            "1",
            _listing_index(store, listing),
            low,
            "1" if cursor is not None else "0",
            micros(cursor.updated_at) if cursor is not None else "",
            cursor.task_id if cursor is not None else "",
            listing.page_size + 1,  # one more tells whether there is a next page
        ]
    else:
        arguments += ["0", "", "", "", "", "", 0]
    if (expiry := reads.expiry) is not None:
        arguments += ["1", micros(expiry.before), expiry.limit]
    else:
        arguments += ["0", "", 0]
    if (log := reads.log) is not None:
        arguments += ["1", log.task_id, log.after, log.limit]
    else:
        arguments += ["0", "", 0, 0]
    if (running := reads.running) is not None:
        arguments += ["1", running.limit, running.after]
    else:
        arguments += ["0", 0, ""]
    if (outbox := reads.outbox) is not None:
        after = "" if outbox.after is None else _outbox_member(*outbox.after)
        arguments += ["1", outbox.limit, after]
    else:
        arguments += ["0", 0, ""]
    return arguments


def _outbox_member(task_key: str, config_id: str, seq: int) -> str:
    """An entry of a replica's outbox index: they sort as (key, config id, number) do."""
    return f"{task_key}\0{_outbox_field(config_id, seq)}"


# --- replies --------------------------------------------------------------------------------------


def _record(text: object) -> TaskRecord | None:
    return load_record(text) if isinstance(text, bytes) else None


def _seq(stream_id: bytes) -> int:
    return int(stream_id.partition(b"-")[2])


def _page(reply: list[Any], query: ListQuery) -> Page:
    total, *texts = reply
    records = [load_record(text) for text in texts if isinstance(text, bytes)]
    page = records[: query.page_size]
    more = len(records) > query.page_size and page
    next_cursor = Cursor(page[-1].updated_at, page[-1].id) if more else None
    return Page(tuple(page), int(total), next_cursor)


def _expired(reply: list[Any]) -> Expired:
    next_score, *texts = reply
    next_at: datetime | None = None
    if isinstance(next_score, bytes):
        next_at = from_micros(int(float(next_score)))
    return Expired(tuple(load_record(t) for t in texts if isinstance(t, bytes)), next_at)


def _pending(reply: list[Any]) -> tuple[Pending, ...]:
    found = []
    records: dict[bytes, TaskRecord] = {}
    for n in range(0, len(reply), 4):
        member, attempts, record, event = reply[n : n + 4]
        # KEY \0 CONFIG ID \0 NUMBER: a key holds no NUL (it is a server's id, or JSON); the
        # number has a fixed width, so a config id may hold anything.
        field = member.decode().partition("\0")[2]
        config_id, seq = field[: -_SEQ_DIGITS - 1], field[-_SEQ_DIGITS:]
        if record not in records:
            records[record] = load_record(record)
        logged = LoggedEvent(int(seq), load_event(event))
        found.append(Pending(records[record], config_id, logged, int(attempts)))
    return tuple(found)
