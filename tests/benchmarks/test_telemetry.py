"""The telemetry benchmark still runs end to end: a quick run of every setting (a few seconds;
its rates mean nothing, but what it counts does)."""

import pytest

from benchmarks import telemetry


@pytest.mark.parametrize("loop", ["asyncio", "trio"])
def test_a_quick_run_measures_every_setting_and_counts_the_hooks(loop: str) -> None:
    report = telemetry.main(
        ["--sends", "20", "--rounds", "1", "--trials", "1", "--calls", "100", "--loop", loop]
    )
    assert report["loop"] == loop
    for setting in telemetry.SETTINGS:
        assert report[setting]["sends_per_s"] > 0, setting
    assert report["absent"]["us_over_absent"] == 0
    idle = report["idle"]["hooks"]
    # One blocking send of the echo agent: a request, whose run is tied to it, and the commits
    # of its task (created; worked on and completed), each counted while telemetry is off.
    assert idle["calls_per_send"] == {
        "request": 1,
        "origin": 1,
        "run": 1,
        "context": 0,
        "committed": 2,
        "conflicted": 0,
    }
    # Without OpenTelemetry the memory store is not wrapped: no commit passes a hook.
    assert report["absent"]["hooks"]["calls_per_send"]["committed"] == 0
    assert idle["ns_per_send"] > 0
