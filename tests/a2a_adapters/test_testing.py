"""The harness for agents that await real things, on both loops: a sleep and a real HTTP call
inside the agent, a stream, a cancel, a refusal, and a clear error outside its block."""

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from a2a_adapters.testing import Harness
from a2a_core import AgentContext, ArtifactChunk, Update, completed, text_artifact, working
from a2a_core.errors import UsageError
from a2a_core.testing import Driver
from tests.a2a_adapters.webhooks import receiving

pytestmark = pytest.mark.usefixtures("adapter")


def run(adapter: str, test: Any) -> None:
    anyio.run(test, backend=adapter)


async def looks_it_up(ctx: AgentContext) -> AsyncIterator[Update]:
    """Waits, calls a web service (its URL is the message), and reports what it answered."""
    yield working("looking")
    await anyio.sleep(0.05)
    async with httpx.AsyncClient() as http:
        answer = await http.get(ctx.text, timeout=5)
    yield ArtifactChunk(text_artifact(answer.text, artifact_id="answer"))
    yield completed(f"the service said {answer.status_code}")


def test_an_agent_that_awaits_real_io_runs_in_the_harness(adapter: str) -> None:
    with receiving() as service:
        service.always("/weather", 200)

        async def test() -> None:
            async with Harness(looks_it_up) as harness:
                task = await harness.send(service.url + "/weather")
                assert task["status"]["state"] == "TASK_STATE_COMPLETED"
                assert task["status"]["message"]["parts"][0]["text"] == "the service said 200"
                assert [a["artifactId"] for a in task["artifacts"]] == ["answer"]
                read = await harness.get_task(task["id"])
                assert read["status"]["state"] == "TASK_STATE_COMPLETED"
                events = await harness.stream(service.url + "/weather")
                kinds = [next(iter(event)) for event in events]
                assert kinds[0] == "task"
                assert "artifactUpdate" in kinds
                assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"

        run(adapter, test)
    assert len(service.deliveries("/weather")) == 2  # the agent really called it, twice


def test_the_driver_says_where_to_test_an_agent_that_awaits() -> None:
    driver = Driver(looks_it_up)
    driver.send("http://127.0.0.1:1/")
    with pytest.raises(UsageError, match=r"a2a_adapters\.testing\.Harness"):
        driver.run_agents()


async def waits(ctx: AgentContext) -> str:
    await anyio.sleep(30)
    return "too late"


def test_a_task_is_canceled_while_its_agent_waits(adapter: str) -> None:
    async def cancel() -> None:
        async with Harness(waits) as harness:
            message = harness.message("hi")
            result = await harness.rpc(
                "SendMessage", {"message": message, "configuration": {"returnImmediately": True}}
            )
            task_id = result["task"]["id"]
            canceled = await harness.cancel(task_id)
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED"

    async def test() -> None:
        with anyio.fail_after(10):  # the run is stopped, not waited for
            await cancel()

    run(adapter, test)


def test_a_refusal_is_an_assertion_showing_the_error(adapter: str) -> None:
    async def test() -> None:
        async with Harness(waits) as harness:
            with pytest.raises(AssertionError, match="-32001"):
                await harness.get_task("no-such-task")

    run(adapter, test)


def test_the_harness_is_used_in_its_block(adapter: str) -> None:
    async def test() -> None:
        harness = Harness(waits)
        with pytest.raises(RuntimeError, match="async with"):
            await harness.send("hi")

    run(adapter, test)
