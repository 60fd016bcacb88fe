"""The benchmark harness still runs: a tiny fan-out against both servers delivers everything."""

import os
from collections.abc import Iterator

import anyio
import pytest

from benchmarks.fanout import fanout
from benchmarks.harness import SERVERS, server


@pytest.fixture(autouse=True)
def short_fanout_delay() -> Iterator[None]:
    os.environ["A2A_BENCH_FANOUT_DELAY"] = "0.5"
    yield
    del os.environ["A2A_BENCH_FANOUT_DELAY"]


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_fanout_reaches_every_subscriber(name: str) -> None:
    with server(name) as url:
        result = anyio.run(fanout, url, 3, 20)
    assert result["complete"], result
    assert result["delivered"] == 60
    assert result["events_per_second"] > 0
