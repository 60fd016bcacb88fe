"""Push notifications in the crash campaign (``crash.py``): the webhook's plan, and the ledger
that proves no notification was lost across the kills.

Some of the campaign's new tasks carry a push config (inline, in the send's configuration) whose
URL is a real receiver on 127.0.0.1 (``webhooks.Receiver``), one for the whole campaign. During
the load the receiver goes down at random (it answers 503 for a while, then 200 again), and an
outage may go on across the kill and into the restart, so that notifications are owed at a kill
and retried before it and after it. What the checks hold the server to, for every task with a
config, once the receiver answers 200 again and recovery has run:

* every event of the task's log (read back whole with ``SubscribeToTask`` and
  ``Last-Event-ID: 0``) reached the receiver, and was answered 200, at least once under its id,
  ``{taskId}/{configId}/{seq}`` (the config's id, as ``ListTaskPushNotificationConfigs`` gives
  it after the restart: the config survives too), with the config's token; or the server gave up
  on it (the WARNING line "gave up on webhook ... for task T event N after 5 attempts"), and then
  the receiver refused it at least ``MAX_ATTEMPTS`` times: a drop is accounted for, never
  assumed;
* every body under an id is that event of the log, exactly (a body the kill cut short, fewer
  bytes than its ``Content-Length``, is no delivery: the sender died sending it);
* the first acceptances of one webhook's notifications came in the order of their events (a
  duplicate may come later: at least once, not exactly once);
* nothing arrives for a task without a config, or under another config, or for an event past
  the end of a finished task's log.

The counts come from the receiver and, for what was owed at each kill, from the task file itself:
between a kill and the next start the campaign reads the store's ``outbox`` table (read-only),
the notifications the dead server still owed and how many attempts each had failed.
"""

import inspect
import re
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from a2a_adapters import PushSender
from tests.a2a_adapters.webhooks import Delivery, Receiver

Json = dict[str, Any]

#: Where on the receiver every webhook of the campaign posts.
PUSH_PATH = "/push"
#: The attempts the CLI's sender (``PushSender()``, 5) makes before it gives up on a
#: notification: a drop is legitimate only after as many refusals.
MAX_ATTEMPTS: int = inspect.signature(PushSender).parameters["max_attempts"].default
#: What the receiver answers when it is up.
ACCEPTED = 200

_GAVE_UP = re.compile(r"gave up on webhook \S+ for task (\S+) event (\d+) after (\d+) attempts")


@dataclass(frozen=True)
class Webhooks:
    """How often tasks get a webhook, and how the receiver fails."""

    #: Of the new tasks, the share sent with a push config.
    chance: float = 0.5
    #: Seconds the receiver answers 200 between two outages during the load, and how long an
    #: outage lasts (it answers ``refusal`` to every notification meanwhile).
    up: tuple[float, float] = (0.1, 0.6)
    down: tuple[float, float] = (0.1, 0.8)
    #: How often an outage goes on across a kill, and for how many seconds into the checks
    #: after the restart (the restarted server's first attempts fail too, and count on from
    #: the dead one's): short enough that few notifications exhaust their attempts.
    after_kill_chance: float = 0.3
    after_kill: tuple[float, float] = (0.2, 1.5)
    #: How often, instead, the outage after a kill outlasts every attempt a notification has
    #: left (0.5 + 1 + 2 + 4 s of backoff): the restarted server gives up on the first one
    #: each webhook owed, and the checks account for each drop.
    long_outage_chance: float = 0.1
    long_outage: float = 9.0
    #: The status of a refusal: 503, which the sender retries.
    refusal: int = 503
    #: Seconds the checks wait, once the receiver is up, for every notification to arrive
    #: (a retry may be in its backoff: 4 s before a fifth attempt).
    timeout: float = 20.0


@dataclass
class Hook:
    """A task sent with a push config, and what its log held when last read."""

    task_id: str
    token: str
    #: The config's id: the one it was sent with, or else the one the server chose.
    config_id: str | None
    #: Every event of the task's log, oldest first (event ``n`` at ``log[n - 1]``).
    log: list[Json] = field(default_factory=list)
    #: Whether ``log`` ends terminal (nothing more will be added).
    terminal: bool = False
    #: Terminal and every notification accounted for: not read again.
    done: bool = False

    def notification_id(self, seq: int) -> str:
        return f"{self.task_id}/{self.config_id}/{seq}"


@dataclass(frozen=True)
class Post:
    """One request the receiver got, as the ledger reads it."""

    index: int  # its place in the receiver's arrival order
    notification_id: str
    task_id: str
    config_id: str
    seq: int
    status: int
    at: float
    token: str | None
    #: The body, ``None`` if the kill cut it short (or it is not JSON).
    body: Json | None

    @property
    def accepted(self) -> bool:
        return self.status == ACCEPTED and self.body is not None


