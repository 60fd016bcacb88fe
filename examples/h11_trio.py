"""A2A over raw HTTP/1.1: the sans-IO core, h11 and trio sockets, nothing else.

    python -m examples.h11_trio [PORT]     # the echo agent on 127.0.0.1:PORT (default 9998)

Three sans-IO pieces meet here: h11 turns bytes into HTTP events and back,
``a2a_core.transport.Server`` turns requests into answers and actions, and this file does the I/O
for both. Everything A2A (routing, JSON-RPC and HTTP+JSON, validation, task states, streams,
idempotency) is the core's; what is left is the loop every transport has:

1. read bytes, let h11 say when a request is complete, hand it to ``server.receive``;
2. perform the server's actions: run agents in the nursery (feeding what they yield back),
   stop them, deliver answers and stream frames to the connections waiting for them (the
   server reads and writes its tasks in memory itself);
3. call ``server.tick`` at start and when ``server.next_deadline()`` comes (here: when a
   streamed send's agent has not spoken within the direct-reply window, so that the client
   gets its task anyway).

Deliberately small: one request at a time per connection, no push delivery (the card does not
offer it). ``a2a_adapters`` is the full server.
"""

import functools
import sys
import uuid
from typing import Any

import h11
import trio

from a2a_core import Agent, Core, CoreConfig
from a2a_core.card import AgentCard
from a2a_core.store import MemoryTasks
from a2a_core.transport import (
    Action,
    Answer,
    Frames,
    HttpRequest,
    HttpResponse,
    Server,
    StartRun,
    StopRun,
    StreamOpened,
)
from examples import echo
from examples._driving import drive, now

MAX_BODY = 1024 * 1024


