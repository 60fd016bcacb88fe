"""Starting the servers under test and talking to them: shared by every benchmark.

Each server runs in its own process on 127.0.0.1, started and stopped here, so a benchmark
never measures one server while the other is busy.
"""

import json
import os
import platform
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import httpx

#: The A2A servers under test: name -> ``python -m`` arguments (the port goes after the module).
SERVERS: dict[str, tuple[str, ...]] = {
    "ours": ("benchmarks.servers.ours", "asyncio"),
    "ours-trio": ("benchmarks.servers.ours", "trio"),
    "a2a-sdk": ("benchmarks.servers.sdk",),
}
#: The servers of the SQLite comparison, each on a fresh file (``{db}`` in an argument stands for
#: its path): ours on its memory store and on SQLite at either durability, the SDK on its SQL
#: store (SQLite's own defaults: a rollback journal, synchronous=FULL).
SQLITE_SERVERS: dict[str, tuple[str, ...]] = {
    "ours memory": ("benchmarks.servers.ours", "asyncio", "memory"),
    "ours sqlite FULL": ("benchmarks.servers.ours", "asyncio", "sqlite:{db}?synchronous=full"),
    "ours sqlite NORMAL": ("benchmarks.servers.ours", "asyncio", "sqlite:{db}?synchronous=normal"),
    "sdk sqlite FULL": ("benchmarks.servers.sdk", "sqlite:{db}"),
}
#: Each A2A server's bare stacks (see ``benchmarks.servers.bare``): its server software with a
#: raw ASGI endpoint ("server"), and a route of the framework it is built on ("framework").
BARE: dict[str, dict[str, tuple[str, ...]]] = {
    "ours": {"server": ("asgi",), "framework": ("quart",)},
    "ours-trio": {"server": ("asgi-trio",), "framework": ("quart-trio",)},
    "a2a-sdk": {"server": ("asgi-uvicorn",), "framework": ("starlette",)},
}
HEADERS = {"A2A-Version": "1.0"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def server(
    name: str,
    *,
    bare: str | None = None,
    timeout: float = 20.0,
    database: Path | None = None,
) -> Iterator[str]:
    """Run the named server (or its ``bare`` stack, "server" or "framework"); yield its base
    URL once it answers; stop it afterwards.

    A server with a database file uses ``database`` (which the caller then reads, and removes),
    or else a file in a temporary directory removed afterwards."""
    with serving(name, bare=bare, timeout=timeout, database=database) as served:
        yield served.url


@contextmanager
def serving(
    name: str,
    *,
    bare: str | None = None,
    timeout: float = 20.0,
    database: Path | None = None,
) -> Iterator["Served"]:
    """:func:`server`, yielding the :class:`Served` server (its process too, whose CPU time
    :func:`run_seconds` tells) rather than its URL alone."""
    port = free_port()
    if bare is None:
        module, *args = {**SERVERS, **SQLITE_SERVERS}[name]
    else:
        module, args = "benchmarks.servers.bare", list(BARE[name][bare])
    with ExitStack() as stack:
        if any("{db}" in arg for arg in args):
            if database is None:
                folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="a2a-bench-"))
                database = Path(folder) / "tasks.db"
            args = [arg.replace("{db}", str(database)) for arg in args]
        command = [sys.executable, "-m", module, str(port), *args]
        with processes([Launch(name, command, port)], timeout) as (served,):
            yield served


@attrs.frozen
class Launch:
    """A server to start: its name in messages, its command, the port it will listen on."""

    name: str
    command: list[str]
    port: int


@attrs.frozen
class Served:
    """A server that answers: its name, base URL, port and process (whose PID tells its CPU
    time, see :func:`cpu_seconds`)."""

    name: str
    url: str
    port: int
    process: "subprocess.Popen[bytes]"


@contextmanager
def processes(
    launches: list[Launch],
    timeout: float = 20.0,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[list[Served]]:
    """Start every server of ``launches`` at once; yield them once each one's card answers (in
    the order given); stop them all afterwards."""
    started: list[Served] = []
    try:
        for launch in launches:
            process = subprocess.Popen(
                launch.command,
                cwd=cwd,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            url = f"http://127.0.0.1:{launch.port}"
            started.append(Served(launch.name, url, launch.port, process))
        deadline = time.monotonic() + timeout
        for served in started:
            _wait_for_card(served, deadline)
        yield started
    finally:
        for served in started:
            served.process.terminate()
        for served in started:
            try:
                served.process.wait(10)
            except subprocess.TimeoutExpired:
                served.process.kill()
                served.process.wait(10)


def _wait_for_card(served: Served, deadline: float) -> None:
    while True:
        try:
            httpx.get(served.url + "/.well-known/agent-card.json", timeout=1).raise_for_status()
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline or served.process.poll() is not None:
                raise RuntimeError(f"{served.name} did not start") from None
            time.sleep(0.05)


def cpu_seconds(pid: int | str = "self") -> float:
    """CPU time (user and system) the process ``pid`` has used so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    # utime and stime are fields 14 and 15 of stat(5); the text after the ")" starts at 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_seconds(pid: int) -> float:
    """Time the threads of process ``pid`` alive now have spent running on a CPU so far, in
    seconds, to the nanosecond (``/proc/PID/task/*/schedstat``), where :func:`cpu_seconds`
    counts in ticks of ten milliseconds: the CPU a request over a short run needs the finer
    clock. Ticks if the kernel keeps no such figures."""
    total, found = 0, False
    for path in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
        found = True
    return total / 1e9 if found else cpu_seconds(pid)


def machine_busy_seconds() -> float:
    """CPU time every core of the machine has spent busy so far (all processes), in seconds."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    # user, nice, system, idle, iowait, irq, softirq, steal: all but idle and iowait are busy.
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / os.sysconf("SC_CLK_TCK")


def stored_bytes(path: Path) -> int | None:
    """Bytes of the SQLite file at ``path`` (a stopped server's) with its write-ahead log
    checkpointed into it first, so that both stores are measured the same way; ``None`` if the
    server kept no file."""
    if not path.exists():
        return None
    with sqlite3.connect(path) as db:  # commits on the way out; the checkpoint needs none
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def rpc_body(method: str, params: Any, rpc_id: int | str = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


def message(text: str, message_id: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


def write_results(
    out: Path, *, started: float, quick: bool, rows: list[Any], targets: list[Any]
) -> dict[str, Any]:
    """A run's results as JSON at ``out``, with the machine it ran on; returns them."""
    results = {
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
        },
        "seconds": round(time.monotonic() - started, 1),
        "quick": quick,
        "rows": rows,
        "targets": targets,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    return results


def figure(value: Any) -> str:
    """A measured figure as the tables print it: three significant digits or so."""
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def target_report(judged: list[dict[str, Any]]) -> str:
    """A line per target: met or MISSED, with what was measured against the goal."""
    lines = []
    for t in judged:
        mark = "met   " if t["met"] else "MISSED"
        lines.append(f"{mark} {t['target']}: {t['measured']:.2f} (goal {t['goal']})")
    return "\n".join(lines)
