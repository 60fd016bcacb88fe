"""The core's tests mirror its sources, so that the tests of a module are found where it is.

``tests/a2a_core/<folder>/test_<name>.py`` tests ``src/a2a_core/<folder>/_<name>.py`` (or the
public ``<name>.py``); ``test_<name>_<aspect>.py`` tests one aspect of that module at length
(``wire/test_jcs_oracle.py``: ``_jcs`` against an oracle). A test about the whole core, not one
module, is named in :data:`CROSS_CUTTING` with the reason, and nowhere else.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "src" / "a2a_core"
TESTS = ROOT / "tests" / "a2a_core"

#: Tests of the whole core rather than of one module, each with what it is about.
CROSS_CUTTING = {
    "test_dependencies.py": "the core installs and runs with attrs and cattrs alone",
    "test_public.py": "the names every public namespace exports",
    "test_purity.py": "no I/O, clock, randomness or await in any source file",
    "test_hostile.py": "the hostile fuzz invariant through the whole server",
    "test_limits.py": "hostile input through the whole server, refused where it enters",
}

#: Tests of the machine and the reducer, still at the top while ``machine/`` is being split into
#: sub-machines; they move beside their modules with that split, and leave this list then.
PENDING = {
    "test_server.py",
    "test_reducer.py",
    "test_reducer_machine.py",
    "test_replicas.py",
    "test_replicas_property.py",
    "test_capacity.py",
    "test_run_limits.py",
    "testing/test_server_machine.py",
}


def mirrored_module(test: Path) -> Path | None:
    """The source module ``test`` (a path under ``tests/a2a_core``) mirrors, if there is one."""
    folder = SOURCES / test.parent
    words = test.stem.removeprefix("test_").split("_")
    # The longest name first: test_push_policy.py is _push_policy's, not a _push module's.
    for end in range(len(words), 0, -1):
        name = "_".join(words[:end])
        for candidate in (folder / f"_{name}.py", folder / f"{name}.py"):
            if candidate.is_file():
                return candidate
    return None


def test_every_core_test_module_mirrors_a_source_module() -> None:
    strays = []
    for path in sorted(TESTS.rglob("test_*.py")):
        test = path.relative_to(TESTS)
        if test.as_posix() in CROSS_CUTTING or test.as_posix() in PENDING:
            continue
        if mirrored_module(test) is None:
            strays.append(test.as_posix())
    assert strays == [], (
        f"{strays} name no module of src/a2a_core: tests/a2a_core/<folder>/test_<name>.py tests"
        " src/a2a_core/<folder>/_<name>.py; move it there, or name it in CROSS_CUTTING with why"
    )


def test_the_lists_name_tests_that_exist() -> None:
    """A list that names a file no longer there would let a new file of that name in unseen."""
    for name in [*CROSS_CUTTING, *PENDING]:
        assert (TESTS / name).is_file(), name
    for name in CROSS_CUTTING:
        assert mirrored_module(Path(name)) is None, f"{name} mirrors a module: move it beside it"


def test_every_test_folder_is_a_package_of_a_source_folder() -> None:
    """Tests import each other as ``tests.a2a_core.<folder>…``: each folder needs its
    ``__init__.py``, and names a folder of the core (``tests/a2a_core/wire`` for ``wire/``)."""
    for folder in sorted(p for p in TESTS.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        assert (folder / "__init__.py").is_file(), folder
        assert (SOURCES / folder.relative_to(TESTS) / "__init__.py").is_file(), folder


def test_the_mirror_rule_is_the_one_described() -> None:
    """The matcher itself, on names that must and must not pass."""
    assert mirrored_module(Path("wire/test_v1.py")) == SOURCES / "wire" / "_v1.py"
    assert mirrored_module(Path("wire/test_jcs_oracle.py")) == SOURCES / "wire" / "_jcs.py"
    assert mirrored_module(Path("decide/test_push_policy.py")) == (
        SOURCES / "decide" / "_push_policy.py"
    )
    assert mirrored_module(Path("test_json.py")) == SOURCES / "_json.py"
    assert mirrored_module(Path("testing/test_strategies.py")) == (
        SOURCES / "testing" / "strategies.py"
    )
    assert mirrored_module(Path("test_v1.py")) is None  # at the top, not in wire/
    assert mirrored_module(Path("store/test_stored.py")) is None
    assert mirrored_module(Path("nowhere/test_v1.py")) is None