class H11Server:
    """The A2A server on one listening socket."""

    def __init__(self, agent: Agent, card: AgentCard, nursery: trio.Nursery) -> None:
        # Tasks in memory, which the server reads and writes itself.
        config = CoreConfig(card=card, streaming=True)
        self.server = Server(Core(config), store=MemoryTasks(), new_id=lambda: str(uuid.uuid4()))
        self.agent = agent
        self.nursery = nursery
        self.runs: dict[str, tuple[int, trio.CancelScope]] = {}
        # Where answers and stream frames go: the connection waiting for them.
        self.outboxes: dict[int, trio.MemorySendChannel[Answer | StreamOpened | Frames]] = {}
        # Set when the server's next deadline may have moved earlier.
        self.rearm = trio.Event()

    async def timer(self) -> None:
        """Tick the server when it starts, and whenever its next deadline comes."""
        self.server.tick(now())
        self.perform()
        while True:
            due = self.server.next_deadline()
            with trio.move_on_after(
                max((due - now()).total_seconds(), 0) if due is not None else float("inf")
            ):
                await self.rearm.wait()
                self.rearm = trio.Event()
                continue
            self.server.tick(now())
            self.perform()

    # --- the server's actions -----------------------------------------------------------------

    def perform(self) -> None:
        self.perform_these(self.server.take_actions())

    def perform_these(self, actions: list[Action]) -> None:
        for action in actions:
            match action:
                case StartRun():
                    scope = trio.CancelScope()
                    self.runs[action.task_id] = (action.run, scope)
                    self.nursery.start_soon(self.run_agent, action, scope)
                case StopRun(task_id=task_id, run=run):
                    if self.runs.get(task_id, (None,))[0] == run:
                        self.runs.pop(task_id)[1].cancel()
                case (
                    Answer(exchange=number)
                    | StreamOpened(exchange=number)
                    | Frames(exchange=number)
                ):
                    outbox = self.outboxes.get(number)
                    if outbox is not None:
                        outbox.send_nowait(action)
                case _:
                    pass  # pushes (the card offers none) and problems (none to log here)

    async def run_agent(self, start: StartRun, scope: trio.CancelScope) -> None:
        with scope:
            await drive(self.server, start, self.agent, self.perform_these)
        if self.runs.get(start.task_id, (None,))[0] == start.run:
            del self.runs[start.task_id]

    # --- connections --------------------------------------------------------------------------

    async def handle(self, stream: trio.SocketStream) -> None:
        connection = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_BODY)
        try:
            while True:
                request = await self.read_request(stream, connection)
                if request is None:
                    return
                await self.answer(stream, connection, request)
                if connection.our_state is not h11.DONE:
                    return
                connection.start_next_cycle()
        except (h11.ProtocolError, trio.BrokenResourceError, trio.ClosedResourceError):
            return
        finally:
            await stream.aclose()

    async def read_request(
        self, stream: trio.SocketStream, connection: h11.Connection
    ) -> HttpRequest | None:
        head: h11.Request | None = None
        body = bytearray()
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(await stream.receive_some(65536))
            elif isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:
                    raise h11.ProtocolError("body too large")
            elif isinstance(event, h11.EndOfMessage) and head is not None:
                target = head.target.decode("latin-1")
                path, _, query = target.partition("?")
                headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in head.headers}
                return HttpRequest(head.method.decode(), path, headers, bytes(body), query)
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def answer(
        self, stream: trio.SocketStream, connection: h11.Connection, request: HttpRequest
    ) -> None:
        host = request.headers.get("host", "127.0.0.1")
        number = self.server.receive(request, now(), base_url=f"http://{host}")
        self.rearm.set()
        outbox, inbox = trio.open_memory_channel[Answer | StreamOpened | Frames](1000)
        self.outboxes[number] = outbox
        self.perform()
        try:
            match await inbox.receive():
                case Answer(response=response):
                    await send_response(stream, connection, response, request.method)
                case StreamOpened(status=status, headers=headers, frames=frames, ended=ended):
                    head = h11.Response(status_code=status, headers=list(headers))
                    await write(stream, connection, head)
                    for frame in frames:
                        await write(stream, connection, h11.Data(data=frame))
                    while not ended:
                        more = await inbox.receive()
                        assert isinstance(more, Frames)
                        for frame in more.frames:
                            await write(stream, connection, h11.Data(data=frame))
                        ended = more.ended
                    await write(stream, connection, h11.EndOfMessage())
        finally:
            self.outboxes.pop(number, None)
            self.server.client_left(number)  # a client that left holds nothing


async def write(stream: trio.SocketStream, connection: h11.Connection, event: Any) -> None:
    data = connection.send(event)
    if data:
        await stream.send_all(data)


async def send_response(
    stream: trio.SocketStream, connection: h11.Connection, response: HttpResponse, method: str
) -> None:
    headers = list(response.headers)
    if not any(name.lower() == "content-length" for name, _ in headers):
        headers.append(("content-length", str(len(response.body))))
    await write(stream, connection, h11.Response(status_code=response.status, headers=headers))
    if method != "HEAD":  # a HEAD answer declares GET's length and sends no body
        await write(stream, connection, h11.Data(data=response.body))
    await write(stream, connection, h11.EndOfMessage())


async def serve(
    agent: Agent,
    card: AgentCard,
    port: int,
    *,
    task_status: Any = trio.TASK_STATUS_IGNORED,
    host: str = "127.0.0.1",
) -> None:
    """Serve ``agent`` on ``host:port`` (port 0: any free port, reported to ``task_status``)."""
    async with trio.open_nursery() as nursery:
        server = H11Server(agent, card, nursery)
        nursery.start_soon(server.timer)
        serving = functools.partial(trio.serve_tcp, server.handle, port, host=host)
        listeners = await nursery.start(serving)
        task_status.started(listeners[0].socket.getsockname()[1])


def main(argv: list[str] = sys.argv[1:]) -> None:
    port = int(argv[0]) if argv else 9998
    print(f"A2A (h11 on trio) on http://127.0.0.1:{port}/", flush=True)
    trio.run(serve, echo.agent, echo.card, port)


if __name__ == "__main__":
    main()
