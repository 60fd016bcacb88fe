"""The RESP benchmark still runs end to end: a quick run of our calls against coredis on a
Redis of its own, on both loops (a few seconds; its figures mean nothing, but every request was
answered as the store expects, or the run fails)."""

import json
from pathlib import Path

import coredis

from benchmarks import resp


def test_a_quick_run_measures_every_operation_through_each_client(tmp_path: Path) -> None:
    out = tmp_path / "resp.json"
    results = resp.main(["--quick", "--out", str(out)])
    assert json.loads(out.read_text())["rows"] == results["rows"]
    rows = results["rows"]
    cells = {(r["loop"], r["op"], r["concurrency"]) for r in rows}
    assert cells == {
        (loop, op, concurrency)
        for loop in ("asyncio", "trio")
        for op in resp.OPS
        for concurrency in resp.CONCURRENCY
    }
    for r in rows:
        for client in (resp.OURS, resp.COREDIS):
            figures = r[client]
            assert figures["ops_per_s"] > 0, (r["benchmark"], client)
            assert 0 < figures["p50_ms"] <= figures["p99_ms"]
    setup = rows[0]["setup"]
    assert setup["coredis"] == coredis.__version__
    assert setup["redis"][0].isdigit()
    table = resp.report(rows)
    assert "store.commit() end to end" in table
    assert "coredis ops/s" in table
