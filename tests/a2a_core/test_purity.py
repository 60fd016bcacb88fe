"""The dependency rule: the core imports no I/O, no clock and no randomness, and awaits nothing.

Every file under ``src/a2a_core`` is parsed (not imported) and scanned for imports of the
forbidden modules and for calls that read the clock or draw random values. The scanner itself is
checked against synthetic sources, so a scanner that flags nothing cannot pass. The core has no
``async def``, ``await``, ``async for`` or ``async with`` either: it is a synchronous machine,
and anything that awaits belongs to a transport.
"""

import ast
from pathlib import Path

import pytest

import a2a_core

CORE = Path(a2a_core.__file__).parent
SOURCES = sorted(CORE.rglob("*.py"))

FORBIDDEN_MODULES = frozenset(
    {
        "asyncio",
        "trio",
        "anyio",
        "quart",
        "hypercorn",
        "httpx",
        "sqlite3",
        "redis",
        "socket",
        "threading",
        "time",
        "random",
        "uuid",
        "os",
        # Telemetry is the adapters' (a2a_adapters._telemetry): the core emits nothing.
        "opentelemetry",
    }
)
#: Dotted call names (as written, or their last two parts) that read the world.
FORBIDDEN_CALLS = frozenset(
    {
        "datetime.now",
        "datetime.utcnow",
        "datetime.today",
        "date.today",
        "time.time",
        "time.monotonic",
        "time.perf_counter",
        "uuid.uuid1",
        "uuid.uuid4",
        "os.urandom",
        "secrets.token_hex",
    }
)


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else ``None``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def violations(source: str, filename: str = "<source>") -> list[str]:
    """Every forbidden import or call in ``source``, as ``file:line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    found.append(f"{where}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0 and module.split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"{where}: from {module} import ...")
        elif isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.AsyncFor | ast.AsyncWith):
            found.append(f"{where}: {type(node).__name__}")
        elif isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is None:
                continue
            tail = ".".join(name.split(".")[-2:])
            randomness = name.split(".")[0] in ("random", "secrets")
            if name in FORBIDDEN_CALLS or tail in FORBIDDEN_CALLS or randomness:
                found.append(f"{where}: call {name}()")
            elif name in ("__import__", "importlib.import_module"):
                found.append(f"{where}: dynamic import")
    return found


def test_the_core_has_sources() -> None:
    names = {path.name for path in SOURCES}
    assert {"__init__.py", "_core.py", "_reducer.py", "_states.py", "_http.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_is_pure(path: Path) -> None:
    assert violations(path.read_text(encoding="utf-8"), path.name) == []


@pytest.mark.parametrize(
    "source",
    [
        "import asyncio",
        "import os.path",
        "import time as clock",
        "from trio import sleep",
        "from anyio.abc import TaskGroup",
        "import quart, json",
        "import json\nimport hypercorn.config",
        "from httpx import AsyncClient",
        "import sqlite3",
        "import redis.asyncio",
        "from socket import socket",
        "import threading",
        "from random import choice",
        "from uuid import uuid4",
        "def f():\n    import asyncio\n",
        "from datetime import datetime\nnow = datetime.now()",
        "import datetime\nnow = datetime.datetime.now(datetime.UTC)",
        "from datetime import datetime\nx = datetime.utcnow()",
        "from datetime import date\nx = date.today()",
        "import time\nx = time.time()",
        "import uuid\nx = uuid.uuid4()",
        "import random\nx = random.random()",
        "import random as r\nx = random.choice([1])",
        "x = __import__('os')",
        "import importlib\nx = importlib.import_module('socket')",
        "async def f():\n    pass\n",
        "async def f(x):\n    return await x\n",
        "async def f(xs):\n    async for x in xs:\n        pass\n",
        "async def f(cm):\n    async with cm:\n        pass\n",
    ],
)
def test_the_scanner_flags_impure_sources(source: str) -> None:
    assert violations(source) != [], source


@pytest.mark.parametrize(
    "source",
    [
        "import json",
        "from datetime import UTC, datetime\nx = datetime(2025, 1, 1, tzinfo=UTC)",
        "from . import _model",
        "from ._time import now",  # a relative module called like a forbidden one is ours
        "import hashlib\nx = hashlib.sha256(b'').hexdigest()",
        "x = ctx.now",  # the injected clock is an attribute, not a call
        "import attrs",
    ],
)
def test_the_scanner_passes_pure_sources(source: str) -> None:
    assert violations(source) == [], source


def test_the_scanner_reports_where() -> None:
    assert violations("import json\nimport asyncio\n", "x.py") == ["x.py:2: import asyncio"]
