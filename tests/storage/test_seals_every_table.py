"""Issue 25.2: every table holding a result, money, an identity, an account, a role or
permission, or a rule setting is under the seals.  A raw edit, insert or delete of each
(plain SQL, no Reelgate code) is named by the verifier with its table and key; keys
that are not an integer id (a bank's name, a setting's key, a tournament's surplus per
stage) are named as well.  A database keyed before these tables were sealed is covered
by ``extend_scope`` (``reelgate db upgrade``), and until then each such table is named
once, not row by row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from storage import audit, audit_verify, seals
from storage.accounts import AccountSession, ApiToken, PendingAction, User
from storage.attendance import SeatAttendance, TournamentAttendance
from storage.audit import VerifyResult
from storage.db import make_sessionmaker
from storage.enums import ExclusionKind, NoticeKind, Stage
from storage.floor import FloorBank, FloorMachine
from storage.prizes import PrizePlace, PrizeSurplus
from storage.super9 import Super9CalendarChange, Super9Setting
from storage.testing import T0, Builder
from storage.tournament import (
    Exclusion,
    HeatNotice,
    Proxy,
    TournamentPackage,
    TournamentSetting,
)

AT = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
NEW_TABLES = sorted(set(seals.SEALED) - seals.FIRST_SCOPE)


@dataclass
class Keys:
    """The key of one row per newly sealed table (as a finding names it)."""

    of: dict[str, int | str]


async def _build(engine: AsyncEngine) -> Keys:
    async with make_sessionmaker(engine).begin() as session:
        b = Builder(session)
        t = await b.make_tournament()
        anna, bongi = await b.player("Anna"), await b.player("Bongi")
        (entry,) = await b.entries(anna)
        heat = await b.heat(Stage.SEMI_FINAL)
        seat = await b.seat(entry, heat)
        cashier = User(
            name="thandi", role="cashier", password_hash="x", created_at=AT, created_by="admin"
        )
        session.add(cashier)
        await session.flush()
        rows = [
            TournamentSetting(tournament_id=t.id, prize_places=3),
            TournamentPackage(
                tournament_id=t.id, position=1, code="single", price_cents=5000, seats=1
            ),
            TournamentAttendance(tournament_id=t.id),
            SeatAttendance(
                seat_id=seat.id, heat_id=heat.id, present=True, marked_at=AT, marked_by="desk:ann"
            ),
            HeatNotice(
                heat_id=heat.id, kind=NoticeKind.RESCHEDULED, old_start=T0, new_start=AT,
                announced_via="MC", announced_at=T0, changed_by="director:anna",
            ),
            Proxy(
                tournament_id=t.id, stage=Stage.SEMI_FINAL, holder_player_id=anna.id,
                nominee_name="Bongi", nominee_id_number=bongi.id_number,
                nominee_player_id=bongi.id, form_received_at=T0, received_by="director:anna",
            ),
            Exclusion(
                kind=ExclusionKind.SELF_EXCLUSION, id_number="7001015009087", valid_from=T0,
                source="register.csv", created_by="director:anna",
            ),
            PrizePlace(
                tournament_id=t.id, stage=Stage.FINAL, place=1, minimum_cents=100_000,
                set_by="director:anna", set_at=T0,
            ),
            PrizeSurplus(
                tournament_id=t.id, stage=Stage.FINAL, surplus_cents=500, reason="rounding",
                decided_by="director:anna", decided_at=T0,
            ),
            ApiToken(
                user_id=cashier.id, prefix="rg_abc", digest="d" * 64, role="cashier",
                label="till 1", created_at=T0, expires_at=T0 + timedelta(days=30),
            ),
            AccountSession(
                user_id=cashier.id, digest="e" * 64, csrf_token="c" * 64, created_at=T0,
                expires_at=T0 + timedelta(hours=8),
            ),
            PendingAction(
                kind="refund", payload='{"entry": 1}', requested_by=cashier.id,
                requested_at=T0,
            ),
            FloorBank(name="bank-a", enabled=True, enabled_at=T0, enabled_by="tech:joe"),
            Super9Setting(
                key="packages", value={"single": 2000}, updated_at=T0, updated_by="pd:lee"
            ),
            Super9CalendarChange(
                starts_at=AT, cancelled=True, changed_by="pd:lee", reason="holiday",
                changed_at=T0,
            ),
        ]  # fmt: skip
        session.add_all(rows)
        await session.flush()
        session.add(
            FloorMachine(
                machine_id="A-01", bank_name="bank-a", position=1, endpoint="tcp://127.0.0.1:1",
                updated_at=T0,
            )
        )  # fmt: skip
        await session.flush()
        await audit.record(session, actor="director:anna", action="test.seed", subject="t")
        keys: dict[str, int | str] = {
            "tournaments": t.id,
            "players": anna.id,
            "users": cashier.id,
            "tournament_settings": t.id,
            "tournament_attendance": t.id,
            "seat_attendance": seat.id,
            "floor_bank": "bank-a",
            "floor_machine": "A-01",
            "super9_setting": "packages",
            "prize_surplus": f"{t.id}/final",
        }
        for row in rows:
            name = type(row).__tablename__
            if name not in keys:
                keys[name] = row.id  # type: ignore[attr-defined]
    return Keys(keys)


EDITS = {
    "tournaments": "minimum_age = 21",
    "tournament_settings": "prize_places = 9",
    "tournament_packages": "price_cents = 1",
    "tournament_attendance": "unmarked_at_start = 'forfeit'",
    "seat_attendance": "present = false",
    "heat_notices": "announced_via = 'nobody'",
    "proxies": "nominee_name = 'Mallory'",
    "players": "name = 'Mallory', id_number = '6601015009087'",
    "exclusions": "note = 'no longer excluded'",
    "prize_schedule": "minimum_cents = 1",
    "prize_surplus": "surplus_cents = 0",
    "users": "role = 'director'",
    "api_tokens": "role = 'admin'",
    "account_sessions": "expires_at = created_at",
    "pending_actions": "payload = '{\"entry\": 2}'",
    "floor_bank": "enabled = false",
    "floor_machine": "excluded_reason = 'moved'",
    "super9_setting": "updated_by = 'pd:mallory'",
    "super9_calendar_change": "cancelled = false",
}


def _where(table: str, key: int | str) -> str:
    column = seals.SEALED[table].primary_key.columns.values()[0].name
    if table == "prize_surplus":
        tournament, stage = str(key).split("/")
        return f"tournament_id = {tournament} AND stage = '{stage}'"
    return f"{column} = '{key}'" if isinstance(key, str) else f"{column} = {key}"


async def _verify(engine: AsyncEngine) -> VerifyResult:
    async with make_sessionmaker(engine)() as session:
        return await audit_verify.verify(session)


async def _raw(engine: AsyncEngine, sql: str) -> None:
    async with engine.begin() as conn:
        await conn.execute(text(sql))


def _named(result: VerifyResult, table: str, key: int | str) -> list[str]:
    return [f.problem for f in result.findings if f.table == table and f.row_id == key]


def test_every_new_table_is_exercised() -> None:
    assert sorted(EDITS) == NEW_TABLES


async def test_untouched_database_verifies(engine: AsyncEngine) -> None:
    await _build(engine)
    result = await _verify(engine)
    assert result.ok, [f.line() for f in result.findings]


@pytest.mark.parametrize("table", NEW_TABLES)
async def test_raw_edit_is_named(engine: AsyncEngine, table: str) -> None:
    keys = await _build(engine)
    await _raw(engine, f"UPDATE {table} SET {EDITS[table]} WHERE {_where(table, keys.of[table])}")
    result = await _verify(engine)
    assert not result.ok
    problems = _named(result, table, keys.of[table])
    assert any("differs from its seal" in p for p in problems), [f.line() for f in result.findings]


async def test_the_audits_four_edits_are_each_named_in_one_pass(engine: AsyncEngine) -> None:
    """Issue 25.2's failures together: a winner's name and ID number, a cashier made a
    director, the prize places and a package price; each named, none hides another."""
    keys = await _build(engine)
    for table in ("players", "users", "tournament_settings", "tournament_packages"):
        await _raw(
            engine, f"UPDATE {table} SET {EDITS[table]} WHERE {_where(table, keys.of[table])}"
        )
    result = await _verify(engine)
    named = {(f.table, f.row_id) for f in result.findings if "differs from its seal" in f.problem}
    assert named == {
        ("players", keys.of["players"]),
        ("users", keys.of["users"]),
        ("tournament_settings", keys.of["tournament_settings"]),
        ("tournament_packages", keys.of["tournament_packages"]),
    }


async def test_rows_with_text_and_composite_keys_inserted_or_deleted_are_named(
    engine: AsyncEngine,
) -> None:
    keys = await _build(engine)
    await _raw(
        engine,
        "INSERT INTO floor_bank (name, enabled, enabled_by) VALUES ('bank-x', true, 'mallory')",
    )
    await _raw(
        engine,
        f"DELETE FROM prize_surplus WHERE {_where('prize_surplus', keys.of['prize_surplus'])}",
    )
    await _raw(
        engine,
        "INSERT INTO users (id, name, role, password_hash, disabled, created_at, created_by, "
        "failed_logins) SELECT 77, 'mallory', 'admin', password_hash, false, created_at, "
        f"created_by, 0 FROM users WHERE id = {keys.of['users']}",
    )
    result = await _verify(engine)
    assert any("inserted without" in p for p in _named(result, "floor_bank", "bank-x"))
    assert any("inserted without" in p for p in _named(result, "users", 77))
    surplus = _named(result, "prize_surplus", keys.of["prize_surplus"])
    assert any(p.startswith("deleted (sealed at audit row") for p in surplus)


async def test_bulk_update_and_delete_through_the_session_are_sealed(engine: AsyncEngine) -> None:
    """A settings change replaces the packages with one DELETE; the roll call of a heat is
    cleared the same way: both through the session, both sealed (deleted rows as deleted,
    updated rows as they are after)."""
    keys = await _build(engine)
    async with make_sessionmaker(engine).begin() as session:
        await session.execute(
            update(TournamentPackage)
            .where(TournamentPackage.id == keys.of["tournament_packages"])
            .values(price_cents=4500)
        )
        await session.execute(
            delete(SeatAttendance).where(SeatAttendance.seat_id == keys.of["seat_attendance"])
        )
        await audit.record(session, actor="director:anna", action="test.bulk", subject="t")
    result = await _verify(engine)
    assert result.ok, [f.line() for f in result.findings]
    async with make_sessionmaker(engine)() as session:
        seal_rows = await session.scalars(
            select(audit.AuditEntry.details)
            .where(audit.AuditEntry.action == seals.SEAL_ACTION)
            .order_by(audit.AuditEntry.id.desc())
            .limit(1)
        )
        (last,) = seal_rows.all()
    rows = {(t, str(k)): d for t, k, d in json.loads(last)["rows"]}
    assert rows[("seat_attendance", str(keys.of["seat_attendance"]))] is None
    assert rows[("tournament_packages", str(keys.of["tournament_packages"]))] is not None


async def test_a_database_keyed_before_the_new_tables_is_sealed_at_upgrade(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chain keyed when only the first tables were sealed: each new table is named once
    (not every row) until ``extend_scope`` seals its rows as they stand, in one audited
    transaction; from then on an edit is named as for any sealed row, and a second
    upgrade writes nothing."""
    first = {name: seals.SEALED[name] for name in seals.FIRST_SCOPE}
    monkeypatch.setattr(seals, "SEALED", first)
    monkeypatch.setitem(audit.GENESIS_FACTS, "sealed_tables", sorted(first))
    keys = await _build(engine)
    monkeypatch.undo()
    result = await _verify(engine)
    whole = {f.table for f in result.findings if f.row_id == "*"}
    assert whole == set(NEW_TABLES)
    assert all("run `reelgate db upgrade`" in f.problem for f in result.findings)
    async with make_sessionmaker(engine).begin() as session:
        added = await session.run_sync(seals.extend_scope)
    assert added == NEW_TABLES
    result = await _verify(engine)
    assert result.ok, [f.line() for f in result.findings]
    async with make_sessionmaker(engine).begin() as session:
        assert await session.run_sync(seals.extend_scope) == []
    await _raw(engine, f"UPDATE users SET role = 'director' WHERE id = {keys.of['users']}")
    assert any(
        "differs from its seal" in p
        for p in _named(await _verify(engine), "users", keys.of["users"])
    )


