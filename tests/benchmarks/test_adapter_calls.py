"""The adapters' call count still runs end to end, on both loops, and counts what it says."""

import pytest

from benchmarks import adapter_calls


@pytest.mark.parametrize("loop", ["asyncio", "trio"])
def test_a_few_sends_are_counted_outside_and_inside_the_core(loop: str) -> None:
    report = adapter_calls.measure(loop, sends=5, top=5)
    assert report["loop"] == loop
    assert report["sends"] == 5
    outside = report["outside_core_per_send"]
    # The adapters do something for each send (the ASGI entry, the engine, the agent's run),
    # but far less than thousands of calls; their Python calls are some of them.
    assert 20 < outside < 5_000
    assert 0 < report["outside_core_python_per_send"] < outside
    # The core decodes, decides and renders each send: hundreds of calls.
    assert 100 < report["core_per_send"] < 10_000
    assert len(report["top"]) == 5
    assert all(count > 0 for _, count in report["top"])


def test_the_counts_are_the_same_from_run_to_run() -> None:
    first = adapter_calls.measure("asyncio", sends=10)
    second = adapter_calls.measure("asyncio", sends=10)
    # The same but for what happens now and then, not on every send: the timers that fire
    # while counting (the engine's patrol, the machine's deadlines), the id pool's refills.
    for key in ("outside_core_per_send", "outside_core_python_per_send", "core_per_send"):
        assert abs(first[key] - second[key]) <= first[key] / 100, key
