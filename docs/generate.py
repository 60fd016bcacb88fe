"""Regenerate the parts of the docs that are derived from code or from measurements
(``make docs``), so that no figure, setting or picture is typed twice:

- ``docs/core.md``: the task state diagram, drawn from the transition table, and the whole
  transport of ``examples/async_store.py``, which its tests run;
- ``docs/benchmarks.md`` and the README's speed table: the tables of the latest benchmark run,
  ``benchmarks/results/latest.json``;
- ``docs/design.md``: the phase diagram of each part of the machine, drawn from its table;
- ``docs/settings.md``: every setting of the command line, with its environment variable, its
  ``serve()`` argument and its default, read from the parser itself.

Each part sits between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``; ``tests/test_docs.py``
fails when one is stale.
"""

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from a2a_core.decisions import state_diagram

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "core.md"
EXAMPLE = ROOT / "examples" / "async_store.py"
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
README = ROOT / "README.md"
SETTINGS = ROOT / "docs" / "settings.md"
DESIGN = ROOT / "docs" / "design.md"
RESULTS = ROOT / "benchmarks" / "results" / "latest.json"
GRPC_RESULTS = ROOT / "benchmarks" / "results" / "grpc.json"
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


def replace_part(text: str, name: str, content: str) -> str:
    """``text`` with what stands between the markers of part ``name`` replaced by ``content``
    (a ``ValueError`` if the text has not exactly one such part)."""
    begin, end = re.escape(f"<!-- {name}:begin -->"), re.escape(f"<!-- {name}:end -->")
    pattern = re.compile(rf"({begin}\n).*?({end})", re.S)
    rendered, count = pattern.subn(lambda m: m.group(1) + content + m.group(2), text)
    if count != 1:
        raise ValueError(f"expected exactly one {name} part")
    return rendered


# --- the benchmark tables -------------------------------------------------------------------------


#: How many times one figure is another's.
TIMES = "\N{MULTIPLICATION SIGN}"


def figure(value: float | None, unit: str) -> str:
    """A measured value as the tables write it: whole numbers from 100 up, three significant
    digits below."""
    if value is None:
        return ""
    if unit == "x":
        return f"{value:.2f}{TIMES}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def ratio(mine: float | None, theirs: float | None) -> str:
    if not mine or not theirs:
        return ""
    found = mine / theirs
    return f"{found:.2f}{TIMES}" if found < 10 else f"{found:.1f}{TIMES}"


def table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[tuple[str, str]],
    compare: tuple[str, str] | None = None,
    *,
    only: Callable[[Mapping[str, Any]], bool] = lambda row: True,
) -> str:
    """A Markdown table of ``rows``: the benchmark, its unit, each of ``columns`` (key, heading)
    and, with ``compare``, the ratio of its two keys."""
    heads = ["benchmark", "unit", *(heading for _, heading in columns)]
    if compare is not None:
        heads.append(f"{compare[0]} / {compare[1]}")
    lines = ["| " + " | ".join(heads) + " |", "|---|---|" + "---:|" * (len(heads) - 2)]
    for row in rows:
        if not only(row):
            continue
        cells = [row["benchmark"], row["unit"]]
        cells += [figure(row.get(key), row["unit"]) for key, _ in columns]
        if compare is not None:
            mine, theirs = row.get(compare[0]), row.get(compare[1])
            cells.append("" if row["unit"] == "x" else ratio(mine, theirs))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: The README's speed table: a few rows of the main one.
README_ROWS = (
    "blocking send c=16",
    "blocking send c=16 p99",
    "blocking send c=64",
    "GetTask c=16, 10,000 stored",
    "SSE fan-out to 10",
    "memory per stored task (100,000)",
)


def _ran(results: Mapping[str, Any]) -> str:
    machine = results["machine"]
    return (
        f"{str(machine['when'])[:10]}, Python {machine['python']}, {machine['cpus']} cores "
        f"(`{machine['platform']}`)"
    )


