"""``reelgate users`` (issue 25.3): a weak password refused in one line naming the rule
(add and reset), nothing written; ``users unlock`` clears a login backoff, audited."""

from __future__ import annotations

import asyncio
import io
from datetime import timedelta
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, update

import storage.accounts
from gateway.app import configfile
from gateway.app.cli import main
from gateway.app.database import open_engine
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
