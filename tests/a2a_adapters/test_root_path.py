"""Served below a root path, on both adapters: the card's URLs include it, and requests are
served with the prefix (a proxy that passes it on) or without it (one that strips it)."""

import httpx
import pytest
from quart import Quart

from a2a_adapters import asyncio as asyncio_adapter
from a2a_adapters import build_engine
from a2a_adapters import trio as trio_adapter
from a2a_adapters._asgi import root_path_of
from examples import echo
from tests import servers
from tests.a2a_adapters.support import A2A_HEADERS, CARD_PATH, jsonrpc_url, send_params
from tests.servers import running_app


def _app(root_path: str) -> Quart:
    engine = build_engine(echo.agent, card=echo.card)
    if servers.ADAPTER == "trio":
        return trio_adapter.create_app(engine, root_path=root_path)
    return asyncio_adapter.create_app(engine, root_path=root_path)


def _sent(url: str) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params("hi")}
    state: str = httpx.post(url, json=body, headers=A2A_HEADERS).json()["result"]["task"]["status"][
        "state"
    ]
    return state


@pytest.mark.usefixtures("adapter")
def test_the_card_and_the_routes_below_a_root_path() -> None:
    with running_app(_app("/agents/")) as url:
        passed_on = httpx.get(url + "/agents" + CARD_PATH).json()
        stripped = httpx.get(url + CARD_PATH).json()
        sent = [_sent(url + "/agents/"), _sent(url + "/agents"), _sent(url + "/")]
        probe = httpx.get(url + "/agents/healthz")
        elsewhere = httpx.get(url + "/agentsx" + CARD_PATH)
    assert jsonrpc_url(passed_on) == jsonrpc_url(stripped) == url + "/agents/"
    assert sent == ["TASK_STATE_COMPLETED"] * 3
    assert probe.status_code == 200
    assert elsewhere.status_code == 404  # a path that merely starts like the prefix is not it


@pytest.mark.parametrize(("given", "kept"), [("", ""), ("/", ""), ("/a/b/", "/a/b")])
def test_root_paths_are_normalised(given: str, kept: str) -> None:
    assert root_path_of(given) == kept


@pytest.mark.parametrize("given", ["agents", "/a?b", "/a#b", "/a b"])
def test_what_is_not_a_root_path_is_refused(given: str) -> None:
    with pytest.raises(ValueError, match="root_path must be a path such as /agents"):
        root_path_of(given)
