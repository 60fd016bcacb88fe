import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test as run_machine_as_test

from a2a_core.testing import Driver
from docs.generate import DOC, render


def test_state_diagram_in_the_docs_is_current() -> None:
    text = DOC.read_text()
    assert render(text) == text, "docs/core.md is stale: run `make docs`"


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


def test_the_driver_example_in_the_testing_guide_runs() -> None:
    exec(compile(python_blocks(TESTING.read_text())[0], str(TESTING), "exec"), {})


def test_the_fuzzing_recipe_in_the_testing_guide_runs_and_can_fail() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(python_blocks(TESTING.read_text())[1], str(TESTING), "exec"), namespace)
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
