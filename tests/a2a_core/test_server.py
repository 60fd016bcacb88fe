"""The server machine over an asynchronous store, with no event loop.

The store here is a :class:`Board`: the machine's :class:`Read` and :class:`Commit` actions wait
on it until the test completes them, in whatever order it likes, with fresh data (a read sees
the store as it is when completed) or with a refused commit. That is every interleaving an async
store can produce, so the bookkeeping between decisions is tested here, once: waiters answered
exactly once, streams in order and complete, retries bounded, failures answered, nothing kept
for clients that left.
"""

import json
from datetime import timedelta
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from a2a_core import (
    ArtifactChunk,
    Core,
    CoreConfig,
    TaskState,
    completed,
    failed,
    input_required,
    reply,
    text_artifact,
    working,
)
from a2a_core.machine._server import MAX_ATTEMPTS, MAX_HOLDS
from a2a_core.store import LoggedEvent, LogQuery, MemoryTasks, Reads
from a2a_core.testing import counting_ids
from a2a_core.transport import (
    Action,
    Answer,
    Commit,
    Frames,
    HttpRequest,
    Notify,
    Outputs,
    OutputTaken,
    Problem,
    Read,
    Server,
    StartRun,
    StopRun,
    StreamOpened,
)

from .support import CARD, EPOCH

V1 = {"content-type": "application/json", "a2a-version": "1.0"}


def rpc(method: str, params: Any, rpc_id: int = 1) -> HttpRequest:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    return HttpRequest("POST", "/", V1, json.dumps(body).encode())


def message(text: str, message_id: str, **fields: Any) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **fields}


class Board:
    """A server whose store operations wait until the test completes them."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("card", CARD)
        options.setdefault("streaming", True)
        window = options.pop("stream_window", None)
        self.server = Server(
            Core(CoreConfig(**options)), stream_window=window, new_id=counting_ids()
        )
        self.tasks = MemoryTasks()
        self.now = EPOCH
        self.pending: dict[int, Read | Commit] = {}
        self.seen: list[Action] = []

    def take(self) -> list[Action]:
        """The actions since the last call, the store's kept aside for the test to complete."""
        fresh: list[Action] = []
        for action in self.server.take_actions():
            if isinstance(action, Read | Commit):
                self.pending[action.op] = action
            else:
                fresh.append(action)
        self.seen.extend(fresh)
        return fresh

    def complete(self, op: int, *, refuse: bool = False) -> list[Action]:
        action = self.pending.pop(op)
        if isinstance(action, Read):
            self.server.read_done(op, self.tasks.read(action.reads), self.now)
        else:
            ok = not refuse and self.tasks.commit(action.writes)
            self.server.commit_done(op, ok, self.now)
        return self.take()

    def settle(self) -> list[Action]:
        """Complete every store operation, oldest first, until none is left."""
        out = self.take()
        while self.pending:
            out += self.complete(min(self.pending))
        return out

    def receive(self, request: HttpRequest, **options: Any) -> int:
        number = self.server.receive(request, self.now, **options)
        self.take()
        return number

    def answers(self, number: int) -> list[Answer]:
        return [a for a in self.seen if isinstance(a, Answer) and a.exchange == number]

    def answer(self, number: int) -> dict[str, Any]:
        (found,) = self.answers(number)
        document: dict[str, Any] = json.loads(found.response.body)
        return document

    def run_of(self, task_id: str | None = None) -> StartRun:
        runs = [a for a in self.seen if isinstance(a, StartRun)]
        if task_id is not None:
            runs = [r for r in runs if r.task_id == task_id]
        return runs[-1]


def send(board: Board, text: str = "hi", mid: str = "m-1", **configuration: Any) -> int:
    params: dict[str, Any] = {"message": message(text, mid)}
    if configuration:
        params["configuration"] = configuration
    return board.receive(rpc("SendMessage", params))


def test_the_machine_is_told_how_to_make_ids_and_never_counts_them_itself() -> None:
    """The core draws no random number, so whoever drives it gives it ids: a transport random
    ones, a test counted ones. Without one the machine does not start (counted ids would be
    guessable, and would start again after a restart over a durable store)."""
    with pytest.raises(TypeError, match="new_id"):
        Server(Core(CoreConfig(card=CARD)))  # type: ignore[call-arg]
    made = iter(["t-secret", "c-secret", "m-secret"])
    server = Server(Core(CoreConfig(card=CARD)), store=MemoryTasks(), new_id=lambda: next(made))
    server.receive(rpc("SendMessage", {"message": message("hi", "m-1")}), EPOCH)
    assert "t-secret" in str(server.take_actions())


# --- one request at a time --------------------------------------------------------------------


def test_a_blocking_send_reads_commits_starts_and_answers_when_its_task_settles() -> None:
    board = Board()
    number = send(board)
    assert [type(a) for a in board.pending.values()] == [Read]
    board.settle()
    assert [type(a) for a in board.seen] == [StartRun]  # committed, running, not answered
    start = board.run_of()
    board.server.agent_output(start.task_id, start.run, completed("done"), board.now)
    out = board.settle()
    assert OutputTaken(start.task_id, start.run, counts=False) in out
    task = board.answer(number)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert board.server.waiting == 0
    assert board.server.live_runs == 0


