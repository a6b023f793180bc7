"""``reelgate db backup`` and ``db restore`` as an operator runs them: round trips on
SQLite (online backup API) and PostgreSQL (``pg_dump -Fc`` / ``pg_restore``, into a
scratch database of its own), and the refusals that leave the target untouched."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url

from gateway.app.cli import main
from storage.db import make_sessionmaker
from storage.journal import HeatRun, Journal, RunState
from storage.lease import BankLease
from storage.tournament import Tournament
from tests.conftest import POSTGRES_URL

from ..keyed_engine import make_engine
from .conftest import _admin


@pytest.fixture
def scratch(database: str, tmp_path: Path) -> Iterator[str]:
    """A second, empty database of the same kind to restore into."""
    if make_url(database).get_backend_name() == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'restored.db'}"
        return
    name = f"rg_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _sql(url: str, *statements: str) -> None:
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await engine.dispose()


async def _tournaments(url: str) -> list[str]:
    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as s:
            return list(await s.scalars(select(Tournament.name).order_by(Tournament.name)))
    finally:
        await engine.dispose()


async def _add_tournament(url: str, name: str) -> None:
    from gateway.tournament.services import unit_of_work
    from gateway.tournament.services.setup import create_tournament
    from gateway.tournament.settings import TournamentSettings

    engine = make_engine(url)
    try:
        async with unit_of_work(make_sessionmaker(engine)) as s:
            await create_tournament(s, name, TournamentSettings(), actor="test")
    finally:
        await engine.dispose()


async def _run_on(url: str, state: RunState) -> int:
    """A journal run on bank A, driven to ``state`` (not settled)."""
    engine = make_engine(url)
    try:
        journal = Journal(make_sessionmaker(engine))
        run_id = await journal.create_run("A", ["A-001"], credits=100, seconds=60)
        if state is not RunState.SCHEDULED:
            await journal.step(run_id, state)
        return run_id
    finally:
        await engine.dispose()


async def _runs(url: str) -> int:
    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as s:
            return int(await s.scalar(select(func.count()).select_from(HeatRun)) or 0)
    finally:
        await engine.dispose()


def test_backup_and_restore_round_trip(
    database: str, scratch: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(_add_tournament(database, "Winter Cup"))
    backup = tmp_path / "before.backup"
    assert main(["db", "backup", str(backup), "--database", database]) == 0
    assert "at revision" in capsys.readouterr().out
    assert backup.stat().st_size > 0
    assert main(["db", "backup", str(backup), "--database", database]) == 2  # never overwritten

    # Into an empty database of the same kind (a new host).
    assert main(["db", "restore", str(backup), "--database", scratch]) == 0
    out = capsys.readouterr().out
    assert "restored" in out
    assert "(current)" in out  # checked as db check does
    assert asyncio.run(_tournaments(scratch)) == ["Winter Cup"]

    # Over the same database after a change: the change is undone.
    asyncio.run(_add_tournament(database, "Spring Cup"))
    assert asyncio.run(_tournaments(database)) == ["Spring Cup", "Winter Cup"]
    assert main(["db", "restore", str(backup), "--database", database]) == 0
    assert asyncio.run(_tournaments(database)) == ["Winter Cup"]
    assert main(["db", "check", "--database", database]) == 0


@pytest.mark.parametrize(
    ("state", "words"),
    [
        (RunState.RUNNING, "in progress (running)"),
        (RunState.COLLECTING, "in progress (collecting)"),
        (RunState.CLOSED, "not back in normal play"),
    ],
)
def test_restore_refuses_a_heat_in_progress(
    database: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    state: RunState,
    words: str,
) -> None:
    backup = tmp_path / "empty.backup"
    assert main(["db", "backup", str(backup), "--database", database]) == 0
    asyncio.run(_add_tournament(database, "Live Cup"))
    run_id = asyncio.run(_run_on(database, state))
    capsys.readouterr()

    assert main(["db", "restore", str(backup), "--database", database]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"heat run {run_id} on bank A" in err
    assert words in err
    assert "nothing changed" in err
    assert asyncio.run(_tournaments(database)) == ["Live Cup"]  # untouched
    assert asyncio.run(_runs(database)) == 1


async def _hold_lease(url: str) -> None:
    engine = make_engine(url)
    now = datetime.now(UTC)
    try:
        async with make_sessionmaker(engine).begin() as s:
            s.add(BankLease(
                bank_name="A", holder="serve", host="floor-1", pid=4242, token=1,
                acquired_at=now, renewed_at=now, expires_at=now + timedelta(minutes=5),
                released=False,
            ))  # fmt: skip
    finally:
        await engine.dispose()


def test_restore_refuses_a_database_a_gateway_serves(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "b.backup"
    assert main(["db", "backup", str(backup), "--database", database]) == 0
    asyncio.run(_hold_lease(database))
    capsys.readouterr()
    assert main(["db", "restore", str(backup), "--database", database]) == 2
    assert "bank A is held by serve on floor-1 pid 4242" in capsys.readouterr().err


async def _set_revision(url: str, revision: str) -> None:
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": revision})
    finally:
        await engine.dispose()


def test_restore_refuses_a_backup_newer_than_the_code(
    database: str, scratch: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.app.database import head_revision

    head = head_revision()
    asyncio.run(_set_revision(database, "9999"))  # as written by a later reelgate
    backup = tmp_path / "future.backup"
    try:
        assert main(["db", "backup", str(backup), "--database", database]) == 0
    finally:
        asyncio.run(_set_revision(database, head))
    assert main(["db", "upgrade", "--database", scratch]) == 0
    asyncio.run(_add_tournament(scratch, "Kept Cup"))
    capsys.readouterr()

    assert main(["db", "restore", str(backup), "--database", scratch]) == 2
    err = capsys.readouterr().err
    assert "revision 9999, newer than this reelgate" in err
    assert asyncio.run(_tournaments(scratch)) == ["Kept Cup"]


def test_restore_refuses_a_file_of_the_other_kind_or_damaged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
    assert main(["db", "upgrade", "--database", db]) == 0
    dump = tmp_path / "pg.dump"
    dump.write_bytes(b"PGDMP\x01\x0f\x00" + b"\x00" * 64)
    junk = tmp_path / "junk.backup"
    junk.write_bytes(b"not a database at all")
    capsys.readouterr()
    assert main(["db", "restore", str(dump), "--database", db]) == 2
    assert "a PostgreSQL dump; --database is a SQLite file" in capsys.readouterr().err
    assert main(["db", "restore", str(junk), "--database", db]) == 2
    assert "not a SQLite backup" in capsys.readouterr().err
    assert main(["db", "restore", str(tmp_path / "none"), "--database", db]) == 2
    assert "no such backup file" in capsys.readouterr().err


def test_sqlite_backup_is_consistent_while_a_writer_holds_a_transaction(tmp_path: Path) -> None:
    """The online backup copies the last committed state, not a writer's open changes."""
    file = tmp_path / "gw.db"
    db = f"sqlite+aiosqlite:///{file}"
    assert main(["db", "upgrade", "--database", db]) == 0
    asyncio.run(_add_tournament(db, "Committed"))
    writer = sqlite3.connect(file)
    try:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE tournaments SET name = 'Uncommitted'")
        backup = tmp_path / "online.backup"
        assert main(["db", "backup", str(backup), "--database", db]) == 0
    finally:
        writer.rollback()
        writer.close()
    restored = f"sqlite+aiosqlite:///{tmp_path / 'restored.db'}"
    assert main(["db", "restore", str(backup), "--database", restored]) == 0
    assert asyncio.run(_tournaments(restored)) == ["Committed"]


