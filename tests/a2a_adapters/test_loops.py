"""The engine's loop-native waiters and jobs (``a2a_adapters._loops``), and the patrol that
watches for the client of a blocking send that takes long, on both loops."""

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from a2a_adapters import _loops, build_engine
from a2a_adapters._engine import PATROL_SECONDS, WATCH_AFTER_TICKS
from a2a_core import AgentContext, Update, working
from a2a_core.transport import HttpRequest, HttpResponse

both_loops = pytest.mark.parametrize("loop", ["asyncio", "trio"])


def _run(loop: str, main: Any) -> Any:
    return anyio.run(main, backend=loop)


@both_loops
def test_a_waiter_gives_its_value_set_before_or_while_it_is_awaited(loop: str) -> None:
    async def main() -> list[Any]:
        primitives = _loops.current()
        early = primitives.waiter()
        early.set("early")
        late = primitives.waiter()
        found = [await early.wait()]
        async with anyio.create_task_group() as group:

            async def setter() -> None:
                await anyio.sleep(0.01)
                late.set("late")
                late.set("again")  # set once: the first value stays

            group.start_soon(setter)
            found.append(await late.wait())
        found.append(late.is_set)
        return found

    assert _run(loop, main) == ["early", "late", True]


@both_loops
def test_a_wait_cancelled_leaves_the_waiter_to_be_awaited_again(loop: str) -> None:
    async def main() -> Any:
        waiter = _loops.current().waiter()
        with anyio.move_on_after(0.01):
            await waiter.wait()
        assert not waiter.is_set
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.sleep, 0.01)
            waiter.set(42)
            return await waiter.wait()

    assert _run(loop, main) == 42


@both_loops
def test_jobs_run_and_are_waited_for(loop: str) -> None:
    async def main() -> list[int]:
        primitives = _loops.current()
        done: list[int] = []

        async def job(number: int) -> None:
            await anyio.sleep(0.01 * number)
            done.append(number)

        async with primitives.jobs(lambda: None):
            for number in (2, 1):
                primitives.spawn(job, number, name=f"job {number}")
        return done

    assert _run(loop, main) == [1, 2]


async def _stuck(ctx: AgentContext) -> AsyncIterator[Update]:
    """An agent that starts and never ends (until it is stopped)."""
    yield working()
    await anyio.sleep_forever()


def _send(message_id: str) -> HttpRequest:
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    headers = {"content-type": "application/json", "a2a-version": "1.0"}
    return HttpRequest("POST", "/", headers, json.dumps(body).encode(), "")


@both_loops
def test_a_blocking_send_whose_client_left_is_given_up_after_a_second_or_so(loop: str) -> None:
    async def main() -> tuple[Any, float, int]:
        engine = build_engine(_stuck, shutdown_grace=0.1)
        left = anyio.Event()
        asked = 0

        async def disconnected() -> None:
            nonlocal asked
            asked += 1
            await left.wait()

        async with anyio.create_task_group() as group:
            await group.start(engine.run)
            started = anyio.current_time()
            async with anyio.create_task_group() as client:

                async def leave() -> None:
                    await anyio.sleep(0.2)
                    left.set()

                client.start_soon(leave)
                response = await engine.handle(_send("m-1"), "http://x", disconnected=disconnected)
            took = anyio.current_time() - started
            await engine.aclose()
        return response, took, asked

    response, took, asked = _run(loop, main)
    assert isinstance(response, HttpResponse)
    assert response.status == 499
    assert asked == 1
    # Watched once it has waited WATCH_AFTER_TICKS looks of the patrol (the first comes one
    # period after the patrol wakes): not before, and not much later.
    assert (
        (WATCH_AFTER_TICKS - 1) * PATROL_SECONDS <= took < (WATCH_AFTER_TICKS + 2) * PATROL_SECONDS
    )


@both_loops
def test_a_quick_answer_never_watches_its_client(loop: str) -> None:
    async def main() -> tuple[list[int], int]:
        from examples import echo

        engine = build_engine(echo.agent)
        asked = 0

        async def disconnected() -> None:
            nonlocal asked
            asked += 1
            await anyio.sleep_forever()

        statuses = []
        async with anyio.create_task_group() as group:
            await group.start(engine.run)
            for n in range(5):
                response = await engine.handle(
                    _send(f"m-{n}"), "http://x", disconnected=disconnected
                )
                assert isinstance(response, HttpResponse)
                statuses.append(response.status)
            # Past when a slow one would be watched: nothing waits, nothing is watched.
            await anyio.sleep((WATCH_AFTER_TICKS + 1) * PATROL_SECONDS)
            await engine.aclose()
        return statuses, asked

    assert _run(loop, main) == ([200] * 5, 0)


@both_loops
@pytest.mark.parametrize("when", ["before", "during"])
def test_an_agent_closed_finishes_its_cleanup_though_its_run_is_cancelled(
    loop: str, when: str
) -> None:
    async def main() -> list[str]:
        primitives = _loops.current()
        cleaned: list[str] = []

        async def agent() -> AsyncGenerator[int, None]:
            try:
                yield 1
                yield 2
            finally:
                await anyio.sleep(0.05)  # a cleanup that waits
                cleaned.append("done")

        updates = agent()
        await anext(updates)
        async with anyio.create_task_group() as group:
            with anyio.CancelScope() as scope:
                if when == "before":
                    scope.cancel()
                else:

                    async def cancel_soon() -> None:
                        await anyio.sleep(0.01)
                        scope.cancel()

                    group.start_soon(cancel_soon)
                await primitives.close(updates)
                cleaned.append("went on")  # (not cancelled within the close)
                await anyio.sleep(1)
                cleaned.append("not cancelled")
        return cleaned

    assert _run(loop, main) == ["done", "went on"]


@both_loops
def test_an_agent_closed_without_waiting_or_failing_in_its_cleanup(loop: str) -> None:
    async def main() -> list[str]:
        primitives = _loops.current()
        cleaned: list[str] = []

        async def quick() -> AsyncGenerator[int, None]:
            try:
                yield 1
            finally:
                cleaned.append("quick")

        async def failing() -> AsyncGenerator[int, None]:
            try:
                yield 1
            finally:
                await anyio.lowlevel.checkpoint()
                raise ValueError("cleanup failed")

        first, second = quick(), failing()
        await anext(first)
        await anext(second)
        await primitives.close(first)
        with pytest.raises(ValueError, match="cleanup failed"):
            await primitives.close(second)
        return cleaned

    assert _run(loop, main) == ["quick"]