_YIELDS = st.sampled_from(
    [
        None,
        "progress",
        working("w"),
        input_required("q"),
        text_artifact("x", artifact_id="a"),
        ArtifactChunk(text_artifact("y", artifact_id="a"), append=True),
        ArtifactChunk(text_artifact("z", artifact_id="b"), last_chunk=True),
        completed("done"),
        failed("no"),
        reply("r"),
        42,
    ]
)


def _after_yields(values: list[Any], together: bool) -> tuple[Any, list[LoggedEvent], int]:
    """The task, its log and the number of commits after a run yielded ``values``, told to
    the machine one by one (as long as they count) or ``together`` as one :class:`Outputs`."""
    board = Board()
    send(board, returnImmediately=True)
    board.settle()
    start = board.run_of()
    commits = 0

    def tell(value: Any) -> bool:
        nonlocal commits
        board.server.agent_output(start.task_id, start.run, value, board.now)
        out = board.take()
        commits += sum(isinstance(a, Commit) for a in board.pending.values())
        out += board.settle()
        (taken,) = [a for a in out if isinstance(a, OutputTaken)]
        return taken.counts

    if together:
        tell(Outputs(tuple(values)))
    else:
        for value in values:
            if not tell(value):
                break
    snapshot = board.tasks.read(Reads(start.task_id, log=LogQuery(start.task_id, 0, 1000)))
    assert snapshot.task is not None
    return snapshot.task.task, list(snapshot.log), commits


@settings(max_examples=200, deadline=None)
@given(st.lists(_YIELDS, max_size=7))
def test_outputs_decide_as_their_values_one_by_one_in_one_commit(values: list[Any]) -> None:
    """Handing a run's values over together changes nothing but the number of writes: the
    task, its event log (so every stream and push) come out the same."""
    alone = _after_yields(values, together=False)
    together = _after_yields(values, together=True)
    assert together[:2] == alone[:2]
    assert together[2] <= 1


def test_a_refused_commit_is_decided_again_on_fresh_data() -> None:
    board = Board()
    number = send(board, returnImmediately=True)
    board.complete(min(board.pending))  # the read
    (commit,) = board.pending
    board.complete(commit, refuse=True)
    assert [type(a) for a in board.pending.values()] == [Read]  # read again
    board.settle()
    assert board.answer(number)["result"]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert len(board.tasks) == 1


def test_retries_are_bounded_and_end_in_a_clear_error() -> None:
    board = Board()
    number = send(board, returnImmediately=True)
    for _ in range(MAX_ATTEMPTS):
        board.complete(min(board.pending))  # read
        board.complete(min(board.pending), refuse=True)  # commit, lost
    assert not board.pending
    error = board.answer(number)["error"]
    assert error["code"] == -32603
    assert "compare-and-set" in error["message"]
    assert len(board.tasks) == 0
    assert board.server.busy == 0


def test_a_failed_read_is_an_internal_error_for_its_request_only() -> None:
    board = Board()
    failing = board.receive(rpc("GetTask", {"id": "t-1"}))
    (op,) = board.pending
    board.pending.clear()
    board.server.read_failed(op, board.now)
    board.take()
    assert board.answer(failing)["error"]["code"] == -32603
    fine = board.receive(rpc("GetTask", {"id": "t-1"}, rpc_id=2))
    board.settle()
    assert board.answer(fine)["error"]["code"] == -32001


def test_a_store_out_of_reach_is_a_retry_later_in_every_binding() -> None:
    board = Board()
    failing = board.receive(rpc("GetTask", {"id": "t-1"}))
    (op,) = board.pending
    board.pending.clear()
    board.server.read_failed(op, board.now, unavailable=True)
    board.take()
    error = board.answer(failing)["error"]
    assert error["code"] == -32603
    assert error["message"].startswith("The task store is unavailable")
    rest = board.receive(HttpRequest("GET", "/tasks/t-1", {"a2a-version": "1.0"}, b""))
    (op,) = board.pending
    board.pending.clear()
    board.server.read_failed(op, board.now, unavailable=True)
    board.take()
    (answer,) = board.answers(rest)
    assert answer.response.status == 503
    assert json.loads(answer.response.body)["error"]["status"] == "UNAVAILABLE"


