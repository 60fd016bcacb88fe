"""Tasks survive their server: real ``serve`` processes on a SQLite file, killed with SIGKILL.

Black-box: each test starts ``python -m a2a_adapters serve`` on a file of its own
(``tests/a2a_adapters/processes.py``), talks to it over HTTP on 127.0.0.1, kills it the way a
crash does (no handler runs, nothing is flushed or closed), starts another process on the same
file and checks what that one answers. The agent (``tests/a2a_adapters/crash_agent.py``) logs
every run it starts, so a test can prove that a restart ran nothing again. The start-up
refusals at the end are the CLI's: one line on stderr, no traceback, and the file untouched.

``tests/a2a_adapters/test_crash.py`` does the same at random moments under load.
"""

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_adapters.stores import SCHEMA_VERSION, SqliteStore
from tests.a2a_adapters.processes import CRASH_AGENT, run_to_exit, serving
from tests.a2a_adapters.sse import Event, SseParser, ids_of, open_stream, results, states_of
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    COMPLETED,
    FAILED,
    HTTP_TIMEOUT,
    INPUT_REQUIRED,
    WORKING,
    error_of,
    get_task,
    list_tasks,
    result_of,
    rpc,
    send_params,
    state_of,
    status_text,
    violated_fields,
    wait_for_state,
    wait_until,
)

#: What a task whose run a restart cut short says (``a2a_core.exception_status``).
RESTARTED = "restarted before the agent finished"
#: The longest a test waits for a restarted server to settle what the last one left.
RECOVERY_TIMEOUT = 10.0


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:{tmp_path / 'tasks.db'}"


@pytest.fixture
def agent_log(tmp_path: Path) -> Path:
    return tmp_path / "runs.log"


@pytest.fixture(params=["asyncio", "trio"])
def adapter_loop(request: pytest.FixtureRequest) -> str:
    """The ``--loop`` of the test's servers."""
    loop: str = request.param
    return loop


def runs(agent_log: Path) -> list[tuple[str, str]]:
    """Every run the agent started, in every process so far: (task id, message id)."""
    if not agent_log.exists():
        return []
    found = []
    for line in agent_log.read_text().splitlines():
        task_id, message_id = line.split()
        found.append((task_id, message_id))
    return found


def send(url: str, text: str, **options: Any) -> dict[str, Any]:
    task: dict[str, Any] = result_of(rpc(url, "SendMessage", send_params(text, **options)))["task"]
    return task


def resend(url: str, params: Mapping[str, Any]) -> httpx.Response:
    return rpc(url, "SendMessage", params)


def follow_up(task: Mapping[str, Any], text: str = "go on") -> dict[str, Any]:
    return send_params(text, task_id=task["id"], context_id=task["contextId"])


def running(url: str, task_id: str, agent_log: Path) -> None:
    """Wait until the task's agent has started and reported progress (it is mid-run)."""
    wait_for_state(url, task_id, {WORKING})
    assert wait_until(lambda: any(t == task_id for t, _ in runs(agent_log)))


# --- what a restart keeps -----------------------------------------------------------------------


@pytest.mark.parametrize(("first", "then"), [("asyncio", "trio"), ("trio", "asyncio")])
def test_completed_tasks_and_their_history_survive_a_kill(
    store: str, agent_log: Path, first: str, then: str
) -> None:
    with serving(store, loop=first, agent_log=agent_log) as server:
        done = send(server.url, "work 3 1")
        asked = send(server.url, "ask 2 1")
        assert state_of(asked) == INPUT_REQUIRED
        answered = result_of(rpc(server.url, "SendMessage", follow_up(asked)))["task"]
        before = [get_task(server.url, task["id"]) for task in (done, answered)]
        listed = list_tasks(server.url, includeArtifacts=True)
        server.kill()
    # The other loop's server on the same file: the stored form is the adapters' common one.
    with serving(store, loop=then, agent_log=agent_log) as server:
        after = [get_task(server.url, task["id"]) for task in (done, answered)]
        listed_after = list_tasks(server.url, includeArtifacts=True)
    assert [state_of(task) for task in before] == [COMPLETED, COMPLETED]
    assert after == before == [done, answered]
    assert [m["role"] for m in after[1]["history"]].count("ROLE_USER") == 2
    assert listed_after == listed
    assert listed["totalSize"] == 2


