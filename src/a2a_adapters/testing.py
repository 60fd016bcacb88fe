"""A harness for testing agents that await real things (a sleep, an HTTP call, a database).

:class:`a2a_core.testing.Driver` steps agents by hand with no event loop, which is what makes it
deterministic; an agent that awaits the loop cannot be stepped that way. :class:`Harness` runs
the real engine in the test's own event loop instead (asyncio or trio, through anyio), with no
sockets: requests go straight to :meth:`Engine.handle`, so a test needs no port and no server
process, and an agent runs exactly as it would when served.

    async def test_the_agent_answers() -> None:
        async with Harness(agent) as harness:
            task = await harness.send("hi")
            assert task["status"]["state"] == "TASK_STATE_COMPLETED"

Needs the ``asyncio`` extra, as serving does.
"""

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Self

import anyio
from anyio.abc import TaskGroup

from a2a_core import Agent
from a2a_core.card import AgentCard
from a2a_core.transport import HttpRequest, HttpResponse

from ._serve import build_engine
from ._streaming import HttpStream

__all__ = ["Harness"]

#: What the harness's requests say they are: A2A 1.0 JSON.
_HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}
#: Where the harness says the server is (it has no address: nothing listens).
BASE_URL = "http://harness.invalid"


class Harness:
    """A whole server for ``agent`` (an agent, or a dict of skill id to agent) in the current
    event loop, streaming on; ``settings`` are :func:`~a2a_adapters.build_engine`'s. Use it as
    an ``async with`` block: the engine runs inside it, and stops gracefully at its end."""

    def __init__(
        self,
        agent: Agent | Mapping[str, Agent],
        *,
        card: AgentCard | None = None,
        **settings: Any,
    ) -> None:
        settings.setdefault("streaming", True)
        self.engine = build_engine(agent, card=card, **settings)
        self._stack: AsyncExitStack | None = None
        self._sent = 0

    async def __aenter__(self) -> Self:
        stack = AsyncExitStack()
        group: TaskGroup = await stack.enter_async_context(anyio.create_task_group())
        await group.start(self.engine.run)
        stack.push_async_callback(self.engine.aclose)
        self._stack = stack
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(kind, error, traceback)

    # --- requests -------------------------------------------------------------------------------

    async def request(self, request: HttpRequest) -> HttpResponse | HttpStream:
        """Any request, as a transport would hand it to the engine."""
        if self._stack is None:
            raise RuntimeError("use the harness in an `async with` block")
        return await self.engine.handle(request, BASE_URL)

    async def rpc(self, method: str, params: Any = None) -> Any:
        """A JSON-RPC call: its ``result`` (an :class:`AssertionError` showing the error, if it
        failed)."""
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        answer = await self.request(HttpRequest("POST", "/", _HEADERS, json.dumps(body).encode()))
        if isinstance(answer, HttpStream):
            raise AssertionError(f"{method} answered with a stream: use stream()")
        document = json.loads(answer.body)
        if "error" in document:
            raise AssertionError(f"{method} failed: {document['error']}")
        return document["result"]

    def message(self, text: str, **fields: Any) -> dict[str, Any]:
        """A user's message of one text part (``task_id=``, ``context_id=``, ``message_id=``)."""
        self._sent += 1
        message: dict[str, Any] = {
            "messageId": fields.pop("message_id", f"harness-{self._sent}"),
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
        for key, wire in (("task_id", "taskId"), ("context_id", "contextId")):
            if key in fields:
                message[wire] = fields.pop(key)
        if fields:
            raise TypeError(f"unknown message fields: {sorted(fields)}")
        return message

    async def send(self, text: str, *, metadata: Any = None, **fields: Any) -> Any:
        """A blocking ``SendMessage``: the task once it has settled (or the agent's direct
        reply, a message)."""
        params: dict[str, Any] = {"message": self.message(text, **fields)}
        if metadata is not None:
            params["metadata"] = metadata
        result = await self.rpc("SendMessage", params)
        return result.get("task", result.get("message"))

    async def get_task(self, task_id: str) -> Any:
        return await self.rpc("GetTask", {"id": task_id})

    async def cancel(self, task_id: str) -> Any:
        return await self.rpc("CancelTask", {"id": task_id})

    async def stream(self, text: str, **fields: Any) -> list[Any]:
        """A ``SendStreamingMessage``: every event of the stream, in order, once it has ended
        (each a ``StreamResponse``: ``{"task": …}``, ``{"statusUpdate": …}``, …)."""
        return [event async for event in self.events(text, **fields)]

    async def events(self, text: str, **fields: Any) -> AsyncIterator[Any]:
        """The same, each event as it comes."""
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendStreamingMessage",
            "params": {"message": self.message(text, **fields)},
        }
        headers = {**_HEADERS, "accept": "text/event-stream"}
        answer = await self.request(HttpRequest("POST", "/", headers, json.dumps(body).encode()))
        if isinstance(answer, HttpResponse):
            raise AssertionError(f"the stream was refused: {answer.body.decode()}")
        buffered = b""
        async for chunk in answer.body:
            buffered += chunk
            while b"\n\n" in buffered:
                frame, buffered = buffered.split(b"\n\n", 1)
                for line in frame.decode().splitlines():
                    if line.startswith("data:"):
                        yield json.loads(line[5:])["result"]