def test_the_end_of_a_run_the_store_missed_is_recorded_once_it_is_back() -> None:
    board = Board()
    send(board, returnImmediately=True)
    board.settle()
    waiting = send(board, mid="m-1")  # the same message, blocking: it waits for the task
    board.settle()
    start = board.run_of()
    board.server.agent_done(start.task_id, start.run, board.now, error=RuntimeError("boom"))
    board.take()
    # The run's end, decided on the record this server wrote: its commit finds the store away.
    (op,) = board.pending
    assert isinstance(board.pending[op], Commit)
    board.pending.clear()
    board.server.commit_failed(op, board.now, unavailable=True)
    board.take()
    assert board.server.live_runs == 0
    assert not board.pending
    # The blocking re-send is not held while the store is away: it is told to retry.
    assert board.answer(waiting)["error"]["message"].startswith("The task store is unavailable")
    assert board.server.waiting == 0
    due = board.server.next_deadline()
    assert due is not None
    board.now = due
    board.server.tick(board.now)
    board.settle()  # the store is back
    record = board.tasks.read(Reads(task_id=start.task_id)).task
    assert record is not None
    assert record.state is TaskState.FAILED
    assert not record.running


class FlakyTasks(MemoryTasks):
    """A synchronous store whose next read or commit raises, when a test says so."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_reads = self.fail_commits = 0

    def read(self, reads: Any) -> Any:
        if self.fail_reads:
            self.fail_reads -= 1
            raise OSError("the disk is gone")
        return super().read(reads)

    def commit(self, writes: Any) -> bool:
        if self.fail_commits:
            self.fail_commits -= 1
            raise OSError("the disk is full")
        return super().commit(writes)


def test_a_synchronous_store_that_raises_fails_that_request_only() -> None:
    tasks = FlakyTasks()
    server = Server(Core(CoreConfig(card=CARD)), store=tasks, new_id=counting_ids())

    def answer(request: HttpRequest) -> tuple[dict[str, Any], list[Action]]:
        number = server.receive(request, EPOCH)
        actions = server.take_actions()
        [reply] = [a for a in actions if isinstance(a, Answer) and a.exchange == number]
        return json.loads(reply.response.body), actions

    tasks.fail_reads = 1
    failed, actions = answer(rpc("GetTask", {"id": "t-1"}))
    assert failed["error"]["code"] == -32603
    assert any(isinstance(a, Problem) and "the disk is gone" in a.message for a in actions)
    tasks.fail_commits = 1
    refused, actions = answer(rpc("SendMessage", {"message": message("hi", "m-1")}))
    assert refused["error"]["code"] == -32603
    assert not any(isinstance(a, StartRun) for a in actions)  # nothing was written: no run
    assert len(tasks) == 0
    again, _ = answer(rpc("GetTask", {"id": "t-1"}, rpc_id=2))
    assert again["error"]["code"] == -32001  # the store is back, and the machine goes on
    assert server.busy == 0


def _fail_pending(board: Board, *, unavailable: bool = True, apply: bool = False) -> None:
    """Fail every store operation under way (``apply``: a commit is written first, as when
    the connection breaks while the store answers)."""
    for op, action in sorted(board.pending.items()):
        if isinstance(action, Read):
            board.server.read_failed(op, board.now, unavailable=unavailable)
        else:
            if apply:
                assert board.tasks.commit(action.writes)
            board.server.commit_failed(op, board.now, unavailable=unavailable)
    board.pending.clear()
    board.take()


def _tick(board: Board) -> None:
    due = board.server.next_deadline()
    assert due is not None
    board.now = max(board.now, due)
    board.server.tick(board.now)
    board.take()


def _artifacts(board: Board, task_id: str) -> list[Any]:
    record = board.tasks.read(Reads(task_id=task_id)).task
    assert record is not None
    return list(record.task.artifacts)


def test_an_output_the_store_missed_is_held_until_it_is_back_then_the_run_goes_on() -> None:
    board = Board()
    number = send(board)
    board.settle()
    start = board.run_of()
    board.server.agent_output(
        start.task_id, start.run, text_artifact("x", artifact_id="a"), board.now
    )
    board.take()
    _fail_pending(board)  # decided on the record it wrote: no read first; the commit fails
    problems = [a for a in board.seen if isinstance(a, Problem)]
    assert "held" in problems[-1].message
    for _ in range(5):  # the store stays away a while: each try fails, and it is held again
        _tick(board)
        _fail_pending(board)
    assert not [a for a in board.seen if isinstance(a, OutputTaken | StopRun)]
    assert board.server.live_runs == 1
    assert board.answers(number) == []  # its blocking send still waits
    _tick(board)
    out = board.settle()  # the store is back
    assert OutputTaken(start.task_id, start.run, counts=True) in out
    assert len(_artifacts(board, start.task_id)) == 1
    board.server.agent_done(start.task_id, start.run, board.now, value="done")
    board.settle()
    task = board.answer(number)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [a["artifactId"] for a in task["artifacts"]] == ["a"]
    assert board.server.next_deadline() is None  # nothing left to try


def test_an_output_whose_failed_commit_was_written_after_all_is_not_written_twice() -> None:
    board = Board()
    send(board, returnImmediately=True)
    board.settle()
    start = board.run_of()
    chunk = ArtifactChunk(text_artifact("x", artifact_id="a"), append=True)
    board.server.agent_output(
        start.task_id, start.run, text_artifact("x", artifact_id="a"), board.now
    )
    board.settle()
    board.server.agent_output(start.task_id, start.run, chunk, board.now)
    board.take()
    _fail_pending(board, apply=True)  # written, but the store could not say so
    _tick(board)
    out = board.settle()
    assert OutputTaken(start.task_id, start.run, counts=True) in out
    (artifact,) = _artifacts(board, start.task_id)
    assert [part.text for part in artifact.parts] == ["x", "x"]  # appended once, not twice


def test_a_held_run_is_not_idle_while_the_store_is_away() -> None:
    board = Board(run_idle_time=timedelta(seconds=2))
    send(board, returnImmediately=True)
    board.settle()
    start = board.run_of()
    board.server.agent_output(start.task_id, start.run, working("on it"), board.now)
    board.take()
    _fail_pending(board)
    for _ in range(6):  # six seconds away, three times the idle limit
        _tick(board)
        _fail_pending(board)
    assert not [a for a in board.seen if isinstance(a, StopRun)]
    _tick(board)
    board.settle()
    record = board.tasks.read(Reads(task_id=start.task_id)).task
    assert record is not None
    assert record.state is TaskState.WORKING
    assert record.running


def test_an_output_the_store_keeps_refusing_fails_the_task_with_a_record() -> None:
    board = Board()
    number = send(board)
    board.settle()
    start = board.run_of()
    board.server.agent_output(start.task_id, start.run, working("on it"), board.now)
    board.take()
    # A fault of the store's own (not an outage) is tried a few times, then given up.
    _fail_pending(board, unavailable=False)
    for _ in range(MAX_HOLDS):
        _tick(board)
        _fail_pending(board, unavailable=False)
    board.settle()
    out = board.seen
    assert OutputTaken(start.task_id, start.run, counts=False) in out
    assert StopRun(start.task_id, start.run) in out
    assert any(isinstance(a, Problem) and "was lost" in a.message for a in out)
    task = board.answer(number)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert "server failed" in task["status"]["message"]["parts"][0]["text"]


def test_a_held_output_of_a_task_canceled_meanwhile_is_dropped() -> None:
    board = Board()
    send(board, returnImmediately=True)
    board.settle()
    start = board.run_of()
    board.server.agent_output(
        start.task_id, start.run, text_artifact("late", artifact_id="a"), board.now
    )
    board.take()
    _fail_pending(board)
    cancel = board.receive(rpc("CancelTask", {"id": start.task_id}, rpc_id=2))
    board.settle()
    assert board.answer(cancel)["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    _tick(board)
    out = board.settle()
    assert OutputTaken(start.task_id, start.run, counts=False) in out
    assert _artifacts(board, start.task_id) == []


def test_the_end_of_a_run_written_after_all_reaches_its_stream_once() -> None:
    board = Board()
    stream = board.receive(rpc("SendStreamingMessage", {"message": message("hi", "m-1")}, rpc_id=3))
    board.settle()
    start = board.run_of()
    board.server.agent_done(start.task_id, start.run, board.now, value="done")
    board.take()
    _fail_pending(board, apply=True)
    _tick(board)
    board.settle()
    frames = b"".join(
        b"".join(a.frames)
        for a in board.seen
        if isinstance(a, StreamOpened | Frames) and a.exchange == stream
    )
    assert frames.count(b"TASK_STATE_COMPLETED") == 1
    assert board.server.open_streams == 0


def test_a_resent_message_whose_task_settles_before_it_is_decided_is_still_answered() -> None:
    board = Board()
    first = send(board, mid="same")
    board.settle()
    start = board.run_of()
    again = send(board, mid="same")  # the re-send's read is issued...
    (replay_read,) = board.pending
    board.server.agent_output(start.task_id, start.run, completed("done"), board.now)
    board.take()
    for op in sorted(set(board.pending) - {replay_read}):  # ...the task settles meanwhile...
        board.complete(op)
    for op in sorted(board.pending):
        board.complete(op)
    while board.pending:  # ...and the re-send, decided from a snapshot, still gets its answer
        board.complete(min(board.pending))
    assert board.answer(first)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert board.answer(again)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert board.server.waiting == 0


def test_a_stale_settling_does_not_answer_a_follow_up() -> None:
    board = Board()
    send(board, mid="m-1", returnImmediately=True)
    board.settle()
    start = board.run_of()
    task_id = start.context.task_id
    board.server.agent_output(start.task_id, start.run, input_required("name?"), board.now)
    board.settle()
    follow_up = board.receive(
        rpc("SendMessage", {"message": message("Ada", "m-2", taskId=task_id)}, rpc_id=2)
    )
    board.settle()
    assert board.answers(follow_up) == []  # the new run has not answered yet
    second = board.run_of(start.task_id)
    assert second.run == start.run + 1
    board.server.agent_done(second.task_id, second.run, board.now, value="Hello, Ada")
    board.settle()
    assert board.answer(follow_up)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_client_that_leaves_is_forgotten_and_its_task_goes_on() -> None:
    board = Board()
    number = send(board)
    board.settle()
    board.server.client_left(number)
    assert board.server.waiting == 0
    start = board.run_of()
    board.server.agent_done(start.task_id, start.run, board.now, value="done")
    board.settle()
    assert board.answers(number) == []
    assert board.tasks.read(_reads(start.task_id)).task is not None


def _reads(task_id: str) -> Any:
    from a2a_core.store import Reads

    return Reads(task_id=task_id)


def test_unauthenticated_requests_get_the_cores_401_and_the_public_card_does_not() -> None:
    board = Board()
    refused = board.receive(rpc("GetTask", {"id": "t"}), caller=None, challenges=("Bearer",))
    card = board.receive(HttpRequest("GET", "/.well-known/agent-card.json"), caller=None)
    (answer,) = board.answers(refused)
    assert answer.response.status == 401
    assert ("www-authenticate", "Bearer") in answer.response.headers
    assert board.answers(card)[0].response.status == 200
    assert not board.pending  # nothing was read for either


# --- streams ----------------------------------------------------------------------------------


def lines_of(board: Board, number: int) -> list[str]:
    """The SSE lines stream ``number`` carried so far."""
    found: list[str] = []
    for action in board.seen:
        if (isinstance(action, StreamOpened) and action.exchange == number) or (
            isinstance(action, Frames) and action.exchange == number
        ):
            for frame in action.frames:
                found.extend(frame.decode().split("\n"))
    return found


def frames_of(board: Board, number: int) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in lines_of(board, number) if line.startswith("data: ")]


def ended(board: Board, number: int) -> bool:
    return any(
        (isinstance(a, StreamOpened) and a.exchange == number and a.ended)
        or (isinstance(a, Frames) and a.exchange == number and a.ended)
        for a in board.seen
    )


def test_a_subscription_opened_between_a_commit_and_its_publication_misses_nothing() -> None:
    board = Board()
    send(board, returnImmediately=True)
    board.settle()
    start = board.run_of()
    task_id = start.context.task_id
    number = board.receive(rpc("SubscribeToTask", {"id": task_id}, rpc_id=2))
    subscribe_read = min(board.pending)
    board.complete(subscribe_read)  # decided: the snapshot is the task as submitted
    board.server.agent_output(start.task_id, start.run, working("step 1"), board.now)
    board.take()
    board.settle()  # the log read of the new stream, and the output's read and commit
    board.server.agent_done(start.task_id, start.run, board.now, value="done")
    board.settle()
    events = frames_of(board, number)
    assert next(iter(events[0]["result"])) == "task"
    states = [e["result"]["statusUpdate"]["status"]["state"] for e in events[1:]]
    assert states[-1] == "TASK_STATE_COMPLETED"
    assert states.count("TASK_STATE_WORKING") == 1  # once, whatever the order of arrival
    assert ended(board, number)
    assert board.server.open_streams == 0


def test_a_stream_over_its_window_reads_on_from_the_log_once_it_has_sent_all() -> None:
    board = Board(stream_window=2)
    send(board, returnImmediately=True)
    board.settle()
    start = board.run_of()
    number = board.receive(rpc("SubscribeToTask", {"id": start.context.task_id}, rpc_id=2))
    board.settle()
    for step in range(5):
        board.server.agent_output(start.task_id, start.run, working(f"step {step}"), board.now)
        board.settle()
    sent_before = len(frames_of(board, number))
    assert board.server.stalls == 1
    for _ in range(3):
        board.server.frames_sent(number, board.now)
        board.settle()
    board.server.agent_done(start.task_id, start.run, board.now, value="done")
    board.settle()
    while not ended(board, number):
        board.server.frames_sent(number, board.now)
        board.settle()
    events = frames_of(board, number)
    assert len(events) > sent_before
    texts = [
        e["result"]["statusUpdate"]["status"]["message"]["parts"][0]["text"]
        for e in events[1:-1]
        if "statusUpdate" in e["result"]
    ]
    assert texts == [f"step {n}" for n in range(5)]


def restarted(board: Board) -> Board:
    """A new server over the store of ``board``'s (what a restart of its process leaves)."""
    fresh = Board()
    fresh.tasks = board.tasks
    return fresh