def test_an_idempotent_resend_after_a_kill_returns_the_task_and_runs_nothing(
    store: str, agent_log: Path
) -> None:
    blocking = send_params("work 2 1")
    asking = send_params("ask 1 1")
    with serving(store, agent_log=agent_log) as server:
        done = result_of(rpc(server.url, "SendMessage", blocking))["task"]
        asked = result_of(rpc(server.url, "SendMessage", asking))["task"]
        answer = follow_up(asked)
        answered = result_of(rpc(server.url, "SendMessage", answer))["task"]
        server.kill()
    ran = runs(agent_log)
    assert len(ran) == 3
    with serving(store, agent_log=agent_log) as server:
        again = [result_of(resend(server.url, params))["task"] for params in (blocking, answer)]
        # The first message again, with another text: its id is taken, across the restart too.
        changed = {"message": {**blocking["message"], "parts": [{"text": "work 9 9"}]}}
        refused = error_of(resend(server.url, changed), -32602)
        asking_again = result_of(resend(server.url, asking))["task"]
    assert [task["id"] for task in again] == [done["id"], answered["id"]]
    assert again == [done, answered]
    assert asking_again["id"] == asked["id"]
    assert "was already sent with a different message" in refused["message"]
    assert violated_fields(refused) == ["params.message.messageId"]
    assert runs(agent_log) == ran  # nothing ran again


def test_a_run_cut_by_a_kill_fails_and_a_question_still_waits(
    store: str, agent_log: Path, adapter_loop: str
) -> None:
    long_run, question = send_params("work 500 20", return_immediately=True), send_params("ask")
    with serving(store, loop=adapter_loop, agent_log=agent_log) as server:
        cut = result_of(rpc(server.url, "SendMessage", long_run))["task"]
        asked = result_of(rpc(server.url, "SendMessage", question))["task"]
        running(server.url, cut["id"], agent_log)
        server.kill()
    answer = follow_up(asked)
    with serving(store, loop=adapter_loop, agent_log=agent_log) as server:
        failed = wait_for_state(server.url, cut["id"], {FAILED}, timeout=RECOVERY_TIMEOUT)
        waiting = get_task(server.url, asked["id"])
        nothing_live = list_tasks(server.url, status=WORKING)["totalSize"]
        # It really waits: its answer runs the agent, which finishes it.
        answered = result_of(rpc(server.url, "SendMessage", answer))["task"]
    assert RESTARTED in status_text(failed)
    assert state_of(waiting) == INPUT_REQUIRED
    assert waiting["history"] == asked["history"]
    assert nothing_live == 0
    assert state_of(answered) == COMPLETED
    # The cut run was not run again by the restart; the answer ran once.
    assert sorted(runs(agent_log)) == sorted(
        [
            (cut["id"], long_run["message"]["messageId"]),
            (asked["id"], question["message"]["messageId"]),
            (asked["id"], answer["message"]["messageId"]),
        ]
    )


def test_told_to_rerun_a_restart_runs_the_cut_run_again_to_its_end(
    store: str, agent_log: Path
) -> None:
    long_run = send_params("work 300 20", return_immediately=True)
    with serving(store, agent_log=agent_log) as server:
        cut = result_of(rpc(server.url, "SendMessage", long_run))["task"]
        running(server.url, cut["id"], agent_log)
        server.kill()
    with serving(store, agent_log=agent_log, args=["--on-restart", "rerun"]) as server:
        done = wait_for_state(server.url, cut["id"], {COMPLETED}, timeout=RECOVERY_TIMEOUT)
    assert done["history"][0] == cut["history"][0]
    # The message ran twice: once cut by the kill, once to the end.
    message_id = long_run["message"]["messageId"]
    assert runs(agent_log).count((cut["id"], message_id)) == 2


