"""The crash campaign (``tests/a2a_adapters/crash.py``), small: a few SIGKILLs at random moments
under load, each checked after the restart. ``make crash`` runs it at full size.

The seed draws the operations and the moments of the kills; a failure prints it, and
``A2A_CRASH_SEED`` draws the same again (how they interleave with a real server's timing is
chance all the same, so it replays the kind of run, not the run).
"""

import os
import random
from pathlib import Path

import pytest

from tests.a2a_adapters import crash
from tests.a2a_adapters.crash import Webhooks
from tests.a2a_adapters.redis_server import RedisServer

#: Kills per run here; each costs about a second and a half.
ROUNDS = 3
#: The webhook receiver's failures here: as in the full campaign, but never the outage that
#: outlasts every retry (nine seconds); ``make crash`` has those, and the drops they make.
WEBHOOKS = Webhooks(long_outage_chance=0.0)
#: For the campaigns about other promises: no task gets a webhook.
NO_WEBHOOKS = Webhooks(chance=0.0)


def seed() -> int:
    given = os.environ.get("A2A_CRASH_SEED")
    return int(given) if given else random.randrange(1 << 32)  # noqa: S311  not a secret


def test_a_server_killed_at_random_moments_keeps_every_promise(tmp_path: Path) -> None:
    report = crash.run(ROUNDS, tmp_path, seed=seed(), webhooks=WEBHOOKS)
    summary = crash.summary(report)
    print(summary)  # the counts, in the test's output (pytest -s, or on failure)
    assert report.problem_count == 0, summary
    counts = report.counts
    assert counts.rounds == ROUNDS
    # Each invariant was put to the test, not passed for want of cases.
    assert counts.sends_acknowledged > 0, summary
    assert counts.tasks_checked >= counts.sends_acknowledged // 2, summary
    assert counts.resends > 0, summary
    assert counts.streams_checked > 0, summary
    assert counts.streams_resumed > 0, summary
    assert counts.recovered > 0, summary
    assert counts.runs > 0, summary
    # Notifications were owed at kills, and restarted servers delivered them.
    assert counts.push.push_tasks > 0, summary
    assert counts.push.owed_at_kills > 0, summary
    assert counts.push.delivered_after_restart > 0, summary


def test_replicas_on_redis_killed_at_random_moments_keep_every_promise(tmp_path: Path) -> None:
    # Each restart is a new replica, which takes the killed one's runs over once its lease
    # (one second) lapses: the same checks hold, on a Redis this test starts.
    with RedisServer() as redis:
        store = f"{redis.url}?prefix=crash&lease=1"
        report = crash.run(2, tmp_path, seed=seed(), store=store, webhooks=WEBHOOKS)
    summary = crash.summary(report)
    print(summary)
    assert report.problem_count == 0, summary
    assert report.counts.sends_acknowledged > 0, summary
    assert report.counts.tasks_checked > 0, summary


@pytest.mark.parametrize(
    ("store", "args", "says"),
    [
        # Tasks kept in memory are gone after a kill.
        ("memory", [], "was lost"),
        # Without idempotency, a re-sent message makes another task and runs again.
        (None, ["--no-idempotency"], "a re-send of"),
    ],
    ids=["memory", "no-idempotency"],
)
def test_the_campaign_sees_a_server_that_breaks_a_promise(
    tmp_path: Path, store: str | None, args: list[str], says: str
) -> None:
    for attempt in range(3):
        where = tmp_path / str(attempt)
        where.mkdir()
        report = crash.run(1, where, seed=seed(), store=store, args=args, webhooks=NO_WEBHOOKS)
        # A round whose server was killed before it acknowledged anything (a loaded machine, an
        # early kill) had no promise to break: that run says nothing, so another is made.
        if report.counts.sends_acknowledged > 0:
            break
    assert report.problem_count > 0, crash.summary(report)
    assert any(says in problem for problem in report.problems), crash.summary(report)


def test_the_campaign_sees_notifications_that_never_arrive(tmp_path: Path) -> None:
    # The receiver refuses nearly everything with 410, which the sender does not retry and does
    # not report as giving up: from the receiver's side, notifications are lost.
    webhooks = Webhooks(
        up=(0.0, 0.01),
        down=(0.5, 1.0),
        after_kill_chance=0.0,
        long_outage_chance=0.0,
        refusal=410,
        timeout=1.0,
    )
    report = crash.run(1, tmp_path, seed=seed(), webhooks=webhooks)
    summary = crash.summary(report)
    assert any("never received, nor given up on" in p for p in report.problems), summary
