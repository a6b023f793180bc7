"""``reelgate users`` (issue 25.3): a weak password refused in one line naming the rule
(add and reset), nothing written; ``users unlock`` clears a login backoff, audited."""

from __future__ import annotations

import asyncio
import io
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, update

import storage.accounts
from gateway.app import configfile
from gateway.app.cli import main
from gateway.app.database import head_revision, open_engine
from storage.accounts import User
from storage.audit import AuditEntry
from storage.db import make_sessionmaker

PASSWORD = "correct horse battery"


@pytest.fixture
def db(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    )
    monkeypatch.delenv("REELGATE_DATABASE_URL", raising=False)
    monkeypatch.setattr(configfile, "DEFAULT_FILE", tmp_path / "absent.toml")
    url = f"sqlite:///{tmp_path / 'desk.db'}"
    assert main(["db", "upgrade", "--database", url]) == 0
    return url


def _users(monkeypatch: pytest.MonkeyPatch, db: str, *argv: str, stdin: str = "") -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main(["users", *argv, "--database", db])


async def _rows(db: str) -> tuple[list[User], list[AuditEntry]]:
    _, engine = await open_engine(db)
    try:
        async with make_sessionmaker(engine)() as s:
            users = list((await s.scalars(select(User))).all())
            audit = list((await s.scalars(select(AuditEntry).order_by(AuditEntry.id))).all())
            return users, audit
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    ("password", "rule"),
    [("aaaaaaaaaa", "not one character repeated"), ("password123", "too easy to guess")],
)
def test_a_weak_password_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    db: str,
    password: str,
    rule: str,
) -> None:
    capsys.readouterr()
    code = _users(monkeypatch, db, "add", "thandi", "--role", "cashier", stdin=password + "\n")
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert rule in err
    users, _ = asyncio.run(_rows(db))
    assert users == []
    stdin = PASSWORD + "\n"
    assert _users(monkeypatch, db, "add", "thandi", "--role", "cashier", stdin=stdin) == 0
    capsys.readouterr()
    code = _users(monkeypatch, db, "reset-password", "thandi", stdin=password + "\n")
    assert code == 2
    assert rule in capsys.readouterr().err


async def _lock(db: str) -> None:
    _, engine = await open_engine(db)
    try:
        async with make_sessionmaker(engine)() as s, s.begin():
            later = (await s.scalar(select(User.created_at))) + timedelta(days=1)
            await s.execute(update(User).values(failed_logins=9, locked_until=later))
    finally:
        await engine.dispose()


def test_unlock_clears_the_backoff(monkeypatch: pytest.MonkeyPatch, db: str) -> None:
    stdin = PASSWORD + "\n"
    assert _users(monkeypatch, db, "add", "thandi", "--role", "cashier", stdin=stdin) == 0
    asyncio.run(_lock(db))
    assert _users(monkeypatch, db, "unlock", "thandi") == 0
    users, audit = asyncio.run(_rows(db))
    assert [(u.failed_logins, u.locked_until) for u in users] == [(0, None)]
    actions = [(e.action, e.subject) for e in audit if e.action != "records.seal"]
    assert actions[-1] == ("user.unlock", "user:thandi")
    assert _users(monkeypatch, db, "unlock", "nobody") == 2


def test_enable_brings_a_disabled_account_back(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], db: str
) -> None:
    """Issue 26, item 4: ``users enable``, audited; refused in one line for an account
    that is not disabled and for an unknown name, nothing written."""
    stdin = PASSWORD + "\n"
    assert _users(monkeypatch, db, "add", "thandi", "--role", "cashier", stdin=stdin) == 0
    capsys.readouterr()
    assert _users(monkeypatch, db, "enable", "thandi") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "user 'thandi' is not disabled" in err
    assert _users(monkeypatch, db, "enable", "nobody") == 2
    assert "user 'nobody' does not exist" in capsys.readouterr().err
    assert _users(monkeypatch, db, "disable", "thandi") == 0
    assert _users(monkeypatch, db, "enable", " Thandi") == 0
    users, audit = asyncio.run(_rows(db))
    assert [u.disabled for u in users] == [False]
    actions = [(e.action, e.subject) for e in audit if e.action != "records.seal"]
    assert actions[-2:] == [("user.disable", "user:thandi"), ("user.enable", "user:thandi")]


def test_list_shows_the_last_sign_in(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], db: str
) -> None:
    """Issue 26, item 4: ``users list`` has the last sign-in ("never" until one)."""
    stdin = PASSWORD + "\n"
    assert _users(monkeypatch, db, "add", "thandi", "--role", "cashier", stdin=stdin) == 0
    capsys.readouterr()
    assert _users(monkeypatch, db, "list") == 0
    out = capsys.readouterr().out
    assert "last sign-in" in out
    assert "never" in out
    assert _users(monkeypatch, db, "list", "--json") == 0
    assert '"last_login_at": null' in capsys.readouterr().out


# Issue 26: a night needs no shell beyond ``reelgate serve`` and the first ``users add``.


def _revision(path: Path) -> str | None:
    with sqlite3.connect(path) as conn:
        found = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if found is None else str(found[0])


@pytest.mark.parametrize("training", [False, True])
def test_the_first_users_add_creates_a_missing_database(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    training: bool,
) -> None:  # fmt: skip
    """No ``db init``: the first account's command creates the database at the newest
    revision (a training one with ``--training``), says so in one line, and adds the
    account; the next ``users add`` says nothing of the kind."""
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    )
    monkeypatch.delenv("REELGATE_DATABASE_URL", raising=False)
    monkeypatch.setattr(configfile, "DEFAULT_FILE", tmp_path / "absent.toml")
    path = tmp_path / "new.db"
    url = f"sqlite:///{path}"
    extra = ["--training"] if training else []
    assert _users(monkeypatch, url, "add", "ada", "--role", "admin", *extra,
                  stdin=PASSWORD + "\n") == 0  # fmt: skip
    err = capsys.readouterr().err
    kind = "training" if training else "production"
    created = [line for line in err.splitlines() if "created at revision" in line]
    assert created == [
        f"database sqlite+aiosqlite:///{path}: created at revision {head_revision()}, "
        f"{kind} database"
    ], err
    assert _revision(path) == head_revision()
    assert main(["db", "check", "--database", url]) == 0
    assert f"{kind} database" in capsys.readouterr().out
    assert _users(monkeypatch, url, "add", "tebogo", "--role", "technician",
                  stdin=PASSWORD + "\n") == 0  # fmt: skip
    assert "created" not in capsys.readouterr().err
    users, _ = asyncio.run(_rows(url))
    assert sorted(u.name for u in users) == ["ada", "tebogo"]


def test_users_add_never_migrates_a_database_at_another_revision(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    """A database at an older revision is refused with the fix (``db upgrade``), as by
    every command: nothing created, migrated or added; ``--training`` never re-marks a
    production database."""
    path = tmp_path / "desk.db"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
    code = _users(monkeypatch, db, "add", "ada", "--role", "admin", stdin=PASSWORD + "\n")
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == (
        f"reelgate: error: database is at revision 0001, this reelgate needs "
        f"{head_revision()}: run reelgate db upgrade"
    ), err
    assert _revision(path) == "0001"
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM users").fetchone() == (0,)
        conn.execute(f"UPDATE alembic_version SET version_num = '{head_revision()}'")
    code = _users(monkeypatch, db, "add", "ada", "--role", "admin", "--training",
                  stdin=PASSWORD + "\n")  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("reelgate: error: --training: "), err
    assert "already holds a production database" in err, err
