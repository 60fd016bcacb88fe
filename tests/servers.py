"""Real servers on 127.0.0.1 for black-box tests, each in a thread with its own event loop.

The tests talk to them over real HTTP (httpx, the official a2a-sdk client), exactly as a remote
client would; the server's loop never shares a thread with the test's.
"""

import asyncio
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from quart import Quart

from a2a_adapters import build_engine
from a2a_adapters.quart import bind_socket, create_app, serve_app
from a2a_core import Agent, AgentCard

#: Seconds a server may take to start or to stop before the test fails.
STARTUP_TIMEOUT = 10.0
SHUTDOWN_TIMEOUT = 10.0


@contextmanager
def running_server(
    agent: Agent | Mapping[str, Agent], *, card: AgentCard | None = None, **options: Any
) -> Iterator[str]:
    """Serve ``agent`` on a free port of 127.0.0.1; yield its base URL; stop it afterwards.

    ``options`` go to :func:`a2a_adapters.build_engine` (``max_body_bytes``, ``public_url``…).
    """
    engine = build_engine(agent, card=card, **options)
    with running_app(create_app(engine)) as url:
        yield url


@contextmanager
def running_app(app: Quart) -> Iterator[str]:
    """Serve any Quart ``app`` on a free port of 127.0.0.1; yield its base URL; stop it after."""
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    loop: asyncio.AbstractEventLoop | None = None
    stop: asyncio.Event | None = None
    started = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        nonlocal loop, stop

        async def main() -> None:
            nonlocal loop, stop
            loop = asyncio.get_running_loop()
            stop = asyncio.Event()
            started.set()
            await serve_app(app, sock, shutdown_trigger=stop.wait)

        try:
            asyncio.run(main())
        except BaseException as error:  # surfaced to the test below
            errors.append(error)
            started.set()

    thread = threading.Thread(target=run, name=f"a2a server :{port}", daemon=True)
    thread.start()
    started.wait(STARTUP_TIMEOUT)
    _wait_until_listening(port, errors)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        if loop is not None and stop is not None:
            loop.call_soon_threadsafe(stop.set)
        thread.join(SHUTDOWN_TIMEOUT)
        sock.close()
        assert not thread.is_alive(), "the server did not stop in time"
        if errors:
            raise errors[0]


def _wait_until_listening(port: int, errors: list[BaseException]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if errors:
            raise errors[0]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"no server listening on 127.0.0.1:{port}")
