"""Push notifications end to end: config calls over JSON-RPC, deliveries to a real receiver.

A real server on 127.0.0.1 runs a real ``PushSender`` (fast retries) and delivers to a webhook
receiver on 127.0.0.1, which the server is told to allow (``push_allow_hosts``); the SSRF guard
stays on for everything else. What arrives is compared with the task's own event log, read back
by resuming a subscription after event 0 (PROTOCOL.md §3.7, §7).
"""

import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import pytest

from a2a_adapters import BearerTokens, PushSender
from a2a_adapters.stores import SqliteStore
from a2a_core import AgentContext, ArtifactChunk, Update, completed, text_artifact, working
from tests.a2a_adapters.sse import Gate, read_stream, results
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    COMPLETED,
    WORKING,
    card_of,
    error_of,
    new_id,
    result_of,
    rpc,
    send_params,
    violated_fields,
    wait_for_state,
)
from tests.a2a_adapters.webhooks import Delivery, Receiver, receiving
from tests.servers import running_server

#: Every test here runs against the asyncio and the trio adapter.
pytestmark = pytest.mark.usefixtures("adapter")

CREATE = "CreateTaskPushNotificationConfig"
GET = "GetTaskPushNotificationConfig"
LIST = "ListTaskPushNotificationConfigs"
DELETE = "DeleteTaskPushNotificationConfig"

#: What a webhook body may hold: one v1.0 ``StreamResponse``.
STREAM_RESPONSE_KEYS = {"task", "message", "statusUpdate", "artifactUpdate"}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as running:
        yield running


def fast_sender(**options: Any) -> PushSender:
    return PushSender(**{"first_backoff": 0.01, "max_backoff": 0.05, "timeout": 2.0, **options})


def gated(gate: Gate) -> Any:
    """Works, waits for ``gate``, adds an artifact, completes."""

    async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
        yield working()
        await gate.wait()
        yield ArtifactChunk(text_artifact(f"result for {ctx.text}", artifact_id="result"))
        yield completed("all done")

    return agent


async def three_steps(ctx: AgentContext) -> AsyncIterator[Update]:
    """Works, adds an artifact, completes, at once."""
    yield working()
    yield ArtifactChunk(text_artifact("the result", artifact_id="result"))
    yield completed()


def start_task(url: str, headers: Mapping[str, str] | None = None) -> str:
    params = send_params("go", return_immediately=True)
    task_id: str = result_of(rpc(url, "SendMessage", params, headers=headers))["task"]["id"]
    return task_id


def config_params(task_id: str, url: str, **fields: Any) -> dict[str, Any]:
    return {"taskId": task_id, "url": url, **fields}


def log_payloads(url: str, task_id: str) -> list[dict[str, Any]]:
    """The ``StreamResponse`` of every event in the task's log, oldest first."""
    events, _ = read_stream(url, "SubscribeToTask", {"id": task_id}, last_event_id=0)
    return results(events)


