"""The JSON-RPC binding over real HTTP, from a raw client's point of view (httpx, no sdk).

Each test starts its own server on 127.0.0.1 (it takes milliseconds), so no test depends on the
tasks another one created. The agents below use only the agent API and ``anyio``, so the same
tests can later run against the trio adapter.
"""

import json
import threading
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import anyio
import attrs
import httpx
import pytest

from a2a_adapters import Engine, build_engine
from a2a_core import (
    AgentContext,
    Artifact,
    ArtifactChunk,
    Core,
    MissingInput,
    Part,
    completed,
    reply,
    text_artifact,
    working,
)
from a2a_core.card import AgentCapabilities, AgentCard
from examples import echo, multi_turn, tck_agent
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    CANCELED,
    CARD_PATH,
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    LEGACY_CARD_PATH,
    SLOW_SECONDS,
    SUBMITTED,
    TERMINAL,
    WORKING,
    cancel_task,
    card_of,
    endpoint,
    error_info,
    error_of,
    fetch_card,
    get_task,
    jsonrpc_url,
    list_tasks,
    new_id,
    post_raw,
    result_of,
    rpc,
    send,
    send_params,
    send_task,
    slow_agent,
    state_of,
    status_text,
    text_of,
    violated_fields,
    wait_for_state,
    wait_until,
)
from tests.servers import running_server, serving

#: Every test here runs against the asyncio and the trio adapter.
pytestmark = pytest.mark.usefixtures("adapter")

# --- agents -------------------------------------------------------------------------------------

#: Task ids whose agent run has started, and whose canceled run still produced output.
STARTED: list[str] = []
ANSWERED_LATE: list[str] = []

#: How long the shielded agent's protected section lasts.
SHIELD_SECONDS = 0.3
#: Long enough that only a cancel (or the server's shutdown) ends the run.
LONG_SECONDS = 10.0


async def scripted_agent(ctx: AgentContext) -> Any:
    """Behaves as the message's text says: ``boom``, ``bad-output``, ``ask``, ``reply``, …"""
    if ctx.text.startswith("after "):  # "after 3": answer after 3 ms
        await anyio.sleep(int(ctx.text.split()[1]) / 1000)
        return "answered"
    match ctx.text:
        case "boom":
            raise RuntimeError("secret detail: password=hunter2")
        case "bad-output":
            return 42
        case "ask":
            raise MissingInput("Which one?")
        case "reply":
            return reply("a direct answer")
        case "artifact":
            return [text_artifact("the artifact", name="result"), completed("with artifact")]
        case "context":
            seen = {
                "metadata": ctx.metadata,
                "acceptedOutputModes": list(ctx.accepted_output_modes),
                "historyLength": len(ctx.history),
                "taskId": ctx.task_id,
                "contextId": ctx.context_id,
            }
            return json.dumps(seen, sort_keys=True)
    return f"echo: {ctx.text}"


#: How long :func:`progress_agent` pauses between its steps.
STEP_SECONDS = 0.3


async def progress_agent(ctx: AgentContext) -> AsyncIterator[Any]:
    """Reports progress, publishes an artifact in two chunks, then completes."""
    yield "step 1"
    await anyio.sleep(STEP_SECONDS)
    chunk = Artifact(artifact_id="report", parts=(Part(text="part one, "),))
    yield ArtifactChunk(chunk, append=True)
    yield working("step 2")
    await anyio.sleep(STEP_SECONDS)
    chunk = Artifact(artifact_id="report", parts=(Part(text="part two"),))
    yield ArtifactChunk(chunk, append=True, last_chunk=True)
    yield completed("all done")


async def long_agent(ctx: AgentContext) -> str:
    """Works until it is canceled."""
    STARTED.append(ctx.task_id)
    await anyio.sleep(LONG_SECONDS)
    return "finished"


async def stubborn_agent(ctx: AgentContext) -> str:
    """Ignores its cancellation and answers anyway."""
    STARTED.append(ctx.task_id)
    try:
        await anyio.sleep(LONG_SECONDS)
    except anyio.get_cancelled_exc_class():
        ANSWERED_LATE.append(ctx.task_id)
        return "late"  # swallowing the cancellation on purpose
    return "on time"


async def shielded_agent(ctx: AgentContext) -> str:
    """Finishes a protected section even when canceled, then answers."""
    STARTED.append(ctx.task_id)
    with anyio.CancelScope(shield=True):
        await anyio.sleep(SHIELD_SECONDS)
    ANSWERED_LATE.append(ctx.task_id)
    return "late"


def _started(task_id: str) -> None:
    assert wait_until(lambda: task_id in STARTED), "the agent never started"