def test_a_restart_fails_the_tasks_whose_runs_it_left_behind(monkeypatch: Any) -> None:
    monkeypatch.setattr("a2a_core.machine._server.RECOVER_BATCH", 2)  # recovery reads in batches
    before = Board()
    live = []
    for n in range(5):
        send(before, mid=f"m-{n}", returnImmediately=True)
        before.settle()
        live.append(before.run_of())
    waiting = before.run_of(live[4].task_id)
    before.server.agent_output(waiting.task_id, waiting.run, input_required("who?"), before.now)
    before.settle()
    # The process dies here: its runs die with it. A new one starts on the same store.
    after = restarted(before)
    after.receive(rpc("SendMessage", {"message": message("go", "m-9", taskId=live[0].task_id)}))
    after.server.tick(after.now)
    after.settle()
    states = {r.task_id: after.tasks.read(Reads(task_id=r.task_id)).task for r in live}
    for start in live[1:4]:
        record = states[start.task_id]
        assert record is not None
        assert record.state is TaskState.FAILED
        assert "restarted before the agent finished" in str(record.task.status.message)
        assert not record.running
    asking = states[live[4].task_id]
    assert asking is not None
    assert asking.state is TaskState.INPUT_REQUIRED  # it still waits for its user
    assert not asking.running
    # The task a client continued before recovery read it has a run of this server: untouched.
    continued = states[live[0].task_id]
    assert continued is not None
    assert continued.running
    assert continued.state is TaskState.WORKING
    assert after.run_of(live[0].task_id).run == continued.run
    assert not any(isinstance(a, Problem) for a in after.seen)
    assert after.server.busy == 0
    # Recovery is done once: later ticks read nothing more.
    after.server.tick(after.now)
    assert not after.take()
    assert not after.pending


