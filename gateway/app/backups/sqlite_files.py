"""SQLite backups with the online backup API (``sqlite3.Connection.backup``).

The copy is taken page by page under SQLite's own locking, so it is consistent even while
a gateway writes (WAL included), and written to a temporary file renamed into place once
it passed ``PRAGMA integrity_check``: a backup file either is whole or is not there.
The file is mode 0600 from its creation (:mod:`.private`): it holds players' ID numbers.
A restore copies the same way in the other direction, into the target file in one go.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from gateway.app.backups import private

HEADER = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(HEADER)) == HEADER


@contextlib.contextmanager
def _connect(path: Path, *, read_only: bool) -> Iterator[sqlite3.Connection]:
    uri = f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rwc'}"
    conn = sqlite3.connect(uri, uri=True)
    try:
        yield conn
    finally:
        conn.close()


def integrity(path: Path) -> str:
    """``ok``, or SQLite's first complaint about the file."""
    with _connect(path, read_only=True) as conn:
        row = conn.execute("PRAGMA integrity_check").fetchone()
    return str(row[0]) if row else "no answer"


def revision(path: Path) -> str | None:
    """The file's Alembic revision (None: not a Reelgate database)."""
    with _connect(path, read_only=True) as conn:
        has = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
        ).fetchone()
        if not has:
            return None
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if row is None else str(row[0])


def backup(source: Path, target: Path) -> None:
    """Copy ``source`` into the new file ``target`` (checked; see the module docstring)."""
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        private.create(partial)  # 0600 before SQLite writes a page into it
        with _connect(source, read_only=True) as src, _connect(partial, read_only=False) as dst:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        found = integrity(partial)
        if found != "ok":
            raise sqlite3.DatabaseError(f"the copy failed its integrity check: {found}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def restore(backup_file: Path, target: Path) -> None:
    """Replace ``target``'s content by ``backup_file``'s (the target file is kept, so its
    owner and mode stay; other connections see the old or the new content, never a mix)."""
    with _connect(backup_file, read_only=True) as src, _connect(target, read_only=False) as dst:
        src.backup(dst)
