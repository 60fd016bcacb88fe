"""Run Python code in a fresh interpreter where some installed packages are not there.

A test of what a smaller install can do (the core alone, the adapters without the trio extra)
need not build that install: :func:`run_without` starts ``python -I`` with an import hook, put in
before the code runs, that refuses every module outside the standard library and ``allowed``
(or every module in ``refused``) exactly as a missing package is refused: with
:class:`ModuleNotFoundError` naming it. :func:`distribution_modules` says which top-level modules
a set of installed distributions, and everything they require, bring.
"""

import re
import subprocess
import sys
from collections.abc import Collection
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions

__all__ = ["distribution_modules", "run_without"]

#: Seconds the interpreter may take before the test fails.
TIMEOUT = 60.0

# Runs first in the child. ``LOADED`` (printed by ``report_loaded()``) is every module imported
# after the hook went in whose top-level name is not the standard library's.
_HOOK = """\
import sys

class _Refuse:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in REFUSED or (
            ALLOWED is not None and top not in ALLOWED and top not in sys.stdlib_module_names
        ):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

_BEFORE = set(sys.modules)
sys.meta_path.insert(0, _Refuse())

def report_loaded():
    tops = {m.partition(".")[0] for m in set(sys.modules) - _BEFORE}
    print(sorted(tops - set(sys.stdlib_module_names)))
"""


def run_without(
    code: str,
    *,
    allowed: Collection[str] | None = None,
    refused: Collection[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in ``python -I``: only the standard library and the top-level modules
    ``allowed`` can be imported (all can, with ``None``), and none of those ``refused``."""
    names = None if allowed is None else set(allowed)
    header = f"ALLOWED = {names!r}\nREFUSED = {set(refused)!r}\n"
    return subprocess.run(
        [sys.executable, "-I", "-c", header + _HOOK + code],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(name: str) -> set[str]:
    """``name`` and every installed distribution it requires (not counting its extras)."""
    found: set[str] = set()
    todo = [name]
    while todo:
        current = _canonical(todo.pop())
        if current in found:
            continue
        try:
            requires = distribution(current).requires or []
        except PackageNotFoundError:
            continue  # required only where a marker holds (an older Python): not here
        found.add(current)
        for requirement in requires:
            if "extra ==" not in requirement:
                match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
                assert match is not None, requirement
                todo.append(match.group())
    return found


def distribution_modules(*names: str) -> frozenset[str]:
    """The top-level modules that the distributions ``names`` and their requirements install."""
    wanted = set().union(*map(_requirements, names))
    return frozenset(
        module
        for module, owners in packages_distributions().items()
        if any(_canonical(owner) in wanted for owner in owners)
    )
