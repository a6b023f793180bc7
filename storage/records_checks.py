"""Cross-checks of the chained facts against each other (run by :mod:`storage.audit_verify`).

* **The jackpot ledger** (S9-15) is recomputed from its movements: each row must follow
  the one before it (``prev_id``) and carry the balance before plus its amount.
* **Machine scores against the journal**: a score a machine reported (``source =
  'machine'``) must equal, meter for meter, a heat result the journal stored for that
  machine in a run of that heat.  A manual score (rule 23) is a person's audited
  decision and is checked by its seal only.

Each finding names the table and row; a check that cannot run is named and skipped.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.audit import Finding
from storage.enums import ScoreSource
from storage.journal import HeatResult, HeatRun
from storage.super9 import Super9JackpotEntry
from storage.tournament import Score, Seat


async def jackpot_ledger(conn: AsyncConnection) -> list[Finding]:
    t = Super9JackpotEntry.__table__
    rows = (
        await conn.execute(
            select(t.c.id, t.c.prev_id, t.c.amount_cents, t.c.balance_cents).order_by(t.c.id)
        )
    ).all()
    found: list[Finding] = []
    prev_id: int | None = None
    balance = 0
    for row_id, linked, amount, stored in rows:
        if linked != prev_id:
            found.append(
                Finding(
                    "super9_jackpot_entry",
                    row_id,
                    f"follows {linked}, the ledger's last is {prev_id}",
                )
            )
        balance += amount
        if stored != balance:
            found.append(
                Finding(
                    "super9_jackpot_entry",
                    row_id,
                    f"balance {stored} but the movements add up to {balance}",
                )
            )
            balance = stored  # name each bad row once, not every row after it
        prev_id = row_id
    return found


async def scores_against_journal(conn: AsyncConnection) -> list[Finding]:
    s, seat = Score.__table__, Seat.__table__
    r, run = HeatResult.__table__, HeatRun.__table__
    meters = (r.c.score, r.c.games_played, r.c.games_won, r.c.credits_wagered, r.c.credits_won)
    journal: dict[tuple[int, str], list[tuple[int, ...]]] = {}
    query = select(run.c.heat_id, r.c.machine_id, *meters).join(run, run.c.id == r.c.run_id)
    for heat_id, machine_id, *values in (
        await conn.execute(query.where(run.c.heat_id.is_not(None)))
    ).all():
        journal.setdefault((heat_id, machine_id), []).append(tuple(values))
    scored = select(
        s.c.id,
        s.c.heat_id,
        seat.c.machine_id,
        s.c.final_credits,
        s.c.games_played,
        s.c.games_won,
        s.c.credits_wagered,
        s.c.credits_won,
    ).join(seat, seat.c.id == s.c.seat_id)
    found: list[Finding] = []
    rows = await conn.execute(
        scored.where(s.c.source == ScoreSource.MACHINE.value).order_by(s.c.id)
    )
    for score_id, heat_id, machine_id, *values in rows.all():
        results = journal.get((heat_id, machine_id))
        if not results:
            found.append(
                Finding("scores", score_id, f"machine score with no heat result for {machine_id}")
            )
        elif tuple(values) not in results:
            found.append(
                Finding(
                    "scores",
                    score_id,
                    f"credits/meters {tuple(values)} differ from the journal's heat result "
                    f"for {machine_id} {results[-1]}",
                )
            )
    return found


async def run(conn: AsyncConnection) -> list[Finding]:
    """Every cross-check; one that cannot run on what it finds (a tampered row it cannot
    read) is named as a finding and the others still run."""
    found: list[Finding] = []
    for check in (jackpot_ledger, scores_against_journal):
        try:
            found.extend(await check(conn))
        except DBAPIError:
            raise  # the database itself failed: nothing more can be verified
        except Exception as exc:  # named, then the next check
            found.append(Finding("cross-check", check.__name__, f"could not run: {exc}"))
    return found
