"""The whole server as a state machine, through the driver: requests, scripted agent output,
cancels, clients that leave and clock jumps in any order, and what must hold after each step.

This is our own property test on the driver (the agent fuzzing recipe in docs/testing.md is the
user's); the reducer's own machine is ``tests/a2a_core/test_reducer_machine.py``.
"""

from datetime import timedelta
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from a2a_core import ArtifactChunk, completed, failed, input_required, text_artifact, working
from a2a_core.testing import Driver, Exchange

TTL = 300
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED"}
SETTLED = TERMINAL | {"TASK_STATE_INPUT_REQUIRED"}
OUTPUTS = st.sampled_from(
    [
        working("on it"),
        ArtifactChunk(text_artifact("part", artifact_id="art"), last_chunk=True),
        input_required("more?"),
        completed("done"),
        failed("no"),
    ]
)


class ServerMachine(RuleBasedStateMachine):
    tasks = Bundle("tasks")

    def __init__(self) -> None:
        super().__init__()
        self.driver = Driver(task_ttl=timedelta(seconds=TTL))
        self.blocking: list[tuple[str, Exchange]] = []
        self.streams: list[tuple[str, Exchange, str]] = []  # task, exchange, kind
        self.terminal: dict[str, str] = {}
        self.ids = 0

    def state(self, task_id: str) -> str | None:
        body = self.driver.rpc("GetTask", {"id": task_id}).json()
        return body["result"]["status"]["state"] if "result" in body else None

    # --- clients ------------------------------------------------------------------------------

    @rule(target=tasks)
    def start(self) -> str:
        self.ids += 1
        sent = self.driver.send(f"t{self.ids}", configuration={"returnImmediately": True})
        return str(sent.result()["task"]["id"])

    @rule(task_id=tasks)
    def wait_for(self, task_id: str) -> None:
        self.ids += 1
        sent = self.driver.send(f"again {self.ids}", task_id=task_id)
        state = self.terminal.get(task_id)
        if state is not None or self.state(task_id) is None:
            assert sent.response is not None  # refused at once: terminal, or gone
            return
        if not sent.answered:
            self.blocking.append((task_id, sent))

    @rule(task_id=tasks)
    def subscribe(self, task_id: str) -> None:
        opened = self.driver.rpc("SubscribeToTask", {"id": task_id})
        if opened.stream and not opened.ended:
            self.streams.append((task_id, opened, "subscribe"))

    @rule(task_id=tasks)
    def cancel(self, task_id: str) -> None:
        self.driver.rpc("CancelTask", {"id": task_id})

    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        open_ones = [e for _, e, _ in self.streams if not e.ended] + [
            e for _, e in self.blocking if not e.answered
        ]
        if open_ones:
            exchange = data.draw(st.sampled_from(open_ones))
            self.driver.disconnect(exchange)
            self.streams = [s for s in self.streams if s[1] is not exchange]
            self.blocking = [b for b in self.blocking if b[1] is not exchange]

    # --- agents and time ----------------------------------------------------------------------

    @rule(task_id=tasks, output=OUTPUTS)
    def agent_says(self, task_id: str, output: Any) -> None:
        if task_id in self.driver.runs:
            self.driver.agent_yields(task_id, output)

    @rule(task_id=tasks)
    def agent_ends(self, task_id: str) -> None:
        if task_id in self.driver.runs:
            self.driver.agent_returns(task_id)

    @rule(seconds=st.sampled_from([1, 60, TTL - 1, TTL + 1]))
    def time_passes(self, seconds: int) -> None:
        self.driver.advance(seconds)

    # --- what must hold -----------------------------------------------------------------------

    @invariant()
    def blocking_sends_are_answered_once_their_task_settles(self) -> None:
        for task_id, exchange in self.blocking:
            if exchange.answered:
                result = exchange.result()
                assert "message" in result or result["task"]["status"]["state"] in SETTLED
            else:
                assert self.state(task_id) not in SETTLED | {None}
        self.blocking = [b for b in self.blocking if not b[1].answered]

    @invariant()
    def streams_deliver_in_order_and_end_with_their_task(self) -> None:
        for task_id, exchange, _ in self.streams:
            ids = [
                int(line[3:])
                for frame in exchange.frames
                for line in frame.decode().splitlines()
                if line.startswith("id:")
            ]
            assert ids == sorted(set(ids)), ids  # in order, none twice
            state = self.state(task_id)
            assert exchange.ended == (state is None or state in TERMINAL), (state, ids)

    @invariant()
    def finished_tasks_stay_finished_until_they_expire(self) -> None:
        for task_id, was in list(self.terminal.items()):
            now = self.state(task_id)
            assert now in (was, None)
            if now is None:
                del self.terminal[task_id]
        for run in list(self.driver.runs):
            state = self.state(run)
            assert state not in TERMINAL, "a run goes on for a finished task"
        listed = self.driver.rpc("ListTasks", {"pageSize": 100}).result()["tasks"]
        for task in listed:
            if task["status"]["state"] in TERMINAL:
                self.terminal.setdefault(task["id"], task["status"]["state"])

    @invariant()
    def clients_that_left_are_forgotten(self) -> None:
        # The server holds exactly the clients still there: none that left, none it answered.
        following = sum(1 for _, e, _ in self.streams if not e.ended)
        assert self.driver.server.open_streams == following
        assert self.driver.server.waiting == sum(1 for _, e in self.blocking if not e.answered)


ServerMachine.TestCase.settings = settings(max_examples=120, stateful_step_count=40, deadline=None)
TestServerMachine = ServerMachine.TestCase