def _timestamp(task: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(task["status"]["timestamp"])


# --- the agent card -----------------------------------------------------------------------------


def test_card_is_served_at_both_well_known_paths() -> None:
    with running_server(echo.agent, card=echo.card) as url:
        current = card_of(url, path=CARD_PATH)
        legacy = card_of(url, path=LEGACY_CARD_PATH)
    assert current == legacy
    assert current["name"] == "Echo"
    assert current["version"] == "1.0.0"
    assert [skill["id"] for skill in current["skills"]] == ["echo"]
    assert current["defaultInputModes"] == ["text/plain"]


def test_card_interface_is_the_servers_own_url() -> None:
    with running_server(echo.agent, card=echo.card) as url:
        card = card_of(url)
        # The advertised endpoint really is the one that answers.
        answered = send_task(jsonrpc_url(card).removesuffix("/"), "via the card")
    assert card["supportedInterfaces"] == [
        {"url": url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    ]
    # The v0.3 spelling of the same endpoint, for 0.3 clients reading the same card.
    assert (card["url"], card["preferredTransport"], card["protocolVersion"]) == (
        url + "/",
        "JSONRPC",
        "0.3.0",
    )
    assert state_of(answered) == COMPLETED


def test_card_interface_follows_the_host_header_unless_pinned() -> None:
    with running_server(echo.agent, card=echo.card) as url:
        proxied = fetch_card(url, headers={"Host": "agents.example:8443"}).json()
    assert jsonrpc_url(proxied) == "http://agents.example:8443/"
    with running_server(echo.agent, card=echo.card, public_url="https://a.example/echo") as url:
        pinned = fetch_card(url, headers={"Host": "agents.example:8443"}).json()
    assert jsonrpc_url(pinned) == "https://a.example/echo/"


def test_card_caching_headers() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    with running_server(echo.agent, card=echo.card) as url:
        response = fetch_card(url)
        again = fetch_card(url)
    assert response.status_code == 200
    max_age = [
        int(directive.split("=", 1)[1])
        for directive in response.headers["cache-control"].replace(" ", "").split(",")
        if directive.startswith("max-age=")
    ]
    assert len(max_age) == 1, response.headers["cache-control"]
    assert max_age[0] > 0
    etag = response.headers["etag"]
    assert etag.startswith('"')
    assert etag.endswith('"')
    assert len(etag) > 2
    assert again.headers["etag"] == etag, "the ETag must be stable while the card is"
    modified = parsedate_to_datetime(response.headers["last-modified"])
    assert before <= modified <= datetime.now(UTC)


def test_card_if_none_match_gets_304() -> None:
    with running_server(echo.agent, card=echo.card) as url:
        etag = fetch_card(url).headers["etag"]
        not_modified = fetch_card(url, headers={"If-None-Match": etag})
        weak = fetch_card(url, headers={"If-None-Match": f'"other", W/{etag}'})
        legacy = fetch_card(url, path=LEGACY_CARD_PATH, headers={"If-None-Match": etag})
        changed = fetch_card(url, headers={"If-None-Match": '"not-the-etag"'})
    for response in (not_modified, weak, legacy):
        assert response.status_code == 304
        assert response.content == b""
        assert response.headers["etag"] == etag
        assert "max-age=" in response.headers["cache-control"]
    assert changed.status_code == 200
    assert changed.json()["name"] == "Echo"


def test_card_head_and_wrong_method() -> None:
    with running_server(echo.agent, card=echo.card) as url:
        head = httpx.head(url + CARD_PATH)
        post = httpx.post(url + CARD_PATH, json={})
    assert head.status_code == 200
    assert head.content == b""
    assert "etag" in head.headers
    assert post.status_code == 405
    assert set(post.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD"}


def test_card_head_content_length_matches_get() -> None:
    with running_server(echo.agent, card=echo.card) as url:
        get = httpx.get(url + CARD_PATH)
        head = httpx.head(url + CARD_PATH)
    assert head.headers.get("content-length", str(len(get.content))) == str(len(get.content))


def test_card_capabilities_are_what_the_server_does() -> None:
    boastful = AgentCard(
        name="Boastful",
        description="Claims more than the server does.",
        version="0.1.0",
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
    )
    with running_server(echo.agent, card=boastful) as url:
        card = card_of(url)
        streaming = rpc(url, "SendStreamingMessage", send_params("hi"))
        push = rpc(url, "CreateTaskPushNotificationConfig", {"taskId": "t", "url": "https://x"})
    assert card["capabilities"]["streaming"] is False
    assert card["capabilities"]["pushNotifications"] is False
    assert card["capabilities"]["extendedAgentCard"] is False
    # A skill is required on the wire: the server supplies one for a card without skills.
    assert len(card["skills"]) == 1
    # ... and the operations the card does not claim are refused as the spec says.
    error_of(streaming, -32004)
    error_of(push, -32003)


# --- SendMessage --------------------------------------------------------------------------------


def test_blocking_send_returns_the_completed_task() -> None:
    with running_server(scripted_agent) as url:
        response = rpc(url, "SendMessage", send_params("hello", message_id="m-1"), rpc_id="req-1")
    task = result_of(response, rpc_id="req-1")["task"]
    assert state_of(task) == COMPLETED
    assert task["id"]
    assert task["contextId"]
    answer = task["status"]["message"]
    assert answer["role"] == "ROLE_AGENT"
    assert text_of(answer) == "echo: hello"
    assert answer["taskId"] == task["id"]
    assert answer["contextId"] == task["contextId"]
    assert answer["messageId"] != "m-1"
    [sent] = task["history"]
    assert sent["messageId"] == "m-1"
    assert sent["taskId"] == task["id"]
    assert sent["contextId"] == task["contextId"]
    assert "artifacts" not in task
    datetime.fromisoformat(task["status"]["timestamp"])


def test_blocking_send_waits_for_a_slow_agent() -> None:
    with running_server(slow_agent) as url:
        started = time.monotonic()
        task = send_task(url, "patience")
        elapsed = time.monotonic() - started
    assert state_of(task) == COMPLETED
    assert status_text(task) == "slow: patience"
    assert elapsed >= SLOW_SECONDS * 0.9


def test_return_immediately_answers_at_once_while_the_agent_runs() -> None:
    with running_server(slow_agent) as url:
        started = time.monotonic()
        task = send_task(url, "later", return_immediately=True)
        elapsed = time.monotonic() - started
        still_running = get_task(url, task["id"])
        done = wait_for_state(url, task["id"], TERMINAL)
    assert elapsed < SLOW_SECONDS / 2, f"returnImmediately took {elapsed:.2f} s"
    assert state_of(task) == SUBMITTED
    assert text_of(task["history"][0]) == "later"
    assert state_of(still_running) in (SUBMITTED, WORKING)
    assert state_of(done) == COMPLETED
    assert status_text(done) == "slow: later"
    assert done["contextId"] == task["contextId"]


def test_blocking_sends_are_served_concurrently() -> None:
    results: list[dict[str, Any]] = []

    def one(index: int) -> None:
        results.append(send_task(url, f"n{index}"))

    with running_server(slow_agent) as url:
        started = time.monotonic()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=5)
        elapsed = time.monotonic() - started
    assert sorted(status_text(t) for t in results) == [f"slow: n{i}" for i in range(4)]
    assert len({t["id"] for t in results}) == 4
    assert elapsed < SLOW_SECONDS * 2.5, f"4 sends took {elapsed:.2f} s: they were serialized"


def test_direct_message_reply() -> None:
    with running_server(scripted_agent) as url:
        result = send(url, "reply")
    assert set(result) == {"message"}
    message = result["message"]
    assert message["role"] == "ROLE_AGENT"
    assert text_of(message) == "a direct answer"
    assert message["contextId"]


def test_send_history_length_zero_omits_history() -> None:
    with running_server(scripted_agent) as url:
        task = send_task(url, "quiet", history_length=0)
        full = get_task(url, task["id"])
    assert state_of(task) == COMPLETED
    assert "history" not in task
    assert len(full["history"]) == 1


def test_agent_artifacts_are_returned() -> None:
    with running_server(scripted_agent) as url:
        task = send_task(url, "artifact")
    assert state_of(task) == COMPLETED
    assert status_text(task) == "with artifact"
    [artifact] = task["artifacts"]
    assert artifact["artifactId"]
    assert artifact["name"] == "result"
    assert artifact["parts"] == [{"text": "the artifact"}]


def test_progress_of_a_generator_agent_is_visible_while_it_runs() -> None:
    with running_server(progress_agent) as url:
        task = send_task(url, "go", return_immediately=True)
        first = wait_for_state(url, task["id"], {WORKING})
        second: list[dict[str, Any]] = []

        def at_step_two() -> bool:
            second[:] = [get_task(url, task["id"])]
            return status_text(second[0]) == "step 2" or state_of(second[0]) in TERMINAL

        assert wait_until(at_step_two)
        done = wait_for_state(url, task["id"], TERMINAL)
    assert status_text(first) == "step 1"
    assert "artifacts" not in first or first["artifacts"][0]["parts"] == [{"text": "part one, "}]
    assert state_of(second[0]) == WORKING
    assert second[0]["artifacts"] == [{"artifactId": "report", "parts": [{"text": "part one, "}]}]
    assert state_of(done) == COMPLETED
    assert status_text(done) == "all done"
    assert done["artifacts"] == [
        {"artifactId": "report", "parts": [{"text": "part one, "}, {"text": "part two"}]}
    ]
    # Superseded status messages become history, in order.
    assert [text_of(m) for m in done["history"]] == ["go", "step 1", "step 2"]


def test_what_the_agent_sees() -> None:
    params = send_params("context")
    params["metadata"] = {"trace": {"id": 7}}
    params["configuration"] = {"acceptedOutputModes": ["text/plain", "application/json"]}
    with running_server(scripted_agent) as url:
        task = result_of(rpc(url, "SendMessage", params))["task"]
    assert json.loads(status_text(task)) == {
        "metadata": {"trace": {"id": 7}},
        "acceptedOutputModes": ["text/plain", "application/json"],
        "historyLength": 1,
        "taskId": task["id"],
        "contextId": task["contextId"],
    }


def test_message_content_round_trips() -> None:
    message = {
        "messageId": "m-parts",
        "role": "ROLE_USER",
        "parts": [
            {"text": "héllo ✓ 🚀", "metadata": {"k": "v"}},
            {"data": {"a": [1, 2.5, None, True], "b": "x"}},
            {"data": [1, 2]},
            {"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "h.txt"},
            {"url": "https://example.com/f.txt", "mediaType": "text/plain"},
        ],
        "metadata": {"trace": {"id": 7}},
        "extensions": ["https://ext.example/v1"],
        "referenceTaskIds": ["earlier-task"],
    }
    with running_server(echo.agent, card=echo.card) as url:
        task = result_of(rpc(url, "SendMessage", {"message": message}))["task"]
        fetched = get_task(url, task["id"])
    [stored] = fetched["history"]
    assert stored == {**message, "taskId": task["id"], "contextId": task["contextId"]}
    assert status_text(task) == "Echo: héllo ✓ 🚀"


# --- GetTask ------------------------------------------------------------------------------------


def test_get_task_history_length() -> None:
    with running_server(multi_turn.agent, card=multi_turn.card) as url:
        first = send_task(url, "hi there")
        send_task(url, "Bob", task_id=first["id"])
        unset = get_task(url, first["id"])
        none = get_task(url, first["id"], history_length=0)
        last = get_task(url, first["id"], history_length=1)
        two = get_task(url, first["id"], history_length=2)
        many = get_task(url, first["id"], history_length=50)
        negative = rpc(url, "GetTask", {"id": first["id"], "historyLength": -1})
    history = unset["history"]
    assert [m["role"] for m in history] == ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"]
    assert [text_of(m) for m in history] == ["hi there", "What is your name?", "Bob"]
    assert "history" not in none
    assert last["history"] == history[-1:]
    assert two["history"] == history[-2:]
    assert many["history"] == history
    for task in (none, last, two, many):
        assert task["status"] == unset["status"]
    assert "params.historyLength" in violated_fields(error_of(negative, -32602))


def test_get_unknown_task() -> None:
    with running_server(scripted_agent) as url:
        error = error_of(rpc(url, "GetTask", {"id": "no-such-task"}), -32001)
    assert error_info(error)["metadata"] == {"taskId": "no-such-task"}


# --- ListTasks ----------------------------------------------------------------------------------


def _tck(url: str, prefix: str, **options: Any) -> dict[str, Any]:
    return send_task(url, "tck", message_id=f"{prefix}-{new_id()}", **options)


def test_list_tasks_filters_by_context_and_status() -> None:
    with running_server(tck_agent.agent, card=tck_agent.card) as url:
        a1 = _tck(url, "tck-complete-task")
        a2 = _tck(url, "tck-input-required", context_id=a1["contextId"])
        b1 = _tck(url, "tck-complete-task")
        everything = list_tasks(url)
        in_a = list_tasks(url, contextId=a1["contextId"])
        completed_tasks = list_tasks(url, status=COMPLETED)
        waiting_in_a = list_tasks(url, contextId=a1["contextId"], status=INPUT_REQUIRED)
        waiting_in_b = list_tasks(url, contextId=b1["contextId"], status=INPUT_REQUIRED)
        unknown_context = list_tasks(url, contextId="no-such-context")
    assert a2["contextId"] == a1["contextId"] != b1["contextId"]
    assert state_of(a2) == INPUT_REQUIRED

    def ids(listing: dict[str, Any]) -> list[str]:
        return [t["id"] for t in listing["tasks"]]

    assert ids(everything) == [b1["id"], a2["id"], a1["id"]]
    assert everything["totalSize"] == 3
    assert ids(in_a) == [a2["id"], a1["id"]]
    assert in_a["totalSize"] == 2
    assert ids(completed_tasks) == [b1["id"], a1["id"]]
    assert completed_tasks["totalSize"] == 2
    assert ids(waiting_in_a) == [a2["id"]]
    assert waiting_in_a["totalSize"] == 1
    for empty in (waiting_in_b, unknown_context):
        assert empty["tasks"] == []
        assert empty["totalSize"] == 0
    for listing in (everything, in_a, completed_tasks, waiting_in_a, waiting_in_b):
        assert listing["nextPageToken"] == ""
        assert listing["pageSize"] == 50


def test_list_tasks_status_timestamp_after() -> None:
    with running_server(tck_agent.agent, card=tck_agent.card) as url:
        old = _tck(url, "tck-complete-task")
        time.sleep(0.005)  # the next status lands in a later millisecond
        middle = _tck(url, "tck-complete-task")
        new = _tck(url, "tck-complete-task")
        since_middle = list_tasks(url, statusTimestampAfter=middle["status"]["timestamp"])
        since_old = list_tasks(url, statusTimestampAfter=old["status"]["timestamp"])
        future = list_tasks(url, statusTimestampAfter="2999-01-01T00:00:00Z")
        bad = rpc(url, "ListTasks", {"statusTimestampAfter": "yesterday"})
    assert _timestamp(old) < _timestamp(middle) <= _timestamp(new)
    assert [t["id"] for t in since_middle["tasks"]] == [new["id"], middle["id"]]
    assert since_middle["totalSize"] == 2
    assert [t["id"] for t in since_old["tasks"]] == [new["id"], middle["id"], old["id"]]
    assert future["tasks"] == []
    assert future["totalSize"] == 0
    assert "params.statusTimestampAfter" in violated_fields(error_of(bad, -32602))


def test_list_tasks_pages_newest_first() -> None:
    with running_server(tck_agent.agent, card=tck_agent.card) as url:
        created = [_tck(url, "tck-complete-task")["id"] for _ in range(5)]
        pages = [list_tasks(url, pageSize=2)]
        while pages[-1]["nextPageToken"] and len(pages) < 10:
            pages.append(list_tasks(url, pageSize=2, pageToken=pages[-1]["nextPageToken"]))
        waiting = [_tck(url, "tck-input-required")["id"] for _ in range(3)]
        filtered = [list_tasks(url, pageSize=2, status=INPUT_REQUIRED)]
        filtered.append(
            list_tasks(
                url, pageSize=2, status=INPUT_REQUIRED, pageToken=filtered[0]["nextPageToken"]
            )
        )
    assert [len(page["tasks"]) for page in pages] == [2, 2, 1]
    assert [bool(page["nextPageToken"]) for page in pages] == [True, True, False]
    assert pages[-1]["nextPageToken"] == ""
    assert all(page["totalSize"] == 5 and page["pageSize"] == 2 for page in pages)
    listed = [task for page in pages for task in page["tasks"]]
    assert [t["id"] for t in listed] == created[::-1]
    stamps = [_timestamp(t) for t in listed]
    assert stamps == sorted(stamps, reverse=True)
    # Paging a filtered listing: the status filter holds on every page.
    assert [t["id"] for page in filtered for t in page["tasks"]] == waiting[::-1]
    assert [page["nextPageToken"] != "" for page in filtered] == [True, False]
    assert all(page["totalSize"] == 3 for page in filtered)


def test_list_tasks_artifacts_and_history() -> None:
    with running_server(tck_agent.agent, card=tck_agent.card) as url:
        task = _tck(url, "tck-artifact-text")
        default = list_tasks(url)
        without = list_tasks(url, includeArtifacts=False)
        with_artifacts = list_tasks(url, includeArtifacts=True, historyLength=0)
    assert task["artifacts"][0]["parts"] == [{"text": "Generated text content"}]
    for listing in (default, without):
        [listed] = listing["tasks"]
        assert "artifacts" not in listed, "includeArtifacts false: the key must be absent"
        assert listed["history"] == task["history"]
    [listed] = with_artifacts["tasks"]
    assert listed["artifacts"] == task["artifacts"]
    assert "history" not in listed


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pageSize": 0}, "params.pageSize"),
        ({"pageSize": 101}, "params.pageSize"),
        ({"pageToken": "not-a-token"}, "params.pageToken"),
        ({"historyLength": -2}, "params.historyLength"),
        ({"status": "TASK_STATE_BOGUS"}, "params.status"),
    ],
)
def test_list_tasks_invalid_params(params: dict[str, Any], field: str) -> None:
    with running_server(echo.agent) as url:
        error = error_of(rpc(url, "ListTasks", params), -32602)
    assert field in violated_fields(error)
    assert field in error["message"]


# --- CancelTask ---------------------------------------------------------------------------------


def test_cancel_a_running_task() -> None:
    with running_server(long_agent) as url:
        task = send_task(url, "work", return_immediately=True)
        _started(task["id"])
        canceled = cancel_task(url, task["id"])
        fetched = get_task(url, task["id"])
        again = rpc(url, "CancelTask", {"id": task["id"]})
        follow_up = rpc(url, "SendMessage", send_params("more", task_id=task["id"]))
    assert canceled["id"] == task["id"]
    assert state_of(canceled) == CANCELED
    assert state_of(fetched) == CANCELED
    assert fetched["status"] == canceled["status"]
    error = error_of(again, -32002)
    assert error_info(error)["metadata"]["taskId"] == task["id"]
    error_of(follow_up, -32004)


def test_cancel_wakes_a_blocking_send() -> None:
    answers: list[httpx.Response] = []
    started_before = len(STARTED)
    with running_server(long_agent) as url:

        def block() -> None:
            answers.append(rpc(url, "SendMessage", send_params("block")))

        sender = threading.Thread(target=block)
        started = time.monotonic()
        sender.start()
        assert wait_until(lambda: len(STARTED) > started_before), "the agent never started"
        task_id = STARTED[-1]
        cancel_task(url, task_id)
        sender.join(timeout=5)
        elapsed = time.monotonic() - started
    assert answers, "the blocking send never answered"
    task = result_of(answers[0])["task"]
    assert task["id"] == task_id
    assert state_of(task) == CANCELED
    assert elapsed < 3.0


def test_output_of_a_canceled_run_is_dropped() -> None:
    with running_server(stubborn_agent) as url:
        task = send_task(url, "work", return_immediately=True)
        _started(task["id"])
        canceled = cancel_task(url, task["id"])
        assert wait_until(lambda: task["id"] in ANSWERED_LATE), "the agent never answered"
        # The late answer reached the server; it must change nothing, now or a little later.
        changed = wait_until(
            lambda: get_task(url, task["id"])["status"] != canceled["status"], timeout=0.2
        )
        final = get_task(url, task["id"])
    assert state_of(canceled) == CANCELED
    assert not changed
    assert state_of(final) == CANCELED
    assert "late" not in json.dumps(final)


def test_cancel_holds_against_a_shielded_agent() -> None:
    with running_server(shielded_agent) as url:
        task = send_task(url, "work", return_immediately=True)
        _started(task["id"])
        canceled = cancel_task(url, task["id"])
        # Watch for longer than the agent's protected section: nothing may change.
        changed = wait_until(
            lambda: get_task(url, task["id"])["status"] != canceled["status"],
            timeout=SHIELD_SECONDS + 0.2,
        )
        final = get_task(url, task["id"])
    assert state_of(canceled) == CANCELED
    assert not changed
    assert final["status"] == canceled["status"]
    assert "late" not in json.dumps(final)


def test_a_canceled_agent_may_finish_its_shielded_section() -> None:
    with running_server(shielded_agent) as url:
        task = send_task(url, "work", return_immediately=True)
        _started(task["id"])
        cancel_task(url, task["id"])
        finished = wait_until(lambda: task["id"] in ANSWERED_LATE, timeout=SHIELD_SECONDS + 0.7)
        final = get_task(url, task["id"])
    assert finished, "the shielded section was interrupted"
    assert state_of(final) == CANCELED


def test_cancel_a_finished_task() -> None:
    with running_server(scripted_agent) as url:
        task = send_task(url, "done")
        error = error_of(rpc(url, "CancelTask", {"id": task["id"]}), -32002)
        after = get_task(url, task["id"])
    assert error_info(error)["metadata"] == {"taskId": task["id"], "state": COMPLETED}
    assert state_of(after) == COMPLETED


def test_cancel_an_unknown_task() -> None:
    with running_server(scripted_agent) as url:
        error_of(rpc(url, "CancelTask", {"id": "no-such-task"}), -32001)


def test_cancel_a_task_waiting_for_input() -> None:
    with running_server(scripted_agent) as url:
        task = send_task(url, "ask")
        canceled = cancel_task(url, task["id"])
    assert state_of(task) == INPUT_REQUIRED
    assert state_of(canceled) == CANCELED


def test_cancel_racing_completion_never_flips_the_outcome() -> None:
    outcomes: dict[str, int] = {"canceled": 0, "not cancelable": 0}
    with running_server(scripted_agent) as url:
        for attempt in range(25):
            # Answers after 0 to 16 ms: the cancel lands before, after, or at the same time.
            task = send_task(url, f"after {attempt % 5 * 4}", return_immediately=True)
            response = rpc(url, "CancelTask", {"id": task["id"]})
            if "error" in response.json():
                error_of(response, -32002)
                expected = COMPLETED
                outcomes["not cancelable"] += 1
            else:
                assert state_of(result_of(response)) == CANCELED
                expected = CANCELED
                outcomes["canceled"] += 1
            # Whatever the cancel answered is what the task stays.
            assert state_of(wait_for_state(url, task["id"], TERMINAL)) == expected
            time.sleep(0.005)
            assert state_of(get_task(url, task["id"])) == expected
    assert sum(outcomes.values()) == 25, outcomes
    assert all(outcomes.values()), f"the race was not run both ways: {outcomes}"


def test_concurrent_follow_ups_are_serialized() -> None:
    """Each follow-up either joins the conversation (superseding a run still working) or, once
    the task has completed, is refused; none is lost or recorded twice."""
    answers: dict[str, httpx.Response] = {}
    with running_server(multi_turn.agent, card=multi_turn.card) as url:
        task = send_task(url, "first words")
        go = threading.Barrier(5)

        def follow_up(name: str) -> None:
            params = send_params(name, task_id=task["id"])
            go.wait(timeout=5)
            answers[name] = rpc(url, "SendMessage", params)

        threads = [threading.Thread(target=follow_up, args=(f"n{i}",)) for i in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=5)
        final = get_task(url, task["id"])
    assert len(answers) == 5
    won = {name: a for name, a in answers.items() if "result" in a.json()}
    lost = [a for a in answers.values() if "error" in a.json()]
    assert len(won) + len(lost) == 5
    assert won, "the first follow-up to an input-required task must be accepted"
    for answer in lost:
        error_of(answer, -32004)
    for answer in won.values():
        # Blocking sends wait for the task to settle; every joiner settles before completion.
        assert result_of(answer)["task"]["status"] == final["status"]
    assert state_of(final) == COMPLETED
    users = [text_of(m) for m in final["history"] if m["role"] == "ROLE_USER"]
    assert users[0] == "first words"
    assert sorted(users[1:]) == sorted(won), "exactly the accepted follow-ups are recorded"


# --- multi-turn ---------------------------------------------------------------------------------


def test_multi_turn_conversation() -> None:
    with running_server(multi_turn.agent, card=multi_turn.card) as url:
        first = send_task(url, "hi there")
        # A follow-up naming only the task: the server infers the context.
        answered = send_task(url, "Bob", task_id=first["id"])
        # Another conversation, its follow-up naming both task and context.
        second = send_task(url, "second conversation")
        answered_second = send_task(
            url, "Alice", task_id=second["id"], context_id=second["contextId"]
        )
        first_again = get_task(url, first["id"])
    assert state_of(first) == INPUT_REQUIRED
    assert status_text(first) == "What is your name?"
    assert answered["id"] == first["id"]
    assert answered["contextId"] == first["contextId"]
    assert state_of(answered) == COMPLETED
    assert status_text(answered) == "Hello, Bob! You first said: 'hi there'."
    assert second["id"] != first["id"]
    assert second["contextId"] != first["contextId"]
    assert state_of(answered_second) == COMPLETED
    assert status_text(answered_second) == "Hello, Alice! You first said: 'second conversation'."
    assert first_again["status"] == answered["status"]
    sent = [m for m in answered["history"] if m["role"] == "ROLE_USER"]
    assert all(m["taskId"] == first["id"] and m["contextId"] == first["contextId"] for m in sent)


def test_message_to_a_terminal_task() -> None:
    with running_server(scripted_agent) as url:
        task = send_task(url, "done")
        error = error_of(rpc(url, "SendMessage", send_params("more", task_id=task["id"])), -32004)
        after = get_task(url, task["id"])
    assert error_info(error)["metadata"]["taskId"] == task["id"]
    assert after == task


def test_a_message_to_a_working_task_supersedes_its_run() -> None:
    """The newer message wins: the running agent is stopped and a new run starts with both
    messages in the history (the conformance kit expects this of v1.0 servers)."""
    with running_server(long_agent) as url:
        task = send_task(url, "work", return_immediately=True)
        _started(task["id"])
        follow_up = send_task(url, "more", task_id=task["id"], return_immediately=True)
        assert wait_until(lambda: STARTED.count(task["id"]) == 2), "no second run started"
        after = get_task(url, task["id"])
    assert follow_up["id"] == task["id"]
    assert state_of(after) == WORKING
    assert [text_of(m) for m in after["history"]] == ["work", "more"]


def test_follow_up_with_the_wrong_context() -> None:
    with running_server(multi_turn.agent, card=multi_turn.card) as url:
        task = send_task(url, "hi")
        other = send_task(url, "another")
        params = send_params("Bob", task_id=task["id"], context_id=other["contextId"])
        error = error_of(rpc(url, "SendMessage", params), -32602)
        after = get_task(url, task["id"])
    assert "params.message.contextId" in violated_fields(error)
    assert state_of(after) == INPUT_REQUIRED
    assert len(after["history"]) == 1


async def always_asks(ctx: AgentContext) -> str:
    raise MissingInput("And then?")


def test_a_follow_up_past_max_task_messages_is_invalid_params() -> None:
    """A task holds at most ``CoreConfig.max_task_messages`` messages (each turn copies the
    history, so a bound keeps turns from growing dearer); the conversation goes on in a new
    task of the same context."""
    built = build_engine(always_asks)
    config = attrs.evolve(built.core.config, max_task_messages=3)
    with serving(Engine(Core(config), built.store, built.agents)) as url:
        task = send_task(url, "hi")  # the message, and the question in the status
        assert state_of(send_task(url, "more", task_id=task["id"])) == INPUT_REQUIRED  # 3
        error = error_of(rpc(url, "SendMessage", send_params("again", task_id=task["id"])), -32602)
        after = get_task(url, task["id"])
        fresh = send_task(url, "again", context_id=task["contextId"])
    assert violated_fields(error) == ["params.message"]
    assert "may hold at most 3" in error["message"]
    assert len(after["history"]) == 3
    assert state_of(after) == INPUT_REQUIRED
    assert (fresh["contextId"], state_of(fresh)) == (task["contextId"], INPUT_REQUIRED)
    assert fresh["id"] != task["id"]


def test_follow_up_to_an_unknown_task() -> None:
    with running_server(multi_turn.agent, card=multi_turn.card) as url:
        response = rpc(url, "SendMessage", send_params("Bob", task_id="no-such-task"))
        error = error_of(response, -32001)
        listing = list_tasks(url)
    assert error_info(error)["metadata"] == {"taskId": "no-such-task"}
    assert listing["totalSize"] == 0, "a client-chosen taskId must not create a task"


# --- agent failures -----------------------------------------------------------------------------


def test_agent_exception_fails_the_task_without_leaking_it() -> None:
    with running_server(scripted_agent) as url:
        response = rpc(url, "SendMessage", send_params("boom"))
        task = result_of(response)["task"]
        fetched = rpc(url, "GetTask", {"id": task["id"]})
        listed = rpc(url, "ListTasks", {})
        next_one = send_task(url, "still there?")
    assert state_of(task) == FAILED
    assert "RuntimeError" in status_text(task)
    for answer in (response, fetched, listed):
        assert "secret" not in answer.text
        assert "hunter2" not in answer.text
    assert state_of(next_one) == COMPLETED
    assert status_text(next_one) == "echo: still there?"


def test_agent_output_that_means_nothing_fails_the_task() -> None:
    with running_server(scripted_agent) as url:
        task = send_task(url, "bad-output")
        next_one = send_task(url, "fine")
    assert state_of(task) == FAILED
    assert status_text(task)
    assert state_of(next_one) == COMPLETED


# --- JSON-RPC envelope and protocol errors ------------------------------------------------------


def test_invalid_json() -> None:
    with running_server(echo.agent) as url:
        broken = post_raw(url, b'{"jsonrpc": "2.0", "id": 5, "method": ')
        not_utf8 = post_raw(url, b"\xff\xfe{}")
        nan = post_raw(url, b'{"jsonrpc": "2.0", "id": 5, "method": "ListTasks", "params": NaN}')
        huge = post_raw(url, b'{"jsonrpc": "2.0", "id": 5, "method": "ListTasks", "x": 1e999}')
    for response in (broken, not_utf8, nan, huge):
        error_of(response, -32700, rpc_id=None)


@pytest.mark.parametrize(
    ("depth", "code", "status"),
    [(100_000, -32600, 413), (2_000, -32600, 200)],  # past the item limit; past the parser's
)
def test_deeply_nested_json_is_a_json_rpc_error(depth: int, code: int, status: int) -> None:
    with running_server(echo.agent) as url:
        response = post_raw(url, b"[" * depth + b"]" * depth)
        still_serving = send_task(url, "after")
    error_of(response, code, rpc_id=None, http_status=status)
    assert state_of(still_serving) == COMPLETED


@pytest.mark.parametrize(
    ("body", "rpc_id"),
    [
        pytest.param(b"[]", None, id="empty-batch"),
        pytest.param(b'[{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}]', None, id="batch"),
        pytest.param(b"42", None, id="not-an-object"),
        pytest.param(b'{"jsonrpc": "1.0", "id": "abc", "method": "GetTask"}', "abc", id="v1"),
        pytest.param(b'{"id": 3, "method": "GetTask"}', 3, id="no-jsonrpc"),
        pytest.param(b'{"jsonrpc": "2.0", "id": {}, "method": "GetTask"}', None, id="bad-id"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 4, "method": 7}', 4, id="bad-method"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 4}', 4, id="no-method"),
    ],
)
def test_invalid_request(body: bytes, rpc_id: str | int | None) -> None:
    with running_server(echo.agent) as url:
        error_of(post_raw(url, body), -32600, rpc_id=rpc_id)


