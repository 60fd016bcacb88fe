"""The deterministic driver: whole-server behaviour, step by step, with no event loop."""

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from a2a_core import ArtifactChunk, completed, reply, text_artifact, working
from a2a_core.errors import UsageError
from a2a_core.testing import EPOCH, Driver
from examples import echo, multi_turn


async def two_steps(ctx: Any) -> AsyncIterator[Any]:
    yield working("thinking")
    yield ArtifactChunk(text_artifact(f"about {ctx.text}", artifact_id="a"), last_chunk=True)
    yield completed()


def test_a_blocking_send_is_answered_once_the_agent_ran() -> None:
    driver = Driver(echo.agent)
    sent = driver.send("hi")
    assert not sent.answered  # the agent has not run yet: nothing moves unless stepped
    assert list(driver.runs) != []
    driver.run_agents()
    task = sent.result()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"][0]["text"] == "Echo: hi"
    assert driver.runs == {}


def test_each_step_is_one_yield_and_visible_in_between() -> None:
    driver = Driver(two_steps)
    sent = driver.send("rain", configuration={"returnImmediately": True})
    task_id = sent.result()["task"]["id"]

    def state() -> str:
        got: str = driver.rpc("GetTask", {"id": task_id}).result()["status"]["state"]
        return got

    assert state() == "TASK_STATE_SUBMITTED"
    assert driver.step(task_id)
    assert state() == "TASK_STATE_WORKING"
    assert driver.step(task_id)
    artifacts = driver.rpc("GetTask", {"id": task_id}).result()["artifacts"]
    assert artifacts[0]["parts"][0]["text"] == "about rain"
    driver.step(task_id)
    assert state() == "TASK_STATE_COMPLETED"
    assert not driver.step(task_id)


def test_a_stream_gets_every_event_in_order() -> None:
    driver = Driver(two_steps)
    stream = driver.rpc("SendStreamingMessage", {"message": user("rain")})
    assert stream.stream
    assert not stream.ended
    driver.run_agents()
    assert stream.ended
    kinds = [next(iter(event["result"])) for event in stream.events()]
    assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert driver.server.open_streams == 0


def test_a_silent_agent_still_lets_its_stream_show_the_task_within_the_window() -> None:
    driver = Driver()  # scripted: the agent says nothing until told to
    stream = driver.rpc("SendStreamingMessage", {"message": user("think")})
    assert stream.events() == []  # held for a direct reply...
    driver.advance(0.049)
    assert stream.events() == []
    driver.advance(0.001)  # ...for 50 ms, then the task goes out
    (first,) = stream.events()
    task_id = first["result"]["task"]["id"]
    assert first["result"]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    driver.agent_returns(task_id, "done")
    kinds = [next(iter(event["result"])) for event in stream.events()]
    assert kinds == ["task", "statusUpdate"]
    assert stream.ended


def test_an_agent_that_answers_within_the_window_gets_a_one_message_stream() -> None:
    driver = Driver()
    stream = driver.rpc("SendStreamingMessage", {"message": user("hi")})
    (task_id,) = driver.runs
    driver.advance(0.02)
    driver.agent_returns(task_id, reply("hello"))
    kinds = [next(iter(event["result"])) for event in stream.events()]
    assert kinds == ["message"]
    assert stream.ended


def test_the_window_can_wait_for_the_first_output_however_long() -> None:
    driver = Driver(direct_reply_window=None)
    stream = driver.rpc("SendStreamingMessage", {"message": user("hi")})
    (task_id,) = driver.runs
    driver.advance(3600)
    assert stream.events() == []
    driver.agent_returns(task_id, reply("hello"))
    assert [next(iter(event["result"])) for event in stream.events()] == ["message"]


def test_a_cancel_stops_the_run_and_late_output_is_dropped() -> None:
    driver = Driver()  # scripted agents
    task_id = driver.send("x", configuration={"returnImmediately": True}).result()["task"]["id"]
    driver.agent_yields(task_id, working())
    canceled = driver.rpc("CancelTask", {"id": task_id}).result()
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert [s.task_id for s in driver.stopped] == [task_id]
    assert task_id not in driver.runs
    with pytest.raises(UsageError):
        driver.agent_yields(task_id, completed())


