"""``serve`` and ``build_engine`` check what they are given before anything starts."""

import functools
import re
import socket
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from a2a_adapters import BearerTokens, build_engine, serve
from a2a_core import AgentContext, completed
from examples import echo, skills
from tests.a2a_adapters.support import COMPLETED, send_task, state_of, status_text
from tests.servers import running_server


async def answer(ctx: AgentContext, greeting: str = "Hi") -> str:
    return f"{greeting}, {ctx.text}"


async def updates(ctx: AgentContext) -> AsyncIterator[Any]:
    yield "thinking"
    yield completed(f"Hi, {ctx.text}")


class Instance:
    async def __call__(self, ctx: AgentContext) -> str:
        return f"Hi, {ctx.text}"


class Streaming:
    async def __call__(self, ctx: AgentContext) -> AsyncIterator[Any]:
        yield completed(f"Hi, {ctx.text}")


def plain(ctx: AgentContext) -> str:
    return "not async"


def generator(ctx: AgentContext) -> Any:
    yield "not async"


@pytest.mark.usefixtures("adapter")
@pytest.mark.parametrize(
    "agent",
    [
        answer,
        updates,
        Instance(),
        Streaming(),
        functools.partial(answer, greeting="Hi"),
        {"greet": functools.partial(answer)},
    ],
    ids=["async-function", "async-generator", "async-call", "async-gen-call", "partial", "dict"],
)
def test_every_kind_of_async_agent_serves(agent: Any) -> None:
    with running_server(agent) as url:
        task = send_task(url, "Ada")
    assert state_of(task) == COMPLETED
    assert status_text(task) == "Hi, Ada"


@pytest.mark.parametrize(
    ("agent", "given"),
    [
        (plain, "got the function plain, which is not async"),
        (lambda ctx: "x", "got a lambda (lambdas cannot be async: use async def)"),
        (Instance, "got the class Instance (pass an instance whose __call__ is async)"),
        (generator, "got the generator function generator (make it async def to yield"),
        (functools.partial(plain), "got a functools.partial of the function plain"),
        (echo.card, "got an object of type AgentCard, which is not callable"),
        (None, "got an object of type NoneType, which is not callable"),
    ],
)
def test_an_agent_that_is_not_async_is_refused(agent: Any, given: str) -> None:
    with pytest.raises(TypeError, match=re.escape(given)):
        build_engine(agent)
    for loop in ("asyncio", "trio"):
        with pytest.raises(TypeError, match=re.escape(given)):
            serve(agent, port=0, loop=loop)


def test_a_mapping_of_non_agents_or_of_nothing_is_refused() -> None:
    with pytest.raises(TypeError, match="the agent of skill 'down' must be an async function"):
        build_engine({"up": echo.agent, "down": plain})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="the mapping of skill id to agent is empty"):
        build_engine({})
    with pytest.raises(ValueError, match="a skill id must not be empty"):
        build_engine({"": echo.agent})
    with pytest.raises(TypeError, match="skill ids must be strings, got 1"):
        build_engine({1: echo.agent})  # type: ignore[dict-item]