@pytest.mark.parametrize("method", ["NoSuchMethod", "message/send", "tasks/get", "sendMessage"])
def test_method_not_found(method: str) -> None:
    with running_server(echo.agent) as url:
        error = error_of(rpc(url, method, {}, rpc_id=9), -32601, rpc_id=9)
    assert method in error["message"]


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        (
            "SendMessage",
            {"message": {"messageId": "m", "role": "ROLE_USER"}},
            "params.message.parts",
        ),
        ("SendMessage", {"message": {"role": "ROLE_USER", "parts": []}}, "params.message"),
        (
            "SendMessage",
            {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}},
            "params.message.parts",
        ),
        (
            "SendMessage",
            {"message": {"messageId": "m", "role": "ROLE_USER", "parts": "text"}},
            "params.message.parts",
        ),
        (
            "SendMessage",
            {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}},
            "params.message.role",
        ),
        (
            "SendMessage",
            {
                "message": {
                    "messageId": "m",
                    "role": "ROLE_USER",
                    "parts": [{"text": "x", "data": {"also": "data"}}],
                }
            },
            "params.message.parts[0]",
        ),
        ("SendMessage", {}, "params.message"),
        ("GetTask", {}, "params.id"),
        ("GetTask", {"id": 12}, "params.id"),
        ("GetTask", [], "params"),
        ("CancelTask", {"id": None}, "params.id"),
    ],
)
def test_invalid_params_name_the_wire_path(method: str, params: Any, field: str) -> None:
    with running_server(echo.agent) as url:
        error = error_of(rpc(url, method, params), -32602)
        listing = list_tasks(url)
    fields = violated_fields(error)
    assert any(f == field or f.startswith(field + ".") for f in fields), fields
    assert listing["totalSize"] == 0, "an invalid request must create nothing"