def _post(index: int, delivery: Delivery) -> Post | str:
    """The post, or what is wrong with it."""
    notification_id = delivery.headers.get("x-a2a-notification-id", "")
    parts = notification_id.split("/")
    if delivery.path != PUSH_PATH or len(parts) != 3 or not parts[2].isdigit():
        return f"a request to {delivery.path} with notification id {notification_id!r}"
    body: Json | None = None
    length = delivery.headers.get("content-length", "")
    if length.isdigit() and len(delivery.body) == int(length):
        try:
            body = delivery.json()
        except ValueError:
            return f"notification {notification_id} is not JSON: {delivery.body[:200]!r}"
    return Post(
        index,
        notification_id,
        parts[0],
        parts[1],
        int(parts[2]),
        delivery.status,
        delivery.at,
        delivery.headers.get("x-a2a-notification-token"),
        body,
    )


class Ledger:
    """Every request that reached the receiver, by notification id and by task."""

    def __init__(self, receiver: Receiver, problem: Callable[[str], None]) -> None:
        self.receiver = receiver
        self.problem = problem
        self.posts: list[Post] = []
        self.by_id: dict[str, list[Post]] = defaultdict(list)
        self.by_task: dict[str, list[Post]] = defaultdict(list)
        self.read = 0  # the receiver's deliveries taken in
        self.cut = 0
        #: The posts already held against their task's log (each is, once).
        self.checked: set[int] = set()

    def update(self) -> None:
        deliveries = self.receiver.deliveries()
        for index in range(self.read, len(deliveries)):
            post = _post(index, deliveries[index])
            if isinstance(post, str):
                self.problem(post)
                continue
            if post.body is None:
                self.cut += 1
            self.posts.append(post)
            self.by_id[post.notification_id].append(post)
            self.by_task[post.task_id].append(post)
        self.read = len(deliveries)

    def first_accepted(self, notification_id: str) -> Post | None:
        return next((p for p in self.by_id.get(notification_id, ()) if p.accepted), None)

    def refusals(self, notification_id: str) -> int:
        return sum(1 for p in self.by_id.get(notification_id, ()) if p.status != ACCEPTED)


class Drops:
    """The notifications servers gave up on, from their log lines: (task id, seq) -> attempts."""

    def __init__(self) -> None:
        self.finished: dict[tuple[str, int], int] = {}

    @staticmethod
    def parse(lines: Iterable[str]) -> dict[tuple[str, int], int]:
        found = {}
        for line in lines:
            if "gave up on webhook" in line and (match := _GAVE_UP.search(line)):
                found[match.group(1), int(match.group(2))] = int(match.group(3))
        return found

    def server_ended(self, lines: Sequence[str]) -> None:
        self.finished.update(self.parse(lines))

    def now(self, running: Sequence[str]) -> dict[tuple[str, int], int]:
        """Every drop so far: the ended servers', and the running one's (its log as it is)."""
        return {**self.finished, **self.parse(list(running))}


@dataclass(frozen=True)
class Owed:
    """What a killed server left in the outbox."""

    at: float  # ``time.monotonic()`` just before the kill
    #: notification id -> attempts it had failed.
    rows: dict[str, int]


def read_outbox(path: Path) -> dict[str, int] | None:
    """The outbox of the task file at ``path``: notification id -> failed attempts. Read-only
    (``mode=ro``: nothing is written, no checkpoint is made), ``None`` if it cannot be read."""
    if not path.exists():
        return None
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        try:
            rows = connection.execute("SELECT key, config_id, seq, attempts FROM outbox").fetchall()
        finally:
            connection.close()
    except sqlite3.Error:
        return None
    return {f"{key}/{config_id}/{seq}": attempts for key, config_id, seq, attempts in rows}


def unaccounted(hook: Hook, ledger: Ledger, drops: dict[tuple[str, int], int]) -> list[str]:
    """The ids of the hook's events neither accepted by the receiver nor given up on."""
    return [
        hook.notification_id(seq)
        for seq in range(1, len(hook.log) + 1)
        if ledger.first_accepted(hook.notification_id(seq)) is None
        and (hook.task_id, seq) not in drops
    ]


def check_posts(hooks: dict[str, Hook], ledger: Ledger, problem: Callable[[str], None]) -> None:
    """Every post not yet checked against its task's log, once that log is read far enough:
    under the task's config, with its token, and the body of the event of that number."""
    for post in ledger.posts:
        if post.index in ledger.checked:
            continue
        hook = hooks.get(post.task_id)
        if hook is None:
            problem(f"{post.notification_id} came for a task sent without a push config")
        elif post.config_id != hook.config_id:
            problem(f"{post.notification_id} is not under its task's config {hook.config_id}")
        elif post.seq <= len(hook.log):
            if post.token != hook.token:
                problem(f"{post.notification_id} came with token {post.token!r}")
            logged = hook.log[post.seq - 1]
            if post.body is not None and post.body != logged:
                problem(f"{post.notification_id} was {post.body}, the log has {logged}")
        elif hook.terminal:
            problem(f"{post.notification_id} is past its task's {len(hook.log)} events")
        else:
            continue  # an event the log had not reached when read: checked once it has
        ledger.checked.add(post.index)