def test_a_restart_may_run_the_cut_runs_again_when_told_to() -> None:
    before = Board()
    send(before, "work", mid="m-1", returnImmediately=True)
    before.settle()
    cut = before.run_of()
    send(before, "ask", mid="m-2", returnImmediately=True)
    before.settle()
    asking = before.run_of()
    before.server.agent_output(asking.task_id, asking.run, input_required("who?"), before.now)
    before.settle()
    after = restarted(before)
    after.server = Server(
        Core(CoreConfig(card=CARD, on_restart="rerun")), new_id=counting_ids("id-after-")
    )
    after.server.tick(after.now)
    after.settle()
    again = after.run_of(cut.task_id)
    assert again.run == cut.run + 1
    assert again.context.message == cut.context.message  # the user's message, once more
    assert [r.task_id for r in after.seen if isinstance(r, StartRun)] == [cut.task_id]
    record = after.tasks.read(Reads(task_id=cut.task_id)).task
    assert record is not None
    assert record.state is TaskState.SUBMITTED  # as the cut run left it: nothing is made up
    assert record.running
    assert record.run == again.run
    # The new run counts: its output finishes the task.
    after.server.agent_output(again.task_id, again.run, completed("done again"), after.now)
    after.settle()
    finished = after.tasks.read(Reads(task_id=cut.task_id)).task
    assert finished is not None
    assert finished.state is TaskState.COMPLETED
    waiting = after.tasks.read(Reads(task_id=asking.task_id)).task
    assert waiting is not None
    assert waiting.state is TaskState.INPUT_REQUIRED  # a question is never run again


