"""The adapter's side of an exchange: a streamed HTTP response."""

from collections.abc import AsyncGenerator, Awaitable, Callable

import anyio
import attrs
from anyio.streams.memory import MemoryObjectReceiveStream

from a2a_core.transport import Frames, Served, StreamOpened

__all__ = ["HttpStream", "stream_body"]


@attrs.frozen
class HttpStream:
    """A response whose body is an async iterator of chunks (an SSE stream, or gRPC messages).

    ``trailers`` is filled in when the body ends (gRPC's status): send it after the last chunk.
    ``task_id`` (as the client knows it; "" if unknown) and ``served`` (what the request was)
    are not sent: they are for the access log and the traces.
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    body: AsyncGenerator[bytes, None]
    trailers: list[tuple[str, str]] = attrs.field(factory=list)
    task_id: str = ""
    served: Served | None = None


async def stream_body(
    opened: StreamOpened,
    batches: MemoryObjectReceiveStream[Frames],
    *,
    keepalive: float,
    sent: Callable[[], Awaitable[None]],
    closed: Callable[[], None],
    trailers: list[tuple[str, str]],
) -> AsyncGenerator[bytes, None]:
    """The body of a stream: its first frames, then each batch the machine sends, with the
    stream's keep-alive frame (if it has one) after every ``keepalive`` seconds of silence.
    Each batch is acknowledged (``sent``) once it has gone out: that is the stream's flow
    control. The trailers of its end go into ``trailers``."""
    try:
        for frame in opened.frames:
            yield frame
        if opened.ended:
            trailers.extend(opened.trailers)
            return
        wait = keepalive if opened.keepalive else float("inf")
        while True:
            with anyio.move_on_after(wait) as quiet:
                batch = await batches.receive()
            if quiet.cancelled_caught:
                yield opened.keepalive
                continue
            for frame in batch.frames:
                yield frame
            if batch.ended:
                trailers.extend(batch.trailers)
                return
            await sent()
    except anyio.EndOfStream:
        return
    finally:
        batches.close()
        closed()
