"""Our server with the benchmark agent:
``python -m benchmarks.servers.ours PORT [asyncio|trio] [STORE]``.

asyncio: the Quart application on uvicorn with uvloop (what ``serve`` runs); trio: the QuartTrio
application on hypercorn's trio worker (what ``serve(loop="trio")`` runs). ``STORE`` is a store
URL as ``--store`` takes it (``memory``, the default, or ``sqlite:PATH?synchronous=full``).
"""

import signal
import sys
from collections.abc import AsyncIterator

import anyio

from a2a_adapters import build_engine
from a2a_adapters._engine import Engine
from a2a_adapters._serve import fast_loop_factory, tune_gc
from a2a_adapters._sockets import bind_socket
from a2a_adapters.stores import open_store
from a2a_core import AgentContext, ArtifactChunk, Update, completed, text_artifact, working
from a2a_core.card import AgentCard
from a2a_core.store import AsyncStore
from benchmarks.servers.behaviour import FANOUT_DELAY, fanout_count, tick_text, ticks_script

CARD = AgentCard(name="bench", description="Benchmark agent", version="1.0.0")


async def agent(ctx: AgentContext) -> AsyncIterator[Update]:
    """Echo with one artifact, or the fan-out script, or the ticks script."""
    ticks = ticks_script(ctx.message.message_id)
    if ticks is not None:
        yield working()
        await anyio.sleep(ticks.delay)
        for index in range(ticks.updates):
            # Stamped as the update is made, right before it is handed to the server.
            yield ArtifactChunk(text_artifact(tick_text(index), artifact_id="tick"))
            await anyio.sleep(ticks.spacing)
        yield completed()
        return
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


def served_store(url: str) -> AsyncStore:
    """The store ``url`` names."""
    return open_store(url)


def engine(store: AsyncStore | None = None) -> Engine:
    """The engine both loops serve (the in-process benchmarks use it too)."""
    return build_engine(agent, card=CARD, store=store, streaming=True)


def main(port: int, loop: str, store_url: str) -> None:
    store = served_store(store_url)
    try:
        sock = bind_socket("127.0.0.1", port)
        tune_gc()  # as serve() does
        if loop == "trio":
            import trio

            from a2a_adapters import trio as adapter

            trio.run(adapter.serve_app, adapter.create_app(engine(store)), sock)
        else:
            from a2a_adapters import asyncio as asyncio_adapter

            # uvicorn stops gracefully on SIGTERM, then re-raises it: as in serve(), these
            # handlers let the process end normally, so the store below is closed.
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_: None)
            app = asyncio_adapter.create_app(engine(store))
            backend = {"loop_factory": fast_loop_factory()}
            anyio.run(asyncio_adapter.serve_app, app, sock, backend_options=backend)
    finally:
        # As serve() does for a store it opened: a SQLite file is checkpointed and unlocked.
        close = getattr(store, "close", None)
        if close is not None:
            close()


if __name__ == "__main__":
    loop = sys.argv[2] if len(sys.argv) > 2 else "asyncio"
    main(int(sys.argv[1]), loop, sys.argv[3] if len(sys.argv) > 3 else "memory")
