"""Issue 25.2 from the command line, on both backends: the security audit's edits made
straight in the database after the desk wrote through ``reelgate`` — a player's name and
ID number, a cashier's account made a director's, a tournament's prize places, a package
price — are each named by ``reelgate audit verify`` (table and id), which exits 1 and
does not stop at the first."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from sqlalchemy import text

from gateway.app.cli import main

from ..keyed_engine import make_engine


async def _tamper(url: str, *statements: str) -> dict[str, int]:
    """The ids of the rows about to be edited, then the edits (one transaction)."""
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            ids = {}
            for table, where in (
                ("players", "id_number = '8001015009087'"),
                ("users", "name = 'thandi'"),
                ("tournaments", "name = 'Winter Cup'"),
            ):
                found = await conn.execute(text(f"SELECT id FROM {table} WHERE {where}"))
                ids[table] = int(found.one()[0])
            for statement in statements:
                await conn.execute(text(statement))
            return ids
    finally:
        await engine.dispose()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_the_audits_edits_are_each_named(
    database: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = ["--database", database]
    monkeypatch.setenv("REELGATE_ACTOR", "director:anna")
    assert _run(capsys, "tournament", "create", "Winter Cup", "--prize-places", "3", *db)[0] == 0
    player = ["--id-number", "8001015009087", "--name", "Anna Dlamini", "--dob", "1980-01-01"]
    assert _run(capsys, "players", "add", *player, *db)[0] == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("a long enough password 1\n"))
    assert (
        _run(capsys, "users", "add", "thandi", "--role", "cashier", "--password-stdin", *db)[0] == 0
    )
    code, out = _run(capsys, "audit", "verify", *db)
    assert code == 0, out

    ids = asyncio.run(
        _tamper(
            database,
            "UPDATE players SET name = 'Mallory', id_number = '6601015009087' "
            "WHERE id_number = '8001015009087'",
            "UPDATE users SET role = 'director' WHERE name = 'thandi'",
            "UPDATE tournament_settings SET prize_places = 9",
            "UPDATE tournament_packages SET price_cents = 1",
        )
    )
    code, out = _run(capsys, "audit", "verify", *db, "--json")
    assert code == 1
    findings = json.loads(out)["findings"]
    named = {(f["table"], f["id"]) for f in findings if "differs from its seal" in f["problem"]}
    assert ("users", ids["users"]) in named
    assert ("tournament_settings", ids["tournaments"]) in named
    assert any(table == "tournament_packages" for table, _ in named)
    assert ("players", ids["players"]) in named
    code, text_out = _run(capsys, "audit", "verify", *db)
    assert code == 1
    assert "audit log BROKEN: " in text_out
    assert f"  users {ids['users']}: differs from its seal" in text_out


def test_an_account_re_enabled_in_the_database_is_named(
    database: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26, item 4: disable and enable through ``reelgate users`` keep the seals
    right; an insider clearing ``disabled`` (or forging a last sign-in) straight in the
    database is named by ``audit verify``."""
    db = ["--database", database]
    monkeypatch.setenv("REELGATE_ACTOR", "admin:zodwa")
    for name in ("thandi", "sipho"):
        monkeypatch.setattr("sys.stdin", io.StringIO("a long enough password 1\n"))
        add = ["users", "add", name, "--role", "cashier", "--password-stdin", *db]
        assert _run(capsys, *add)[0] == 0
    assert _run(capsys, "users", "disable", "thandi", *db)[0] == 0
    assert _run(capsys, "users", "enable", "thandi", *db)[0] == 0
    assert _run(capsys, "users", "disable", "thandi", *db)[0] == 0
    code, out = _run(capsys, "audit", "verify", *db)
    assert code == 0, out

    async def tamper() -> dict[str, int]:
        engine = make_engine(database)
        try:
            async with engine.begin() as conn:
                await conn.execute(text("UPDATE users SET disabled = false WHERE name = 'thandi'"))
                await conn.execute(
                    text("UPDATE users SET last_login_at = created_at WHERE name = 'sipho'")
                )
                found = await conn.execute(text("SELECT name, id FROM users"))
                return {str(n): int(i) for n, i in found.all()}
        finally:
            await engine.dispose()

    ids = asyncio.run(tamper())
    code, out = _run(capsys, "audit", "verify", *db, "--json")
    assert code == 1
    named = {
        (f["table"], f["id"])
        for f in json.loads(out)["findings"]
        if "differs from its seal" in f["problem"]
    }
    assert named == {("users", ids["thandi"]), ("users", ids["sipho"])}