def test_version_header() -> None:
    with running_server(echo.agent) as url:
        missing = rpc(url, "GetTask", {"id": "x"}, headers={})
        future = rpc(url, "GetTask", {"id": "x"}, headers={"A2A-Version": "2.0"})
        legacy = rpc(url, "GetTask", {"id": "x"}, headers={"A2A-Version": "0.3"})
        patch = rpc(url, "GetTask", {"id": "x"}, headers={"A2A-Version": "1.0.7"})
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}})
        in_query = httpx.post(
            url + "/?A2A-Version=1.0", content=body, headers={"Content-Type": "application/json"}
        )
        sent = rpc(url, "SendMessage", send_params("hi"), headers={"A2A-Version": "2.0"})
        listing = list_tasks(url)
    info = error_info(error_of(missing, -32009))
    assert info["metadata"]["requestedVersion"] == "0.3"
    assert error_info(error_of(future, -32009))["metadata"]["requestedVersion"] == "2.0"
    error_of(legacy, -32009)
    error_of(sent, -32009)
    assert listing["totalSize"] == 0, "a refused SendMessage must not run the agent"
    # A patch number is ignored; the version may also come as a query parameter.
    error_of(patch, -32001)
    error_of(in_query, -32001)


def test_body_size_limit() -> None:
    with running_server(echo.agent, max_body_bytes=1024) as url:
        params = send_params("x" * 600)
        fits = rpc(url, "SendMessage", params)
        declared = post_raw(url, json.dumps(send_params("x" * 2000)).encode())

        def chunks() -> Any:
            for _ in range(30):
                yield b" " * 100

        streamed = httpx.post(
            endpoint(url),
            content=chunks(),
            headers={"Content-Type": "application/json", **A2A_HEADERS},
        )
        after = send_task(url, "small")
    assert state_of(result_of(fits)["task"]) == COMPLETED
    for response in (declared, streamed):
        error = error_of(response, -32600, rpc_id=None, http_status=413)
        assert "1024" in error["message"]
    assert state_of(after) == COMPLETED