# --- streams resumed across a restart -----------------------------------------------------------


def rest_subscribe(url: str, task_id: str, last_event_id: int) -> tuple[int, list[Event]]:
    """``GET /tasks/{id}:subscribe`` with ``Last-Event-ID``: the status and the events."""
    headers = {**A2A_HEADERS, "Accept": "text/event-stream", "Last-Event-ID": str(last_event_id)}
    response = httpx.get(f"{url}/tasks/{task_id}:subscribe", headers=headers, timeout=HTTP_TIMEOUT)
    parser = SseParser()
    found = [parser.feed(line) for line in [*response.text.splitlines(), ""]]
    return response.status_code, [item for item in found if isinstance(item, Event)]


def payloads(events: list[Event], binding: str) -> list[dict[str, Any]]:
    """The ``StreamResponse`` of each event (JSON-RPC wraps it in a response; REST does not)."""
    if binding == "jsonrpc":
        return results(events)
    return [event.json() for event in events]


def resume(url: str, task_id: str, last_event_id: int, binding: str) -> list[Event]:
    """The events after ``last_event_id``, read to the end of the stream."""
    if binding == "rest":
        status, events = rest_subscribe(url, task_id, last_event_id)
        assert status == 200
        return events
    params = {"id": task_id}
    with open_stream(url, "SubscribeToTask", params, last_event_id=last_event_id) as stream:
        events = stream.events()
        assert stream.ended
        return events


def whole_log(url: str, task_id: str) -> list[Event]:
    with open_stream(url, "SubscribeToTask", {"id": task_id}, last_event_id=0) as stream:
        return stream.events()


def seen_in(stream: list[Event]) -> list[dict[str, Any]]:
    return results(stream[1:])


def kept(log: list[Event], stream: list[Event]) -> list[dict[str, Any]]:
    """The logged events with the numbers of ``stream``'s events after its snapshot."""
    by_id = dict(zip(ids_of(log), results(log), strict=True))
    return [by_id[n] for n in ids_of(stream[1:])]


@pytest.mark.parametrize(("binding", "loop"), [("rest", "asyncio"), ("jsonrpc", "trio")])
def test_a_stream_resumes_after_a_kill_with_exactly_the_events_after_its_last_id(
    store: str, agent_log: Path, binding: str, loop: str
) -> None:
    with serving(store, loop=loop, agent_log=agent_log) as server:
        # A finished stream, read whole before the kill.
        with open_stream(server.url, "SendStreamingMessage", send_params("stream 6 1")) as done:
            finished = done.events()
        # A stream the kill cuts: the agent is still streaming when the server dies.
        params = send_params("stream 400 20")
        with open_stream(server.url, "SendStreamingMessage", params) as live:
            cut = live.events(4)
            server.kill()
    finished_id = finished[0].json()["result"]["task"]["id"]
    cut_id = cut[0].json()["result"]["task"]["id"]
    with serving(store, loop=loop, agent_log=agent_log) as server:
        wait_for_state(server.url, cut_id, {FAILED}, timeout=RECOVERY_TIMEOUT)
        tail = resume(server.url, finished_id, 3, binding)
        rest_of_cut = resume(server.url, cut_id, ids_of(cut)[-1], binding)
        log_of_finished = whole_log(server.url, finished_id)
        log_of_cut = whole_log(server.url, cut_id)

    # What the first process sent after event 3 of the finished stream, and nothing else.
    assert ids_of(log_of_finished) == list(range(1, len(log_of_finished) + 1))
    assert ids_of(finished)[-1] == len(log_of_finished)
    assert ids_of(tail) == list(range(4, len(log_of_finished) + 1))
    assert payloads(tail, binding) == results(log_of_finished[3:])
    # Every event a client saw, after the snapshot the stream starts with, is the one kept.
    assert seen_in(finished) == kept(log_of_finished, finished)
    assert seen_in(cut) == kept(log_of_cut, cut)
    # The cut stream: every event after the last one its client got, ending with the failure.
    last = ids_of(cut)[-1]
    assert ids_of(rest_of_cut) == list(range(last + 1, len(log_of_cut) + 1))
    assert payloads(rest_of_cut, binding) == results(log_of_cut[last:])
    assert states_of(log_of_cut)[-1] == FAILED
    assert RESTARTED in json.dumps(results(log_of_cut)[-1])


