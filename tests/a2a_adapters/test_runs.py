"""An agent run on either loop: what it yields in a row goes to the machine together, and what
it yields before pausing is decided before the pause ends.

``_runs.run_agent`` begins each further step of an agent's generator by hand to see whether it
yields again at once. These tests hold it to what an agent may rely on: its output is the same
as if each value had gone alone; a value it yields before awaiting something is decided (and
visible) while it waits, on the memory store (decided inline) and on SQLite (committed by
another task while the agent goes on); its code after a final ``yield`` never runs; a
cancellation reaches it through a step begun by hand; and a run yielding more than
``GATHER`` values in a row loses none.
"""

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from a2a_adapters import MemoryStore, build_engine
from a2a_adapters._runs import GATHER
from a2a_adapters.stores import SqliteStore
from a2a_core import AgentContext, Artifact, ArtifactChunk, Part, completed, text_artifact, working
from a2a_core.store import Put, Reads, Write
from tests.a2a_adapters.sse import Gate
from tests.a2a_adapters.support import (
    CANCELED,
    COMPLETED,
    FAILED,
    WORKING,
    cancel_task,
    get_task,
    send_task,
    state_of,
    status_text,
    wait_for_state,
    wait_until,
)
from tests.servers import serving

pytestmark = pytest.mark.usefixtures("adapter")


class CountingSqlite(SqliteStore):
    """SQLite, counting the commits that write each task."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.writes: dict[str, int] = {}

    async def commit(self, writes: Sequence[Write]) -> bool:
        ok = await super().commit(writes)
        for write in writes:
            if isinstance(write, Put):
                self.writes[write.record.id] = self.writes.get(write.record.id, 0) + 1
        return ok


class Store:
    """The store a test's server keeps its tasks in, and how many commits wrote a task."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.store: MemoryStore | CountingSqlite = (
            MemoryStore() if kind == "memory" else CountingSqlite(tmp_path / "tasks.db")
        )

    def commits(self, task_id: str) -> int:
        if isinstance(self.store, CountingSqlite):
            return self.store.writes[task_id]
        inline = self.store.inline
        assert inline is not None
        record = inline.read(Reads(task_id=task_id)).task
        assert record is not None
        return record.version  # one a commit: the memory store's commits are not awaited


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return Store(request.param, tmp_path)


def texts(task: dict[str, Any]) -> list[str]:
    return [part["text"] for artifact in task.get("artifacts", ()) for part in artifact["parts"]]


def test_values_yielded_in_a_row_are_one_commit(store: Store) -> None:
    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        yield working("on it")
        yield text_artifact("one", artifact_id="a")
        yield ArtifactChunk(text_artifact("two", artifact_id="b"), last_chunk=True)
        yield completed("done")

    with serving(build_engine(agent, store=store.store)) as url:
        task = send_task(url, "hi")
        assert state_of(task) == COMPLETED
        assert status_text(task) == "done"
        assert texts(task) == ["one", "two"]
        # The send's commit, then one for all four values (not four).
        assert store.commits(task["id"]) == 2
        assert get_task(url, task["id"]) == task


def test_a_value_yielded_before_a_pause_is_decided_while_the_agent_waits(store: Store) -> None:
    gate = Gate()

    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        yield working("first")
        yield text_artifact("before the pause", artifact_id="a")
        await gate.wait()  # begun by hand, paused: the two above must not wait for it
        yield text_artifact("after it", artifact_id="b")
        yield completed()

    with serving(build_engine(agent, store=store.store)) as url:
        task = send_task(url, "hi", return_immediately=True)
        shown = wait_for_state(url, task["id"], {WORKING})
        assert wait_until(lambda: texts(get_task(url, task["id"])) == ["before the pause"])
        shown = get_task(url, task["id"])
        assert status_text(shown) == "first"
        assert not gate.is_open
        gate.open()
        done = wait_for_state(url, task["id"], {COMPLETED})
        assert texts(done) == ["before the pause", "after it"]
        # The send's, the two values before the pause, the two after it.
        assert store.commits(task["id"]) == 3


def test_code_after_a_final_yield_never_runs() -> None:
    ran: list[str] = []

    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        try:
            yield text_artifact("out", artifact_id="a")
            yield completed()
            ran.append("after the final yield")  # the run is over: never reached
            yield working("too late")
        finally:
            ran.append("closed")

    with serving(build_engine(agent)) as url:
        task = send_task(url, "hi")
        assert state_of(task) == COMPLETED
        assert texts(task) == ["out"]
        assert wait_until(lambda: ran == ["closed"]), ran


def test_an_unreadable_value_in_a_row_fails_the_task_keeping_what_came_before() -> None:
    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        yield text_artifact("kept", artifact_id="a")
        yield 42
        yield text_artifact("never", artifact_id="b")

    with serving(build_engine(agent)) as url:
        task = send_task(url, "hi")
        assert state_of(task) == FAILED
        assert "int" in status_text(task)
        assert texts(task) == ["kept"]


def test_an_agent_failing_right_after_yielding_keeps_its_output(store: Store) -> None:
    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        yield text_artifact("kept", artifact_id="a")
        raise ValueError("broken")

    with serving(build_engine(agent, store=store.store)) as url:
        task = send_task(url, "hi")
        assert state_of(task) == FAILED
        assert "ValueError" in status_text(task)
        assert texts(task) == ["kept"]


