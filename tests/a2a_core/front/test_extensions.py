"""Extensions: what a client declares, what the card requires, and what an answer says is
active; through the machine, with no event loop."""

import itertools
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from a2a_core import ArtifactChunk, Core, CoreConfig, completed, text_artifact
from a2a_core.card import AgentCapabilities, AgentCard, AgentExtension
from a2a_core.store import MemoryTasks
from a2a_core.transport import (
    Answer,
    Caller,
    HttpRequest,
    HttpResponse,
    Server,
    StartRun,
    StreamOpened,
)
from tests.a2a_core.support import RPC_HEADERS, rpc_request, user_message_json

REQUIRED = "urn:example:required"
OPTIONAL = "urn:example:optional"
CARD = AgentCard(
    name="Extended agent",
    description="Has extensions",
    version="1.0.0",
    capabilities=AgentCapabilities(
        extensions=(
            AgentExtension(uri=REQUIRED, description="must be spoken", required=True),
            AgentExtension(uri=OPTIONAL, description="may be spoken"),
        )
    ),
)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
REST_HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}


def _server(card: AgentCard = CARD) -> Server:
    ids = itertools.count()
    config = CoreConfig(card=card, streaming=True)
    return Server(Core(config), store=MemoryTasks(), new_id=lambda: f"id-{next(ids)}")


def _send(server: Server, request: HttpRequest) -> list[Any]:
    server.receive(request, NOW, caller=Caller("alice"), base_url="http://host")
    return server.take_actions()


def _answer(actions: list[Any]) -> HttpResponse:
    (answer,) = [a for a in actions if isinstance(a, Answer)]
    response: HttpResponse = answer.response
    return response


def _send_request(header: str | None = None, **message: Any) -> HttpRequest:
    headers = dict(RPC_HEADERS)
    if header is not None:
        headers["a2a-extensions"] = header
    params = {"message": user_message_json(**message), "configuration": {"returnImmediately": True}}
    return rpc_request("SendMessage", params, headers=headers)


def test_a_request_without_a_required_extension_is_refused_with_its_code() -> None:
    server = _server()
    response = _answer(_send(server, _send_request()))
    error = json.loads(response.body)["error"]
    assert error["code"] == -32008
    assert REQUIRED in error["message"]
    (info,) = [d for d in error["data"] if d["@type"].endswith("ErrorInfo")]
    assert info["reason"] == "EXTENSION_SUPPORT_REQUIRED"
    assert info["metadata"] == {"extensions": REQUIRED}
    assert server.take_actions() == []  # nothing was started or written


def test_over_rest_it_is_a_400_failed_precondition() -> None:
    server = _server()
    body = json.dumps({"message": user_message_json()}).encode()
    response = _answer(_send(server, HttpRequest("POST", "/message:send", REST_HEADERS, body)))
    assert response.status == 400
    assert json.loads(response.body)["error"]["status"] == "FAILED_PRECONDITION"


@pytest.mark.parametrize(
    ("header", "message_extensions"),
    [
        (f"{REQUIRED}", None),
        (f" {OPTIONAL} ,{REQUIRED},, urn:unknown", None),
        (None, [REQUIRED]),
    ],
)
def test_a_declared_extension_is_accepted_and_the_answer_names_the_active_ones(
    header: str | None, message_extensions: list[str] | None
) -> None:
    server = _server()
    fields = {"extensions": message_extensions} if message_extensions else {}
    actions = _send(server, _send_request(header, **fields))
    response = _answer(actions)
    assert response.status == 200
    assert "task" in json.loads(response.body)["result"]
    declared = {u.strip() for u in (header or "").split(",") if u.strip()}
    declared |= set(message_extensions or ())
    expected = [u for u in (REQUIRED, OPTIONAL) if u in declared]  # the card's, in its order
    assert ("a2a-extensions", ", ".join(expected)) in response.headers
    (start,) = [a for a in actions if isinstance(a, StartRun)]
    # The agent sees all it was asked for, known to the card or not.
    assert start.context.requested_extensions == frozenset(declared)


def test_v03_clients_declare_them_in_x_a2a_extensions() -> None:
    server = _server()
    params = {"message": {**user_message_json(), "kind": "message", "role": "user"}}
    params["message"]["parts"] = [{"kind": "text", "text": "hi"}]
    headers = {"content-type": "application/json", "x-a2a-extensions": REQUIRED}
    response = _answer(
        _send(
            server,
            rpc_request(
                "message/send", {**params, "configuration": {"blocking": False}}, headers=headers
            ),
        )
    )
    assert "error" not in json.loads(response.body), response.body


def test_a_card_without_required_extensions_refuses_nothing_and_names_none() -> None:
    server = _server(AgentCard(name="Plain", description="No extensions", version="1"))
    response = _answer(_send(server, _send_request("urn:whatever")))
    assert response.status == 200
    assert not [h for h in response.headers if h[0] == "a2a-extensions"]


def test_a_stream_names_the_active_extensions_in_its_headers() -> None:
    server = _server()
    headers = {**RPC_HEADERS, "accept": "text/event-stream", "a2a-extensions": REQUIRED}
    params = {"message": user_message_json()}
    actions = _send(server, rpc_request("SendStreamingMessage", params, headers=headers))
    (start,) = [a for a in actions if isinstance(a, StartRun)]
    chunk = ArtifactChunk(text_artifact("x", artifact_id="a"), last_chunk=True)
    server.agent_output(start.task_id, start.run, chunk, NOW)
    server.agent_output(start.task_id, start.run, completed(), NOW)
    actions += server.take_actions()
    (opened,) = [a for a in actions if isinstance(a, StreamOpened)]
    assert ("a2a-extensions", REQUIRED) in opened.headers
    assert ("content-type", "text/event-stream") in opened.headers


def test_the_extended_card_is_served_without_the_required_extensions() -> None:
    config = CoreConfig(card=CARD, extended_card=CARD)
    core = Core(config)
    routed = core.handle_http(rpc_request("GetExtendedAgentCard"), Caller("alice"), "http://h")
    assert isinstance(routed, HttpResponse)
    assert "result" in json.loads(routed.body), routed.body
