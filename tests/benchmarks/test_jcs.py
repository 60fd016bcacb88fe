"""The JCS benchmark still runs end to end: a quick run of ours against ``rfc8785`` (about a
second; its rates mean nothing, but both must have canonicalized the same bytes to run)."""

import json
from pathlib import Path

from benchmarks import jcs


def test_a_quick_run_measures_both_on_the_card_and_writes_its_table(tmp_path: Path) -> None:
    out = tmp_path / "jcs.json"
    results = jcs.main(["--quick", "--out", str(out)])
    assert json.loads(out.read_text())["rows"] == results["rows"]
    assert results["quick"] is True
    card, small, signing = results["rows"]
    for compared in (card, small):
        assert compared["ours"] > 0
        assert compared[jcs.THEIRS] > 0
    assert signing["ours"] > 0
    assert jcs.THEIRS not in signing
    assert "agent card" in jcs.report(results["rows"])
