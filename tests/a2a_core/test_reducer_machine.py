"""A hypothesis state machine over the reducer: random calls, agent output and ticks.

It drives ``Core.needs``/``Core.decide`` through the fake store, predicts the outcome of every
client call from the records it can see (who owns what, which state each task is in), and checks
the invariants of the design after every step:

* a task in a terminal state never changes again;
* history only grows: each version's history starts with the previous version's;
* versions grow by exactly one per write, and event numbers never go back;
* nobody ever sees, lists, cancels or messages another principal's task (-32001 instead);
* the stored state is always a real state (never UNSPECIFIED), and only live tasks run.
"""

from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from a2a_core import (
    ArtifactChunk,
    CancelTaskRequest,
    GetTaskRequest,
    InputError,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StateChange,
    Task,
    TaskState,
    auth_required,
    completed,
    failed,
    input_required,
    rejected,
    reply,
    text_artifact,
    working,
)
from a2a_core.decisions import (
    AgentDone,
    AgentOutput,
    AwaitTask,
    Call,
    Decision,
    Fail,
    Operation,
    Publish,
    Respond,
    Tick,
    view,
)
from a2a_core.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.store import Delete, Owner, Put, Sent, TaskRecord
from a2a_core.transport import Caller, StartRun, StopRun

from .support import Harness, make_core

PRINCIPALS = st.sampled_from(["alice", "bob"])

_texts = st.text(alphabet="abc ?", max_size=4)
_single_values: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    _texts,
    st.builds(working, st.none() | _texts),
    st.builds(input_required, st.none() | _texts),
    st.builds(auth_required, _texts),
    st.builds(completed, st.none() | _texts),
    st.builds(failed, st.none() | _texts),
    st.builds(rejected, st.none() | _texts),
    st.just(StateChange(TaskState.SUBMITTED)),
    st.builds(reply, _texts),
    st.builds(
        lambda text, artifact_id: text_artifact(text, artifact_id=artifact_id),
        _texts,
        st.sampled_from(["", "a", "b"]),
    ),
    st.builds(
        lambda text, append, last: ArtifactChunk(
            text_artifact(text, artifact_id="a"), append=append, last_chunk=last
        ),
        _texts,
        st.booleans(),
        st.booleans(),
    ),
    st.just(42),  # not an A2A update at all
)
AGENT_VALUES = _single_values | st.lists(_single_values, max_size=3)
AGENT_ERRORS = st.sampled_from([InputError("Which one?"), InputError(), ValueError("secret")])


