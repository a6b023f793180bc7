"""Backup files readable by their owner only, from the moment they exist (issue 25.7).

A backup holds players' ID numbers.  Each file is created empty with ``O_EXCL`` and mode
0600, then ``fchmod`` to 0600 whatever the umask, *before* a byte is written into it
(SQLite's backup API and ``pg_dump --file`` then write into the existing file, which
keeps its mode), so no reader can open it in between.  A plain copy that is encrypted
afterwards is made in a private temporary folder (mode 0700) and removed at once.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MODE = 0o600


def create(path: Path) -> None:
    """Create ``path`` empty with mode 0600 (refused if it exists)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, MODE)
    try:
        os.fchmod(fd, MODE)
    finally:
        os.close(fd)


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A folder only this user can enter, removed with everything in it afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="reelgate-backup-"))  # mkdtemp: mode 0700
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
