"""Every result table under the chain: an edit, an insert and a delete made straight in
the database (raw SQL, no Reelgate code) are each named by the verifier, table and id.

The fixture writes, through the ORM as Reelgate does, a tournament with a machine score
(and the journal's heat result it came from), a card draw, and a Super 9 session with
tickets, spins, a claim and jackpot movements; every table also gets a *spare* row that
nothing refers to, so it can be deleted without tripping a foreign key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from storage import audit, audit_verify, seals
from storage.audit import VerifyResult
from storage.db import make_sessionmaker
from storage.enums import CardSuit, DrawMethod, DrawnBy, ScoreSource, Stage
from storage.journal import HeatResult, HeatRun, RunState
from storage.super9 import (
    LedgerKind,
    SessionStatus,
    SpinSource,
    Super9Claim,
    Super9JackpotEntry,
    Super9Session,
    Super9Spin,
    Super9Ticket,
    TicketStatus,
)
from storage.testing import T0, Builder
from storage.tournament import CardDraw, EntryPurchase, PurchaseKind, Score

AT = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)


@dataclass
class Rows:
    """The id of the row each test edits, and of the spare it deletes, per table."""

    main: dict[str, int]
    spare: dict[str, int]


async def _build(engine: AsyncEngine) -> Rows:
    main: dict[str, int] = {}
    spare: dict[str, int] = {}
    async with make_sessionmaker(engine).begin() as session:
        b = Builder(session)
        await b.make_tournament()
        anna, bongi = await b.player("Anna"), await b.player("Bongi")
        (entry,) = await b.entries(anna)
        bongi_entry, unscored_entry, spare_entry = await b.entries(bongi, seats=3)
        heat = await b.heat()
        await b.heat(number=2)
        spare_heat = await b.heat(number=3)
        seat = await b.seat(entry, heat, machine_id="EGM-001")
        bongi_seat = await b.seat(bongi_entry, heat, machine_id="EGM-002")
        spare_seat = await b.seat(unscored_entry, await b.heat(number=2), machine_id="EGM-003")
        score = await b.score(seat, 1200)
        spare_purchase = EntryPurchase(
            tournament_id=b.t.id, player_id=bongi.id, kind=PurchaseKind.CASH, seats=1,
            amount_cents=b.t.entry_price_cents, purchased_at=T0,
            valid_until=T0 + timedelta(hours=48), cashier="cashier:thandi",
        )  # fmt: skip
        session.add(spare_purchase)
        run = HeatRun(
            bank_name="bank-a", heat_id=heat.id, credits=1000, seconds=600,
            state=RunState.CLOSED, created_at=T0, updated_at=T0, settled=True,
        )  # fmt: skip
        session.add(run)
        await session.flush()
        results = [
            HeatResult(
                run_id=run.id, machine_id=m, score=credits, games_played=100, games_won=20,
                credits_wagered=1000, credits_won=credits, collected_at=T0,
            )
            for m, credits in (("EGM-001", 1200), ("EGM-009", 50))
        ]  # fmt: skip
        session.add_all(results)
        # A manual score on the spare seat (rule 23): leaf row, checked by its seal only.
        spare_score = Score(
            tournament_id=b.t.id, stage=Stage.QUALIFYING, heat_id=heat.id,
            seat_id=bongi_seat.id, entry_id=bongi_entry.id, player_id=bongi.id,
            games_played=0, games_won=0, credits_wagered=0, credits_won=0, final_credits=900,
            source=ScoreSource.MANUAL, recorded_by="director:anna",
        )  # fmt: skip
        draws = [
            CardDraw(
                tournament_id=b.t.id, stage=Stage.QUALIFYING, tie_credits=1200, round=1,
                entry_id=e.id, player_id=e.player_id, drawn_by=DrawnBy.PLAYER,
                card_rank=rank, card_suit=CardSuit.HEARTS, method=DrawMethod.PHYSICAL,
                context="qualifying cut", recorded_by="director:anna",
            )
            for e, rank in ((entry, 12), (bongi_entry, 3))
        ]  # fmt: skip
        session.add_all([spare_score, *draws])
        await session.flush()
        s9 = Super9Session(
            starts_at=AT, status=SessionStatus.DRAWING, settings={"buy_in_cents": 2000},
            created_at=AT,
        )  # fmt: skip
        session.add(s9)
        await session.flush()
        tickets = [
            Super9Ticket(
                serial=serial, session_id=s9.id, player_id=anna.id, buy_in_cents=2000,
                sold_at=AT, sold_by="cashier:thandi", status=TicketStatus.SOLD,
            )
            for serial in ("S9-0001", "S9-0002")
        ]  # fmt: skip
        session.add_all(tickets)
        spins = [
            Super9Spin(
                session_id=s9.id, seq=seq, game_no=seq, number=number, source=SpinSource.WHEEL,
                recorded_at=AT + timedelta(minutes=seq),
            )
            for seq, number in ((1, 17), (2, 4))
        ]  # fmt: skip
        session.add_all(spins)
        await session.flush()
        claims = [
            Super9Claim(
                session_id=s9.id, ticket_id=tickets[0].id, duplicate=dup, at_seq=2,
                valid=False, registered_by="cashier:thandi", registered_at=AT,
            )
            for dup in ("1,2,3", "4,5,6")
        ]  # fmt: skip
        session.add_all(claims)
        first = Super9JackpotEntry(
            session_id=None, kind=LedgerKind.SEED, amount_cents=100_000,
            balance_cents=100_000, at=AT,
        )  # fmt: skip
        session.add(first)
        await session.flush()
        last = Super9JackpotEntry(
            prev_id=first.id, session_id=s9.id, kind=LedgerKind.CONTRIBUTION,
            amount_cents=1500, balance_cents=101_500, at=AT,
        )  # fmt: skip
        session.add(last)
        await session.flush()
        rec = await audit.record(session, actor="director:anna", action="test.seed", subject="t")
        await audit.record(session, actor="director:anna", action="test.more", subject="t")
        pairs = {
            "scores": (score.id, spare_score.id),
            "heat_result": (results[0].id, results[1].id),
            "seats": (seat.id, spare_seat.id),
            "entries": (entry.id, spare_entry.id),
            "entry_purchases": (entry.purchase_id, spare_purchase.id),
            "heats": (heat.id, spare_heat.id),
            "card_draws": (draws[0].id, draws[1].id),
            "super9_ticket": (tickets[0].id, tickets[1].id),
            "super9_spin": (spins[0].id, spins[1].id),
            "super9_claim": (claims[0].id, claims[1].id),
            "super9_jackpot_entry": (first.id, last.id),
        }
    pairs["audit_log"] = (rec.id, rec.id + 1)  # positions given at commit
    for table, (m, s) in pairs.items():
        main[table], spare[table] = m, s
    async with engine.connect() as conn:  # the seal rows came after: the log's last row
        spare["audit_log"] = int(
            (await conn.execute(text("SELECT max(id) FROM audit_log"))).one()[0]
        )
    return Rows(main, spare)


# One column each test edits (a plausible fraud), and the columns an inserted copy of the
# spare must change to pass the table's unique constraints.
EDITS = {
    "scores": "final_credits = 99999",
    "heat_result": "score = 99999",
    "seats": "machine_id = 'EGM-007'",
    "entries": "status = 'refunded'",
    "entry_purchases": "amount_cents = 1",
    "heats": "starting_credits = 5000",
    "card_draws": "card_rank = 13",
    "super9_ticket": "numbers = '1,2,3,4,5,6,7,8,9'",
    "super9_spin": "number = 9",
    "super9_claim": "valid = true",
    "super9_jackpot_entry": "amount_cents = 1",
    "audit_log": "reason = 'nothing happened'",
}
INSERT_OVERRIDES: dict[str, dict[str, str]] = {
    "heat_result": {"machine_id": "'EGM-042'"},
    "seats": {"seat_number": "77", "status": "'cancelled'"},
    "heats": {"number": "77"},
    "card_draws": {"tie_credits": "777"},
    "super9_ticket": {"serial": "'S9-FORGED'"},
    "super9_spin": {"seq": "77", "game_no": "77"},
    "super9_jackpot_entry": {"prev_id": "id"},  # appended after the last movement
}
TABLES = sorted(EDITS)


async def _verify(engine: AsyncEngine) -> VerifyResult:
    async with make_sessionmaker(engine)() as session:
        return await audit_verify.verify(session)


def _named(result: VerifyResult, table: str, row_id: int) -> list[str]:
    return [f.problem for f in result.findings if f.table == table and f.row_id == row_id]


async def _raw(engine: AsyncEngine, sql: str) -> None:
    async with engine.begin() as conn:
        await conn.execute(text(sql))


async def _columns(engine: AsyncEngine, table: str) -> list[str]:
    if table == "audit_log":
        return [c.name for c in audit.AuditEntry.__table__.columns]
    return [c.name for c in seals.SEALED[table].columns]


async def test_untouched_database_verifies(engine: AsyncEngine) -> None:
    await _build(engine)
    result = await _verify(engine)
    assert result.ok, [f.line() for f in result.findings]
    assert result.sealed_rows >= 2 * len(TABLES) - 1


@pytest.mark.parametrize("table", TABLES)
async def test_raw_edit_is_named(engine: AsyncEngine, table: str) -> None:
    rows = await _build(engine)
    row_id = rows.main[table]
    await _raw(engine, f"UPDATE {table} SET {EDITS[table]} WHERE id = {row_id}")
    result = await _verify(engine)
    assert not result.ok
    problems = _named(result, table, row_id)
    assert problems, [f.line() for f in result.findings]
    expected = "altered" if table == "audit_log" else "differs from its seal"
    assert any(expected in p for p in problems)


@pytest.mark.parametrize("table", TABLES)
async def test_raw_delete_is_named(engine: AsyncEngine, table: str) -> None:
    rows = await _build(engine)
    row_id = rows.spare[table]
    if table == "audit_log":  # the last row: only the chain head knows it existed
        await _raw(engine, f"DELETE FROM audit_log WHERE id = {row_id}")
    else:
        await _raw(engine, f"DELETE FROM {table} WHERE id = {row_id}")
    result = await _verify(engine)
    assert not result.ok
    problems = _named(result, table, row_id)
    assert problems, [f.line() for f in result.findings]
    assert any(w in p for p in problems for w in ("deleted", "chain head"))


@pytest.mark.parametrize("table", TABLES)
async def test_raw_insert_is_named(engine: AsyncEngine, table: str) -> None:
    rows = await _build(engine)
    new_id = 7000
    if table == "audit_log":
        new_id = rows.spare[table] + 1  # appended after the head, as a forger would
    overrides = dict(INSERT_OVERRIDES.get(table, {}))
    source = rows.spare[table]
    if table == "scores":  # a forged score for the seat that has none yet
        seat = rows.spare["seats"]
        overrides = {
            "seat_id": str(seat),
            "entry_id": f"(SELECT entry_id FROM seats WHERE id = {seat})",
            "heat_id": f"(SELECT heat_id FROM seats WHERE id = {seat})",
        }
    columns = await _columns(engine, table)
    values = ", ".join(
        str(new_id) if c == "id" else ("hash || 'x'" if c == "hash" else overrides.get(c, c))
        for c in columns
    )
    if table == "audit_log":
        values = values.replace("hash || 'x'", "'" + "ab" * 32 + "'")  # a unique MAC-shaped forgery
    await _raw(
        engine,
        f"INSERT INTO {table} ({', '.join(columns)}) "
        f"SELECT {values} FROM {table} WHERE id = {source}",
    )
    result = await _verify(engine)
    assert not result.ok
    problems = _named(result, table, new_id)
    assert problems, [f.line() for f in result.findings]
    if table != "audit_log":
        assert any("inserted without an audit row" in p for p in problems)


async def test_jackpot_ledger_is_recomputed(engine: AsyncEngine) -> None:
    """S9-15: a balance that does not follow from the movements is named as well."""
    rows = await _build(engine)
    last = rows.spare["super9_jackpot_entry"]
    await _raw(engine, f"UPDATE super9_jackpot_entry SET balance_cents = 1 WHERE id = {last}")
    problems = _named(await _verify(engine), "super9_jackpot_entry", last)
    assert any("movements add up to 101500" in p for p in problems)


async def test_machine_score_is_cross_checked_with_the_journal(engine: AsyncEngine) -> None:
    """The issue's auditor: UPDATE scores SET final_credits=99999 straight in the database."""
    rows = await _build(engine)
    score = rows.main["scores"]
    await _raw(engine, f"UPDATE scores SET final_credits = 99999 WHERE id = {score}")
    problems = _named(await _verify(engine), "scores", score)
    assert any("differs from its seal" in p for p in problems)
    assert any("differ from the journal's heat result for EGM-001" in p for p in problems)


