"""The load generator against real sockets: what it counts, and the servers' ways of answering
(keep-alive limits, ``Connection: close``, chunked bodies)."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from benchmarks.load import http_request, run_load


@asynccontextmanager
async def http_server(
    *,
    close_every: int = 0,
    chunked: bool = False,
    status: int = 200,
    answers: list[bytes] | None = None,
) -> AsyncIterator[tuple[int, list[int]]]:
    """A tiny HTTP/1.1 server on 127.0.0.1; yields its port and a list of connection counts.

    ``close_every``: hang up without answering after that many answers on a connection (as
    hypercorn does at its keep-alive limit). ``answers`` gets the body of each request answered.
    """
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        answered = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await reader.readexactly(length)
                if close_every and answered == close_every:
                    break
                answered += 1
                if answers is not None:
                    answers.append(body)
                if chunked:
                    payload = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
                    headers = b"Transfer-Encoding: chunked\r\n"
                else:
                    payload = body
                    headers = b"Content-Length: %d\r\n" % len(body)
                writer.write(b"HTTP/1.1 %d OK\r\n%s\r\n%s" % (status, headers, payload))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port, connections
    finally:
        server.close()


def echo(n: int) -> bytes:
    return http_request("POST", "/", b'{"n":%d}' % n)


def test_every_request_is_counted_with_its_latency() -> None:
    async def main() -> None:
        async with http_server() as (port, connections):
            result = await run_load(
                "127.0.0.1", port, echo, concurrency=4, count=200, max_seconds=10
            )
        assert (result.requests, result.errors) == (200, 0)
        assert len(result.latencies) == 200
        assert result.latencies == sorted(result.latencies)
        assert 0 < result.percentile(0.5) <= result.percentile(0.99)
        assert result.rps > 0
        assert len(connections) == 4  # kept alive: one connection each

    asyncio.run(main())


def test_several_ports_are_sent_requests_in_turn() -> None:
    async def main() -> None:
        first: list[bytes] = []
        second: list[bytes] = []
        async with (
            http_server(answers=first) as (port_a, connections_a),
            http_server(answers=second) as (port_b, connections_b),
        ):
            result = await run_load(
                "127.0.0.1", [port_a, port_b], echo, concurrency=3, count=100, max_seconds=10
            )
        assert (result.requests, result.errors) == (100, 0)
        # Request n went to port n mod 2; each client kept one connection to each port.
        assert sorted(first) == sorted(echo(n).split(b"\r\n\r\n")[1] for n in range(0, 100, 2))
        assert sorted(second) == sorted(echo(n).split(b"\r\n\r\n")[1] for n in range(1, 100, 2))
        assert len(connections_a) == len(connections_b) == 3

    asyncio.run(main())


def test_a_server_that_hangs_up_is_reconnected_to() -> None:
    async def main() -> None:
        async with http_server(close_every=7) as (port, connections):
            result = await run_load(
                "127.0.0.1", port, echo, concurrency=2, count=60, max_seconds=10
            )
        assert (result.requests, result.errors) == (60, 0)
        assert len(connections) > 2

    asyncio.run(main())


def test_chunked_bodies_are_read_whole() -> None:
    bodies: list[bytes] = []

    def keep(status: int, body: bytes) -> bool:
        bodies.append(body)
        return status == 200

    async def main() -> None:
        async with http_server(chunked=True) as (port, _):
            result = await run_load(
                "127.0.0.1", port, echo, concurrency=1, count=5, max_seconds=10, check=keep
            )
        assert result.errors == 0

    asyncio.run(main())
    assert bodies == [b'{"n":%d}' % n for n in range(5)]


def test_failures_are_counted_and_the_first_is_kept() -> None:
    async def main() -> None:
        async with http_server(status=500) as (port, _):
            result = await run_load("127.0.0.1", port, echo, concurrency=1, count=3, max_seconds=10)
        assert (result.requests, result.errors, result.rps) == (3, 3, 0)
        assert result.first_error is not None
        assert result.first_error.startswith("500")

    asyncio.run(main())


def test_the_time_limit_stops_a_run() -> None:
    async def main() -> None:
        async with http_server() as (port, _):
            result = await run_load(
                "127.0.0.1", port, echo, concurrency=1, count=10**9, max_seconds=0.3
            )
        assert 0 < result.requests < 10**9
        assert result.seconds < 2

    asyncio.run(main())
