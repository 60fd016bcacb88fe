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
    settled = {("memory", label) for label in scaling.SETTLED.values()}
    assert {(r["store"], r["operation"]) for r in rows} == {
        (s, label) for s in scaling.STORES for label in scaling.OPERATIONS.values()
    } | settled | references
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


def test_each_figure_is_the_median_of_the_processes_that_measured_it() -> None:
    runs = [
        {"store": "memory", "tasks": 10, "get_us": 3.0, "save_us": 1.0},
        {"store": "memory", "tasks": 10, "get_us": 1.0, "save_us": 9.0},
        {"store": "memory", "tasks": 10, "get_us": 2.0, "save_us": 5.0},
        {"store": "memory", "tasks": 20, "get_us": 4.0, "save_us": 6.0},
        {"store": "sqlite", "tasks": 10, "get_us": 7.0, "save_us": 8.0},
    ]
    found = {(f["store"], f["tasks"]): f for f in scaling.medians(runs)}
    assert found == {
        ("memory", 10): {"store": "memory", "tasks": 10, "get_us": 2.0, "save_us": 5.0},
        ("memory", 20): {"store": "memory", "tasks": 20, "get_us": 4.0, "save_us": 6.0},
        ("sqlite", 10): {"store": "sqlite", "tasks": 10, "get_us": 7.0, "save_us": 8.0},
    }