def test_multi_turn_through_the_driver() -> None:
    driver = Driver(multi_turn.agent)
    first = driver.send("hello")
    driver.run_agents()
    task = first.result()["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    second = driver.send("Ada", task_id=task["id"])
    driver.run_agents()
    assert "Hello, Ada!" in second.result()["task"]["status"]["message"]["parts"][0]["text"]


def test_the_fake_clock_drives_expiry() -> None:
    driver = Driver(echo.agent, task_ttl=timedelta(seconds=60))
    sent = driver.send("bye")
    driver.run_agents()
    task_id = sent.result()["task"]["id"]
    driver.advance(59)
    assert "result" in driver.rpc("GetTask", {"id": task_id}).json()
    driver.advance(2)
    assert driver.now == EPOCH + timedelta(seconds=61)
    assert driver.rpc("GetTask", {"id": task_id}).error()["code"] == -32001
    assert len(driver.tasks) == 0  # swept by the tick, not merely hidden


@pytest.mark.parametrize("ttl", [60, 60.0, timedelta(seconds=60)])
def test_a_ttl_may_be_given_in_seconds(ttl: float | timedelta) -> None:
    driver = Driver(echo.agent, task_ttl=ttl)
    sent = driver.send("bye")
    driver.run_agents()
    task_id = sent.result()["task"]["id"]
    driver.advance(59)
    assert "result" in driver.rpc("GetTask", {"id": task_id}).json()
    driver.advance(2)
    assert driver.rpc("GetTask", {"id": task_id}).error()["code"] == -32001


@pytest.mark.parametrize(
    ("ttl", "error", "message"),
    [
        (-5, ValueError, "task_ttl must be positive, got -5 seconds"),
        (0, ValueError, "task_ttl must be positive"),
        (timedelta(seconds=-1), ValueError, "task_ttl must be positive"),
        (float("nan"), ValueError, "task_ttl must be a finite number of seconds, got nan"),
        (float("inf"), ValueError, "task_ttl must be a finite number of seconds, got inf"),
        (1e300, ValueError, "task_ttl must be at most a century"),
        ("60", TypeError, "task_ttl must be a number of seconds or a timedelta, got '60'"),
    ],
)
def test_a_bad_ttl_is_refused_when_given(ttl: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        Driver(echo.agent, task_ttl=ttl)


@pytest.mark.parametrize("seconds", [-1, float("nan"), float("inf"), "5"])
def test_the_clock_only_moves_on_by_a_real_duration(seconds: Any) -> None:
    driver = Driver(echo.agent)
    with pytest.raises(UsageError, match="advance"):
        driver.advance(seconds)
    assert driver.now == EPOCH


def test_a_client_that_leaves_gets_nothing_and_holds_nothing() -> None:
    driver = Driver(two_steps)
    stream = driver.rpc("SendStreamingMessage", {"message": user("rain")})
    driver.disconnect(stream)
    assert driver.server.open_streams == 0
    before = len(stream.frames)
    driver.run_agents()
    assert len(stream.frames) == before


def _asyncio_sleep() -> Awaitable[None]:
    import asyncio

    return asyncio.sleep(1)


def _anyio_sleep() -> Awaitable[None]:
    import anyio

    return anyio.sleep(1)


def _trio_sleep() -> Awaitable[None]:
    import trio

    return trio.sleep(1)  # noqa: ASYNC105  for the agent to await, outside trio on purpose


@pytest.mark.parametrize("sleep", [_asyncio_sleep, _anyio_sleep, _trio_sleep])
def test_an_agent_that_needs_the_event_loop_is_refused_clearly(
    sleep: Callable[[], Awaitable[None]],
) -> None:
    async def sleepy(ctx: Any) -> str:
        await sleep()
        return "late"

    driver = Driver(sleepy)
    driver.send("x")
    with pytest.raises(UsageError, match="event loop"):
        driver.run_agents()


def test_a_resumed_stream_replays_the_log_after_its_last_event() -> None:
    driver = Driver(two_steps)
    first = driver.rpc("SendStreamingMessage", {"message": user("rain")})
    (task_id,) = driver.runs
    driver.step(task_id)
    assert len(first.events()) == 2  # the task, then "working"
    driver.disconnect(first)
    driver.run_agents()
    resumed = driver.rpc("SubscribeToTask", {"id": task_id}, headers={"last-event-id": "1"})
    kinds = [next(iter(event["result"])) for event in resumed.events()]
    assert kinds == ["statusUpdate", "artifactUpdate", "statusUpdate"]
    assert resumed.ended


def test_push_notifications_are_recorded_not_sent() -> None:
    driver = Driver(echo.agent, push_notifications=True)
    config = {"url": "https://hooks.example.com/a2a", "token": "t"}
    driver.send("hi", configuration={"taskPushNotificationConfig": config})
    driver.run_agents()
    assert driver.pushes
    assert {p.url for p in driver.pushes} == {"https://hooks.example.com/a2a"}
    assert ("x-a2a-notification-token", "t") in driver.pushes[0].headers


def user(text: str, message_id: str = "m-1") -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
