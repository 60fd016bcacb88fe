"""The gRPC benchmark still runs end to end: a quick run against our two servers and the SDK's
grpc.aio server (about fifteen seconds; its figures mean nothing)."""

from pathlib import Path

from benchmarks import grpc as grpc_bench


def test_a_quick_grpc_run_measures_every_server(tmp_path: Path) -> None:
    out = tmp_path / "grpc.json"
    results = grpc_bench.main(["--quick", "--out", str(out)])
    assert out.exists()
    rows = results["rows"]
    assert [r["unit"] for r in rows][:1] == ["calls/s"]
    for r in rows:
        assert r["table"] == "grpc"
        for server in ("ours", "ours-trio", grpc_bench.THEIRS):
            # CPU time is counted in clock ticks (10 ms): a quick run's may round to nothing.
            cpu = "CPU" in r["benchmark"]
            assert r[server] >= 0 if cpu else r[server] > 0, (r["benchmark"], server)
    assert set(rows[0]["setup"]["commands"]) == {"ours", "ours-trio", grpc_bench.THEIRS}
    assert "streamed events" in grpc_bench.report(rows)