def bodies(deliveries: list[Delivery]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for delivery in deliveries:
        body = delivery.json()
        assert len(body) == 1, body
        assert set(body) <= STREAM_RESPONSE_KEYS, body
        found.append(body)
    return found


def is_completion(delivery: Delivery) -> bool:
    body = delivery.json()
    return "statusUpdate" in body and body["statusUpdate"]["status"]["state"] == COMPLETED


def wait_for_completion(receiver: Receiver, path: str, *, timeout: float = 5.0) -> None:
    """Wait until the receiver got the completed status at ``path``."""
    deadline = time.monotonic() + timeout
    while not any(is_completion(d) for d in receiver.deliveries(path)):
        assert time.monotonic() < deadline, receiver.deliveries(path)
        time.sleep(0.005)


# --- the card and the capability --------------------------------------------------------------


def test_the_card_declares_push_only_when_it_is_on() -> None:
    with running_server(three_steps, push=True) as url:
        assert card_of(url)["capabilities"]["pushNotifications"] is True
    with running_server(three_steps) as url:
        assert card_of(url)["capabilities"].get("pushNotifications", False) is False


def test_push_off_refuses_all_four_calls() -> None:
    with running_server(three_steps) as url:
        task_id = start_task(url)
        hook = "https://hooks.example.com/a2a"
        error_of(rpc(url, CREATE, config_params(task_id, hook)), -32003)
        error_of(rpc(url, GET, {"taskId": task_id, "id": "c1"}), -32003)
        error_of(rpc(url, LIST, {"taskId": task_id}), -32003)
        error_of(rpc(url, DELETE, {"taskId": task_id, "id": "c1"}), -32003)
        inline = send_params("go")
        inline["configuration"] = {"taskPushNotificationConfig": {"url": hook}}
        error_of(rpc(url, "SendMessage", inline), -32003)


# --- managing configs ---------------------------------------------------------------------------


def test_create_get_list_delete(receiver: Receiver) -> None:
    gate = Gate()
    with running_server(gated(gate), push=fast_sender(), push_allow_hosts=["127.0.0.1"]) as url:
        task_id = start_task(url)
        hook = f"{receiver.url}/hook"
        auth = {"scheme": "Bearer", "credentials": "s3cret"}
        created = result_of(
            rpc(url, CREATE, config_params(task_id, hook, token="t1", authentication=auth))
        )
        assert created["id"], "the server assigns an id"
        assert created["taskId"] == task_id
        assert created["url"] == hook
        assert created["token"] == "t1"
        assert created["authentication"] == auth
        mine = result_of(rpc(url, CREATE, config_params(task_id, f"{hook}/2", id="mine")))
        assert mine["id"] == "mine"

        fetched = result_of(rpc(url, GET, {"taskId": task_id, "id": created["id"]}))
        assert fetched == created
        listing = result_of(rpc(url, LIST, {"taskId": task_id}))
        assert listing["configs"] == [created, mine]
        assert listing["nextPageToken"] == ""

        # Creating with an id that exists replaces that config.
        replaced = result_of(rpc(url, CREATE, config_params(task_id, f"{hook}/3", id="mine")))
        assert result_of(rpc(url, GET, {"taskId": task_id, "id": "mine"})) == replaced
        assert len(result_of(rpc(url, LIST, {"taskId": task_id}))["configs"]) == 2

        # Deleting is idempotent: again, or a config that never was, is no error.
        for _ in range(2):
            assert result_of(rpc(url, DELETE, {"taskId": task_id, "id": "mine"})) is None
        assert result_of(rpc(url, DELETE, {"taskId": task_id, "id": "never"})) is None
        error_of(rpc(url, GET, {"taskId": task_id, "id": "mine"}), -32001)
        assert result_of(rpc(url, LIST, {"taskId": task_id}))["configs"] == [created]

        # A task that does not exist.
        error_of(rpc(url, CREATE, config_params("no-such-task", hook)), -32001)
        error_of(rpc(url, LIST, {"taskId": "no-such-task"}), -32001)
        gate.open()
        wait_for_state(url, task_id, {COMPLETED})


def test_configs_belong_to_the_tasks_owner(receiver: Receiver) -> None:
    tokens = BearerTokens({"alice-token": "alice", "bob-token": "bob"})
    alice = {**A2A_HEADERS, "Authorization": "Bearer alice-token"}
    bob = {**A2A_HEADERS, "Authorization": "Bearer bob-token"}
    gate = Gate()
    with running_server(
        gated(gate), auth=[tokens], push=fast_sender(), push_allow_hosts=["127.0.0.1"]
    ) as url:
        task_id = start_task(url, headers=alice)
        hook = f"{receiver.url}/alice"
        created = result_of(rpc(url, CREATE, config_params(task_id, hook, id="a1"), headers=alice))

        error_of(
            rpc(url, CREATE, config_params(task_id, f"{receiver.url}/bob"), headers=bob), -32001
        )
        error_of(rpc(url, GET, {"taskId": task_id, "id": "a1"}, headers=bob), -32001)
        error_of(rpc(url, LIST, {"taskId": task_id}, headers=bob), -32001)
        error_of(rpc(url, DELETE, {"taskId": task_id, "id": "a1"}, headers=bob), -32001)

        # Nothing Bob did changed Alice's configs, and only hers receive the task's events.
        listing = result_of(rpc(url, LIST, {"taskId": task_id}, headers=alice))
        assert listing["configs"] == [created]
        gate.open()
        wait_for_completion(receiver, "/alice")
    assert receiver.deliveries("/bob") == []


@pytest.mark.parametrize(
    "hook",
    [
        "http://10.0.0.1/hook",
        "http://127.0.0.1:8080/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://localhost:8080/hook",
        "ftp://hooks.example.com/hook",
    ],
)
def test_private_or_odd_webhook_urls_are_invalid_params(hook: str) -> None:
    with running_server(three_steps, push=True) as url:  # 127.0.0.1 is not allow-listed
        task_id = start_task(url)
        error = error_of(rpc(url, CREATE, config_params(task_id, hook)), -32602)
        assert violated_fields(error) == ["params.url"]
        inline = send_params("go")
        inline["configuration"] = {"taskPushNotificationConfig": {"url": hook}}
        error = error_of(rpc(url, "SendMessage", inline), -32602)
        assert violated_fields(error) == ["params.configuration.taskPushNotificationConfig.url"]
        assert result_of(rpc(url, LIST, {"taskId": task_id}))["configs"] == []


#: IPv6 forms that reach loopback, the metadata service or the private network all the same.
EMBEDDED_PRIVATE_HOOKS = [
    "http://[::127.0.0.1]/hook",  # IPv4-compatible
    "http://[::169.254.169.254]/latest/meta-data",
    "http://[::ffff:0:127.0.0.1]/hook",  # IPv4-translated
    "http://[64:ff9b:1::a9fe:a9fe]/hook",  # NAT64 local-use
    "http://[2002:a00:1::1]/hook",  # 6to4 of 10.0.0.1
    "http://[fec0::1]/hook",  # site-local
]


def test_ipv6_forms_of_private_addresses_are_invalid_params() -> None:
    with running_server(three_steps, push=True) as url:
        task_id = start_task(url)
        for hook in EMBEDDED_PRIVATE_HOOKS:
            error = error_of(rpc(url, CREATE, config_params(task_id, hook)), -32602)
            assert violated_fields(error) == ["params.url"], hook
        assert result_of(rpc(url, LIST, {"taskId": task_id}))["configs"] == []


# --- deliveries ---------------------------------------------------------------------------------


def test_events_after_a_config_is_created_are_delivered_in_log_order(receiver: Receiver) -> None:
    gate = Gate()
    with running_server(
        gated(gate), streaming=True, push=fast_sender(), push_allow_hosts=["127.0.0.1"]
    ) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        params = config_params(
            task_id,
            f"{receiver.url}/hooks/a2a?who=test",
            token="notification-token",
            authentication={"scheme": "Bearer", "credentials": "push-credentials"},
        )
        result_of(rpc(url, CREATE, params))
        gate.open()
        wait_for_completion(receiver, "/hooks/a2a?who=test")
        log = log_payloads(url, task_id)
    deliveries = receiver.deliveries()
    for delivery in deliveries:
        assert delivery.method == "POST"
        assert delivery.path == "/hooks/a2a?who=test"
        assert delivery.headers["content-type"] == "application/a2a+json"
        assert delivery.headers["authorization"] == "Bearer push-credentials"
        assert delivery.headers["x-a2a-notification-token"] == "notification-token"
    pushed = bodies(deliveries)
    # The config came after "working": the artifact and the completion follow, as logged.
    assert [next(iter(body)) for body in pushed] == ["artifactUpdate", "statusUpdate"]
    assert pushed == log[-2:]
    assert pushed[0]["artifactUpdate"]["taskId"] == task_id


def test_an_inline_config_gets_every_event_of_the_new_task(receiver: Receiver) -> None:
    with running_server(
        three_steps, streaming=True, push=fast_sender(), push_allow_hosts=["127.0.0.1"]
    ) as url:
        params = send_params("go")
        params["configuration"] = {
            "taskPushNotificationConfig": {"url": f"{receiver.url}/inline", "token": "tok-inline"}
        }
        task = result_of(rpc(url, "SendMessage", params))["task"]
        wait_for_completion(receiver, "/inline")
        log = log_payloads(url, task["id"])
        [config] = result_of(rpc(url, LIST, {"taskId": task["id"]}))["configs"]
    assert config["taskId"] == task["id"]
    assert config["id"], "the inline config got an id"
    assert config["url"] == f"{receiver.url}/inline"
    deliveries = receiver.deliveries("/inline")
    assert all(d.headers["x-a2a-notification-token"] == "tok-inline" for d in deliveries)
    assert all("authorization" not in d.headers for d in deliveries)
    pushed = bodies(deliveries)
    assert [next(iter(body)) for body in pushed] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert pushed == log


def test_each_config_gets_every_event_and_a_failing_one_is_retried(receiver: Receiver) -> None:
    receiver.script("/flaky", 503, 500)
    gate = Gate()
    with running_server(
        gated(gate), streaming=True, push=fast_sender(), push_allow_hosts=["127.0.0.1"]
    ) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        result_of(rpc(url, CREATE, config_params(task_id, f"{receiver.url}/steady")))
        result_of(rpc(url, CREATE, config_params(task_id, f"{receiver.url}/flaky")))
        gate.open()
        wait_for_completion(receiver, "/steady")
        wait_for_completion(receiver, "/flaky")
        log = log_payloads(url, task_id)
    assert bodies(receiver.deliveries("/steady")) == log[-2:]
    flaky = bodies(receiver.deliveries("/flaky"))
    assert flaky == [log[-2], log[-2], log[-2], log[-1]], "retried, then in order"


def test_a_deleted_config_gets_nothing_more(receiver: Receiver) -> None:
    gate = Gate()
    with running_server(gated(gate), push=fast_sender(), push_allow_hosts=["127.0.0.1"]) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        result_of(rpc(url, CREATE, config_params(task_id, f"{receiver.url}/gone", id="gone")))
        result_of(rpc(url, CREATE, config_params(task_id, f"{receiver.url}/kept", id="kept")))
        assert result_of(rpc(url, DELETE, {"taskId": task_id, "id": "gone"})) is None
        gate.open()
        wait_for_completion(receiver, "/kept")
        time.sleep(0.1)
    assert receiver.deliveries("/gone") == []


def test_the_guard_applies_at_delivery_to_a_host_name(receiver: Receiver) -> None:
    asked: list[tuple[str, int]] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return ["127.0.0.1"] if host == "hooks.test" else []

    gate = Gate()
    sender = fast_sender(resolve=resolve)
    with running_server(gated(gate), push=sender, push_allow_hosts=["127.0.0.1"]) as url:
        task_id = start_task(url)
        wait_for_state(url, task_id, {WORKING})
        # A name passes the check at creation: only resolving it tells where it points.
        hidden = f"http://hooks.test:{receiver.port}/hidden-{new_id()}"
        result_of(rpc(url, CREATE, config_params(task_id, hidden)))
        result_of(rpc(url, CREATE, config_params(task_id, f"{receiver.url}/allowed")))
        gate.open()
        wait_for_completion(receiver, "/allowed")
        deadline = time.monotonic() + 5.0
        while len(asked) < 2:  # one look-up per event (artifact, completion)
            assert time.monotonic() < deadline, asked
            time.sleep(0.005)
        time.sleep(0.1)
    assert asked == [("hooks.test", receiver.port)] * 2
    assert [d.path for d in receiver.deliveries() if d.path.startswith("/hidden")] == []


# --- the outbox: what a server could not deliver, the next one on the same store does -------------


def test_what_one_server_could_not_deliver_the_next_one_on_its_store_does(
    receiver: Receiver, tmp_path: Any
) -> None:
    path = tmp_path / "tasks.db"
    receiver.always("/outage", 503)  # the webhook is down while the first server runs
    store = SqliteStore(path)
    sender = fast_sender(max_attempts=50)
    try:
        with running_server(
            three_steps,
            push=sender,
            push_allow_hosts=["127.0.0.1"],
            store=store,
            shutdown_grace=0.2,  # it stops while the webhook is still down
        ) as url:
            params = send_params("go")
            params["configuration"] = {
                "taskPushNotificationConfig": {"url": f"{receiver.url}/outage"}
            }
            task_id = result_of(rpc(url, "SendMessage", params))["task"]["id"]
            deadline = time.monotonic() + 5
            while len(receiver.deliveries("/outage")) < 4:  # every event tried at least once
                assert time.monotonic() < deadline, receiver.deliveries("/outage")
                time.sleep(0.01)
    finally:
        store.close()
    refused = receiver.deliveries("/outage")
    first_ids = {d.headers["x-a2a-notification-id"] for d in refused}
    receiver.always("/outage", 200)  # the webhook is back; a new server opens the same file
    store = SqliteStore(path)
    try:
        with running_server(
            three_steps,
            streaming=True,
            push=fast_sender(max_attempts=50),  # its attempts go on counting from the first's
            push_allow_hosts=["127.0.0.1"],
            store=store,
        ) as url:
            wait_for_completion(receiver, "/outage")
            log = log_payloads(url, task_id)
    finally:
        store.close()
    delivered = [d for d in receiver.deliveries("/outage") if d not in refused]
    # Every event, in order, as logged (the first server was still retrying the first, which
    # held the rest back: one webhook's notifications keep their order), each under one id,
    # the one it had before the restart for the event tried then.
    assert bodies(delivered) == log
    assert len(log) == 4
    ids = [d.headers["x-a2a-notification-id"] for d in delivered]
    assert len(set(ids)) == 4
    assert first_ids == {ids[0]}
