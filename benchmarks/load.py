"""A small, fast HTTP/1.1 load generator: keep-alive connections on raw asyncio streams.

Why not httpx or aiohttp: on a 2-core machine the client shares the CPU with the server under
test, and a general-purpose client spends more per request than a fast server does, so the
figures would measure the client. This one writes prepared bytes and reads exactly one response
per request (``Content-Length`` or chunked), nothing else. Both servers are driven by the same
code, so whatever it costs is the same for each.

Every run is bounded twice: by a request count and by a wall-clock limit.
"""

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

#: Makes the request for the ``n``-th call (unique message ids come from ``n``).
RequestFactory = Callable[[int], bytes]
#: Says whether a response (status, body) is a success.
Check = Callable[[int, bytes], bool]


@attrs.frozen
class LoadResult:
    """What one load run measured."""

    concurrency: int
    requests: int
    errors: int
    seconds: float
    #: Latencies of the successful requests, in seconds, sorted.
    latencies: list[float] = attrs.field(repr=False)
    #: The first failed response, to show what went wrong.
    first_error: str | None = None

    @property
    def rps(self) -> float:
        return (self.requests - self.errors) / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float) -> float:
        """The latency below which ``fraction`` of the successful requests fell, in ms."""
        if not self.latencies:
            return float("nan")
        index = min(len(self.latencies) - 1, int(fraction * len(self.latencies)))
        return self.latencies[index] * 1000

    def summary(self) -> dict[str, Any]:
        return {
            "concurrency": self.concurrency,
            "requests": self.requests,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
            "rps": round(self.rps, 1),
            "p50_ms": round(self.percentile(0.50), 3),
            "p99_ms": round(self.percentile(0.99), 3),
            "first_error": self.first_error,
        }


def http_request(
    method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> bytes:
    """The bytes of one keep-alive HTTP/1.1 request."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body or method in {"POST", "PUT", "PATCH"}:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class _Closed(Exception):
    """The server closed the connection before answering (a keep-alive limit, say)."""


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """Status, body, and whether the server keeps the connection open."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        if not error.partial:
            raise _Closed from None
        raise
    status = int(head[9:12])
    length = -1
    chunked = False
    keep_alive = True
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
        elif name == b"connection" and b"close" in value.lower():
            keep_alive = False
    if length >= 0:
        return status, await reader.readexactly(length), keep_alive
    if not chunked:
        raise ValueError("response without Content-Length or chunked body")
    body = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return status, bytes(body), keep_alive
        body += await reader.readexactly(size)
        await reader.readexactly(2)


def default_check(status: int, body: bytes) -> bool:
    """2xx and not a JSON-RPC error."""
    return 200 <= status < 300 and b'"error"' not in body


async def run_load(
    host: str,
    port: int | Sequence[int],
    make_request: RequestFactory,
    *,
    concurrency: int,
    count: int,
    max_seconds: float,
    check: Check = default_check,
) -> LoadResult:
    """Send up to ``count`` requests over ``concurrency`` keep-alive connections.

    ``port`` may be several ports, replicas of one service: the ``n``-th request then goes to
    ``port[n % len(port)]`` (round-robin), each of the ``concurrency`` clients keeping one
    keep-alive connection to each port. Stops early once ``max_seconds`` have passed; requests
    already sent are still awaited. The clock starts once every connection is open: on a busy
    machine, opening 64 of them took longer than a short run's limit, which then sent nothing.
    """
    ports = [port] if isinstance(port, int) else list(port)
    issued = 0
    errors = 0
    latencies: list[float] = []
    first_error: list[str] = []
    clients: list[list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = []

    async def connect() -> None:
        links: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        clients.append(links)
        for p in ports:
            links.append(await asyncio.open_connection(host, p))

    async def connection(links: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]) -> None:
        nonlocal issued, errors
        try:
            while issued < count and time.perf_counter() < deadline:
                n = issued
                issued += 1
                slot = n % len(ports)
                reader, writer = links[slot]
                request = make_request(n)
                started = time.perf_counter()
                writer.write(request)
                try:
                    status, body, keep_alive = await _read_response(reader)
                except _Closed:
                    # Servers may close an idle or long-used connection (hypercorn does after
                    # 1,000 requests): reconnect and send again, as a real client would.
                    writer.close()
                    links[slot] = reader, writer = await asyncio.open_connection(host, ports[slot])
                    started = time.perf_counter()
                    writer.write(request)
                    status, body, keep_alive = await _read_response(reader)
                if not keep_alive:
                    writer.close()
                    links[slot] = await asyncio.open_connection(host, ports[slot])
                if check(status, body):
                    latencies.append(time.perf_counter() - started)
                else:
                    errors += 1
                    if not first_error:
                        first_error.append(f"{status} {body[:300]!r}")
        finally:
            for _, writer in links:
                writer.close()

    try:
        await asyncio.gather(*(connect() for _ in range(concurrency)))
    except BaseException:
        for links in clients:
            for _, writer in links:
                writer.close()
        raise
    started = time.perf_counter()
    deadline = started + max_seconds
    await asyncio.gather(*(connection(links) for links in clients))
    seconds = time.perf_counter() - started
    latencies.sort()
    return LoadResult(
        concurrency=concurrency,
        requests=issued,
        errors=errors,
        seconds=seconds,
        latencies=latencies,
        first_error=first_error[0] if first_error else None,
    )
