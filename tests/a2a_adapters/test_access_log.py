"""The access log over real HTTP, on both adapters: one line per request, with the principal
and the task the core said the request concerned; streams logged when they end; probes at
DEBUG; and, from the command line, ``--log-format json`` with no library chatter."""

import json
import logging
import signal
import subprocess
import time
from typing import Any

import httpx
import pytest

from a2a_adapters import BearerTokens
from a2a_adapters._logs import JsonFormatter
from examples import echo
from tests.a2a_adapters.processes import ROOT, ServerProcess, command
from tests.a2a_adapters.support import (
    A2A_HEADERS,
    endpoint,
    new_id,
    rpc,
    send_params,
    wait_until,
)
from tests.servers import running_server

ACCESS = "a2a_adapters.access"
ALICE = {**A2A_HEADERS, "Authorization": "Bearer secret"}


def _lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == ACCESS]


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields: dict[str, Any] = record.access  # type: ignore[attr-defined]
    return fields


def _logged(caplog: pytest.LogCaptureFixture, count: int) -> list[logging.LogRecord]:
    """The first ``count`` access lines, once they are there (a line is written after its
    response has gone, so it may come a moment after the client has its answer)."""
    assert wait_until(lambda: len(_lines(caplog)) >= count), [
        r.getMessage() for r in caplog.records
    ]
    return _lines(caplog)[:count]


@pytest.mark.usefixtures("adapter")
def test_a_line_per_request_with_principal_and_task(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=ACCESS)
    auth = [BearerTokens({"secret": "alice"})]
    with running_server(echo.agent, card=echo.card, auth=auth) as url:
        sent = rpc(url, "SendMessage", send_params("hi"), headers=ALICE).json()["result"]
        task_id = sent["task"]["id"]
        _logged(caplog, 1)
        rpc(url, "GetTask", {"id": task_id}, headers=ALICE)
        _logged(caplog, 2)
        rpc(url, "GetTask", {"id": task_id})  # no credentials
        _logged(caplog, 3)
        httpx.get(url + "/healthz")
        _logged(caplog, 4)
        httpx.get(url + "/no/such/thing", headers=ALICE)
        records = _logged(caplog, 5)
    send, get, refused, probe, missing = (_fields(record) for record in records)
    assert (send["method"], send["path"], send["status"]) == ("POST", "/", 200)
    assert (send["principal"], send["task_id"]) == ("alice", task_id)
    assert isinstance(send["duration_ms"], float)
    assert send["duration_ms"] >= 0
    assert send["client"].startswith("127.0.0.1:")
    assert (get["principal"], get["task_id"]) == ("alice", task_id)
    assert (refused["status"], refused["principal"]) == (401, "-")
    assert (probe["path"], probe["status"]) == ("/healthz", 200)
    assert (missing["status"], missing["principal"], missing["task_id"]) == (404, "alice", "-")
    levels = [record.levelno for record in records]
    assert levels == [logging.INFO] * 3 + [logging.DEBUG, logging.INFO]
    assert records[0].getMessage() == (
        f"POST / 200 {send['duration_ms']:.1f}ms client={send['client']} principal=alice "
        f"task={task_id}"
    )


@pytest.mark.usefixtures("adapter")
def test_a_stream_is_logged_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": send_params("hi"),
    }
    with running_server(echo.agent, card=echo.card, streaming=True) as url:
        with httpx.stream("POST", endpoint(url), json=body, headers=A2A_HEADERS) as stream:
            text = stream.read().decode()
        (record,) = _logged(caplog, 1)
    first = json.loads(text.split("data: ", 1)[1].split("\n", 1)[0])
    fields = _fields(record)
    assert fields["status"] == 200
    assert fields["task_id"] == first["result"]["task"]["id"]


@pytest.mark.usefixtures("adapter")
def test_probes_are_not_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS)
    with running_server(echo.agent, card=echo.card) as url:
        httpx.get(url + "/readyz")
        httpx.get(url + "/.well-known/agent-card.json")
        _logged(caplog, 1)
        time.sleep(0.1)  # a line for the probe, were there one, would be there by now
    assert [_fields(r)["path"] for r in _lines(caplog)] == ["/.well-known/agent-card.json"]


def test_the_json_format_has_the_fields_as_keys() -> None:
    record = logging.LogRecord(ACCESS, logging.INFO, __file__, 1, "GET / 200", None, None)
    record.access = {"method": "GET", "status": 200, "task_id": "-"}
    entry = json.loads(JsonFormatter().format(record))
    assert (entry["logger"], entry["level"]) == (ACCESS, "info")
    assert entry["message"] == "GET / 200"
    assert (entry["method"], entry["status"], entry["task_id"]) == ("GET", 200, "-")
    assert entry["time"].endswith("+00:00")


@pytest.mark.parametrize("loop", ["asyncio", "trio"])
def test_the_command_line_logs_json_without_library_chatter(loop: str) -> None:
    args = ["examples.echo:agent", "--store", "memory", "--port", "0", "--loop", loop]
    process = subprocess.Popen(
        command(*args, "--log-format", "json"),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = ServerProcess(process)
    try:
        url = server.wait_for_url()
        message_id = new_id()
        rpc(url, "SendMessage", send_params("hi", message_id=message_id))
        assert wait_until(lambda: ACCESS in server.stderr)
    finally:
        server.process.send_signal(signal.SIGTERM)
        server.stop()
    entries = [json.loads(line) for line in server.log]  # every line is JSON
    names = {entry["logger"] for entry in entries}
    assert not {name for name in names if name.split(".")[0] in ("uvicorn", "hypercorn")}, names
    (access,) = [entry for entry in entries if entry["logger"] == ACCESS]
    assert (access["method"], access["path"], access["status"]) == ("POST", "/", 200)
    assert access["principal"] == "-"
    assert access["task_id"] != "-"
