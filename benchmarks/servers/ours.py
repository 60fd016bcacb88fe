"""Our server with the benchmark agent: ``python -m benchmarks.servers.ours PORT [asyncio|trio]``.

asyncio: the Quart application on uvicorn with uvloop (what ``serve`` runs); trio: the QuartTrio
application on hypercorn's trio worker (what ``serve(loop="trio")`` runs).
"""

import sys
from collections.abc import AsyncIterator

import anyio

from a2a_adapters import build_engine
from a2a_adapters._engine import Engine
from a2a_adapters._serve import fast_loop_factory, tune_gc
from a2a_adapters._sockets import bind_socket
from a2a_core import AgentContext, ArtifactChunk, Update, completed, text_artifact, working
from a2a_core.card import AgentCard
from benchmarks.servers.behaviour import FANOUT_DELAY, fanout_count

CARD = AgentCard(name="bench", description="Benchmark agent", version="1.0.0")


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    """Echo with one artifact, or the fan-out script."""
    count = fanout_count(ctx.message.message_id)
    if count is None:
        yield ArtifactChunk(text_artifact(ctx.text, artifact_id="echo"), last_chunk=True)
        yield completed()
        return
    yield working()
    await anyio.sleep(FANOUT_DELAY)
    for index in range(count):
        chunk = text_artifact(f"chunk {index}", artifact_id="fanout")
        yield ArtifactChunk(chunk, append=index > 0, last_chunk=index == count - 1)
    yield completed()


def engine() -> Engine:
    """The engine both loops serve (the in-process benchmarks use it too)."""
    return build_engine(agent, card=CARD, streaming=True)


def main(port: int, loop: str) -> None:
    sock = bind_socket("127.0.0.1", port)
    tune_gc()  # as serve() does
    if loop == "trio":
        import trio

        from a2a_adapters import trio as adapter

        trio.run(adapter.serve_app, adapter.create_app(engine()), sock)
    else:
        from a2a_adapters import asyncio as asyncio_adapter

        app = asyncio_adapter.create_app(engine())
        backend = {"loop_factory": fast_loop_factory()}
        anyio.run(asyncio_adapter.serve_app, app, sock, backend_options=backend)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "asyncio")
