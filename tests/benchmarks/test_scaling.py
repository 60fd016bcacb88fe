"""The scaling table still runs end to end: a quick run (tiny sizes, whose figures mean little)
measures every operation of both stores at every size and says which rows are flat."""

import json
from pathlib import Path

import pytest

from benchmarks import scaling

pytestmark = pytest.mark.timeout(300)


def test_a_quick_run_measures_every_operation_of_each_store_at_each_size(tmp_path: Path) -> None:
    out = tmp_path / "scaling.json"
    returned = scaling.main(["--quick", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written["rows"] == json.loads(json.dumps(returned["rows"]))
    sizes = scaling.QUICK_SIZES
    measured = {(m["store"], m["tasks"]) for m in written["measured"]}
    assert measured == {(s, n) for s in scaling.STORES for n in sizes}
    rows = returned["rows"]
    references = {("memory", label) for label in scaling.REFERENCES.values()}
    assert {(r["store"], r["operation"]) for r in rows} == {
        (s, label) for s in scaling.STORES for label in scaling.OPERATIONS.values()
    } | references
    for row in rows:
        assert set(row["us"]) == set(sizes)
        assert all(us > 0 for us in row["us"].values()), row
        largest, smallest = row["us"][max(sizes)], row["us"][min(sizes)]
        assert row["growth"] == pytest.approx(largest / smallest)
        if (row["store"], row["operation"]) in references:
            assert row["flat"] is None  # shown, not judged
        else:
            assert row["flat"] == (row["growth"] <= scaling.FLAT)
    table = scaling.render(rows, sizes)
    assert table.count("\n") == len(rows) + 1  # a head, its rule, a line per row