def _revision(url: str) -> str | None:
    """The database's revision; None when it is empty (or, SQLite, not even a file)."""
    from gateway.app.database import stored_revision

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and not Path(parsed.database or "").exists():
        return None

    async def read() -> str | None:
        engine = make_engine(url)
        try:
            return await stored_revision(engine)
        finally:
            await engine.dispose()

    return asyncio.run(read())


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that would leave a new file world-readable (0666 & ~0o000)."""
    old = os.umask(0o000)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("open_umask")
def test_backups_are_0600_whatever_the_umask(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25.7: a backup holds players' ID numbers; it is the owner's alone, plain or
    encrypted, from the moment the file exists."""
    asyncio.run(_add_tournament(database, "Winter Cup"))
    plain = tmp_path / "plain.backup"
    assert main(["db", "backup", str(plain), "--database", database]) == 0
    key = tmp_path / "backup.key"
    assert main(["db", "backup-key", str(key)]) == 0
    sealed = tmp_path / "sealed.backup"
    assert main(["db", "backup", str(sealed), "--key-file", str(key), "--database", database]) == 0
    for path in (plain, key, sealed):
        assert path.stat().st_mode & 0o777 == 0o600, path
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_encrypted_backup_round_trip_and_refusals(
    database: str,
    scratch: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An encrypted backup holds no plain text of the database, restores with its key
    (flag or REELGATE_BACKUP_KEY_FILE), and is refused in one line, with nothing changed,
    without a key, with another key, with a key file open to others, or damaged."""
    asyncio.run(_add_tournament(database, "Winter Cup"))
    key, other = tmp_path / "backup.key", tmp_path / "other.key"
    assert main(["db", "backup-key", str(key)]) == 0
    assert main(["db", "backup-key", str(key)]) == 2  # a key is never overwritten
    assert main(["db", "backup-key", str(other)]) == 0
    backup = tmp_path / "sealed.backup"
    assert main(["db", "backup", str(backup), "--key-file", str(key), "--database", database]) == 0
    assert "encrypted with" in capsys.readouterr().out
    content = backup.read_bytes()
    assert content.startswith(b"RGBACKUP")
    assert b"Winter Cup" not in content
    assert b"SQLite format 3" not in content
    assert b"PGDMP" not in content

    damaged = tmp_path / "damaged.backup"
    damaged.write_bytes(content[:-40] + bytes(b ^ 1 for b in content[-40:]))
    for argv, words in (
        ([], "an encrypted backup; give its key with --key-file"),
        (["--key-file", str(other)], "encrypted under another backup key"),
    ):
        capsys.readouterr()
        assert main(["db", "restore", str(backup), *argv, "--database", scratch]) == 2
        (err,) = capsys.readouterr().err.strip().splitlines()
        assert words in err
    assert main(["db", "restore", str(damaged), "--key-file", str(key), "--database", scratch]) == 2
    assert "does not authenticate" in capsys.readouterr().err
    key.chmod(0o640)
    assert main(["db", "restore", str(backup), "--key-file", str(key), "--database", scratch]) == 2
    assert "chmod 600" in capsys.readouterr().err
    key.chmod(0o600)
    assert _revision(scratch) is None  # nothing restored by any refusal

    monkeypatch.setenv("REELGATE_BACKUP_KEY_FILE", str(key))
    assert main(["db", "restore", str(backup), "--database", scratch]) == 0
    assert asyncio.run(_tournaments(scratch)) == ["Winter Cup"]
    assert main(["audit", "verify", "--database", scratch]) == 0
