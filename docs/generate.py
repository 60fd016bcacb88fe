"""Regenerate the parts of the docs that are derived from code (``make docs``).

Two parts of ``docs/core.md``: the task state diagram, drawn from the transition table, and the
whole transport of ``examples/async_store.py``, which its tests run, so that neither the picture
nor the listing can disagree with the code; ``tests/test_docs.py`` fails when one is stale.
"""

import re
import sys
from pathlib import Path

from a2a_core.decisions import state_diagram

DOC = Path(__file__).with_name("core.md")
EXAMPLE = Path(__file__).parent.parent / "examples" / "async_store.py"
BLOCK = re.compile(
    r"(<!-- state-diagram:begin -->\n```mermaid\n).*?(```\n<!-- state-diagram:end -->)", re.S
)
LISTING = re.compile(
    r"(<!-- example:async_store:begin -->\n).*?(<!-- example:async_store:end -->)", re.S
)


def render(text: str, example: str | None = None) -> str:
    """``text`` with its state-diagram block replaced by the current diagram and, if it has one,
    its listing of the async-store example by ``example`` (the file's text, read if not given)."""
    rendered, count = BLOCK.subn(lambda m: m.group(1) + state_diagram() + m.group(2), text)
    if count != 1:
        raise ValueError("docs/core.md must hold exactly one state-diagram block")
    if LISTING.search(rendered):
        code = EXAMPLE.read_text() if example is None else example
        listing = f"```python\n{code}```\n"
        rendered = LISTING.sub(lambda m: m.group(1) + listing + m.group(2), rendered)
    return rendered


if __name__ == "__main__":
    current = DOC.read_text()
    updated = render(current)
    if updated != current:
        DOC.write_text(updated)
        sys.stdout.write(f"updated {DOC}\n")
