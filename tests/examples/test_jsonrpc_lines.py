"""The JSON-RPC-lines example: A2A over a Unix socket, one JSON message per line."""

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from a2a_core import Agent, ArtifactChunk, completed, text_artifact, working
from a2a_core.card import AgentCard
from examples import echo, jsonrpc_lines, multi_turn


async def steps(ctx: Any) -> AsyncIterator[Any]:
    yield working("thinking")
    await asyncio.sleep(0.01)  # a real agent on a real loop
    yield ArtifactChunk(text_artifact(f"about {ctx.text}", artifact_id="a"), last_chunk=True)
    yield completed()


def call(method: str, params: Any, rpc_id: int | str) -> bytes:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    return json.dumps(body).encode() + b"\n"


def message(text: str, message_id: str, **extra: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **extra}


async def talk(
    agent: Agent, card: AgentCard, path: Path, lines: list[bytes], expect: int, **options: Any
) -> list[Any]:
    """Serve on ``path``, send ``lines`` on one connection, read ``expect`` answers."""
    started = asyncio.Event()
    server = asyncio.create_task(jsonrpc_lines.serve(agent, card, str(path), started, **options))
    await asyncio.wait_for(started.wait(), 5)
    try:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 24)
        writer.writelines(lines)
        await writer.drain()
        answers = [json.loads(await asyncio.wait_for(reader.readline(), 5)) for _ in range(expect)]
        writer.close()
        return answers
    finally:
        server.cancel()


def test_a_blocking_send_and_a_read(tmp_path: Path) -> None:
    lines = [call("SendMessage", {"message": message("hi", "m-1")}, 1)]
    (answer,) = asyncio.run(talk(echo.agent, echo.card, tmp_path / "a.sock", lines, 1))
    assert answer["id"] == 1
    assert answer["result"]["task"]["status"]["message"]["parts"][0]["text"] == "Echo: hi"


def test_calls_on_one_connection_are_answered_concurrently_by_id(tmp_path: Path) -> None:
    lines = [
        call("SendStreamingMessage", {"message": message("rain", "m-1")}, "stream"),
        call("GetTask", {"id": "no-such-task"}, 2),
        b"this is not json\n",
    ]
    answers = asyncio.run(talk(steps, echo.card, tmp_path / "b.sock", lines, 6))
    by_id: dict[Any, list[Any]] = {}
    for answer in answers:
        by_id.setdefault(answer["id"], []).append(answer)
    assert by_id[2][0]["error"]["code"] == -32001
    assert by_id[None][0]["error"]["code"] == -32700
    streamed = [next(iter(a["result"])) for a in by_id["stream"]]
    assert streamed == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert (
        by_id["stream"][-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    )


def test_a_conversation_over_lines(tmp_path: Path) -> None:
    async def main() -> tuple[Any, Any]:
        path = tmp_path / "c.sock"
        started = asyncio.Event()
        server = asyncio.create_task(
            jsonrpc_lines.serve(multi_turn.agent, multi_turn.card, str(path), started)
        )
        await asyncio.wait_for(started.wait(), 5)
        reader, writer = await asyncio.open_unix_connection(str(path))
        try:
            writer.write(call("SendMessage", {"message": message("hi", "m-1")}, 1))
            first = json.loads(await asyncio.wait_for(reader.readline(), 5))
            task_id = first["result"]["task"]["id"]
            writer.write(call("SendMessage", {"message": message("Ada", "m-2", taskId=task_id)}, 2))
            second = json.loads(await asyncio.wait_for(reader.readline(), 5))
            return first, second
        finally:
            writer.close()
            server.cancel()

    first, second = asyncio.run(main())
    assert first["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert "Hello, Ada!" in second["result"]["task"]["status"]["message"]["parts"][0]["text"]


def _errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


def test_a_line_longer_than_asyncios_default_limit_is_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = "x" * 100_000  # StreamReader's default limit is 64 KiB
    lines = [call("SendMessage", {"message": message(text, "m-1")}, 1)]
    (answer,) = asyncio.run(talk(echo.agent, echo.card, tmp_path / "d.sock", lines, 1))
    assert answer["result"]["task"]["status"]["message"]["parts"][0]["text"] == f"Echo: {text}"
    assert _errors_logged(caplog) == []


def test_a_line_over_the_body_limit_is_refused_and_the_connection_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    limit = 4096
    fits = call("SendMessage", {"message": message("x" * (limit - 200), "m-1")}, 1)
    assert len(fits) - 1 <= limit
    lines = [
        call("SendMessage", {"message": message("x" * limit, "m-2")}, 2),  # just over
        call("SendMessage", {"message": message("x" * 300 * limit, "m-3")}, 3),  # far over
        fits,
        call("GetTask", {"id": "no-such-task"}, 4),
    ]
    answers = asyncio.run(
        talk(echo.agent, echo.card, tmp_path / "e.sock", lines, 4, max_body_bytes=limit)
    )
    refused, refused_too, *rest = answers
    for error in (refused, refused_too):
        assert error["id"] is None  # the line was never parsed
        assert error["error"]["code"] == -32600
        assert f"the limit is {limit} bytes" in error["error"]["message"]
    by_id = {answer["id"]: answer for answer in rest}
    assert by_id[1]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert by_id[4]["error"]["code"] == -32001
    assert _errors_logged(caplog) == []