def test_content_type() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "x"}})
    with running_server(echo.agent) as url:

        def post(content_type: str) -> httpx.Response:
            return post_raw(
                url, body.encode(), headers={"Content-Type": content_type, **A2A_HEADERS}
            )

        plain = post("text/plain")
        form = post("application/x-www-form-urlencoded")
        charset = post("application/json; charset=utf-8")
        a2a = post("application/a2a+json")
    for refused in (plain, form):
        error = error_of(refused, -32005, rpc_id=7)
        assert "application/json" in error["message"]
    for accepted in (charset, a2a):
        error_of(accepted, -32001, rpc_id=7)


def test_part_media_type_not_accepted() -> None:
    params = {
        "message": {
            "messageId": "m",
            "role": "ROLE_USER",
            "parts": [{"raw": "aGk=", "mediaType": "image/png"}],
        }
    }
    with running_server(echo.agent, card=echo.card) as url:
        error = error_of(rpc(url, "SendMessage", params), -32005)
    assert error_info(error)["metadata"] == {"mediaType": "image/png"}


def test_request_ids_are_echoed() -> None:
    with running_server(echo.agent) as url:
        for rpc_id in ("text-id", 0, 123456789, None):
            result_of(rpc(url, "ListTasks", {}, rpc_id=rpc_id), rpc_id=rpc_id)
            error_of(rpc(url, "GetTask", {"id": "x"}, rpc_id=rpc_id), -32001, rpc_id=rpc_id)