def test_scope_of_a_chain_that_states_none_is_the_first_scope() -> None:
    assert seals.scope_of([]) == seals.FIRST_SCOPE
    assert seals.scope_of([["players"], ["players", "users"]]) == {"players", "users"}
    assert seals.stated_scope(audit.GENESIS_ACTION, {"key_id": "x"}) is None


async def test_a_forged_seal_row_with_garbage_details_does_not_stop_verify(
    engine: AsyncEngine,
) -> None:
    """An insider appends a 'records.seal' row whose details are not seal rows: it is
    named (its MAC, its details) and every other finding still follows."""
    keys = await _build(engine)
    async with engine.begin() as conn:
        last = (await conn.execute(text("SELECT max(id) FROM audit_log"))).one()
        await conn.execute(
            text(
                "INSERT INTO audit_log (id, at, actor, action, subject, details, prev_hash, "
                "hash, keyed) SELECT :id, at, actor, 'records.seal', subject, "
                '\'{"rows": [["players"], 7]}\', hash, :mac, keyed FROM audit_log '
                "WHERE id = :last"
            ),
            {"id": last[0] + 1, "mac": "ab" * 32, "last": last[0]},
        )
    await _raw(engine, f"UPDATE users SET role = 'admin' WHERE id = {keys.of['users']}")
    result = await _verify(engine)
    forged = _named(result, "audit_log", last[0] + 1)
    assert "seal details are not [table, key, digest] rows" in forged
    assert any("altered" in p for p in forged)
    assert any("differs from its seal" in p for p in _named(result, "users", keys.of["users"]))
