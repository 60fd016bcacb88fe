"""Our server (Quart on hypercorn, asyncio) with the benchmark agent."""

import sys
from collections.abc import AsyncIterator

import anyio

from a2a_adapters import build_engine
from a2a_adapters._serve import fast_loop_factory
from a2a_adapters.quart import bind_socket, create_app, serve_app
from a2a_core import (
    AgentCard,
    AgentContext,
    ArtifactChunk,
    Update,
    completed,
    text_artifact,
    working,
)
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


async def main(port: int) -> None:
    engine = build_engine(agent, card=CARD, streaming=True)
    sock = bind_socket("127.0.0.1", port)
    print("READY", flush=True)
    await serve_app(create_app(engine), sock)


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]), backend_options={"loop_factory": fast_loop_factory()})
