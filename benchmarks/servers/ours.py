"""Our server with the benchmark agent:
``python -m benchmarks.servers.ours PORT [asyncio|trio] [STORE] [GRPC_PORT]``.

asyncio: the Quart application on uvicorn with uvloop (what ``serve`` runs); trio: the QuartTrio
application on the trio adapter's own HTTP/1.1 server (what ``serve(loop="trio")`` runs).
``STORE`` is a store URL as ``--store`` takes it (``memory``, the default, or
``sqlite:PATH?synchronous=full``).
``GRPC_PORT`` serves the gRPC binding too: on trio it may be ``PORT`` (h2c on the HTTP port);
on asyncio it is hypercorn's listener beside uvicorn, as ``serve(grpc_port=…)`` runs it.
"""

import signal
import sys
from collections.abc import AsyncIterator
from functools import partial

import anyio

from a2a_adapters import build_engine
from a2a_adapters._engine import Engine
from a2a_adapters._serve import tune_gc
from a2a_adapters._sockets import bind_socket
from a2a_adapters.asyncio._server import fast_loop_factory
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


def engine(store: AsyncStore | None = None, grpc_port: int | None = None) -> Engine:
    """The engine both loops serve (the in-process benchmarks use it too)."""
    return build_engine(
        agent,
        card=CARD,
        store=store if store is not None else "memory",  # an empty store is falsy
        streaming=True,
        grpc_port=grpc_port,
    )


def main(port: int, loop: str, store_url: str, grpc_port: int | None = None) -> None:
    store = served_store(store_url)
    try:
        sock = bind_socket("127.0.0.1", port)
        own = grpc_port is not None and grpc_port != port
        grpc_sock = bind_socket("127.0.0.1", grpc_port) if own and grpc_port else None
        tune_gc()  # as serve() does
        if loop == "trio":
            import trio

            from a2a_adapters import trio as adapter

            trio_app = adapter.create_app(engine(store, grpc_port))
            trio.run(partial(adapter.serve_app, trio_app, sock, grpc_sock=grpc_sock))
        else:
            from a2a_adapters import asyncio as asyncio_adapter

            # uvicorn stops gracefully on SIGTERM, then re-raises it: as in serve(), these
            # handlers let the process end normally, so the store below is closed.
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_: None)
            app = asyncio_adapter.create_app(engine(store, grpc_port))
            backend = {"loop_factory": fast_loop_factory()}
            serving = partial(asyncio_adapter.serve_app, app, sock, grpc_sock=grpc_sock)
            anyio.run(serving, backend_options=backend)
    finally:
        # As serve() does for a store it opened: a SQLite file is checkpointed and unlocked.
        close = getattr(store, "close", None)
        if close is not None:
            close()


if __name__ == "__main__":
    loop = sys.argv[2] if len(sys.argv) > 2 else "asyncio"
    grpc_port = int(sys.argv[4]) if len(sys.argv) > 4 else None
    main(int(sys.argv[1]), loop, sys.argv[3] if len(sys.argv) > 3 else "memory", grpc_port)
