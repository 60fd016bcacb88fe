import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test as run_machine_as_test

from a2a_adapters import serve
from a2a_adapters._setting import options
from a2a_adapters.cli import env_variable, serve_options
from a2a_adapters.settings import Settings
from a2a_core.testing import Driver
from docs.generate import (
    BENCHMARKS,
    DOC,
    EXAMPLE,
    GRPC_RESULTS,
    README,
    RESULTS,
    SETTINGS,
    benchmark_parts,
    machine_part,
    render,
    render_benchmarks,
    replace_part,
    settings_part,
    table,
)


def test_state_diagram_and_the_example_listing_in_the_docs_are_current() -> None:
    text = DOC.read_text()
    assert render(text) == text, "docs/core.md is stale: run `make docs`"
    assert f"```python\n{EXAMPLE.read_text()}```" in text


def test_the_transport_the_docs_show_is_under_two_hundred_lines() -> None:
    assert len(EXAMPLE.read_text().splitlines()) < 200


def test_render_replaces_a_stale_listing() -> None:
    diagram = "<!-- state-diagram:begin -->\n```mermaid\n```\n<!-- state-diagram:end -->\n"
    stale = diagram + "<!-- example:async_store:begin -->\nold\n<!-- example:async_store:end -->\n"
    fresh = render(stale, example="print('new')\n")
    assert "old" not in fresh
    assert "```python\nprint('new')\n```\n<!-- example:async_store:end -->" in fresh


def test_render_replaces_a_stale_diagram() -> None:
    stale = "<!-- state-diagram:begin -->\n```mermaid\nold\n```\n<!-- state-diagram:end -->\n"
    assert "old" not in render(stale)
    assert "submitted --> working" in render(stale)


def test_render_refuses_a_document_without_the_block() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        render(Path(__file__).read_text())


TESTING = Path(__file__).parent.parent / "docs" / "testing.md"


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown text, in order."""
    return re.findall(r"```python\n(.*?)```", text, re.S)


def guide_block(holding: str) -> str:
    """The Python block of the testing guide that holds ``holding``."""
    (block,) = [b for b in python_blocks(TESTING.read_text()) if holding in b]
    return block


#: The testing guide's blocks that need the core alone (with hypothesis), by what they hold.
CORE_ONLY_BLOCKS = ("driver = Driver(greeter)  # or Driver()", "class MultiTurnAgent")


def test_the_driver_example_in_the_testing_guide_runs() -> None:
    exec(compile(guide_block(CORE_ONLY_BLOCKS[0]), str(TESTING), "exec"), {})


@pytest.mark.parametrize("index", [0, 1])
def test_the_testing_guide_runs_with_the_installed_package_alone(
    tmp_path: Path, index: int
) -> None:
    # Outside the checkout, as a reader who installed the package runs it: only the installed
    # packages are importable (not ``examples`` or ``tests``).
    script = tmp_path / "block.py"
    script.write_text(guide_block(CORE_ONLY_BLOCKS[index]))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-I", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_fuzzing_recipe_in_the_testing_guide_runs_and_can_fail() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(guide_block("class MultiTurnAgent"), str(TESTING), "exec"), namespace)
    machine = namespace["MultiTurnAgent"]
    run_machine_as_test(machine, settings=settings(max_examples=60, stateful_step_count=30))

    # The same recipe catches an agent that breaks its promise (greets without being told).
    async def rude(ctx: Any) -> str:
        return "Whatever."

    class Rude(machine):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.driver = Driver(rude)

    with pytest.raises(AssertionError):
        run_machine_as_test(Rude, settings=settings(max_examples=60, stateful_step_count=30))


def test_the_benchmark_tables_are_the_latest_runs() -> None:
    parts = benchmark_parts(json.loads(RESULTS.read_text()), json.loads(GRPC_RESULTS.read_text()))
    for path in (BENCHMARKS, README):
        text = path.read_text()
        assert render_benchmarks(text, parts) == text, f"{path.name} is stale: run `make docs`"
    assert "<!-- bench:readme:begin -->" in README.read_text()


def test_a_benchmark_table_shows_each_figure_and_the_ratio() -> None:
    rows = [
        {"benchmark": "sends", "unit": "req/s", "ours": 2409.2, "a2a-sdk": 380.3},
        {"benchmark": "… p99", "unit": "ms", "ours": 10.64, "a2a-sdk": 150.1},
        {"benchmark": "growth", "unit": "x", "ours": 1.0132, "a2a-sdk": 137.4},
    ]
    rendered = table(rows, [("ours", "ours"), ("a2a-sdk", "sdk")], ("ours", "a2a-sdk"))
    assert rendered.splitlines()[2:] == [
        "| sends | req/s | 2,409 | 380 | 6.33\N{MULTIPLICATION SIGN} |",
        "| … p99 | ms | 10.6 | 150 | 0.07\N{MULTIPLICATION SIGN} |",
        "| growth | x | 1.01\N{MULTIPLICATION SIGN} | 137.40\N{MULTIPLICATION SIGN} |  |",
    ]


def test_a_part_that_is_not_there_once_is_refused() -> None:
    with pytest.raises(ValueError, match="exactly one bench:main part"):
        replace_part("no markers here", "bench:main", "x")


def test_the_settings_reference_is_the_parsers() -> None:
    text = SETTINGS.read_text()
    assert replace_part(text, "settings", settings_part()) == text, "run `make docs`"


def test_the_settings_reference_covers_every_setting_and_every_argument_of_serve() -> None:
    text = SETTINGS.read_text()
    for field in attrs.fields(Settings):
        assert f"| `{field.name}`" in text, field.name
    for name in inspect.signature(serve).parameters:
        if name not in ("agent", "settings", "changes"):
            assert f"`{name}=`" in text, name  # sock=, telemetry=: said beside the table
    # Every option of the command line is a setting's (or the agent, or the help and version).
    flags = {option.flag for _, option in options(Settings)} | {"--help", "--version"}
    for action in serve_options():
        if env_variable(action) is not None and action.option_strings:
            assert action.option_strings[0] in flags or action.option_strings[0] == "-h"


def test_the_machine_s_phase_diagrams_in_the_design_page_are_current() -> None:
    text = (Path(__file__).parent.parent / "docs" / "design.md").read_text()
    assert replace_part(text, "machine-phases", machine_part()) == text, "run `make docs`"
    assert "live --> reading: read the log" in text