def test_a_card_and_its_agents_must_agree_on_the_skills() -> None:
    with pytest.raises(ValueError, match=r"does not list the skills \['count', 'upper'\]"):
        build_engine(skills.agents, card=echo.card)
    with pytest.raises(ValueError, match=r"lists the skills \['count'\], which have no agent"):
        build_engine({"upper": skills.upper}, card=skills.card)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"task_ttl": -1}, ValueError, "task_ttl must be positive, got -1 seconds"),
        ({"task_ttl": float("nan")}, ValueError, "task_ttl must be a finite number"),
        ({"task_ttl": float("inf")}, ValueError, "task_ttl must be a finite number"),
        ({"task_ttl": timedelta(0)}, ValueError, "task_ttl must be positive, got 0 seconds"),
        ({"task_ttl": "60"}, TypeError, "task_ttl must be a number of seconds or a timedelta"),
        ({"max_body_bytes": 0}, ValueError, "max_body_bytes must be at least 1, got 0"),
        ({"max_body_bytes": -5}, ValueError, "max_body_bytes must be at least 1, got -5"),
        ({"error_mapping": "1.1"}, ValueError, "error_mapping must be one of '1.0.1', '1.0.0'"),
        ({"push_allow_hosts": "localhost"}, TypeError, "push_allow_hosts must be a list of host"),
        ({"public_url": "agents.example"}, ValueError, "public_url must be an http:// or"),
        (
            {"auth": BearerTokens({"s3cret": "alice"})},
            TypeError,
            "auth must be a list of authenticators, got a BearerTokens",
        ),
        ({"auth": ["s3cret"]}, TypeError, "auth must hold authenticators (BearerTokens, ApiKeys…)"),
        ({"card": 7}, TypeError, "card must be an AgentCard, or MODULE:OBJECT or a FILE.json"),
        ({"card": "nowhere.json"}, ValueError, "card nowhere.json: No such file or directory"),
        ({"card": "examples.echo:agent"}, ValueError, "card examples.echo:agent: expected an"),
        ({"max_runz": 5}, TypeError, "'max_runz' is not a setting of"),
    ],
)
def test_bad_settings_are_refused_where_they_are_given(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}") as refused:
        build_engine(echo.agent, **options)
    assert "s3cret" not in str(refused.value)  # what may be a secret is never repeated
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        serve(echo.agent, port=0, **options)


@pytest.mark.parametrize("seconds", [0, -1.0, float("nan"), float("inf")])
def test_the_keepalive_interval_must_be_a_positive_duration(seconds: float) -> None:
    with pytest.raises(ValueError, match="keepalive_seconds must be a positive, finite number"):
        build_engine(echo.agent, keepalive_seconds=seconds)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"loop": "uvloop"}, ValueError, "loop must be one of 'asyncio', 'trio', got 'uvloop'"),
        ({"port": 70000}, ValueError, "port must be from 0 to 65535 (0: any free port), got"),
        ({"port": -1}, ValueError, "port must be from 0 to 65535"),
        ({"port": "9999"}, TypeError, "port must be an int, got '9999'"),
        ({"host": ""}, ValueError, "host must be a host name or address, got ''"),
    ],
)
@pytest.mark.timeout(30)  # without the check, serve() would go on serving
def test_serve_refuses_a_loop_or_address_it_cannot_use(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        serve(echo.agent, **{"port": 0, **options})


def test_serve_names_the_address_it_cannot_listen_on() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}: Address already"):
            serve(echo.agent, host="127.0.0.1", port=port)


def test_settings_in_seconds_or_timedeltas_are_both_accepted() -> None:
    assert build_engine(echo.agent, task_ttl=60).core.config.task_ttl == timedelta(seconds=60)
    assert build_engine(echo.agent, task_ttl=timedelta(minutes=1)).core.config.task_ttl == (
        timedelta(seconds=60)
    )


async def weather_report(ctx: AgentContext) -> str:
    """Tells the weather."""
    return "sunny"


async def agent(ctx: AgentContext) -> str:
    return "hi"


@pytest.mark.parametrize(
    ("agent_of", "name", "skills"),
    [
        (weather_report, "Weather Report", []),
        (functools.partial(weather_report), "Weather Report", []),
        (agent, "Test Serve", []),  # a generic function name: its module's says more
        (
            {"daily_forecast": weather_report, "alerts": agent},
            "Test Serve",
            ["Daily Forecast", "Alerts"],
        ),
    ],
)
def test_a_card_made_for_an_agent_has_a_name_a_person_would_give_it(
    agent_of: Any, name: str, skills: list[str]
) -> None:
    engine = build_engine(agent_of)
    card = engine.core.card("http://localhost")
    assert card.name == name
    if skills:
        assert [skill.name for skill in card.skills] == skills