def test_unknown_path_and_wrong_http_method() -> None:
    with running_server(echo.agent) as url:
        # (/v1/message:send would be tenant "v1" on the REST binding.)
        unknown = httpx.post(url + "/a/b/message:send", json={}, headers=dict(A2A_HEADERS))
        unknown_get = httpx.get(url + "/nothing/here")
        get_root = httpx.get(url + "/")
        put_root = httpx.put(url + "/", json={})
        still_serving = send_task(url, "ok")
    for response in (unknown, unknown_get):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == 404
    for response in (get_root, put_root):
        assert response.status_code == 405
        assert response.headers["allow"] == "POST"
    assert state_of(still_serving) == COMPLETED


@pytest.mark.parametrize(
    ("code", "make"),
    [
        (-32700, lambda url: post_raw(url, b"{")),
        (-32600, lambda url: post_raw(url, b"[]")),
        (-32601, lambda url: rpc(url, "Nope", {})),
        (-32602, lambda url: rpc(url, "GetTask", {})),
        (-32001, lambda url: rpc(url, "GetTask", {"id": "missing"})),
        (-32002, lambda url: rpc(url, "CancelTask", {"id": send_task(url, "x")["id"]})),
        (-32003, lambda url: rpc(url, "GetTaskPushNotificationConfig", {"taskId": "t", "id": "c"})),
        (-32004, lambda url: rpc(url, "SubscribeToTask", {"id": "t"})),
        (
            -32005,
            lambda url: post_raw(url, b"{}", headers={"Content-Type": "text/xml", **A2A_HEADERS}),
        ),
        (-32009, lambda url: rpc(url, "GetTask", {"id": "t"}, headers={"A2A-Version": "9.9"})),
    ],
)
def test_every_error_carries_error_info(code: int, make: Any) -> None:
    with running_server(echo.agent) as url:
        response: httpx.Response = make(url)
    document = response.json()
    assert document["error"]["code"] == code
    info = error_info(document["error"])
    assert set(info) <= {"@type", "reason", "domain", "metadata"}
    assert all(isinstance(v, str) for v in info.get("metadata", {}).values())
