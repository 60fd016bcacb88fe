import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test as run_machine_as_test

from a2a_core import AgentContext, Message, MissingInput, Part, Role, agent_message
from a2a_core.testing import Driver
from docs.generate import DOC, EXAMPLE, render


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


def test_the_driver_example_in_the_testing_guide_runs() -> None:
    exec(compile(python_blocks(TESTING.read_text())[0], str(TESTING), "exec"), {})


@pytest.mark.parametrize("index", [0, 1])
def test_the_testing_guide_runs_with_the_installed_package_alone(
    tmp_path: Path, index: int
) -> None:
    # Outside the checkout, as a reader who installed the package runs it: only the installed
    # packages are importable (not ``examples`` or ``tests``).
    script = tmp_path / "block.py"
    script.write_text(python_blocks(TESTING.read_text())[index])
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


README = Path(__file__).parent.parent / "README.md"


def _readme_agent() -> Any:
    """The agent of the README's first code block."""
    namespace: dict[str, Any] = {}
    exec(compile(python_blocks(README.read_text())[0], str(README), "exec"), namespace)
    return namespace["agent"]


def test_the_readme_agent_asks_then_greets() -> None:
    driver = Driver(_readme_agent())
    first = driver.send("hi")
    driver.run_agents()
    task = first.result()["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert task["status"]["message"]["parts"][0]["text"] == "What is your name?"
    second = driver.send("Ada", task_id=task["id"])
    driver.run_agents()
    done = second.result()["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["status"]["message"]["parts"][0]["text"] == "Hello, Ada!"


def test_the_readme_agent_counts_the_users_turns_not_the_agents_messages() -> None:
    # The history holds the agent's messages too (progress, questions): one turn of the user's
    # beside them is still one turn.
    said = Message("m-1", Role.USER, (Part(text="hi"),))
    history = (agent_message("Hello! I greet people."), agent_message("Working on it"), said)
    context = AgentContext("t-1", "c-1", said, history, principal="anonymous")
    with pytest.raises(MissingInput):
        asyncio.run(_readme_agent()(context))
