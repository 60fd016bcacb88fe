"""Regenerate the parts of the docs that are derived from code (``make docs``).

Today that is the task state diagram in ``docs/core.md``, drawn from the transition table, so the
picture can never disagree with the code; ``tests/test_docs.py`` fails when it is stale.
"""

import re
import sys
from pathlib import Path

from a2a_core import state_diagram

DOC = Path(__file__).with_name("core.md")
BLOCK = re.compile(
    r"(<!-- state-diagram:begin -->\n```mermaid\n).*?(```\n<!-- state-diagram:end -->)", re.S
)


def render(text: str) -> str:
    """``text`` with its state-diagram block replaced by the current diagram."""
    rendered, count = BLOCK.subn(lambda m: m.group(1) + state_diagram() + m.group(2), text)
    if count != 1:
        raise ValueError("docs/core.md must hold exactly one state-diagram block")
    return rendered


if __name__ == "__main__":
    current = DOC.read_text()
    updated = render(current)
    if updated != current:
        DOC.write_text(updated)
        sys.stdout.write(f"updated {DOC}\n")
