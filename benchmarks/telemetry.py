"""What telemetry costs a request: blocking sends per second through the ASGI application, in
process (no sockets), with each telemetry setting, each in a fresh interpreter.

    python -m benchmarks.telemetry [--sends N] [--rounds R] [--trials T] [--calls C]
                                   [--loop asyncio|trio]

Settings:

* ``absent``: ``opentelemetry`` cannot be imported (``pip install a2a-sansio`` without the
  ``otel`` extra): the baseline.
* ``idle``: the API is installed and nothing configured it (the API's placeholder providers):
  what most installations pay. The adapters look at the two global providers per request and
  call nothing else.
* ``noop``: the API's no-op providers handed in explicitly, so that every span and instrument
  call is made and does nothing: what ``idle`` would cost without that look.
* ``sdk``: the SDK recording everything (spans to an in-memory exporter through the simple
  processor, metrics to an in-memory reader): the cost of telemetry that is on.

Beside the rate, the ``absent`` and ``idle`` processes time the telemetry hooks themselves:
how many times one send calls each (counted during a real send) and what one call costs
(timed alone: the best of five runs of ``calls`` calls), so that the figure of what telemetry
adds to a send while off does not drown in the noise of two rates.

Each request is the whole application path a socket's request takes (the access-log
middleware, the fast path, the door, the engine, the echo agent's run), called as ASGI by this
process, one at a time. The settings take turns, ``trials`` times each (a fresh process every
time), so that a machine busy with something else slows them alike; the best round of each
setting counts. Wall time suffers most from a busy machine, so each round's CPU time (this
process's) is measured too. Prints one JSON object: per setting, its sends per second, wall
and CPU microseconds per send, and their differences from ``absent``.
"""

import argparse
import json
import subprocess
import sys
import time
from typing import Any

SETTINGS = ("absent", "idle", "noop", "sdk")

#: Refuses every ``opentelemetry`` import in the ``absent`` setting.
_REFUSE = """
import sys
class _Refuse:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Refuse())
"""


def _telemetry(setting: str) -> Any:
    from a2a_adapters import Telemetry

    if setting in ("absent", "idle"):
        return Telemetry()
    if setting == "noop":
        from opentelemetry.metrics import NoOpMeterProvider
        from opentelemetry.trace import NoOpTracerProvider

        return Telemetry(tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider())
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    meter = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return Telemetry(tracer_provider=tracer, meter_provider=meter)


