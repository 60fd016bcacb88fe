"""The official a2a-sdk server (Starlette on uvicorn) with the same agent:
``python -m benchmarks.servers.sdk PORT [STORE]``.

``STORE`` is ``memory`` (the SDK's ``InMemoryTaskStore``, the default) or ``sqlite:PATH``: its
SQL store, ``DatabaseTaskStore`` on SQLAlchemy's asyncio engine over aiosqlite, with the SQLite
settings the SDK leaves as they are (a rollback journal, ``synchronous=FULL``). Or
``cluster:PATH[?poll=SECONDS]``: its cluster mode, for several replicas sharing the file, a
``VersionedDatabaseTaskStore`` with a ``DatabaseTaskEventStream`` (which polls the events table,
every 0.5 s unless ``poll`` says otherwise) on the same engine.
"""

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette

from benchmarks.servers.behaviour import FANOUT_DELAY, fanout_count, tick_text, ticks_script


class BenchExecutor(AgentExecutor):
    """Echo with one artifact, or the fan-out script."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        task_id, context_id = context.task_id or "", context.context_id or ""
        if context.current_task is None and message is not None:
            # The SDK's v2 handler wants the task enqueued before any update of it.
            task = new_task_from_user_message(message)
            task.id, task.context_id = task_id, context_id
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task_id, context_id)
        ticks = ticks_script(message.message_id) if message else None
        if ticks is not None:
            await updater.start_work()
            await asyncio.sleep(ticks.delay)
            for index in range(ticks.updates):
                # Stamped as the update is made, right before it is handed to the SDK.
                await updater.add_artifact([pb.Part(text=tick_text(index))], artifact_id="tick")
                await asyncio.sleep(ticks.spacing)
            await updater.complete()
            return
        count = fanout_count(message.message_id) if message else None
        if count is None:
            text = "".join(p.text for p in message.parts) if message else ""
            await updater.add_artifact([pb.Part(text=text)], artifact_id="echo", last_chunk=True)
            await updater.complete()
            return
        await updater.start_work()
        await asyncio.sleep(FANOUT_DELAY)
        for index in range(count):
            await updater.add_artifact(
                [pb.Part(text=f"chunk {index}")],
                artifact_id="fanout",
                append=index > 0,
                last_chunk=index == count - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


def card(port: int) -> pb.AgentCard:
    return pb.AgentCard(
        name="bench",
        description="Benchmark agent",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(
                url=f"http://127.0.0.1:{port}/",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ],
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="bench", name="bench", description="bench", tags=["bench"])],
    )


def handler(
    agent_card: pb.AgentCard, task_store: Any = None, event_stream: Any = None
) -> DefaultRequestHandler:
    """The SDK's request handler over ``task_store``, or its in-memory store (the in-process
    benchmarks call it); a cluster store comes with its ``event_stream``."""
    return DefaultRequestHandler(
        agent_executor=BenchExecutor(),
        task_store=task_store if task_store is not None else InMemoryTaskStore(),
        agent_card=agent_card,
        event_stream=event_stream,
    )


def database_store(path: str) -> Any:
    """The SDK's SQL store on the SQLite file at ``path``, through aiosqlite (as its docs set it
    up); its table is created by ``initialize()``, or lazily by the first call."""
    from a2a.server.tasks import DatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    return DatabaseTaskStore(create_async_engine(f"sqlite+aiosqlite:///{path}"))


def cluster_store(path: str, poll: float | None = None) -> tuple[Any, Any]:
    """The SDK's cluster mode on the SQLite file at ``path``: its versioned SQL store and the
    event stream that polls the events table the store writes (every ``poll`` seconds, else
    the SDK's default), on one engine."""
    from a2a.server.cluster import DatabaseTaskEventStream, VersionedDatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    if poll is None:
        stream = DatabaseTaskEventStream(engine)
    else:
        stream = DatabaseTaskEventStream(engine, poll_interval_s=poll)
    return VersionedDatabaseTaskStore(engine), stream


def app(port: int, store_url: str = "memory") -> Starlette:
    agent_card = card(port)
    store: Any = None
    stream: Any = None
    if store_url != "memory":
        scheme, _, rest = store_url.partition(":")
        path, _, query = rest.partition("?")
        if scheme == "sqlite" and path and not query:
            store = database_store(path)
        elif scheme == "cluster" and path and (not query or query.startswith("poll=")):
            poll = float(query.removeprefix("poll=")) if query else None
            store, stream = cluster_store(path, poll)
        else:
            raise SystemExit(
                f"unknown store {store_url!r}: memory, sqlite:PATH or cluster:PATH[?poll=SECONDS]"
            )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        if store is None:
            yield
            return
        # The tables are created before the first request: created lazily, the first requests
        # at once would race to create them.
        await store.initialize()
        if stream is not None:
            await stream.initialize()
        try:
            yield
        finally:
            plain = store.as_task_store if stream is not None else store
            await plain.engine.dispose()

    routes = create_agent_card_routes(agent_card) + create_jsonrpc_routes(
        handler(agent_card, store, stream), rpc_url="/"
    )
    return Starlette(routes=routes, lifespan=lifespan)


if __name__ == "__main__":
    port = int(sys.argv[1])
    store_url = sys.argv[2] if len(sys.argv) > 2 else "memory"
    # uvicorn's defaults, as an SDK user runs it: httptools and uvloop where installed.
    config = uvicorn.Config(app(port, store_url), host="127.0.0.1", port=port, log_level="warning")
    uvicorn.Server(config).run()
