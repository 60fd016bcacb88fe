"""The adapter-side shape of a streamed HTTP response (the body is produced as it goes)."""

from collections.abc import AsyncGenerator

import attrs

__all__ = ["HttpStream"]


@attrs.frozen
class HttpStream:
    """A response whose body is an async iterator of chunks (an SSE stream)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: AsyncGenerator[bytes, None]
