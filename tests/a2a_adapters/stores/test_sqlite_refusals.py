"""A file the SQLite store refuses is left exactly as it was found.

The store used to switch a file to its write-ahead log before asking whose file it was, so
pointing ``--store`` at another program's database by mistake was refused, yet changed that
database's journal mode on disk.
"""

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from a2a_adapters.stores import SqliteStore, StoreUnavailable


def foreign(path: Path) -> None:
    """Another program's database, in SQLite's default (rollback journal) mode."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO accounts (name) VALUES ('alice')")
    db.close()


def newer(path: Path) -> None:
    """A task store from a later release, in a journal mode that release might choose."""
    SqliteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode = DELETE")
        db.execute("PRAGMA user_version = 99")
    db.close()


def garbage(path: Path) -> None:
    path.write_bytes(b"\x00not a database\xff" * 1024)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (foreign, "is an SQLite file, but not a task store"),
        (newer, "has schema version 99"),
        (garbage, "file is not a database"),
    ],
)
def test_a_refused_file_is_left_as_it_was(
    tmp_path: Path, make: Callable[[Path], None], says: str
) -> None:
    path = tmp_path / "data.db"
    make(path)
    before = path.read_bytes()
    with pytest.raises(StoreUnavailable, match=says):
        SqliteStore(path)
    assert path.read_bytes() == before
    assert not path.with_name("data.db-wal").exists()
