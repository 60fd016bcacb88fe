"""Starting the servers under test and talking to them: shared by every benchmark.

Each server runs in its own process on 127.0.0.1, started and stopped here, so a benchmark
never measures one server while the other is busy.
"""

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

#: The A2A servers under test: name -> ``python -m`` arguments (the port goes after the module).
SERVERS: dict[str, tuple[str, ...]] = {
    "ours": ("benchmarks.servers.ours", "asyncio"),
    "ours-trio": ("benchmarks.servers.ours", "trio"),
    "a2a-sdk": ("benchmarks.servers.sdk",),
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
def server(name: str, *, bare: str | None = None, timeout: float = 20.0) -> Iterator[str]:
    """Run the named server (or its ``bare`` stack, "server" or "framework"); yield its base
    URL once it answers; stop it afterwards."""
    port = free_port()
    if bare is None:
        module, *args = SERVERS[name]
    else:
        module, args = "benchmarks.servers.bare", list(BARE[name][bare])
    process = subprocess.Popen(
        [sys.executable, "-m", module, str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
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
