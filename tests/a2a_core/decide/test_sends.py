"""Sends, through the whole server with no I/O (``a2a_core.testing.Driver``): push configs a
send carries, follow-up turns, and a re-sent message's stream."""

from datetime import timedelta
from typing import Any

from a2a_core import Message, Part, Role
from a2a_core.testing import Driver
from examples import echo, multi_turn

HOOK = {"url": "https://hooks.example/a2a", "token": "tok"}


def push(task_id: str = "", **fields: Any) -> dict[str, Any]:
    return {"taskPushNotificationConfig": {**HOOK, "taskId": task_id, **fields}}


def configs(driver: Driver, task_id: str) -> list[Any]:
    found: list[Any] = driver.rpc("ListTaskPushNotificationConfigs", {"taskId": task_id}).result()[
        "configs"
    ]
    return found


def test_a_send_carrying_a_push_config_is_refused_when_push_is_off() -> None:
    driver = Driver(multi_turn.agent)
    error = driver.send("hi", configuration=push()).error()
    assert error["code"] == -32003
    assert len(driver.tasks) == 0  # nothing was created


def test_a_follow_up_turn_may_add_a_push_config_to_its_task() -> None:
    driver = Driver(multi_turn.agent, push_notifications=True)
    first = driver.send("hi", configuration={"returnImmediately": True})
    task_id = first.result()["task"]["id"]
    driver.run_agents()
    assert configs(driver, task_id) == []
    second = driver.send("Ada", task_id=task_id, configuration=push(task_id, id="later"))
    driver.run_agents()
    assert second.result()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [c["id"] for c in configs(driver, task_id)] == ["later"]


def test_a_task_holds_at_most_max_push_configs() -> None:
    driver = Driver(multi_turn.agent, push_notifications=True, max_push_configs=1)
    first = driver.send("hi", configuration={**push(id="one"), "returnImmediately": True})
    task_id = first.result()["task"]["id"]
    driver.run_agents()
    error = driver.send("Ada", task_id=task_id, configuration=push(task_id, id="two")).error()
    assert error["code"] == -32602
    assert "already has 1 push configs" in error["message"]
    assert [c["id"] for c in configs(driver, task_id)] == ["one"]


async def answers(ctx: Any) -> Message:
    return Message("", Role.AGENT, (Part(text=f"re: {ctx.text}"),))


def test_a_resent_streaming_message_answered_directly_streams_that_answer_again() -> None:
    driver = Driver(answers)
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    first = driver.rpc("SendStreamingMessage", {"message": message})
    driver.run_agents()
    assert first.ended
    (answer,) = first.events()
    assert answer["result"]["message"]["parts"] == [{"text": "re: hi"}]
    again = driver.rpc("SendStreamingMessage", {"message": message})
    assert again.ended
    assert again.events() == [answer]
    assert driver.runs == {}  # the agent did not run twice


def test_a_legacy_send_naming_an_expired_task_by_its_id_and_message_starts_it_afresh() -> None:
    """The expired task (not yet swept) holds both the id the client chose and the message id:
    it is deleted once, and the same send makes the task anew, running the agent again."""
    driver = Driver(echo.agent, task_ttl=60)
    params = {
        "id": "mine",
        "message": {"role": "user", "messageId": "m-1", "parts": [{"type": "text", "text": "hi"}]},
    }
    first = driver.rpc("tasks/send", params, version="0.1").result()
    assert first["id"] == "mine"
    driver.run_agents()
    done = driver.rpc("tasks/get", {"id": "mine"}, version="0.1").result()
    assert done["status"]["state"] == "completed"
    # Past the TTL of a completed task, before any sweep: expired, but still in the store.
    driver.now += timedelta(seconds=61)
    assert len(driver.tasks) == 1
    again = driver.rpc("tasks/send", params, version="0.1").result()
    assert again["id"] == "mine"
    assert again["status"]["state"] == "submitted"  # a new task, not a refused turn
    assert len(driver.runs) == 1  # the agent runs again, on the new task
    assert driver.problems == []
