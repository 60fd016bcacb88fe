"""A2A without HTTP: JSON-RPC, one message per line, over a Unix socket, on asyncio.

    python -m examples.jsonrpc_lines /tmp/a2a.sock       # the echo agent
    echo '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":
      {"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}' | nc -U /tmp/a2a.sock

The shape to follow to carry A2A over anything (a pipe, a queue, a WebSocket): the core speaks
HTTP's terms, so each line is handed to ``a2a_core.transport.Server`` as a POST to the JSON-RPC
endpoint, and its answers go back as lines: a response, or for a stream one line per event (the
server is told not to frame them as SSE). Requests on one connection are answered concurrently, each
line carrying its JSON-RPC ``id``, as JSON-RPC over any transport allows. A line may be as long as
the core's body limit (``max_body_bytes``, 8 MiB unless told); a longer one is skipped unread and
answered with the core's own "too large" error, as an HTTP server refuses a body.
"""

import asyncio
import os
import sys
import tempfile
import uuid

from a2a_core import Agent, Core, CoreConfig
from a2a_core.card import AgentCard
from a2a_core.store import MemoryTasks
from a2a_core.transport import (
    Action,
    Answer,
    Frames,
    HttpRequest,
    Server,
    StartRun,
    StopRun,
    StreamOpened,
)
from examples import echo
from examples._driving import drive, now

#: How every line is presented to the core: a v1.0 JSON-RPC request.
HEADERS = {"content-type": "application/json", "a2a-version": "1.0"}


class LinesServer:
    def __init__(self, agent: Agent, card: AgentCard, *, max_body_bytes: int = 8 << 20) -> None:
        config = CoreConfig(card=card, streaming=True, max_body_bytes=max_body_bytes)
        # Tasks in memory, which the server reads and writes itself.
        self.server = Server(
            Core(config), store=MemoryTasks(), sse=False, new_id=lambda: str(uuid.uuid4())
        )
        self.agent = agent
        self.runs: dict[str, tuple[int, asyncio.Task[None]]] = {}
        self.outboxes: dict[int, asyncio.Queue[Answer | StreamOpened | Frames]] = {}

    def perform(self) -> None:
        self.perform_these(self.server.take_actions())

    def perform_these(self, actions: list[Action]) -> None:
        for action in actions:
            match action:
                case StartRun():
                    task = asyncio.create_task(self.run_agent(action))
                    self.runs[action.task_id] = (action.run, task)
                case StopRun(task_id=task_id, run=run):
                    if self.runs.get(task_id, (None,))[0] == run:
                        self.runs.pop(task_id)[1].cancel()
                case (
                    Answer(exchange=number)
                    | StreamOpened(exchange=number)
                    | Frames(exchange=number)
                ):
                    if number in self.outboxes:
                        self.outboxes[number].put_nowait(action)
                case _:
                    pass  # pushes (the card offers none) and problems (none to log here)

    async def run_agent(self, start: StartRun) -> None:
        await drive(self.server, start, self.agent, self.perform_these)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        calls: set[asyncio.Task[None]] = set()
        try:
            while (line := await read_line(reader)) != b"":
                if line is None:
                    writer.write(self.server.core.too_large().body + b"\n")
                    continue
                call = asyncio.create_task(self.answer(line, writer))
                calls.add(call)
                call.add_done_callback(calls.discard)
            await asyncio.gather(*calls)
        except asyncio.CancelledError:
            # The server is stopping. Nothing awaits this task, and asyncio before 3.12 reports
            # a cancelled connection handler as an unhandled error: end it quietly.
            pass
        finally:
            writer.close()

    async def answer(self, line: bytes, writer: asyncio.StreamWriter) -> None:
        number = self.server.receive(HttpRequest("POST", "/", HEADERS, line.strip()), now())
        outbox: asyncio.Queue[Answer | StreamOpened | Frames] = asyncio.Queue()
        self.outboxes[number] = outbox
        self.perform()
        try:
            match await outbox.get():
                case Answer(response=response):
                    writer.write(response.body + b"\n")
                case StreamOpened(frames=frames, ended=ended):
                    writer.writelines(frame + b"\n" for frame in frames)
                    while not ended:
                        more = await outbox.get()
                        assert isinstance(more, Frames)
                        writer.writelines(frame + b"\n" for frame in more.frames)
                        ended = more.ended
            await writer.drain()
        finally:
            self.outboxes.pop(number, None)
            self.server.client_left(number)


async def read_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next line, ``b""`` at the end, or ``None`` for a line longer than the reader's limit:
    read past but never held whole, so a client cannot make the server buffer more."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as end:
        return end.partial  # the last line may lack its newline
    except asyncio.LimitOverrunError as overrun:
        # StreamReader.readline would drop only what it buffered, then read the rest of the
        # line as a line of its own: skip to the newline instead.
        consumed = overrun.consumed
    while True:
        await reader.readexactly(consumed)
        try:
            await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            return None  # the connection ended inside the line
        except asyncio.LimitOverrunError as more:
            consumed = more.consumed
            continue
        return None


async def serve(
    agent: Agent,
    card: AgentCard,
    path: str,
    started: asyncio.Event | None = None,
    *,
    max_body_bytes: int = 8 << 20,
) -> None:
    """Serve ``agent`` on the Unix socket at ``path`` until cancelled; lines may be up to
    ``max_body_bytes`` long."""
    lines = LinesServer(agent, card, max_body_bytes=max_body_bytes)
    # The reader's limit (64 KiB by default) bounds a line: make it the core's, newline included.
    limit = max_body_bytes + 1
    async with await asyncio.start_unix_server(lines.handle, path, limit=limit) as server:
        if started is not None:
            started.set()
        await server.serve_forever()


def main(argv: list[str] = sys.argv[1:]) -> None:
    # Without a path, a socket in a new directory of our own: a fixed name in /tmp could be
    # anyone's (and asyncio replaces a socket it finds at the path).
    path = argv[0] if argv else os.path.join(tempfile.mkdtemp(prefix="a2a-"), "a2a.sock")
    print(f"A2A (JSON-RPC lines) on unix:{path}", file=sys.stderr, flush=True)
    asyncio.run(serve(echo.agent, echo.card, path))


if __name__ == "__main__":
    main()