class ReducerMachine(RuleBasedStateMachine):
    """The reducer as a black box: every decision is checked against what the caller can see."""

    #: Terminal tasks expire after this long (``None``: never). Set per run below.
    ttl: timedelta | None = None

    tasks = Bundle("tasks")

    def __init__(self) -> None:
        super().__init__()
        self.harness = Harness(
            make_core(task_ttl=self.ttl, default_page_size=3), step=timedelta(milliseconds=250)
        )
        #: Every task ever created, with its owner and first message (id, text).
        self.owners: dict[str, str] = {}
        self.first_message: dict[str, str] = {}
        #: ``(principal, messageId) -> (task id, text)`` of every message that made a task.
        self.messages: dict[tuple[str, str], tuple[str, str]] = {}
        #: The version of each task the invariants saw last.
        self.seen: dict[str, TaskRecord] = {}
        #: Blocking sends still waiting for their task to settle.
        self.waits: list[AwaitTask] = []

    # --- helpers ------------------------------------------------------------------------------

    def record(self, task_id: str) -> TaskRecord | None:
        return self.harness.store.records.get(task_id)

    def visible(self, task_id: str) -> TaskRecord | None:
        """The record as clients may see it: gone once a terminal task outlived the TTL."""
        record = self.record(task_id)
        if record is None or self.ttl is None or not record.state.terminal:
            return record
        return record if record.updated_at + self.ttl > self.harness.now else None

    def decide(self, inp: Any) -> Decision:
        """Decide and commit, checking what every decision must satisfy."""
        before = dict(self.harness.store.records)
        decision = self.harness.decide(inp)
        puts = [w for w in decision.writes if isinstance(w, Put)]
        for write in decision.writes:
            assert not isinstance(write, Sent), "a decision never settles a notification"
            task_id = write.record.id if isinstance(write, Put) else write.task_id
            previous = before.get(task_id)
            assert write.expected == (previous.version if previous else 0)
            if isinstance(write, Delete):
                assert previous is not None
                assert previous.state.terminal
                continue
            record = write.record
            assert record.version == write.expected + 1
            first = previous.seq + 1 if previous else 1
            assert [e.seq for e in write.events] == list(range(first, record.seq + 1))
        publishes = [e for e in decision.effects if isinstance(e, Publish)]
        for publish in publishes:
            (put,) = [p for p in puts if p.record.id == publish.record.id]
            assert publish.record == put.record
            assert publish.events == put.events
            assert publish.settled is put.record.state.settled
        for put in puts:
            if put.events:
                assert any(p.record == put.record for p in publishes)
        return decision

    def expect_not_found(self, decision: Decision, task_id: str) -> None:
        assert decision.writes == ()
        assert decision.effects == ()
        assert decision.reply == Fail(
            TaskNotFoundError(f"Task {task_id} not found", metadata={"taskId": task_id})
        )

    def mine(self, task_id: str, principal: str) -> TaskRecord | None:
        """The record if ``principal`` may see it."""
        record = self.visible(task_id)
        return record if record is not None and self.owners[task_id] == principal else None

    # --- client calls -------------------------------------------------------------------------

    @rule(target=tasks, principal=PRINCIPALS, blocking=st.booleans(), text=_texts)
    def send_new(self, principal: str, blocking: bool, text: str) -> str:
        decision = self.decide_send(text, principal=principal, blocking=blocking)
        (put,) = decision.writes
        assert isinstance(put, Put)
        record = put.record
        assert put.expected == 0
        assert record.state is TaskState.SUBMITTED
        assert record.owner == Owner(principal)
        assert (record.run, record.running, record.version) == (1, True, 1)
        starts = [e for e in decision.effects if isinstance(e, StartRun)]
        assert [(s.task_id, s.run) for s in starts] == [(record.id, 1)]
        assert record.id not in self.owners
        self.owners[record.id] = principal
        self.remember(record, text)
        if blocking:
            assert decision.reply == AwaitTask(record.id)
            self.waits.append(AwaitTask(record.id))
        else:
            assert decision.reply == Respond(record.task)
        return record.id

    def remember(self, record: TaskRecord, text: str) -> None:
        message_id = record.task.history[0].message_id
        self.first_message[record.id] = message_id
        self.messages[record.owner.principal, message_id] = (record.id, text)

    def decide_send(self, text: str, **options: Any) -> Decision:
        harness = self.harness
        harness.sent += 1
        message_id = options.pop("message_id", "") or f"msg-{harness.sent}"

        message = Message(
            message_id,
            Role.USER,
            (Part(text=text),),
            task_id=options.get("task_id", ""),
            context_id=options.get("context_id", ""),
        )
        configuration = SendMessageConfiguration(
            return_immediately=not options.get("blocking", True)
        )
        call = Call(
            Operation.SEND_MESSAGE,
            SendMessageRequest(message, configuration=configuration),
            Caller(options["principal"]),
        )
        return self.decide(call)

    @rule(
        task=tasks,
        principal=PRINCIPALS,
        context=st.sampled_from(["none", "right", "wrong"]),
        blocking=st.booleans(),
    )
    def follow_up(self, task: str, principal: str, context: str, blocking: bool) -> None:
        before = self.mine(task, principal)
        context_id = {"none": "", "wrong": "elsewhere"}.get(
            context, before.task.context_id if before else "x"
        )
        decision = self.decide_send(
            "more", principal=principal, task_id=task, context_id=context_id, blocking=blocking
        )
        if before is None:
            self.expect_not_found(decision, task)
            return
        if context == "wrong":
            assert isinstance(decision.reply, Fail)
            assert isinstance(decision.reply.error, InvalidParamsError)
            assert decision.writes == ()
            return
        if before.state.terminal:
            assert isinstance(decision.reply, Fail)
            assert isinstance(decision.reply.error, UnsupportedOperationError)
            assert decision.writes == ()
            return
        (put,) = decision.writes
        assert isinstance(put, Put)
        record = put.record
        assert record.state is TaskState.WORKING
        assert (record.run, record.running) == (before.run + 1, True)
        assert record.task.history[-1].text == "more"
        stops = [e for e in decision.effects if isinstance(e, StopRun)]
        assert stops == ([StopRun(task, before.run)] if before.running else [])
        (start,) = [e for e in decision.effects if isinstance(e, StartRun)]
        assert start.run == before.run + 1
        assert start.context.history == record.task.history
        if blocking:
            self.waits.append(AwaitTask(task))

    @rule(target=tasks, task=tasks, same=st.booleans())
    def resend(self, task: str, same: bool) -> Any:
        """Re-send a task's first message: the same task answers; nothing runs twice."""
        principal = self.owners[task]
        message_id = self.first_message[task]
        holder_id, text = self.messages[principal, message_id]
        holder = self.visible(holder_id)
        sent = text if same else text + "!"
        decision = self.decide_send(sent, principal=principal, message_id=message_id)
        if holder is None:
            # The task expired: the id is free again and the send makes a new task.
            (*_, put) = decision.writes
            assert isinstance(put, Put)
            assert put.expected == 0
            self.owners[put.record.id] = principal
            self.remember(put.record, sent)
            if isinstance(decision.reply, AwaitTask):
                self.waits.append(decision.reply)
            return multiple(put.record.id)
        assert decision.writes == ()
        assert decision.effects == ()
        if not same:
            assert isinstance(decision.reply, Fail)
            assert isinstance(decision.reply.error, InvalidParamsError)
            return multiple()
        match decision.reply:
            case AwaitTask(task_id=task_id):
                assert task_id == holder_id
                assert not holder.state.settled
                self.waits.append(decision.reply)
            case Respond(value=value):
                assert holder.state.settled
                wait = AwaitTask(holder_id)
                assert value == self.harness.core.settled_reply(wait, holder).value
            case other:
                raise AssertionError(other)
        return multiple()

    @rule(task=tasks, principal=PRINCIPALS)
    def cancel(self, task: str, principal: str) -> None:
        before = self.mine(task, principal)
        decision = self.decide(self.harness_cancel(task, principal))
        if before is None:
            self.expect_not_found(decision, task)
            return
        if before.state.terminal:
            assert isinstance(decision.reply, Fail)
            assert isinstance(decision.reply.error, TaskNotCancelableError)
            assert decision.writes == ()
            return
        record = self.record(task)
        assert record is not None
        assert record.state is TaskState.CANCELED
        assert not record.running
        assert decision.reply == Respond(record.task)
        stops = [e for e in decision.effects if isinstance(e, StopRun)]
        assert stops == ([StopRun(task, before.run)] if before.running else [])

    def harness_cancel(self, task: str, principal: str) -> Any:

        return Call(Operation.CANCEL_TASK, CancelTaskRequest(task), Caller(principal))

    @rule(task=tasks, principal=PRINCIPALS, history_length=st.none() | st.integers(0, 4))
    def get(self, task: str, principal: str, history_length: int | None) -> None:

        before = self.mine(task, principal)
        call = Call(
            Operation.GET_TASK,
            GetTaskRequest(task, history_length=history_length),
            Caller(principal),
        )
        decision = self.decide(call)
        if before is None:
            self.expect_not_found(decision, task)
            return
        assert decision == Decision(reply=Respond(view(before.task, history_length)))

    @rule(principal=PRINCIPALS)
    def get_unknown(self, principal: str) -> None:

        call = Call(Operation.GET_TASK, GetTaskRequest("no-such-task"), Caller(principal))
        self.expect_not_found(self.decide(call), "no-such-task")

    @rule(
        principal=PRINCIPALS,
        page_size=st.integers(1, 4),
        state=st.none()
        | st.sampled_from(
            [TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED, TaskState.INPUT_REQUIRED]
        ),
    )
    def list_all(self, principal: str, page_size: int, state: TaskState | None) -> None:
        """Page through the caller's tasks: exactly theirs, newest first, each once."""

        expected = sorted(
            (
                r
                for task_id in self.owners
                if (r := self.mine(task_id, principal)) is not None
                and (state is None or r.state is state)
            ),
            key=lambda r: (r.updated_at, r.id),
            reverse=True,
        )
        listed: list[Task] = []
        token = ""
        step, self.harness.step = self.harness.step, timedelta(0)  # one moment for all pages
        # A page holds what the store listed less the tasks that expired since the last sweep, so
        # it may be short, even empty, and still name a next page (as AIP-158 allows): the pages
        # end within the owner's stored tasks, swept or not, each page a step past the last.
        stored = sum(
            1 for r in self.harness.store.records.values() if r.owner.principal == principal
        )
        tokens: set[str] = set()
        for _ in range(stored + 2):
            request = ListTasksRequest(
                page_size=page_size,
                page_token=token,
                status=state or TaskState.UNSPECIFIED,
                include_artifacts=True,
            )
            decision = self.decide(Call(Operation.LIST_TASKS, request, Caller(principal)))
            assert decision.writes == ()
            assert isinstance(decision.reply, Respond)
            page = decision.reply.value
            assert isinstance(page, ListTasksResponse)
            assert len(page.tasks) <= page_size
            listed.extend(page.tasks)
            token = page.next_page_token
            if not token:
                break
            assert token not in tokens, "a page led back to an earlier one"
            tokens.add(token)
        else:
            raise AssertionError("the pages never ended")
        self.harness.step = step
        assert [t.id for t in listed] == [r.id for r in expected]
        assert listed == [r.task for r in expected]
        for task in listed:
            assert self.owners[task.id] == principal

    # --- the agent ----------------------------------------------------------------------------

    @rule(task=tasks, value=AGENT_VALUES, stale=st.booleans())
    def agent_output(self, task: str, value: Any, stale: bool) -> None:
        before = self.record(task)
        run = (before.run if before else 1) - (1 if stale else 0)
        decision = self.decide(AgentOutput(task, run, value))
        if before is None or stale or not before.running:
            assert decision == Decision(effects=(StopRun(task, run),), run_over=True)
            return
        assert decision.reply is None
        after = self.record(task)
        assert after is not None
        assert after.run == before.run
        assert after.running == (not after.state.terminal)
        # The adapter skips reporting the run's end exactly when that would decide nothing.
        assert decision.run_over == (not after.running)
        if decision.run_over:
            assert self.decide(AgentDone(task, run, value)) == Decision()

    @rule(
        task=tasks,
        value=AGENT_VALUES,
        error=st.none() | AGENT_ERRORS,
        stale=st.booleans(),
    )
    def agent_done(self, task: str, value: Any, error: Exception | None, stale: bool) -> None:
        before = self.record(task)
        run = (before.run if before else 1) - (1 if stale else 0)
        decision = self.decide(AgentDone(task, run, value, error))
        if before is None or stale or not before.running:
            assert decision == Decision()
            return
        after = self.record(task)
        assert after is not None
        # A finished run leaves its task settled, and nothing running.
        assert after.state.settled
        assert not after.running
        if error is not None and not isinstance(error, InputError) and not before.state.terminal:
            assert after.state is TaskState.FAILED
            assert after.task.status.message is not None
            assert "secret" not in after.task.status.message.text

    @rule(seconds=st.integers(0, 20))
    def tick(self, seconds: int) -> None:

        self.harness.now += timedelta(seconds=seconds)
        decision = self.decide(Tick(self.harness.now))
        assert decision.reply is None
        assert decision.effects == ()
        if self.ttl is None:
            assert decision == Decision()
        for write in decision.writes:
            assert isinstance(write, Delete)
            gone = self.seen.get(write.task_id)
            assert gone is not None
            assert gone.state.terminal
            assert gone.updated_at + self.ttl <= self.harness.now  # type: ignore[operator]

    # --- invariants ---------------------------------------------------------------------------

    @invariant()
    def records_are_consistent(self) -> None:
        records = self.harness.store.records
        for task_id, record in records.items():
            assert record.id == task_id
            assert isinstance(record.state, TaskState)
            assert record.state is not TaskState.UNSPECIFIED
            assert not (record.running and record.state.terminal)
            assert record.owner == Owner(self.owners[task_id])
            assert record.seq == len(self.harness.store.logs[task_id])
            previous = self.seen.get(task_id)
            if previous is None:
                continue
            assert record.version in (previous.version, previous.version + 1)
            assert record.seq >= previous.seq
            assert record.run >= previous.run
            history = record.task.history
            assert history[: len(previous.task.history)] == previous.task.history
            assert (record.owner, record.created_at, record.task.context_id) == (
                previous.owner,
                previous.created_at,
                previous.task.context_id,
            )
            if previous.state.terminal:
                assert record.task == previous.task, "a terminal task changed"
                assert not record.running
        for task_id in set(self.seen) - set(records):
            # Only expired terminal tasks ever disappear.
            assert self.ttl is not None
            assert self.seen[task_id].state.terminal
        self.seen = dict(records)

    @invariant()
    def blocking_sends_answer_once_settled(self) -> None:
        waiting = []
        for wait in self.waits:
            record = self.record(wait.task_id)
            if record is None:
                continue  # expired before anyone collected it
            if not record.state.settled:
                waiting.append(wait)
                continue
            value = self.harness.core.settled_reply(wait, record).value
            if record.replied and record.task.status.message is not None:
                assert value == record.task.status.message
                assert isinstance(value, Message)
            else:
                assert value == record.task
        self.waits = waiting


class ExpiringReducerMachine(ReducerMachine):
    """The same machine with a task TTL, so ticks delete finished tasks."""

    ttl = timedelta(seconds=10)


MACHINE_SETTINGS = settings(
    max_examples=200,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def test_reducer_state_machine() -> None:
    run_state_machine_as_test(ReducerMachine, settings=MACHINE_SETTINGS)


def test_reducer_state_machine_with_expiry() -> None:
    run_state_machine_as_test(ExpiringReducerMachine, settings=MACHINE_SETTINGS)