def restarted_server() -> Server:
    """The server after a restart: its ids must not repeat the ones before it."""
    return Server(
        Core(CoreConfig(card=CARD, push_notifications=True, streaming=True)),
        new_id=counting_ids("id-after-"),
    )


def pushes(board: Board) -> list[Notify]:
    return [a for a in board.seen if isinstance(a, Notify)]


def test_a_restart_delivers_what_the_outbox_still_owes_once_each() -> None:
    before = Board(push_notifications=True)
    send(before, returnImmediately=True)
    before.settle()
    task_id = before.run_of().task_id
    hook = {"taskId": task_id, "url": "https://hooks.example.com/a2a"}
    made = before.receive(rpc("CreateTaskPushNotificationConfig", hook))
    before.settle()
    config_id = before.answer(made)["result"]["id"]
    start = before.run_of()
    before.server.agent_output(start.task_id, start.run, working("one"), before.now)
    before.server.agent_output(start.task_id, start.run, working("two"), before.now)
    before.settle()
    sent = pushes(before)
    assert [n.seq for n in sent] == [2, 3]
    # The first is delivered; the second failed twice and the process died before it was.
    before.server.notified(task_id, config_id, 2, before.now)
    before.server.notify_failed(task_id, config_id, 3, 2, before.now)
    before.settle()

    after = restarted(before)
    after.server = restarted_server()
    after.server.tick(after.now)
    after.settle()
    again = pushes(after)
    # Owed again: the one still owed, with its attempts, and the failure the restart recorded
    # (the run it left was working), once each.
    assert [(n.seq, n.attempts) for n in again] == [(3, 2), (4, 0)]
    assert (
        dict(again[0].headers)["x-a2a-notification-id"]
        == dict(sent[1].headers)["x-a2a-notification-id"]
    )
    assert again[0].body == sent[1].body
    for notify in again:
        after.server.notified(notify.task_id, notify.config_id, notify.seq, after.now)
    after.settle()
    last = restarted(after)
    last.server = restarted_server()
    last.server.tick(last.now)
    last.settle()
    assert pushes(last) == []  # nothing more is owed


