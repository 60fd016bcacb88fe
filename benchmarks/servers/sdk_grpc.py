"""The official a2a-sdk's gRPC server (grpc.aio) with the same agent as ``benchmarks.servers.sdk``:
``python -m benchmarks.servers.sdk_grpc PORT GRPC_PORT``.

As the SDK's own examples serve gRPC: its ``GrpcHandler`` over its ``DefaultRequestHandler`` on
a ``grpc.aio`` server, beside the Starlette application (on uvicorn, in the same loop) that
serves the card, which lists the gRPC interface.
"""

import asyncio
import sys

import grpc.aio
import uvicorn
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.routes import create_agent_card_routes
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc
from starlette.applications import Starlette

from benchmarks.servers.sdk import card, handler


async def main(port: int, grpc_port: int) -> None:
    agent_card = card(port)
    agent_card.supported_interfaces.append(
        pb.AgentInterface(
            url=f"127.0.0.1:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"
        )
    )
    server = grpc.aio.server()
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    servicer = GrpcHandler(handler(agent_card))
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    await server.start()
    app = Starlette(routes=create_agent_card_routes(agent_card))
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    try:
        await uvicorn.Server(config).serve()
    finally:
        await server.stop(1)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
