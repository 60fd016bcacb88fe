"""The official a2a-sdk server (Starlette on uvicorn, in-memory store) with the same agent."""

import asyncio
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette

from benchmarks.servers.behaviour import FANOUT_DELAY, fanout_count


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


def handler(agent_card: pb.AgentCard) -> DefaultRequestHandler:
    """The SDK's request handler over its in-memory store (the in-process benchmarks call it)."""
    return DefaultRequestHandler(
        agent_executor=BenchExecutor(), task_store=InMemoryTaskStore(), agent_card=agent_card
    )


def app(port: int) -> Starlette:
    agent_card = card(port)
    routes = create_agent_card_routes(agent_card) + create_jsonrpc_routes(
        handler(agent_card), rpc_url="/"
    )
    return Starlette(routes=routes)


if __name__ == "__main__":
    port = int(sys.argv[1])
    # uvicorn's defaults, as an SDK user runs it: httptools and uvloop where installed.
    config = uvicorn.Config(app(port), host="127.0.0.1", port=port, log_level="warning")
    uvicorn.Server(config).run()
