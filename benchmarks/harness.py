"""Starting the servers under test and talking to them: shared by every benchmark.

Each server runs in its own process on 127.0.0.1, started and stopped here, so a benchmark
never measures one server while the other is busy.
"""

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

#: The A2A servers under test: name -> ``python -m`` arguments (the port goes after the module).
SERVERS: dict[str, tuple[str, ...]] = {
    "ours": ("benchmarks.servers.ours", "asyncio"),
    "ours-trio": ("benchmarks.servers.ours", "trio"),
    "a2a-sdk": ("benchmarks.servers.sdk",),
}
#: The servers of the SQLite comparison, each on a fresh file (``{db}`` in an argument stands for
#: its path): ours on its memory store and on SQLite at either durability, the SDK on its SQL
#: store (SQLite's own defaults: a rollback journal, synchronous=FULL).
SQLITE_SERVERS: dict[str, tuple[str, ...]] = {
    "ours memory": ("benchmarks.servers.ours", "asyncio", "memory"),
    "ours sqlite FULL": ("benchmarks.servers.ours", "asyncio", "sqlite:{db}?synchronous=full"),
    "ours sqlite NORMAL": ("benchmarks.servers.ours", "asyncio", "sqlite:{db}?synchronous=normal"),
    "sdk sqlite FULL": ("benchmarks.servers.sdk", "sqlite:{db}"),
}
#: Each A2A server's bare stacks (see ``benchmarks.servers.bare``): its server software with a
#: raw ASGI endpoint ("server"), and a route of the framework it is built on ("framework").
BARE: dict[str, dict[str, tuple[str, ...]]] = {
    "ours": {"server": ("asgi",), "framework": ("quart",)},
    "ours-trio": {"server": ("asgi-trio",), "framework": ("quart-trio",)},
    "a2a-sdk": {"server": ("asgi-uvicorn",), "framework": ("starlette",)},
}
HEADERS = {"A2A-Version": "1.0"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def server(
    name: str,
    *,
    bare: str | None = None,
    timeout: float = 20.0,
    database: Path | None = None,
) -> Iterator[str]:
    """Run the named server (or its ``bare`` stack, "server" or "framework"); yield its base
    URL once it answers; stop it afterwards.

    A server with a database file uses ``database`` (which the caller then reads, and removes),
    or else a file in a temporary directory removed afterwards."""
    port = free_port()
    if bare is None:
        module, *args = {**SERVERS, **SQLITE_SERVERS}[name]
    else:
        module, args = "benchmarks.servers.bare", list(BARE[name][bare])
    with ExitStack() as stack:
        if any("{db}" in arg for arg in args):
            if database is None:
                folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="a2a-bench-"))
                database = Path(folder) / "tasks.db"
            args = [arg.replace("{db}", str(database)) for arg in args]
        yield from run_server(name, [sys.executable, "-m", module, str(port), *args], port, timeout)


def run_server(
    name: str,
    command: list[str],
    port: int,
    timeout: float,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Run ``command`` (a server that will listen on ``port``); yield its base URL once its card
    answers; stop it afterwards. For ``yield from`` inside a context manager."""
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                httpx.get(url + "/.well-known/agent-card.json", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"{name} did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def rpc_body(method: str, params: Any, rpc_id: int | str = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


def message(text: str, message_id: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}
