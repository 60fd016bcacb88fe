"""A griffe extension for the API reference: the docstrings are written for readers of the
source, with reST roles (``:class:`~a2a_core.Core``` and ``:meth:`tick```), which Markdown would
show as they are. Each role becomes a code span of the name a reader would write (the last
dotted part where the role says ``~``, as Sphinx shows it)."""

import re
from typing import Any

import griffe

__all__ = ["RolesToCode"]

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|data|mod|exc|obj|const)?:`(~?)([^`]+)`")


def _as_code(match: re.Match[str]) -> str:
    name = match.group(2)
    if match.group(1):
        name = name.rsplit(".", 1)[-1]
    return f"`{name}`"


class RolesToCode(griffe.Extension):
    """Rewrites reST roles in every docstring as Markdown code spans."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is not None and ":`" in docstring.value:
            docstring.value = _ROLE.sub(_as_code, docstring.value)