def test_an_agent_ending_right_after_yielding_is_one_commit(store: Store) -> None:
    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        yield "working on it"
        yield text_artifact("out", artifact_id="a")

    with serving(build_engine(agent, store=store.store)) as url:
        task = send_task(url, "hi")
        assert state_of(task) == COMPLETED  # the run's end completes it
        assert texts(task) == ["out"]
        assert store.commits(task["id"]) == 2


def test_cancelling_reaches_an_agent_paused_in_a_step_begun_by_hand(store: Store) -> None:
    heard: list[str] = []

    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        yield working("waiting")
        try:
            await anyio.sleep(30)
        except BaseException as error:  # the loop's cancellation, whichever loop
            heard.append(type(error).__name__)
            raise
        yield completed("not reached")

    with serving(build_engine(agent, store=store.store)) as url:
        task = send_task(url, "hi", return_immediately=True)
        wait_for_state(url, task["id"], {WORKING})
        assert state_of(cancel_task(url, task["id"])) == CANCELED
        assert wait_until(lambda: bool(heard))
        assert heard[0] in ("CancelledError", "Cancelled")
        assert state_of(get_task(url, task["id"])) == CANCELED


def test_a_long_row_goes_in_batches_and_loses_nothing(store: Store) -> None:
    count = GATHER * 2 + 10

    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        for index in range(count):
            part = Artifact(artifact_id="a", parts=(Part(text=str(index)),))
            yield ArtifactChunk(part, append=index > 0, last_chunk=index == count - 1)
        yield completed()

    with serving(build_engine(agent, store=store.store)) as url:
        task = send_task(url, "hi")
        assert state_of(task) == COMPLETED
        assert texts(task) == [str(index) for index in range(count)]
        # The send's, then GATHER values a commit: 64, 64, and the last 10 with the completion.
        assert store.commits(task["id"]) == 1 + 3


def test_a_deadline_the_agent_set_in_a_step_begun_by_hand_still_fires(store: Store) -> None:
    """The step enters a cancel scope and pauses inside it: the scope's deadline must reach the
    agent's await, and nothing of the run's own."""

    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        yield working("waiting a little")
        with anyio.move_on_after(0.05) as waited:
            await anyio.sleep(30)
        yield completed("gave up waiting" if waited.cancelled_caught else "slept 30 s")

    with serving(build_engine(agent, store=store.store)) as url:
        task = send_task(url, "hi")
        assert state_of(task) == COMPLETED
        assert status_text(task) == "gave up waiting"


# --- run_agent against a reporter that records what it is told ---------------------------------


class Recorder:
    """The engine's side of a run, reduced to a record of what the run told it."""

    def __init__(self, *, failing_offer: bool = False) -> None:
        self.told: list[tuple[str, Any]] = []
        self.failing_offer = failing_offer

    async def output(self, value: Any) -> bool:
        from a2a_core.transport import Outputs, ends_run

        self.told.append(("output", value))
        values = value.values if isinstance(value, Outputs) else (value,)
        return not any(ends_run(v) for v in values)  # as the machine: a final value ends it

    def offer(self, value: Any) -> None:
        if self.failing_offer:
            raise RuntimeError("the engine broke")
        self.told.append(("offer", value))

    async def went_on(self) -> bool:
        return True

    async def done(self, **outcome: Any) -> None:
        self.told.append(("done", outcome))


def _start() -> Any:
    from a2a_core import Message, Role
    from a2a_core.transport import StartRun

    message = Message("m", Role.USER, (Part(text="hi"),))
    context = AgentContext("t", "c", message, (message,), "anonymous")
    return StartRun("t", 1, context)


def test_run_agent_gathers_a_row_offers_before_a_pause_and_folds_the_end(adapter: str) -> None:
    from a2a_adapters._runs import run_agent
    from a2a_core.transport import Outputs

    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        yield "a"
        yield "b"
        await anyio.lowlevel.checkpoint()
        yield "c"
        yield completed()
        yield "never"

    async def ending(ctx: AgentContext) -> AsyncIterator[Any]:
        yield "x"
        yield "y"

    recorder, recorder_end = Recorder(), Recorder()

    async def main() -> None:
        await run_agent(_start(), agent, recorder)
        await run_agent(_start(), ending, recorder_end)

    anyio.run(main, backend=adapter)
    assert recorder.told == [
        ("offer", Outputs(("a", "b"))),  # the agent paused after them: offered, not awaited
        ("output", Outputs(("c", completed()))),  # a final value: the row stops there
    ]
    assert recorder_end.told == [("done", {"value": Outputs(("x", "y"))})]


def test_an_engine_failing_to_take_an_offer_ends_the_paused_step_cleanly(adapter: str) -> None:
    from a2a_adapters._runs import run_agent

    cleaned: list[str] = []

    async def agent(ctx: AgentContext) -> AsyncIterator[Any]:
        try:
            yield "a"
            await anyio.sleep(30)
            yield "b"
        finally:
            cleaned.append("finally")

    async def main() -> None:
        with pytest.raises(RuntimeError, match="the engine broke"):
            await run_agent(_start(), agent, Recorder(failing_offer=True))

    anyio.run(main, backend=adapter)
    assert cleaned == ["finally"]
