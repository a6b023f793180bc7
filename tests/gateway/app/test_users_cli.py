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
