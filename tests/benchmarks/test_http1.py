"""The HTTP/1.1 benchmark still runs end to end: a quick run of our trio server against
hypercorn's trio worker (a few seconds; its figures mean nothing, but each must be there)."""

import json
from pathlib import Path

from benchmarks import http1


def test_a_quick_run_measures_both_servers_at_every_level(tmp_path: Path) -> None:
    out = tmp_path / "http1.json"
    results = http1.main(["--quick", "--out", str(out)])
    assert json.loads(out.read_text())["rows"] == json.loads(json.dumps(results["rows"]))
    rows = results["rows"]
    rates = [r for r in rows if r["unit"] == "req/s"]
    assert [r["benchmark"] for r in rates] == [
        f"{label} c={level}" for label in http1.MEASURES for level in (1, 16)
    ]
    assert len(rows) == 4 * len(rates)  # each rate with its p50, p99 and server CPU
    for r in rows:
        assert r["table"] == "http1"
        for server in http1.SERVERS:
            assert r[server] > 0, (r["benchmark"], server)
    for r in rates:  # every request of every round answered as it should be
        assert all(r["requests"][server] > 0 for server in http1.SERVERS)
    assert set(rows[0]["setup"]["commands"]) == set(http1.SERVERS)
    assert "ours/hypercorn" in http1.report(rows)
