"""A2A as an ASGI application over an async store, on asyncio: the machine asks, this file does.

    python -m examples.async_store [PORT]    # the echo agent on 127.0.0.1:PORT (default 9997)

The ``Server`` has no store of its own: store work comes out as actions that this file awaits on
any ``AsyncStore`` and reports back. ``docs/core.md`` walks through it. Kept short: no push, and
a client that leaves is forgotten when its answer is done; ``a2a_adapters`` is the full server.
"""

import asyncio
import functools
import inspect
import logging
import socket
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import UTC, datetime
from typing import Any

import uvicorn

from a2a_adapters.stores import MemoryStore
from a2a_core import Agent, Core, CoreConfig, transport
from a2a_core.card import AgentCard
from a2a_core.store import AsyncStore
from a2a_core.transport import Answer, Frames, HttpRequest, Server, StreamOpened
from examples import echo

log = logging.getLogger(__name__)
now = functools.partial(datetime.now, UTC)
Message = dict[str, Any]  # an ASGI event
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Transport:
    """The A2A server as an ASGI application, over ``store``."""

    def __init__(self, agent: Agent, card: AgentCard, store: AsyncStore) -> None:
        # No store of its own: the machine asks for every read and commit. Ids are random:
        # a task's id is all a caller needs to ask for it.
        config = CoreConfig(card=card, streaming=True)
        self.server = Server(Core(config), new_id=lambda: str(uuid.uuid4()))
        self.agent, self.store = agent, store
        self.jobs: set[asyncio.Task[None]] = set()
        self.runs: dict[tuple[str, int], asyncio.Task[None]] = {}
        self.taken: dict[tuple[str, int], asyncio.Future[bool]] = {}
        self.outboxes: dict[int, asyncio.Queue[Answer | StreamOpened | Frames]] = {}
        self.rearm = asyncio.Event()

    def call(self, method: Callable[..., object], *args: Any, **kwargs: Any) -> None:
        """Tell the machine something (with the time), then do what it asks."""
        method(*args, now(), **kwargs)
        self.perform()

    def perform(self) -> None:
        for action in self.server.take_actions():
            match action:
                case transport.Read() | transport.Commit():
                    self.spawn(self.store_op(action))
                case transport.StartRun(task_id=task_id, run=run):
                    self.runs[task_id, run] = self.spawn(self.run_agent(action))
                case transport.StopRun(task_id=task_id, run=run):
                    if (stopping := self.runs.pop((task_id, run), None)) is not None:
                        stopping.cancel()
                case transport.OutputTaken(task_id=task_id, run=run, counts=counts):
                    if (taken := self.taken.pop((task_id, run), None)) is not None:
                        taken.set_result(counts)
                case Answer(exchange=n) | StreamOpened(exchange=n) | Frames(exchange=n):
                    if n in self.outboxes:
                        self.outboxes[n].put_nowait(action)
                case transport.Problem(message=message):
                    log.error("%s", message)
                case _:
                    pass  # Notify: the card offers no push
        self.rearm.set()  # the next deadline may have moved

    def spawn(self, job: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(job)
        self.jobs.add(task)
        task.add_done_callback(self.jobs.discard)
        return task

    async def store_op(self, action: transport.Read | transport.Commit) -> None:
        """Do a read or a commit, then tell the machine how it went (it answers a failure)."""
        done: Callable[..., None]
        result: object
        try:
            if isinstance(action, transport.Read):
                done, result = self.server.read_done, await self.store.read(action.reads)
            else:
                done, result = self.server.commit_done, await self.store.commit(action.writes)
        except Exception:
            log.exception("a store operation failed")
            reading = isinstance(action, transport.Read)
            failed = self.server.read_failed if reading else self.server.commit_failed
            return self.call(failed, action.op)
        self.call(done, action.op, result)

    async def run_agent(self, start: transport.StartRun) -> None:
        key = (start.task_id, start.run)
        try:
            result: Any = self.agent(start.context)
            if not inspect.isasyncgen(result):
                return self.call(self.server.agent_done, *key, value=await result)
            try:
                async for value in result:
                    taken = self.taken[key] = asyncio.get_running_loop().create_future()
                    self.call(self.server.agent_output, *key, value)
                    if not await taken:
                        return None  # the machine dropped it: nothing more from this run counts
            finally:
                await result.aclose()
            self.call(self.server.agent_done, *key)
        except Exception as error:
            self.call(self.server.agent_done, *key, error=error)
        finally:
            self.runs.pop(key, None)

    async def timer(self) -> None:
        """Tick at start, then whenever the machine's next deadline comes."""
        self.call(self.server.tick)
        while True:
            due = self.server.next_deadline()
            self.rearm.clear()
            try:
                delay = None if due is None else max((due - now()).total_seconds(), 0)
                await asyncio.wait_for(self.rearm.wait(), delay)
            except TimeoutError:
                self.call(self.server.tick)

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await self.lifespan(receive, send)
        body = b""
        while (message := await receive())["type"] == "http.request":
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        query = scope["query_string"].decode("latin-1")
        request = HttpRequest(scope["method"], scope["path"], headers, body, query)
        base_url = f"{scope['scheme']}://{headers.get('host', 'localhost')}{scope['root_path']}"
        number = self.server.receive(request, now(), base_url=base_url)
        outbox = self.outboxes[number] = asyncio.Queue()
        self.perform()
        try:
            reply = await outbox.get()
            if isinstance(reply, Answer):
                await send(head(reply.response.status, reply.response.headers))
                return await send({"type": "http.response.body", "body": reply.response.body})
            assert isinstance(reply, StreamOpened)
            await send(head(reply.status, reply.headers))
            batch: Answer | StreamOpened | Frames = reply
            while True:
                assert not isinstance(batch, Answer)  # after the head, only frames follow
                body, more = b"".join(batch.frames), not batch.ended
                await send({"type": "http.response.body", "body": body, "more_body": more})
                if not more:
                    return None
                batch = await outbox.get()
        finally:
            self.outboxes.pop(number, None)
            self.server.client_left(number)  # a client that left holds nothing
            self.perform()

    async def lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # startup
        timer = asyncio.create_task(self.timer())
        await send({"type": "lifespan.startup.complete"})
        await receive()  # shutdown
        for job in [timer, *self.runs.values()]:
            job.cancel()
        await self.store.aclose()
        await send({"type": "lifespan.shutdown.complete"})


def head(status: int, headers: Sequence[tuple[str, str]]) -> Message:
    encoded = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
    return {"type": "http.response.start", "status": status, "headers": encoded}


async def serve(
    agent: Agent, card: AgentCard, listener: socket.socket, store: AsyncStore | None = None
) -> None:
    """Serve ``agent`` on the bound ``listener`` with uvicorn, until cancelled."""
    app = Transport(agent, card, store if store is not None else MemoryStore())
    config = uvicorn.Config(app, lifespan="on", log_level="warning")
    await uvicorn.Server(config).serve(sockets=[listener])


if __name__ == "__main__":
    port = int(sys.argv[1]) if sys.argv[1:] else 9997
    print(f"A2A (ASGI over an async store) on http://127.0.0.1:{port}/", flush=True)
    asyncio.run(serve(echo.agent, echo.card, socket.create_server(("127.0.0.1", port))))
