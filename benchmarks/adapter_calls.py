"""Function calls per blocking send made by the adapters, outside the core:

    python -m benchmarks.adapter_calls [--loop asyncio|trio|both] [--sends N] [--top K]

The application ``create_app`` builds (the benchmark server's engine, its in-memory store and
echo agent) is driven in process through ASGI, with no HTTP server: its lifespan started, then
``N`` blocking SendMessage requests one after another, each with its own message id, after a
few unmeasured ones. A profile hook counts every function call made meanwhile, Python's and
C's, and splits them: a call is the core's when it is a call of a function of ``a2a_core``, or
is made (at any depth) below one; every other call is the adapters' (the ASGI entry, the
engine, the agent's run, the loop's scheduling of them). The counts are the same from run to run
but for what happens now and then (the timers that fire while counting, the engine's patrol
and the machine's deadlines; refills of the pool of random ids), a call a send at most: compare
them before and after a change, where timings on a shared machine are noise.

Prints one JSON object per loop: calls per send outside the core (Python and C, and Python
alone), the core's, and with ``--top`` the functions outside the core called most per send.
"""

import argparse
import json
import os
import sys
import types
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio

import a2a_core

#: Sends made before counting, so that first-time work (caches, imports) is not counted.
WARMUP = 20
#: Where the core's code lives: calls of its functions, and below them, are the core's.
_CORE = str(Path(a2a_core.__path__[0])) + os.sep

Message = MutableMapping[str, Any]


def _body(n: int) -> bytes:
    message = {"messageId": f"ac-{n}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    body = {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": message}}
    return json.dumps(body).encode()


#: The headers of the A2A request :func:`post_scope` makes, less its length.
A2A_HEADERS = (
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"a2a-version", b"1.0"),
)


def post_scope(
    body: bytes, headers: tuple[tuple[bytes, bytes], ...] = A2A_HEADERS
) -> dict[str, Any]:
    """The ASGI scope of a POST to the A2A root carrying ``body`` (as uvicorn makes it)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [*headers, (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


#: Where this file lives: the driver's own calls (it stands in for the HTTP server) are not
#: counted, only what the application does.
_DRIVER = __file__
#: What a frame's calls are: the adapters', the core's, or the driver's.
_OUTSIDE, _INSIDE, _HARNESS = 0, 1, 2


class Counts:
    """A profile hook: calls outside the core (Python's and C's), and the core's."""

    def __init__(self, top: bool) -> None:
        self.outside = 0
        self.outside_python = 0
        self.core = 0
        self.by_function: Counter[str] | None = Counter() if top else None
        #: Whose each Python frame under way since counting began is.
        self._stack: list[int] = []

    def hook(self, frame: types.FrameType, event: str, arg: Any) -> None:
        stack = self._stack
        whose = stack[-1] if stack else _OUTSIDE
        if event == "call":
            code = frame.f_code
            if whose != _INSIDE:
                if code.co_filename.startswith(_CORE):
                    whose = _INSIDE
                else:
                    whose = _HARNESS if code.co_filename == _DRIVER else _OUTSIDE
            stack.append(whose)
            name = f"{code.co_filename}:{code.co_firstlineno}({code.co_name})"
        elif event == "return":
            if stack:
                stack.pop()
            return
        elif event == "c_call":
            name = f"<{getattr(arg, '__qualname__', arg)}>"
        else:
            return
        if whose == _HARNESS:
            return
        if whose == _INSIDE:
            self.core += 1
            return
        self.outside += 1
        if event == "call":
            self.outside_python += 1
        if self.by_function is not None:
            self.by_function[name] += 1


async def _drive(app: Callable[..., Awaitable[None]], sends: int, counts: Counts) -> None:
    """Start ``app``'s lifespan, make the sends (counted after the warm-up), stop it."""
    to_app = anyio.create_memory_object_stream[Message](4)
    from_app = anyio.create_memory_object_stream[Message](4)

    async def lifespan() -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}}
        await app(scope, to_app[1].receive, from_app[0].send)

    async with anyio.create_task_group() as group:
        group.start_soon(lifespan)
        await to_app[0].send({"type": "lifespan.startup"})
        started = await from_app[1].receive()
        assert started["type"] == "lifespan.startup.complete", started
        # Made beforehand: only the application's calls are counted.
        requests = [(post_scope(body), body) for body in map(_body, range(WARMUP + sends))]
        for n in range(WARMUP):
            await _send(app, n, *requests[n])
        sys.setprofile(counts.hook)
        try:
            for n in range(WARMUP, WARMUP + sends):
                await _send(app, n, *requests[n])
        finally:
            sys.setprofile(None)
        await to_app[0].send({"type": "lifespan.shutdown"})
        stopped = await from_app[1].receive()
        assert stopped["type"] == "lifespan.shutdown.complete", stopped


async def _send(
    app: Callable[..., Awaitable[None]], n: int, scope: dict[str, Any], body: bytes
) -> None:
    """One request, as a server would make it: the body, then (asked again) nothing until the
    response is over, then the client leaving."""
    requested = False
    done: anyio.Event | None = None
    sent: list[Message] = []

    async def receive() -> Message:
        nonlocal requested, done
        if not requested:
            requested = True
            return {"type": "http.request", "body": body, "more_body": False}
        if done is None:  # the application listens for the client leaving (rare: not counted)
            done = anyio.Event()
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    if done is not None:
        done.set()
    status = sent[0]["status"]
    answer = b"".join(m.get("body", b"") for m in sent[1:])
    if status != 200 or b"TASK_STATE_COMPLETED" not in answer:
        raise RuntimeError(f"send {n} failed: {status} {answer[:300]!r}")


def measure(loop: str, sends: int, top: int = 0) -> dict[str, Any]:
    """Calls per send on ``loop`` (``asyncio`` or ``trio``), over ``sends`` sends."""
    from a2a_adapters._asgi import asgi_entry
    from benchmarks.servers.ours import engine

    counts = Counts(top > 0)
    if loop == "trio":
        import trio

        from a2a_adapters import trio as trio_adapter

        # What the trio server calls, as serve_app gives it.
        app: Any = asgi_entry(trio_adapter.create_app(engine()))
        trio.run(_drive, app, sends, counts)
    else:
        from a2a_adapters import asyncio as asyncio_adapter
        from a2a_adapters.asyncio._server import fast_loop_factory

        # What uvicorn calls, as serve_app gives it.
        app = asgi_entry(asyncio_adapter.create_app(engine()))
        # The loop ``serve`` runs (uvloop, if installed), whose own work is mostly not Python.
        backend = {"loop_factory": fast_loop_factory()}
        anyio.run(_drive, app, sends, counts, backend_options=backend)
    result: dict[str, Any] = {
        "loop": loop,
        "sends": sends,
        "outside_core_per_send": round(counts.outside / sends, 1),
        "outside_core_python_per_send": round(counts.outside_python / sends, 1),
        "core_per_send": round(counts.core / sends, 1),
    }
    if counts.by_function is not None:
        result["top"] = [
            [name, round(count / sends, 2)] for name, count in counts.by_function.most_common(top)
        ]
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loop", choices=["asyncio", "trio", "both"], default="both")
    parser.add_argument("--sends", type=int, default=200)
    parser.add_argument("--top", type=int, default=0, help="list the K most called functions")
    args = parser.parse_args(argv)
    loops = ["asyncio", "trio"] if args.loop == "both" else [args.loop]
    for loop in loops:
        print(json.dumps(measure(loop, args.sends, args.top), indent=1 if args.top else None))


if __name__ == "__main__":
    main()