# --- start-up refusals --------------------------------------------------------------------------


def one_line(finished: Any, status: int) -> str:
    """The one line of a start-up refusal, checked: that status, no traceback, nothing else."""
    assert "Traceback" not in finished.stderr, finished.stderr
    assert finished.returncode == status, finished.stderr
    lines = finished.stderr.splitlines()
    assert len(lines) == 1, finished.stderr
    assert lines[0].startswith("a2a-sansio: error: "), lines[0]
    line: str = lines[0]
    return line


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file of ``directory`` and its bytes."""
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def test_a_bad_store_url_is_refused_with_status_2(tmp_path: Path) -> None:
    finished = run_to_exit([CRASH_AGENT, "--port", "0", "--store", f"redis:{tmp_path}/x"])
    line = one_line(finished, 2)
    assert "expected memory, sqlite:PATH" in line
    assert list(tmp_path.iterdir()) == []


def test_a_store_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    where = tmp_path / "no" / "such" / "tasks.db"
    finished = run_to_exit([CRASH_AGENT, "--port", "0", "--store", f"sqlite:{where}"])
    line = one_line(finished, 1)
    assert f"no directory {where.parent}" in line
    assert list(tmp_path.iterdir()) == []  # nothing was created on the way


def newer_schema(path: Path) -> None:
    SqliteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    db.close()


def garbage(path: Path) -> None:
    path.write_bytes(b"\x00not a database, whatever it is\xff" * 512)


def other_database(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY)")
    db.close()


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (garbage, "file is not a database"),
        (newer_schema, f"has schema version 99, newer than this release's {SCHEMA_VERSION}"),
        (other_database, "is an SQLite file, but not a task store"),
    ],
)
def test_a_file_that_is_not_ours_to_use_is_refused_and_left_untouched(
    tmp_path: Path, make: Any, says: str
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    path = files / "tasks.db"
    make(path)
    before = snapshot(files)
    finished = run_to_exit([CRASH_AGENT, "--port", "0", "--store", f"sqlite:{path}"])
    line = one_line(finished, 1)
    assert str(path) in line
    assert says in line
    after = snapshot(files)
    # The advisory lock beside the file may be made (it is empty, and never the data).
    assert after.pop("tasks.db.lock", b"") == before.pop("tasks.db.lock", b"") == b""
    assert after == before


def test_a_file_in_use_by_a_running_server_is_refused(
    tmp_path: Path, store: str, agent_log: Path
) -> None:
    with serving(store, agent_log=agent_log) as server:
        task = send(server.url, "work 1 1")
        before = snapshot(tmp_path)
        finished = run_to_exit([CRASH_AGENT, "--port", "0", "--store", store])
        after = snapshot(tmp_path)
        still = get_task(server.url, task["id"])  # the running server goes on undisturbed
        server.kill()
    line = one_line(finished, 1)
    assert "in use by another server" in line
    assert after == before
    assert still == task
    # Once the first is gone, the file is free again, with its task.
    with serving(store, agent_log=agent_log) as server:
        assert get_task(server.url, task["id"]) == task
