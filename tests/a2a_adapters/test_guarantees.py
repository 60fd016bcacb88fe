"""The guarantees beyond the protocol, over real HTTP: ownership, authentication, idempotency,
expiry and skill routing (DESIGN.md §2)."""

import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import anyio
import httpx
import pytest

from a2a_adapters import ApiKeys, BearerTokens
from a2a_core import AgentContext
from a2a_core.card import AgentCard, AgentSkill
from examples import multi_turn, skills
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    COMPLETED,
    HTTP_TIMEOUT,
    INPUT_REQUIRED,
    card_of,
    endpoint,
    error_info,
    error_of,
    new_id,
    result_of,
    rpc,
    send_params,
    state_of,
    status_text,
    violated_fields,
    wait_until,
)
from tests.servers import running_server

#: Every test here runs against the asyncio and the trio adapter.
pytestmark = pytest.mark.usefixtures("adapter")

TOKENS = {"alice-token": "alice", "bob-token": "bob"}


def as_user(token: str) -> dict[str, str]:
    return {**A2A_HEADERS, "Authorization": f"Bearer {token}"}


ALICE = as_user("alice-token")
BOB = as_user("bob-token")


class CountingAgent:
    """Counts its runs (from the server's thread) and answers after ``delay`` seconds."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.runs = 0
        self._lock = threading.Lock()

    async def __call__(self, ctx: AgentContext) -> str:
        with self._lock:
            self.runs += 1
        await anyio.sleep(self.delay)
        return f"done: {ctx.text}"


@pytest.fixture
def secured() -> Iterator[str]:
    with running_server(multi_turn.agent, card=multi_turn.card, auth=[BearerTokens(TOKENS)]) as url:
        yield url


def send(url: str, headers: Mapping[str, str], params: dict[str, Any]) -> httpx.Response:
    return rpc(url, "SendMessage", params, headers=headers)


# --- authentication -----------------------------------------------------------------------------


def test_requests_without_valid_credentials_get_401_with_a_challenge(secured: str) -> None:
    for headers in (A2A_HEADERS, as_user("wrong"), {**A2A_HEADERS, "Authorization": "Basic x"}):
        response = send(secured, headers, send_params("hi"))
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        # In the binding of the request: a JSON-RPC error here, google.rpc.Status on REST.
        assert error_info(response.json()["error"])["reason"] == "UNAUTHENTICATED"
    rest = httpx.get(f"{secured}/tasks/t-1", headers=A2A_HEADERS, timeout=HTTP_TIMEOUT)
    assert rest.status_code == 401
    assert rest.json()["error"]["status"] == "UNAUTHENTICATED"
    assert rest.headers["www-authenticate"].startswith("Bearer")


def test_the_card_is_public_and_declares_the_scheme(secured: str) -> None:
    card = card_of(secured)
    # v1.0 spelling, with the v0.3 spelling merged in beside it for 0.3 clients.
    assert card["securitySchemes"] == {
        "bearer": {
            "httpAuthSecurityScheme": {"scheme": "Bearer", "description": "A bearer token"},
            "type": "http",
            "scheme": "Bearer",
            "description": "A bearer token",
        }
    }
    assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    assert card["security"] == [{"bearer": []}]


def test_a_401_says_invalid_token_only_to_a_request_that_presented_one(secured: str) -> None:
    """RFC 6750 §3.1: a request with no credentials is told how to authenticate, with no error
    code; one whose bearer token is wrong is told ``error="invalid_token"``."""
    told: dict[str, set[str]] = {}
    for what, headers in {
        "none": A2A_HEADERS,
        "basic": {**A2A_HEADERS, "Authorization": "Basic x"},
        "wrong bearer": as_user("wrong"),
    }.items():
        for response in (
            send(secured, headers, send_params("hi")),
            httpx.get(f"{secured}/tasks/t-1", headers=headers, timeout=HTTP_TIMEOUT),
        ):
            assert response.status_code == 401
            told.setdefault(what, set()).add(response.headers["www-authenticate"])
    assert told["none"] == {'Bearer realm="a2a"'}
    assert told["basic"] == {'Bearer realm="a2a"'}
    assert told["wrong bearer"] == {'Bearer realm="a2a", error="invalid_token"'}


def test_api_keys_authenticate_too() -> None:
    auth = [ApiKeys({"k-1": "carol"})]
    with running_server(multi_turn.agent, card=multi_turn.card, auth=auth) as url:
        ok = send(url, {**A2A_HEADERS, "X-API-Key": "k-1"}, send_params("hi"))
        assert state_of(result_of(ok)["task"]) == INPUT_REQUIRED
        refused = send(url, {**A2A_HEADERS, "X-API-Key": "k-2"}, send_params("hi"))
        assert refused.status_code == 401
        assert 'header="X-API-Key"' in refused.headers["www-authenticate"]


# --- ownership ----------------------------------------------------------------------------------


def test_another_principals_task_looks_exactly_like_a_missing_one(secured: str) -> None:
    task = result_of(send(secured, ALICE, send_params("hi")))["task"]
    assert state_of(task) == INPUT_REQUIRED  # live: it could be canceled or continued
    task_id, missing = task["id"], new_id()

    def errors_for(target: str) -> list[dict[str, Any]]:
        calls = [
            rpc(secured, "GetTask", {"id": target}, headers=BOB),
            rpc(secured, "CancelTask", {"id": target}, headers=BOB),
            send(secured, BOB, send_params("me", task_id=target)),
        ]
        errors = [error_of(response, -32001) for response in calls]
        for error in errors:
            error["message"] = error["message"].replace(target, "<id>")
            for item in error["data"]:
                item.get("metadata", {}).pop("taskId", None)
        return errors

    assert errors_for(task_id) == errors_for(missing)
    listing = result_of(rpc(secured, "ListTasks", {}, headers=BOB))
    assert listing["tasks"] == []
    assert listing["totalSize"] == 0
    # And the owner still has it, untouched.
    mine = result_of(rpc(secured, "GetTask", {"id": task_id}, headers=ALICE))
    assert state_of(mine) == INPUT_REQUIRED


def test_owner_claims_in_metadata_are_ignored(secured: str) -> None:
    params = send_params("hi")
    params["metadata"] = {"owner": "bob"}
    params["message"]["metadata"] = {"owner": "bob"}
    task = result_of(send(secured, ALICE, params))["task"]
    error_of(rpc(secured, "GetTask", {"id": task["id"]}, headers=BOB), -32001)
    assert result_of(rpc(secured, "GetTask", {"id": task["id"]}, headers=ALICE))["id"] == task["id"]


def test_message_ids_are_scoped_per_owner(secured: str) -> None:
    params = send_params("hi", message_id="shared-id")
    alices = result_of(send(secured, ALICE, params))["task"]
    bobs = result_of(send(secured, BOB, params))["task"]
    assert alices["id"] != bobs["id"]


# --- idempotency --------------------------------------------------------------------------------


def test_a_resent_message_returns_its_task_and_never_runs_the_agent_again() -> None:
    agent = CountingAgent(delay=0.3)
    with running_server(agent) as url:
        params = send_params("once", message_id=new_id(), return_immediately=True)
        first = result_of(rpc(url, "SendMessage", params))["task"]
        again = result_of(rpc(url, "SendMessage", params))["task"]  # while still running
        assert again["id"] == first["id"]
        blocking = {"message": params["message"]}  # the same message, blocking this time
        settled = result_of(rpc(url, "SendMessage", blocking))["task"]
        assert settled["id"] == first["id"]
        assert state_of(settled) == COMPLETED
        late = result_of(rpc(url, "SendMessage", blocking))["task"]  # long finished
        assert late["id"] == first["id"]
        assert status_text(late) == "done: once"
    assert agent.runs == 1


def test_a_reused_message_id_with_another_message_is_refused() -> None:
    with running_server(CountingAgent()) as url:
        message_id = new_id()
        result_of(rpc(url, "SendMessage", send_params("one", message_id=message_id)))
        error = error_of(rpc(url, "SendMessage", send_params("two", message_id=message_id)), -32602)
        assert violated_fields(error) == ["params.message.messageId"]
        assert "different message" in error["message"]


def test_concurrent_duplicates_start_exactly_one_run() -> None:
    agent = CountingAgent(delay=0.2)
    with running_server(agent) as url:
        params = send_params("race", message_id=new_id())
        ids: list[str] = []
        lock = threading.Lock()

        def client() -> None:
            task = result_of(rpc(url, "SendMessage", params))["task"]
            with lock:
                ids.append(task["id"])

        threads = [threading.Thread(target=client) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert len(ids) == 8
        assert len(set(ids)) == 1
    assert agent.runs == 1


def test_a_resent_follow_up_does_not_run_the_agent_again(secured: str) -> None:
    task = result_of(send(secured, ALICE, send_params("hi")))["task"]
    answer = send_params("Ada", task_id=task["id"], message_id=new_id())
    done = result_of(send(secured, ALICE, answer))["task"]
    assert state_of(done) == COMPLETED
    again = result_of(send(secured, ALICE, answer))["task"]
    assert again["id"] == task["id"]
    assert again["history"] == done["history"]


# --- expiry -------------------------------------------------------------------------------------

TTL = 0.3


def test_terminal_tasks_expire_after_the_ttl() -> None:
    with running_server(CountingAgent(), task_ttl=TTL) as url:
        message_id = new_id()
        task = result_of(rpc(url, "SendMessage", send_params("x", message_id=message_id)))["task"]
        assert state_of(task) == COMPLETED
        assert result_of(rpc(url, "GetTask", {"id": task["id"]}))["id"] == task["id"]

        def gone() -> bool:
            response = rpc(url, "GetTask", {"id": task["id"]})
            return "error" in response.json()

        assert wait_until(gone, timeout=5)
        error_of(rpc(url, "GetTask", {"id": task["id"]}), -32001)
        assert result_of(rpc(url, "ListTasks", {}))["totalSize"] == 0
        # Its idempotency entry went with it: the id now starts a new task.
        fresh = result_of(rpc(url, "SendMessage", send_params("x", message_id=message_id)))
        assert fresh["task"]["id"] != task["id"]


def test_live_tasks_never_expire() -> None:
    with running_server(multi_turn.agent, card=multi_turn.card, task_ttl=0.1) as url:
        task = result_of(rpc(url, "SendMessage", send_params("hi")))["task"]
        assert state_of(task) == INPUT_REQUIRED
        time.sleep(0.4)
        assert state_of(result_of(rpc(url, "GetTask", {"id": task["id"]}))) == INPUT_REQUIRED


# --- skill routing ------------------------------------------------------------------------------


@pytest.fixture
def skilled() -> Iterator[str]:
    with running_server(skills.agents, card=skills.card) as url:
        yield url


def test_a_named_skill_runs_its_agent(skilled: str) -> None:
    params = send_params("three little words")
    params["metadata"] = {"skillId": "count"}
    assert status_text(result_of(rpc(skilled, "SendMessage", params))["task"]) == "3 words"
    params = send_params("shout")
    params["message"]["metadata"] = {"skillId": "upper"}
    assert status_text(result_of(rpc(skilled, "SendMessage", params))["task"]) == "SHOUT"


def test_without_a_skill_the_first_one_serves(skilled: str) -> None:
    assert status_text(result_of(rpc(skilled, "SendMessage", send_params("a b")))["task"]) == "A B"


def test_an_unknown_skill_is_invalid_params(skilled: str) -> None:
    params = send_params("x")
    params["metadata"] = {"skillId": "translate"}
    error = error_of(rpc(skilled, "SendMessage", params), -32602)
    assert violated_fields(error) == ["params.metadata.skillId"]
    assert "upper, count" in error["message"]


def test_a_follow_up_stays_with_its_tasks_skill(skilled: str) -> None:
    params = send_params(" ")
    params["metadata"] = {"skillId": "count"}
    task = result_of(rpc(skilled, "SendMessage", params))["task"]
    assert state_of(task) == INPUT_REQUIRED
    follow_up = send_params("one two", task_id=task["id"])
    follow_up["metadata"] = {"skillId": "upper"}  # ignored: the task belongs to "count"
    done = result_of(rpc(skilled, "SendMessage", follow_up))["task"]
    assert status_text(done) == "2 words"


def test_skills_of_a_mapping_are_listed_on_a_default_card() -> None:
    with running_server(skills.agents) as url:
        assert [s["id"] for s in card_of(url)["skills"]] == ["upper", "count"]


# --- the extended card --------------------------------------------------------------------------


def test_the_extended_card_needs_credentials() -> None:
    extended = AgentCard(
        name="Echo (members)",
        description="More for members",
        version="1.0.0",
        skills=(AgentSkill(id="secret", name="Secret", description="x", tags=("x",)),),
    )
    auth = [BearerTokens(TOKENS)]
    with running_server(CountingAgent(), extended_card=extended, auth=auth) as url:
        assert card_of(url)["capabilities"]["extendedAgentCard"] is True
        card = result_of(rpc(url, "GetExtendedAgentCard", {}, headers=ALICE))
        assert card["name"] == "Echo (members)"
        assert card["supportedInterfaces"][0]["url"] == endpoint(url)
        assert rpc(url, "GetExtendedAgentCard", {}).status_code == 401
    with running_server(CountingAgent()) as url:
        error_of(rpc(url, "GetExtendedAgentCard", {}), -32004)
