"""Without an extra's packages, the adapters say which extra to install.

Each case runs in an interpreter where those packages cannot be imported (as after
``pip install a2a-sansio`` or ``pip install 'a2a-sansio[asyncio]'``), and checks what the user
is told: one line naming the extra, never a bare "No module named 'quart'".
"""

import re

import pytest

from a2a_adapters._extras import MissingExtra, needs
from tests.a2a_core.test_dependencies import CORE_MODULES
from tests.isolation import distribution_modules, run_without

#: What the trio extra adds to the asyncio one (hypercorn comes with quart).
TRIO_ONLY = ("trio", "quart_trio")

TRIO_MISSING = (
    r"the trio adapter needs the trio extra: pip install 'a2a-sansio\[trio\]' "
    r"\(no module named '(trio|quart_trio)'\)"
)


def test_the_adapters_without_the_asyncio_extra_name_it() -> None:
    # The package itself imports (so that the command line can say what to install in one
    # line); any of its names says it.
    code = (
        "import a2a_adapters\n"
        "try:\n"
        "    from a2a_adapters import serve\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    ran = run_without(code, allowed=CORE_MODULES | {"a2a_adapters"})
    assert ran.returncode == 0, ran.stderr
    assert re.fullmatch(
        r"MissingExtra a2a_adapters needs the asyncio extra: pip install 'a2a-sansio\[asyncio\]' "
        r"\(no module named '(anyio|httpx|quart|uvicorn|httptools|werkzeug)'\)\n",
        ran.stdout,
    ), ran.stdout


#: The command line's two entries: the ``a2a-sansio`` script's, and ``python -m``'s.
ENTRIES = {
    "script": (
        "import sys\nsys.argv = ['a2a-sansio', *ARGS]\n"
        "from a2a_adapters._command import main\nmain()\n"
    ),
    "-m": (
        "import runpy, sys\nsys.argv = ['a2a_adapters', *ARGS]\n"
        "runpy.run_module('a2a_adapters', run_name='__main__')\n"
    ),
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_the_command_without_the_asyncio_extra_says_one_line(entry: str) -> None:
    code = ENTRIES[entry].replace("ARGS", "['serve', 'examples.echo:agent', '--port', '0']")
    ran = run_without(code, allowed=CORE_MODULES | {"a2a_adapters", "examples"})
    assert ran.returncode == 2, ran.stderr
    assert ran.stdout == ""
    assert re.fullmatch(
        r"a2a-sansio: error: the a2a-sansio command needs the asyncio extra: "
        r"pip install 'a2a-sansio\[asyncio\]' \(no module named '[a-z_]+'\)\n",
        ran.stderr,
    ), ran.stderr


@pytest.mark.parametrize(
    ("options", "refused", "said"),
    [
        (
            ["--store", "redis://127.0.0.1:1/0"],
            ("coredis",),
            "--store redis://127.0.0.1:1/0 needs the redis extra",
        ),
        (["--grpc-port", "0"], ("google",), "--grpc-port 0: the gRPC binding needs the grpc extra"),
        (
            ["--jwt-issuer", "https://id.example", "--jwt-audience", "a"],
            ("jwt",),
            "--jwt-issuer https://id.example: a2a_adapters.oidc needs the oidc extra",
        ),
        (
            ["--sign-card", "key.pem"],
            ("jwt",),
            "--sign-card key.pem: a2a_adapters.signing needs the signing extra",
        ),
    ],
)
def test_an_option_without_its_extra_says_one_line_naming_it(
    options: list[str], refused: tuple[str, ...], said: str
) -> None:
    args = ["serve", "examples.echo:agent", "--port", "0", "--store", "memory", *options]
    code = ENTRIES["script"].replace("ARGS", repr(args))
    ran = run_without(code, refused=refused)
    assert ran.returncode == 2, ran.stderr
    (line,) = ran.stderr.splitlines()
    assert line.startswith(f"a2a-sansio: error: {said}: pip install 'a2a-sansio["), line
    assert "Traceback" not in ran.stderr


def test_the_cli_on_trio_without_the_trio_extra_says_one_line() -> None:
    code = (
        "from a2a_adapters.cli import main\n"
        "main(['serve', 'examples.echo:agent', '--loop', 'trio', '--port', '0'])\n"
    )
    ran = run_without(code, refused=TRIO_ONLY)
    assert ran.returncode == 2
    assert ran.stdout == ""
    assert re.fullmatch(f"a2a-sansio: error: {TRIO_MISSING}\n", ran.stderr), ran.stderr


def test_serve_on_trio_without_the_trio_extra_names_it_before_it_listens() -> None:
    code = (
        "from a2a_adapters import serve\n"
        "async def agent(ctx):\n"
        "    return 'hi'\n"
        "try:\n"
        "    serve(agent, port=0, loop='trio')\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    ran = run_without(code, refused=TRIO_ONLY)
    assert ran.returncode == 0, ran.stderr
    assert re.fullmatch(f"MissingExtra {TRIO_MISSING}\n", ran.stdout), ran.stdout
    assert "A2A server on" not in ran.stderr  # it had not started


def test_a_missing_module_that_no_extra_brings_is_left_as_it_is() -> None:
    with pytest.raises(ModuleNotFoundError) as raised, needs("trio", "the trio adapter"):
        raise ModuleNotFoundError("No module named 'sortedcontainers'", name="sortedcontainers")
    assert not isinstance(raised.value, MissingExtra)


def test_a_missing_submodule_of_an_extra_names_the_extra() -> None:
    with pytest.raises(MissingExtra, match=r"a2a-sansio\[trio\].*'trio'"), needs("trio", "it"):
        raise ModuleNotFoundError("No module named 'trio.lowlevel'", name="trio.lowlevel")


#: What ``make serve`` installs: the core and the asyncio extra (pyproject.toml's list).
ASYNCIO_EXTRA = (
    CORE_MODULES
    | distribution_modules("quart", "uvicorn", "httptools", "uvloop", "anyio", "httpx")
    | {"a2a_adapters", "examples"}
)


def test_the_asyncio_extra_alone_serves_on_sqlite_and_names_the_redis_extra() -> None:
    # What `make serve` does on a fresh machine: the command line, on its SQLite default,
    # with no coredis (nor any other extra's package) installed.
    code = (
        "import tempfile\n"
        "from a2a_adapters import cli\n"
        "from a2a_adapters.stores import open_store\n"
        "store = open_store('sqlite:' + tempfile.mkdtemp() + '/tasks.db')\n"
        "print(type(store).__name__)\n"
        "store.close()\n"
        "try:\n"
        "    open_store('redis://127.0.0.1:1/0')\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    ran = run_without(code, allowed=ASYNCIO_EXTRA)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == "SqliteStore"
    assert re.fullmatch(
        r"MissingExtra --store redis://127.0.0.1:1/0 needs the redis extra: "
        r"pip install 'a2a-sansio\[redis\]' \(no module named 'coredis'\)",
        lines[1],
    ), lines