async def _measure(setting: str, sends: int, rounds: int) -> dict[str, Any]:
    import anyio

    from a2a_adapters import build_engine
    from a2a_adapters._fastpath import serving_chain
    from benchmarks.adapter_calls import A2A_HEADERS, post_scope
    from examples import echo

    engine = build_engine(echo.agent, card=echo.card, telemetry=_telemetry(setting))

    async def elsewhere(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError(f"not an A2A path: {scope['path']}")

    app = serving_chain(elsewhere, engine)
    # A caller in a trace: extracting it is part of the cost.
    traceparent = (b"traceparent", b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    headers = (*A2A_HEADERS, traceparent)

    async def one(n: int) -> None:
        message = {"messageId": f"m-{n}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
        body = json.dumps(
            {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": message}}
        ).encode()
        scope = post_scope(body, headers)
        sent = False
        status = 0

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await app(scope, receive, send)
        assert status == 200, status

    best = cpu = 0.0
    count = 0
    async with anyio.create_task_group() as group:
        await group.start(engine.run)
        for _ in range(min(200, sends)):  # warm up
            await one(count)
            count += 1
        for _ in range(rounds):
            started, used = time.perf_counter(), time.process_time()
            for _ in range(sends):
                await one(count)
                count += 1
            best = max(best, sends / (time.perf_counter() - started))
            cpu = max(cpu, sends / max(time.process_time() - used, 1e-9))
        await engine.aclose()
    return {
        "sends_per_s": round(best, 1),
        "us_per_send": round(1e6 / best, 2),
        "cpu_us_per_send": round(1e6 / cpu, 2),
    }


#: The hooks a request may call while telemetry is off, by name.
HOOKS = ("request", "origin", "run", "context", "committed", "conflicted")


async def _count_hooks(loop_backend: str) -> dict[str, float]:
    """How many times one blocking send calls each hook (the mean over 100 sends)."""
    import anyio

    from a2a_adapters import Telemetry, build_engine
    from a2a_adapters._door import enter
    from a2a_core.transport import HttpRequest
    from examples import echo

    telemetry = Telemetry()
    calls = dict.fromkeys(HOOKS, 0)
    for name in HOOKS:
        method = getattr(telemetry, name)

        def counted(*args: Any, _method: Any = method, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _method(*args, **kwargs)

        setattr(telemetry, name, counted)
    engine = build_engine(echo.agent, card=echo.card, telemetry=telemetry)
    sends = 100
    async with anyio.create_task_group() as group:
        await group.start(engine.run)
        for n in range(sends):
            message = {"messageId": f"m-{n}", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            body = json.dumps(
                {"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": message}}
            ).encode()
            head = HttpRequest("POST", "/", {"a2a-version": "1.0"}, b"")

            async def read_body(limit: int, body: bytes = body) -> bytes:
                return body

            await enter(engine, head, "http://bench", read_body)
        await engine.aclose()
    return {name: count / sends for name, count in calls.items()}


def _time_hooks(number: int) -> dict[str, float]:
    """Nanoseconds per call of each hook while telemetry is off (the best of five runs)."""
    import timeit

    from a2a_adapters import Telemetry
    from a2a_core import AgentContext, Message, Part, Role
    from a2a_core.store import MemoryTasks
    from a2a_core.transport import HttpRequest, StartRun

    telemetry = Telemetry()
    head = HttpRequest(
        "POST",
        "/",
        {"a2a-version": "1.0", "traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"},
        b"",
    )
    message = Message("m", Role.USER, (Part(text="hi"),))
    start = StartRun("t", 1, AgentContext("t", "c", message, (message,), "p"))

    def run() -> None:
        with telemetry.run(start, None):
            pass

    inner = MemoryTasks()
    counted = telemetry.counted(inner)
    cases = {
        "request": lambda: telemetry.request(head),
        "origin": telemetry.origin,
        "run": run,
        "context": telemetry.context,
        "committed": lambda: telemetry.committed(()),
        "conflicted": telemetry.conflicted,
        # What the counting wrapper of the memory store adds to each commit and read.
        "store_wrapper": lambda: counted.commit(()),
        "store_direct": lambda: inner.commit(()),
    }
    return {
        # CPU time: a machine busy with other work stretches the wall clock, not this.
        name: min(timeit.repeat(case, number=number, repeat=5, timer=time.process_time))
        / number
        * 1e9
        for name, case in cases.items()
    }


def _child(setting: str, sends: int, rounds: int, loop: str, calls: int) -> None:
    import anyio

    result = anyio.run(_measure, setting, sends, rounds, backend=loop)
    if setting in ("absent", "idle"):
        per_send = anyio.run(_count_hooks, loop, backend=loop)
        cost = _time_hooks(calls)
        wrapper = max(cost.pop("store_wrapper") - cost.pop("store_direct"), 0.0)
        # Every commit of the memory store passes the wrapper (which calls committed() or
        # conflicted()); its reads do not.
        added = sum(per_send[name] * cost[name] for name in HOOKS)
        added += (per_send["committed"] + per_send["conflicted"]) * wrapper
        result["hooks"] = {
            "calls_per_send": per_send,
            "ns_per_call": {name: round(ns, 1) for name, ns in cost.items()},
            "wrapper_ns_per_commit": round(wrapper, 1),
            "ns_per_send": round(added, 1),
        }
    print(json.dumps(result))


def measure(setting: str, sends: int, rounds: int, loop: str, calls: int) -> dict[str, Any]:
    """One setting, in a fresh interpreter (``absent`` one that cannot import OpenTelemetry)."""
    code = (_REFUSE if setting == "absent" else "") + (
        "from benchmarks.telemetry import _child\n"
        f"_child({setting!r}, {sends}, {rounds}, {loop!r}, {calls})\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=600
    )
    if ran.returncode:
        raise RuntimeError(f"{setting}: {ran.stderr}")
    result: dict[str, Any] = json.loads(ran.stdout)
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sends", type=int, default=5000, help="sends per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the best one counts)")
    parser.add_argument("--trials", type=int, default=3, help="fresh processes per setting")
    parser.add_argument("--calls", type=int, default=200_000, help="calls per hook timing")
    parser.add_argument("--loop", choices=("asyncio", "trio"), default="asyncio")
    args = parser.parse_args(argv)
    results: dict[str, dict[str, Any]] = {}
    for _ in range(args.trials):
        for setting in SETTINGS:
            figures = measure(setting, args.sends, args.rounds, args.loop, args.calls)
            if setting not in results:
                results[setting] = figures
                continue
            kept = results[setting]
            # The best of each figure (the hooks are timed in every trial alike).
            for key in ("sends_per_s", "us_per_send", "cpu_us_per_send"):
                pick = max if key == "sends_per_s" else min
                kept[key] = pick(kept[key], figures[key])
    base = results["absent"]
    for figures in results.values():
        figures["us_over_absent"] = round(figures["us_per_send"] - base["us_per_send"], 2)
        figures["cpu_us_over_absent"] = round(
            figures["cpu_us_per_send"] - base["cpu_us_per_send"], 2
        )
    report = {
        "loop": args.loop,
        "sends": args.sends,
        "rounds": args.rounds,
        "trials": args.trials,
        **results,
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
