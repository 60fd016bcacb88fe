"""Calls on an existing task (subscribe, push configs), through the whole server with no I/O."""

import pytest

from a2a_core.testing import Driver
from examples import multi_turn


def asked() -> tuple[Driver, str]:
    """A server whose one task waits for input (two events logged: submitted, then asked)."""
    driver = Driver(multi_turn.agent, push_notifications=True)
    sent = driver.send("hi", configuration={"returnImmediately": True})
    driver.run_agents()
    task_id: str = sent.result()["task"]["id"]
    return driver, task_id


def test_resuming_after_an_event_the_task_never_had_is_refused_naming_the_header() -> None:
    driver, task_id = asked()
    error = driver.rpc("SubscribeToTask", {"id": task_id}, headers={"last-event-id": "99"})
    found = error.error()
    assert found["code"] == -32602
    assert "Last-Event-ID" in found["message"]
    assert "is not an event of task" in found["message"]


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("GetTaskPushNotificationConfig", {"taskId": "", "id": "p"}),
        ("ListTaskPushNotificationConfigs", {"taskId": ""}),
        ("DeleteTaskPushNotificationConfig", {"taskId": "", "id": "p"}),
    ],
)
def test_a_push_config_call_must_name_its_task(method: str, params: dict[str, str]) -> None:
    driver, _ = asked()
    error = driver.rpc(method, params).error()
    assert error["code"] == -32602
    assert "params.taskId" in error["message"]


def test_deleting_a_push_config_twice_is_no_error() -> None:
    driver, task_id = asked()
    created = {"taskId": task_id, "id": "p", "url": "https://hooks.example/a2a"}
    driver.rpc("CreateTaskPushNotificationConfig", created).result()
    for _ in range(2):
        assert (
            driver.rpc("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "p"}).result()
            is None
        )
    listed = driver.rpc("ListTaskPushNotificationConfigs", {"taskId": task_id}).result()
    assert listed["configs"] == []
