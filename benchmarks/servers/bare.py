"""The bare HTTP stacks: a trivial endpoint on each server's own software, nothing of A2A.

``python -m benchmarks.servers.bare PORT STACK``, where STACK is one of

* ``asgi``: a raw ASGI application on uvicorn with httptools and uvloop, configured as our
  asyncio adapter serves it (our A2A requests reach the engine straight from ASGI);
* ``asgi-trio``: the same application on hypercorn's trio worker, as our trio adapter served it
  before it had an HTTP/1.1 server of its own (it still serves HTTP/2 so);
* ``asgi-uvicorn``: the same application on uvicorn with its defaults, as the a2a-sdk runs;
* ``quart``, ``quart-trio``, ``starlette``: a route of the framework each server is built on
  (Quart on uvicorn, QuartTrio on hypercorn's trio worker, Starlette on uvicorn).

Each answers every request with a fixed small JSON-RPC result after reading the body, so an A2A
call's cost above it is the cost of everything that is not HTTP.
"""

import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{}}'
HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(ANSWER))]

Message = MutableMapping[str, Any]


async def trivial(
    scope: Message,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    """The raw ASGI endpoint (lifespan acknowledged, every request answered alike)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            kind = message["type"].rsplit(".", 1)[-1]  # startup / shutdown
            await send({"type": f"lifespan.{kind}.complete"})
            if kind == "shutdown":
                return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": ANSWER})


def _framework_app(stack: str) -> Any:
    """A one-route application of the framework ``stack`` names."""
    if stack == "starlette":
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        async def endpoint(request: Request) -> Response:
            await request.body()
            return Response(ANSWER, media_type="application/json")

        return Starlette(routes=[Route("/{path:path}", endpoint, methods=["GET", "POST"])])
    from quart import Quart, request
    from quart_trio import QuartTrio

    app = QuartTrio("bare") if stack == "quart-trio" else Quart("bare")

    @app.route("/", defaults={"path": ""}, methods=["GET", "POST"])
    @app.route("/<path:path>", methods=["GET", "POST"])
    async def route(path: str) -> tuple[bytes, int, dict[str, str]]:
        await request.get_data()
        return ANSWER, 200, {"content-type": "application/json"}

    return app


def main(port: int, stack: str) -> None:
    import uvicorn

    app: Any = trivial if stack.startswith("asgi") else _framework_app(stack)
    if stack in ("asgi-uvicorn", "starlette"):
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
        return

    from a2a_adapters._sockets import bind_socket

    sock = bind_socket("127.0.0.1", port)
    if stack.endswith("-trio"):
        import os

        import trio
        from hypercorn.config import Config
        from hypercorn.trio import serve

        hypercorn_config = Config()
        hypercorn_config.bind = [f"fd://{os.dup(sock.fileno())}"]
        hypercorn_config.accesslog = None
        hypercorn_config.errorlog = None
        trio.run(serve, app, hypercorn_config)
        return

    import asyncio

    from a2a_adapters.asyncio._server import fast_loop_factory

    config = uvicorn.Config(app, lifespan="on", log_config=None, access_log=False)
    with asyncio.Runner(loop_factory=fast_loop_factory()) as runner:
        runner.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
