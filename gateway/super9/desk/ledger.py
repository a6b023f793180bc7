"""The progressive jackpot ledger (S9-15): append-only, one row per movement.

The jackpot's value is the last row's balance; its history is every row.  Each row
names the row before it (unique), so two writers can never fork the history.  A
session's settlement is written as the rows that take the jackpot from its carry-in to
its carry-out, and the result is checked against the settlement to the cent.

Clauses: docs/rules.md#s9-15.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.super9.rules.settings import Super9Settings, WinningContribution
from gateway.super9.rules.settle import Settlement, leftovers_to_house
from storage.super9 import LedgerKind, Super9JackpotEntry


async def head(db: AsyncSession) -> Super9JackpotEntry | None:
    return (
        await db.execute(select(Super9JackpotEntry).order_by(Super9JackpotEntry.id.desc()).limit(1))
    ).scalar_one_or_none()


async def balance(db: AsyncSession, seed_cents: int) -> int:
    """The jackpot now: the last balance, or the seed before the first session."""
    last = await head(db)
    return seed_cents if last is None else last.balance_cents


async def append(
    db: AsyncSession, kind: LedgerKind, amount: int, session_id: int | None, now: datetime
) -> Super9JackpotEntry:
    last = await head(db)
    entry = Super9JackpotEntry(
        prev_id=last.id if last else None,
        session_id=session_id,
        kind=kind,
        amount_cents=amount,
        balance_cents=(last.balance_cents if last else 0) + amount,
        at=now,
    )
    db.add(entry)
    await db.flush()
    return entry


async def ensure_seeded(db: AsyncSession, seed_cents: int, now: datetime) -> None:
    """The very first jackpot starts at the seed (S9-15), as a ledger row."""
    if await head(db) is None:
        await append(db, LedgerKind.SEED, seed_cents, None, now)


async def write_settlement(
    db: AsyncSession,
    session_id: int,
    result: Settlement[Any],
    settings: Super9Settings,
    now: datetime,
) -> None:
    contribution = result.contribution_cents
    if not result.jackpot_won:  # S9-15: grows by 75% when not won
        await append(db, LedgerKind.CONTRIBUTION, contribution, session_id, now)
    elif settings.winning_contribution is WinningContribution.PAID_WITH_JACKPOT:
        await append(db, LedgerKind.CONTRIBUTION, contribution, session_id, now)
        await append(db, LedgerKind.PAYOUT, -result.jackpot_pot_cents, session_id, now)
        await append(db, LedgerKind.SEED, result.seed_added_cents, session_id, now)
    else:  # paid and restarted at the seed; SEEDS_NEXT adds this session's 75% on top
        await append(db, LedgerKind.PAYOUT, -result.jackpot_pot_cents, session_id, now)
        await append(db, LedgerKind.SEED, result.seed_added_cents, session_id, now)
        if settings.winning_contribution is WinningContribution.SEEDS_NEXT:
            await append(db, LedgerKind.CONTRIBUTION, contribution, session_id, now)
    if not leftovers_to_house(settings, jackpot_won=result.jackpot_won):
        await _append_leftovers(db, session_id, result, now)
    now_balance = await balance(db, 0)
    if now_balance != result.jackpot_out_cents:  # a bug, never an operator mistake
        raise RuntimeError(f"jackpot ledger {now_balance} != settlement {result.jackpot_out_cents}")


async def _append_leftovers(
    db: AsyncSession, session_id: int, result: Settlement[Any], now: datetime
) -> None:
    """Leftovers routed to the jackpot (``Leftovers.JACKPOT``), one row each."""
    if result.remainder_cents:  # S9-20 odd cents
        await append(db, LedgerKind.REMAINDER, result.remainder_cents, session_id, now)
    if result.unwon_consolation_cents:  # S9-16 pool nobody could take
        await append(
            db, LedgerKind.UNWON_CONSOLATION, result.unwon_consolation_cents, session_id, now
        )


async def history(db: AsyncSession) -> list[dict[str, Any]]:
    rows = (
        (await db.execute(select(Super9JackpotEntry).order_by(Super9JackpotEntry.id)))
        .scalars()
        .all()
    )
    return [
        {
            "id": r.id,
            "session": r.session_id,
            "kind": r.kind.value,
            "amount_cents": r.amount_cents,
            "balance_cents": r.balance_cents,
            "at": r.at.isoformat(),
        }
        for r in rows
    ]
