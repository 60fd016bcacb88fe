from pathlib import Path

import pytest

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
