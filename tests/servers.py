"""Real servers on 127.0.0.1 for black-box tests, each in a thread with its own event loop.

The tests talk to them over real HTTP (httpx, the official a2a-sdk client), exactly as a remote
client would; the server's loop never shares a thread with the test's.

Which adapter serves is :data:`ADAPTER` (asyncio or trio): the ``adapter`` fixture of
``tests/a2a_adapters/conftest.py`` switches it, so one black-box suite runs against both.
"""

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

import attrs
import trio
from quart import Quart

from a2a_adapters import ConnectionLimits, build_engine
from a2a_adapters import asyncio as asyncio_adapter
from a2a_adapters import trio as trio_adapter
from a2a_adapters._engine import Engine
from a2a_adapters._limits import DEFAULT_LIMITS
from a2a_adapters._sockets import bind_socket
from a2a_adapters._tls import TlsFiles
from a2a_core import Agent
from a2a_core.card import AgentCard

Adapter = Literal["asyncio", "trio"]
ADAPTERS: tuple[Adapter, ...] = ("asyncio", "trio")

#: The adapter the next server runs on.
ADAPTER: Adapter = "asyncio"

#: Seconds a server may take to start or to stop before the test fails.
STARTUP_TIMEOUT = 10.0
SHUTDOWN_TIMEOUT = 10.0


def create_app(engine: Engine) -> Quart:
    """The application of the current :data:`ADAPTER` for ``engine``."""
    if ADAPTER == "trio":
        return trio_adapter.create_app(engine)
    return asyncio_adapter.create_app(engine)


@contextmanager
def running_server(
    agent: Agent | Mapping[str, Agent], *, card: AgentCard | None = None, **options: Any
) -> Iterator[str]:
    """Serve ``agent`` on a free port of 127.0.0.1; yield its base URL; stop it afterwards.

    ``options`` go to :func:`a2a_adapters.build_engine` (``max_body_bytes``, ``public_url``…).
    """
    with serving(build_engine(agent, card=card, **options)) as url:
        yield url


@contextmanager
def serving(engine: Engine) -> Iterator[str]:
    """Serve an engine the test built (so it can look at it afterwards); yield its base URL."""
    with running_app(create_app(engine)) as url:
        yield url


@attrs.frozen
class GrpcServer:
    """A server with the gRPC binding: its base URL, its gRPC target, its engine."""

    url: str
    target: str
    engine: Engine


@contextmanager
def running_grpc_server(
    agent: Agent | Mapping[str, Agent],
    *,
    card: AgentCard | None = None,
    same_port: bool = False,
    tls: TlsFiles | None = None,
    **options: Any,
) -> Iterator[GrpcServer]:
    """Serve ``agent`` with the gRPC binding too (on its own port, or with ``same_port``, on
    trio only, on the HTTP port as h2c); ``options`` go to ``build_engine``."""
    if same_port and ADAPTER != "trio":
        raise ValueError("only the trio adapter serves HTTP/1.1 and HTTP/2 on one port")
    sock = bind_socket("127.0.0.1", 0)
    grpc_sock = None if same_port else bind_socket("127.0.0.1", 0)
    grpc_port = (grpc_sock or sock).getsockname()[1]
    engine = build_engine(agent, card=card, grpc_port=grpc_port, **options)
    try:
        with running_app(create_app(engine), sock=sock, grpc_sock=grpc_sock, tls=tls) as url:
            yield GrpcServer(url, f"127.0.0.1:{grpc_port}", engine)
    finally:
        if grpc_sock is not None:
            grpc_sock.close()


@contextmanager
def running_app(
    app: Quart,
    *,
    limits: ConnectionLimits = DEFAULT_LIMITS,
    graceful_timeout: float = 5.0,
    sock: socket.socket | None = None,
    grpc_sock: socket.socket | None = None,
    tls: TlsFiles | None = None,
    **options: Any,
) -> Iterator[str]:
    """Serve any Quart (or QuartTrio) ``app`` on a free port of 127.0.0.1 (or on ``sock``);
    yield its base URL.

    ``limits``, ``graceful_timeout``, ``grpc_sock``, ``tls`` and ``options`` go to the
    adapter's ``serve_app`` (with ``tls`` the URL is ``https://``).
    """
    sock = sock or bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    stop: Callable[[], None] | None = None
    started = threading.Event()
    errors: list[BaseException] = []
    on_trio = ADAPTER == "trio"

    def run_asyncio() -> None:
        async def main() -> None:
            nonlocal stop
            loop, event = asyncio.get_running_loop(), asyncio.Event()

            def stop_asyncio() -> None:
                loop.call_soon_threadsafe(event.set)

            stop = stop_asyncio
            started.set()
            await asyncio_adapter.serve_app(
                app,
                sock,
                shutdown_trigger=event.wait,
                limits=limits,
                graceful_timeout=graceful_timeout,
                grpc_sock=grpc_sock,
                tls=tls,
                **options,
            )

        asyncio.run(main())

    def run_trio() -> None:
        async def main() -> None:
            nonlocal stop
            token, event = trio.lowlevel.current_trio_token(), trio.Event()

            def stop_trio() -> None:
                trio.from_thread.run_sync(event.set, trio_token=token)

            stop = stop_trio
            started.set()
            await trio_adapter.serve_app(
                app,  # type: ignore[arg-type]
                sock,
                shutdown_trigger=event.wait,
                limits=limits,
                graceful_timeout=graceful_timeout,
                grpc_sock=grpc_sock,
                tls=tls,
                **options,
            )

        trio.run(main)

    def run() -> None:
        try:
            run_trio() if on_trio else run_asyncio()
        except BaseException as error:  # surfaced to the test below
            errors.append(error)
            started.set()

    thread = threading.Thread(target=run, name=f"a2a server :{port}", daemon=True)
    thread.start()
    started.wait(STARTUP_TIMEOUT)
    _wait_until_listening(port, errors)
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        if stop is not None:
            stop()
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