def test_the_fate_of_a_notification_the_store_missed_is_recorded_once_it_is_back() -> None:
    board = Board(push_notifications=True)
    send(board, returnImmediately=True)
    board.settle()
    start = board.run_of()
    hook = {"taskId": start.task_id, "url": "https://hooks.example.com/a2a"}
    made = board.receive(rpc("CreateTaskPushNotificationConfig", hook))
    board.settle()
    config_id = board.answer(made)["result"]["id"]
    board.server.agent_output(start.task_id, start.run, working("one"), board.now)
    board.settle()
    (notify,) = pushes(board)
    board.server.notified(start.task_id, config_id, notify.seq, board.now)
    board.take()
    _fail_pending(board)  # delivered, but the store is away when that is recorded
    assert "tried again" in [a for a in board.seen if isinstance(a, Problem)][-1].message
    _tick(board)
    _fail_pending(board)
    _tick(board)
    board.settle()
    # Recorded: a restart owes nothing (without it, the webhook would hear it twice).
    after = restarted(board)
    after.server = restarted_server()
    after.server.tick(after.now)
    after.settle()
    assert [n.seq for n in pushes(after)] == [notify.seq + 1]  # the run the restart ended


def test_a_restart_delivers_what_the_outbox_owes_before_what_happens_after_it(
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(
        "a2a_core.machine._server.RECOVER_BATCH", 1
    )  # the outbox is read in batches
    hook = {"url": "https://hooks.example.com/a2a"}
    before = Board(push_notifications=True)
    send(before, returnImmediately=True, taskPushNotificationConfig=hook)
    before.settle()
    start = before.run_of()
    before.server.agent_output(start.task_id, start.run, working("one"), before.now)
    before.settle()
    assert [n.seq for n in pushes(before)] == [1, 2]  # the process dies before either is sent

    after = restarted(before)
    after.server = restarted_server()
    after.server.tick(after.now)
    after.take()

    def reads_outbox(op: int) -> bool:
        action = after.pending[op]
        return isinstance(action, Read) and action.reads.outbox is not None

    # The store finishes recovery (the run the restart left fails: event 3) before it gets to
    # the outbox, as a store doing several things at once may; or, on a store that does one
    # at a time, as the outbox's later batches fall behind the recovery's commits.
    while others := [op for op in after.pending if not reads_outbox(op)]:
        after.complete(min(others))
    # Then the outbox, batch after batch; the webhook takes each notification at once.
    delivered = 0
    while after.pending:
        after.complete(min(after.pending))
        for notify in pushes(after)[delivered:]:
            after.server.notified(notify.task_id, notify.config_id, notify.seq, after.now)
            delivered += 1
        after.take()
    again = pushes(after)
    # One webhook's notifications go out in the order of their events: what the dead server
    # still owed first, then the failure the restart recorded, each once (the failure was in
    # the outbox too by the time its batch was read, and is not handed out again).
    assert [(n.task_id, n.seq) for n in again] == [(start.task_id, seq) for seq in (1, 2, 3)]
    assert not any(isinstance(a, Problem) for a in after.seen)


def test_shutdown_ends_streams_and_fails_runs_that_would_start() -> None:
    board = Board()
    send(board, mid="m-1", returnImmediately=True)
    board.settle()
    stream = board.receive(rpc("SubscribeToTask", {"id": board.run_of().context.task_id}, 2))
    board.settle()
    board.server.begin_shutdown(board.now)
    board.take()
    assert ended(board, stream)
    late = send(board, mid="m-2")
    board.settle()
    starts = [a for a in board.seen if isinstance(a, StartRun)]
    assert len(starts) == 1  # the late send's run never started...
    late_task = board.answer(late)["result"]["task"]
    assert late_task["status"]["state"] == "TASK_STATE_FAILED"  # ...and says why
    assert "server stopped" in late_task["status"]["message"]["parts"][0]["text"]
    assert board.server.live_runs == 1
    board.server.abandon_runs(board.now)
    out = board.settle()
    assert StopRun(starts[0].task_id, starts[0].run) in out
    assert board.server.live_runs == 0


def test_the_next_deadline_covers_expiry_and_held_snapshots() -> None:
    board = Board(task_ttl=timedelta(seconds=60))
    number = board.receive(rpc("SendStreamingMessage", {"message": message("x", "m-1")}))
    board.settle()
    assert board.server.next_deadline() == EPOCH + timedelta(milliseconds=50)
    board.now += timedelta(milliseconds=50)
    board.server.tick(board.now)
    board.settle()
    assert "task" in frames_of(board, number)[0]["result"]
    start = board.run_of()
    board.server.agent_done(start.task_id, start.run, board.now, value="done")
    board.settle()
    assert board.server.next_deadline() == board.now + timedelta(seconds=60)


# --- any interleaving ---------------------------------------------------------------------------


@attrs.define
class Sent:
    number: int
    kind: str  # "wait", "stream", "get"
    left: bool = False


class Interleavings(RuleBasedStateMachine):
    """Requests, store answers in any order (refusals too), agent output, clients leaving and
    the clock moving: whatever the order, every request is answered once, every stream carries
    its task's events once and in order and ends with the task, nothing is kept for a client
    that left."""

    def __init__(self) -> None:
        super().__init__()
        self.board = Board(stream_window=4, task_ttl=timedelta(seconds=30))
        self.sent: list[Sent] = []
        self.ids = 0
        self.busy_runs: set[tuple[str, int]] = set()  # runs whose last output is not taken

    def runs(self) -> list[StartRun]:
        """Runs still going (started, not stopped, not over), whose output may come."""
        live: dict[tuple[str, int], StartRun] = {}
        for action in self.board.seen:
            if isinstance(action, StartRun):
                live[action.task_id, action.run] = action
            elif isinstance(action, StopRun) or (
                isinstance(action, OutputTaken) and not action.counts
            ):
                live.pop((action.task_id, action.run), None)
        return [r for key, r in live.items() if key not in self.busy_runs]

    @rule(kind=st.sampled_from(["wait", "stream", "now"]))
    def send(self, kind: str) -> None:
        self.ids += 1
        params: dict[str, Any] = {"message": message(f"t{self.ids}", f"m-{self.ids}")}
        method = "SendStreamingMessage" if kind == "stream" else "SendMessage"
        if kind == "now":
            params["configuration"] = {"returnImmediately": True}
        number = self.board.receive(rpc(method, params, self.ids))
        self.sent.append(Sent(number, "stream" if kind == "stream" else "wait"))

    @precondition(lambda self: self.runs())
    @rule(data=st.data(), output=st.sampled_from(["work", "ask", "done", "end"]))
    def agent(self, data: st.DataObject, output: str) -> None:
        start = data.draw(st.sampled_from(self.runs()))
        value = {"work": working("w"), "ask": input_required("?"), "done": completed("ok")}
        if output == "end":
            self.board.server.agent_done(start.task_id, start.run, self.board.now)
        else:
            self.busy_runs.add((start.task_id, start.run))
            self.board.server.agent_output(start.task_id, start.run, value[output], self.board.now)
        self.board.take()

    @precondition(lambda self: self.board.pending)
    @rule(data=st.data(), refuse=st.booleans())
    def store_answers(self, data: st.DataObject, refuse: bool) -> None:
        op = data.draw(st.sampled_from(sorted(self.board.pending)))
        for action in self.board.complete(op, refuse=refuse and data.draw(st.booleans())):
            if isinstance(action, OutputTaken):
                self.busy_runs.discard((action.task_id, action.run))

    @precondition(lambda self: any(not s.left for s in self.sent))
    @rule(data=st.data())
    def client_leaves(self, data: st.DataObject) -> None:
        leaving = data.draw(st.sampled_from([s for s in self.sent if not s.left]))
        leaving.left = True
        self.board.server.client_left(leaving.number)

    @rule(seconds=st.sampled_from([0.01, 0.05, 1, 40]))
    def clock(self, seconds: float) -> None:
        self.board.now += timedelta(seconds=seconds)
        self.board.server.tick(self.board.now)
        self.board.take()

    @rule()
    def frames_go_out(self) -> None:
        for sent in self.sent:
            if sent.kind == "stream" and not sent.left:
                self.board.server.frames_sent(sent.number, self.board.now)
        self.board.take()

    @invariant()
    def answered_at_most_once(self) -> None:
        for sent in self.sent:
            replies = [
                a
                for a in self.board.seen
                if isinstance(a, Answer | StreamOpened) and a.exchange == sent.number
            ]
            assert len(replies) <= 1, replies

    @invariant()
    def nothing_is_kept_for_clients_that_left(self) -> None:
        assert self.board.server.waiting + self.board.server.open_streams <= sum(
            1 for s in self.sent if not s.left
        )

    def teardown(self) -> None:
        # Let everything finish: complete the store's work, end every run, send every frame.
        board = self.board
        for _ in range(200):
            board.settle()
            for action in board.seen:
                if isinstance(action, OutputTaken):
                    self.busy_runs.discard((action.task_id, action.run))
            runs = self.runs()
            for start in runs:
                board.server.agent_done(start.task_id, start.run, board.now, value="end")
            self.frames_go_out()
            if not runs and not board.pending:
                break
        board.settle()
        for sent in self.sent:
            if sent.left:
                continue
            replies = [
                a
                for a in board.seen
                if isinstance(a, Answer | StreamOpened) and a.exchange == sent.number
            ]
            assert len(replies) == 1, (sent, replies)
            if isinstance(replies[0], StreamOpened):
                self.check_stream(sent.number)
        assert board.server.waiting == 0
        assert board.server.busy == 0

    def check_stream(self, number: int) -> None:
        """Once and in order: event numbers strictly increase, and the stream ended."""
        assert ended(self.board, number), number
        ids = [int(line[4:]) for line in lines_of(self.board, number) if line.startswith("id: ")]
        assert ids == sorted(set(ids)), ids
        assert ids == list(range(ids[0], ids[0] + len(ids))), ids  # no hole


TestInterleavings = Interleavings.TestCase
TestInterleavings.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