async def test_a_savepoint_rolled_back_forgets_only_its_own_changes(engine: AsyncEngine) -> None:
    """A result row written before a savepoint is sealed even when the savepoint is rolled
    back (a dual-control trial run does this); a row inserted inside it, and undone, is
    not sealed at all."""
    async with make_sessionmaker(engine).begin() as session:
        b = Builder(session)
        await b.make_tournament()
        kept = (await b.heat()).id
        trial = await session.begin_nested()
        undone = (await b.heat(number=2)).id
        await trial.rollback()
    result = await _verify(engine)
    assert result.ok, [f.line() for f in result.findings]
    async with make_sessionmaker(engine)() as session:
        seal_rows = await session.execute(
            select(audit.AuditEntry.details).where(audit.AuditEntry.action == seals.SEAL_ACTION)
        )
        sealed = {(t, i) for d in seal_rows.scalars() for t, i, _ in json.loads(d)["rows"]}
    assert ("heats", kept) in sealed
    assert ("heats", undone) not in sealed


async def test_a_banks_results_stored_in_one_insert_are_sealed(engine: AsyncEngine) -> None:
    """The journal stores a bank's heat results in one INSERT, not through the ORM's
    unit of work (storage.seal_notes): each row is still sealed at the commit, so an
    untouched batch verifies and a raw edit of one of its rows is named."""
    from storage.journal import Journal, ResultIn

    journal = Journal(make_sessionmaker(engine))
    machines = [f"EGM-{i:03d}" for i in range(40)]
    run = await journal.create_run("A", machines, credits=1000, seconds=60)
    await journal.step(run, RunState.RUNNING, started_at=AT)
    rows = [ResultIn(m, 900 + i, 10, 3, 50, 40 + i, AT) for i, m in enumerate(machines)]
    assert await journal.store_results(run, rows) == len(machines)
    assert await journal.store_results(run, rows[:5]) == 0  # a replay: nothing new
    result = await _verify(engine)
    assert result.ok, [f.line() for f in result.findings]
    assert result.sealed_rows >= len(machines)
    async with make_sessionmaker(engine)() as session:
        victim = await session.scalar(
            select(HeatResult.id).where(HeatResult.machine_id == "EGM-017")
        )
    assert victim is not None
    await _raw(engine, f"UPDATE heat_result SET score = 99999 WHERE id = {victim}")
    result = await _verify(engine)
    assert not result.ok
    assert _named(result, "heat_result", victim)
