"""``reelgate db backup FILE`` and ``reelgate db restore FILE`` (see
:mod:`gateway.app.backups`; the procedure: docs/operations.md, "Backup and restore").

``backup`` writes a new file (never over an existing one) from a database at any
revision of this Reelgate's, so a backup taken just before ``db upgrade`` is the way
back.  ``restore`` checks the file and the target first and refuses in one line, with
nothing changed; after it, the database is checked as ``db check`` does (exit 1 when it
needs ``db upgrade``: a backup from before an upgrade).

Backup files are mode 0600 from their creation (they hold players' ID numbers).  With
``--key-file`` (or ``REELGATE_BACKUP_KEY_FILE``) the backup is encrypted
(:mod:`gateway.app.backups.crypt`); ``restore`` decrypts such a file with the same key
and refuses, in one line and with nothing changed, without it or with another key.
``backup-key FILE`` writes a new backup key (0600, never over an existing file).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from gateway.app import database
from gateway.app.backups import crypt, pg_tools, private, sqlite_files
from gateway.app.options import add_database
from gateway.errors import OperatorError
from gateway.records.keys import (
    BACKUP_KEY_ENV,
    RecordKeyError,
    create_backup_key,
    load_backup_key,
)
from storage.db import is_sqlite, make_engine

KEYED_CHAIN_REVISION = "0014"  # audit_log's keyed chain and its head, as written today


def register(actions: Any) -> None:
    backup = actions.add_parser(
        "backup", help="write a backup of the whole database to a new FILE (online)"
    )
    backup.add_argument("file", metavar="FILE", help="the backup file to create")
    _add_key(backup, "encrypt the backup with this backup key")
    add_database(backup)
    backup.set_defaults(handler=_backup)
    restore = actions.add_parser(
        "restore", help="replace the database by a backup FILE (refused while a heat is on)"
    )
    restore.add_argument("file", metavar="FILE", help="a file written by reelgate db backup")
    _add_key(restore, "the backup key an encrypted backup was written with")
    add_database(restore)
    restore.set_defaults(handler=_restore)
    new_key = actions.add_parser("backup-key", help="write a new backup key to a new FILE (0600)")
    new_key.add_argument("file", metavar="FILE", help="the key file to create")
    new_key.set_defaults(handler=_backup_key)


def _add_key(parser: argparse.ArgumentParser, text: str) -> None:
    parser.add_argument(
        "--key-file", metavar="KEY", help=f"{text} (default: ${BACKUP_KEY_ENV}, if set)"
    )


def _key(args: argparse.Namespace) -> tuple[Path, bytes] | None:
    given = args.key_file or os.environ.get(BACKUP_KEY_ENV)
    if not given:
        return None
    path = Path(given)
    try:
        return path, load_backup_key(path)
    except RecordKeyError as exc:
        raise OperatorError(f"--key-file {exc}") from None


def _backup_key(args: argparse.Namespace) -> int:
    file = Path(args.file)
    if not file.resolve().parent.is_dir():
        raise OperatorError(f"{file}: folder {file.resolve().parent} does not exist")
    try:
        create_backup_key(file)
    except RecordKeyError as exc:
        raise OperatorError(str(exc)) from None
    print(f"backup key {file}  (keep it apart from the backups; without it they cannot be read)")
    return 0


def _sqlite_path(url: str) -> Path:
    name = make_url(url).database or ""
    if not name or name == ":memory:" or name.startswith("file:"):
        raise OperatorError("--database: a backup needs a SQLite file, not an in-memory database")
    return Path(name).expanduser()


def _backup(args: argparse.Namespace) -> int:
    file = Path(args.file)
    if file.exists():
        raise OperatorError(f"{file}: already exists; a backup never overwrites a file")
    if not file.resolve().parent.is_dir():
        raise OperatorError(f"{file}: folder {file.resolve().parent} does not exist")
    key = _key(args)
    url = database.resolve(args.database)
    if key is None:
        found = _write_backup(url, args.database, file, file)
    else:
        with private.scratch_folder() as scratch:
            plain = scratch / "plain"
            found = _write_backup(url, args.database, plain, file)
            _encrypt(plain, file, key[1])
    size = file.stat().st_size
    sealed = f", encrypted with {key[0]}" if key else ""
    print(f"backup of {database.safe_url(url)} at revision {found} written to {file} "
          f"({size} bytes{sealed})")  # fmt: skip
    return 0


def _write_backup(url: str, given: str | None, file: Path, named: Path) -> str:
    """Write the plain backup to ``file`` (``named``: the file the operator gave)."""
    if is_sqlite(url):
        # Read through sqlite3 (a plain read): the gateway may be writing meanwhile.
        source = _sqlite_path(url)
        try:
            found = _revision_set(url, sqlite_files.revision(source))
            sqlite_files.backup(source, file)
        except sqlite3.Error as exc:
            raise OperatorError(f"backup to {named} failed: {exc}") from None
    else:
        found = _revision_set(url, asyncio.run(database.revision_of(given)))
        pg_tools.dump(url, file)
    return found


def _encrypt(plain: Path, file: Path, key: bytes) -> None:
    """Encrypt into a 0600 partial file beside ``file``, renamed into place when whole."""
    partial = file.with_name(f".{file.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        private.create(partial)
        with plain.open("rb") as source, partial.open("r+b") as target:
            crypt.encrypt(source, target, key)
        os.replace(partial, file)
    finally:
        partial.unlink(missing_ok=True)


def _revision_set(url: str, found: str | None) -> str:
    if found is None:
        raise OperatorError(f"--database {database.safe_url(url)}: not set up (no revision)")
    return found


def _backup_revision(file: Path, sqlite: bool, named: Path) -> str | None:
    """The backup's revision, after checking it is a backup of the target's kind."""
    try:
        as_sqlite, as_dump = sqlite_files.is_sqlite_file(file), pg_tools.is_dump(file)
    except OSError as exc:
        raise OperatorError(f"{named}: cannot read ({exc.strerror})") from None
    if sqlite and not as_sqlite:
        kind = "a PostgreSQL dump" if as_dump else "not a SQLite backup"
        raise OperatorError(f"{named}: {kind}; --database is a SQLite file")
    if not sqlite and not as_dump:
        kind = "a SQLite file" if as_sqlite else "not a pg_dump -Fc backup"
        raise OperatorError(f"{named}: {kind}; --database is PostgreSQL")
    if not sqlite:
        return pg_tools.dump_revision(file)
    try:
        problem = sqlite_files.integrity(file)
        if problem != "ok":
            raise OperatorError(f"{named}: damaged ({problem}); nothing restored")
        return sqlite_files.revision(file)
    except sqlite3.Error as exc:
        raise OperatorError(f"{named}: not a readable SQLite database ({exc})") from None


async def _refuse_busy(url: str) -> None:
    from gateway.app.backups import guard  # the journal's tables: only for a restore

    engine = make_engine(url)
    try:
        await database.guarded(url, guard.refuse_busy_target(engine))
    finally:
        await engine.dispose()


def _restore(args: argparse.Namespace) -> int:
    file = Path(args.file)
    if not file.is_file():
        raise OperatorError(f"{file}: no such backup file")
    try:
        with file.open("rb") as handle:
            encrypted = crypt.has_magic(handle.read(len(crypt.MAGIC)))
    except OSError as exc:
        raise OperatorError(f"{file}: cannot read ({exc.strerror})") from None
    if not encrypted:
        return _restore_plain(args, file, file)
    key = _key(args)
    if key is None:
        raise OperatorError(f"{file}: an encrypted backup; give its key with --key-file")
    with private.scratch_folder() as scratch:
        plain = scratch / "plain"
        private.create(plain)
        try:
            with file.open("rb") as source, plain.open("r+b") as target:
                crypt.decrypt(source, target, key[1])
        except crypt.BackupCryptError as exc:
            raise OperatorError(f"{file}: {exc}; nothing restored") from None
        return _restore_plain(args, plain, file)


def _restore_plain(args: argparse.Namespace, file: Path, named: Path) -> int:
    """Restore the plain backup ``file`` (``named``: the file the operator gave)."""
    url = database.resolve(args.database, create=True)
    sqlite = is_sqlite(url)
    found = _backup_revision(file, sqlite, named)
    from gateway.app.backups.guard import check_backup_revision

    check_backup_revision(found, str(named))
    target = _sqlite_path(url) if sqlite else None
    if target is None or target.exists():
        asyncio.run(_refuse_busy(url))
    if target is not None:
        try:
            sqlite_files.restore(file, target)
        except sqlite3.Error as exc:
            raise OperatorError(f"restore into {target} failed: {exc}") from None
    else:
        pg_tools.restore(file, url)
    print(f"restored {named} (revision {found}) into {database.safe_url(url)}")
    _record(url, file, found)
    return report_revision(args.database)


def _record(url: str, file: Path, found: str | None) -> None:
    """The restore as an audited event the witness knows of (restore_record)."""
    from gateway.app.backups.restore_record import record_restore

    if found is None or found < KEYED_CHAIN_REVISION:  # no keyed chain to record it in
        print(f"revision {found} predates the keyed audit chain: the restore is not recorded")
        return
    recorded = asyncio.run(record_restore(url, file))
    if recorded is None:
        print("no audit key: the restore is not recorded; audit verify will see a rollback")
        return
    print(recorded.line())


def report_revision(given: str | None) -> int:
    """``db check``: print the revision; 0 only at the one this Reelgate needs."""
    found = asyncio.run(database.revision_of(given))
    head = database.head_revision()
    if found == head:
        print(f"database at revision {found} (current)")
        return 0
    print(f"database at revision {found or '(empty)'}, this reelgate needs {head}: "
          f"run {database.UPGRADE}")  # fmt: skip
    return 1