def benchmark_parts(
    results: Mapping[str, Any], grpc: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """Each generated part of the benchmark pages, by name, from a run's results (and the gRPC
    run's, which is a run of its own)."""
    rows = results["rows"]
    main = [r for r in rows if "table" not in r]
    machine = results["machine"]
    when = str(machine["when"])[:10]
    parts = {
        "bench:run": f"The latest run: {_ran(results)}.\n",
        "bench:main": table(
            main,
            [("ours", "ours, asyncio"), ("ours-trio", "ours, trio"), ("a2a-sdk", "a2a-sdk")],
            ("ours", "a2a-sdk"),
        ),
        "bench:sqlite": table(
            [r for r in rows if r.get("table") == "sqlite"],
            [
                ("ours memory", "ours, memory"),
                ("ours sqlite FULL", "ours, SQLite FULL"),
                ("ours sqlite NORMAL", "ours, SQLite NORMAL"),
                ("sdk sqlite FULL", "a2a-sdk, SQLite"),
            ],
            ("ours sqlite FULL", "sdk sqlite FULL"),
        ),
        "bench:replicas": table(
            [r for r in rows if r.get("table") == "replicas"],
            [("ours", "ours"), ("a2a-sdk", "a2a-sdk")],
            ("ours", "a2a-sdk"),
        ),
        "bench:readme": (
            f"Measured with `make bench` on {when} (2 cores, Python {machine['python']}):\n\n"
            + table(
                main,
                [("ours", "ours, asyncio"), ("a2a-sdk", "a2a-sdk 1.3")],
                ("ours", "a2a-sdk"),
                only=lambda row: row["benchmark"] in README_ROWS,
            )
        ),
    }
    if grpc is not None:
        parts["bench:grpc"] = f"The latest run: {_ran(grpc)}.\n\n" + table(
            grpc["rows"],
            [("ours", "ours, asyncio"), ("ours-trio", "ours, trio"), ("a2a-sdk", "a2a-sdk")],
            ("ours", "a2a-sdk"),
        )
    return parts


def render_benchmarks(text: str, parts: Mapping[str, str]) -> str:
    for name, content in parts.items():
        if f"<!-- {name}:begin -->" in text:
            text = replace_part(text, name, content)
    return text


# --- the settings reference ----------------------------------------------------------------------


def _default(field: Any, option: Any) -> str:
    if option.shown is not None:
        return f"`{option.shown}`"
    value = field.default
    if value in (None, "", ()):
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10_000:
        return f"`{value:,}`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


#: How the reference marks the settings ``build_engine()`` does not take.
_SCOPE_MARKS = {"engine": "", "serve": " †", "cli": " ‡"}


def settings_part() -> str:
    """The settings reference: a table per group of :class:`~a2a_adapters.settings.Settings`."""
    from a2a_adapters._setting import Choice, options
    from a2a_adapters.cli import AGENT_HELP
    from a2a_adapters.settings import ENGINE_BASELINE, GROUPS, SERVING, Settings

    out = []
    for group in GROUPS:
        out.append(f"## {group.capitalize()}\n")
        out.append("| setting | option | environment | default | what it does |")
        out.append("|---|---|---|---|---|")
        if group == SERVING:
            out.append(f"| `agent` | `MODULE:OBJECT` | `A2A_AGENT` |  | {_cell(AGENT_HELP)} |")
        for field, option in options(Settings):
            if option.group != group:
                continue
            takes = option.switch is None
            kind = option.kind
            metavar = option.metavar or (
                "{" + ",".join(kind.choices) + "}" if isinstance(kind, Choice) else ""
            )
            flags = [
                f"{flag} {metavar}" if takes else flag
                for flag in (option.flag, *option.aliases)
                if flag
            ]
            row = [
                f"`{field.name}`{_SCOPE_MARKS[option.scope]}",
                _cell(", ".join(f"`{flag}`" for flag in flags)) or "(Python only)",
                f"`{option.environment}`" if option.environment else "",
                _default(field, option),
                _cell(option.help),
            ]
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    out.append("## Where `build_engine()` starts\n")
    out.append(
        "`build_engine()` takes every setting not marked † or ‡, with these defaults instead:\n"
    )
    for name, value in ENGINE_BASELINE.items():
        out.append(f"- `{name}`: `{value!r}`")
    return "\n".join(out) + "\n"


def machine_part() -> str:
    """A diagram per part of the machine that has phases, each drawn from its table."""
    from a2a_core.machine import _follow, _jobs, _outbox, _recovery, _replicas
    from a2a_core.machine._phases import phase_diagram

    tables = (
        ("Store jobs", _jobs.JOB_PHASES, _jobs.JobPhase.READING),
        ("Stream followers", _follow.FOLLOW_PHASES, _follow.FollowPhase.LIVE),
        ("The push outbox", _outbox.OUTBOX_PHASES, _outbox.OutboxPhase.UNREAD),
        ("The recovery of runs", _recovery.RECOVERY_PHASES, _recovery.RecoveryPhase.PENDING),
        ("The expiry sweep", _recovery.SWEEP_PHASES, _recovery.SweepPhase.UNSWEPT),
        ("Replica checks", _replicas.CHECK_PHASES, _replicas.CheckPhase.READING),
    )
    out = []
    for title, table, start in tables:
        out.append(f"### {title}\n\n```mermaid\n{phase_diagram(table, start)}```\n")
    return "\n".join(out)


# --- all of it ------------------------------------------------------------------------------------


def regenerate() -> list[Path]:
    """Bring every generated part up to date; the files that changed."""
    changed = []
    parts = benchmark_parts(json.loads(RESULTS.read_text()), json.loads(GRPC_RESULTS.read_text()))
    for path, update in (
        (DOC, render),
        (BENCHMARKS, lambda text: render_benchmarks(text, parts)),
        (README, lambda text: render_benchmarks(text, parts)),
        (SETTINGS, lambda text: replace_part(text, "settings", settings_part())),
        (DESIGN, lambda text: replace_part(text, "machine-phases", machine_part())),
    ):
        current = path.read_text()
        updated = update(current)
        if updated != current:
            path.write_text(updated)
            changed.append(path)
    return changed


if __name__ == "__main__":
    for path in regenerate():
        sys.stdout.write(f"updated {path.relative_to(ROOT)}\n")