def check_hook(
    hook: Hook,
    ledger: Ledger,
    drops: dict[tuple[str, int], int],
    problem: Callable[[str], None],
) -> None:
    """Every event of ``hook``'s log accounted for (see the module's docstring); it is done
    with once its log is terminal and nothing is missing."""
    where = f"the webhook of {hook.task_id}"
    firsts: list[tuple[int, int]] = []
    for seq in range(1, len(hook.log) + 1):
        notification_id = hook.notification_id(seq)
        first = ledger.first_accepted(notification_id)
        if first is not None:
            firsts.append((first.index, seq))
        elif (hook.task_id, seq) in drops:
            refused, attempts = ledger.refusals(notification_id), drops[hook.task_id, seq]
            if refused < MAX_ATTEMPTS or attempts != MAX_ATTEMPTS:
                problem(
                    f"{where}: {notification_id} was given up on after {attempts} attempts, "
                    f"{refused} of them refused"
                )
    missing = unaccounted(hook, ledger, drops)
    if missing:
        problem(f"{where}: never received, nor given up on: {missing}")
    order = [seq for _, seq in sorted(firsts)]
    if order != sorted(order):
        problem(f"{where}: first received in the order {order}")
    hook.done = hook.terminal and not missing


@dataclass
class PushCounts:
    """What the campaign's webhooks saw."""

    #: Tasks with a push config, and the notifications their logs owe (one per event).
    push_tasks: int = 0
    notifications: int = 0
    #: Requests the receiver got, and how many of them it refused (an outage).
    notification_posts: int = 0
    notification_posts_refused: int = 0
    #: Posts a kill cut short (fewer bytes than their Content-Length).
    notification_posts_cut: int = 0
    #: Notifications in the outbox a killed server left (each counted once, however many kills
    #: it was owed at), those of them that had failed attempts already (their retries spanned a
    #: kill), those the receiver first accepted after the (first) kill they were owed at
    #: (delivered by a restarted server), and those it had accepted before a kill they were
    #: still owed at (the server died before it recorded the delivery: a duplicate follows).
    owed_at_kills: int = 0
    #: Outboxes that could not be read after a kill (not counted above).
    outboxes_unread: int = 0
    owed_after_failed_attempts: int = 0
    delivered_after_restart: int = 0
    accepted_before_kill: int = 0
    #: Notifications the receiver accepted more than once (extra acceptances in all).
    duplicates: int = 0
    #: Notifications a server gave up on after its attempts (each refused by the receiver at
    #: least ``MAX_ATTEMPTS`` times, or the checks said so).
    dropped: int = 0


def tally(
    hooks: Iterable[Hook], ledger: Ledger, kills: Sequence[Owed], drops: dict[tuple[str, int], int]
) -> PushCounts:
    hooks = list(hooks)
    counts = PushCounts(push_tasks=len(hooks), notifications=sum(len(h.log) for h in hooks))
    counts.notification_posts = len(ledger.posts)
    counts.notification_posts_refused = sum(1 for p in ledger.posts if p.status != ACCEPTED)
    counts.notification_posts_cut = ledger.cut
    first_owed: dict[str, float] = {}
    failed: set[str] = set()
    unrecorded: set[str] = set()
    for kill in kills:
        for notification_id, attempts in kill.rows.items():
            first_owed.setdefault(notification_id, kill.at)
            if attempts:
                failed.add(notification_id)
            first = ledger.first_accepted(notification_id)
            if first is not None and first.at < kill.at:
                unrecorded.add(notification_id)
    counts.owed_at_kills = len(first_owed)
    counts.owed_after_failed_attempts = len(failed)
    counts.accepted_before_kill = len(unrecorded)
    for notification_id, at in first_owed.items():
        first = ledger.first_accepted(notification_id)
        if first is not None and first.at > at:
            counts.delivered_after_restart += 1
    counts.duplicates = sum(
        max(0, sum(1 for p in posts if p.accepted) - 1) for posts in ledger.by_id.values()
    )
    counts.dropped = len(drops)
    return counts


__all__: Sequence[str] = [
    "MAX_ATTEMPTS",
    "PUSH_PATH",
    "Drops",
    "Hook",
    "Ledger",
    "Owed",
    "PushCounts",
    "Webhooks",
    "check_hook",
    "check_posts",
    "read_outbox",
    "tally",
    "unaccounted",
]
