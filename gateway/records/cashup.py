"""The daily cash-up: per cashier, tournament entries sold, refunded and complimentary,
Super 9 buy-ins, prizes paid (Super 9, tournament, hot-seat draws HS7 and team places
H12), the jackpot carried, reconciled
to the cent, and the liability carried forward.

**Tender.** Every movement has its tender (cash, card, comp; a row from before revision
0017 by its kind, a ticket's as cash).  ``by_tender`` splits each cashier's money;
``cash_in_cents``/``cash_out_cents`` count cash only and ``drawer_cents`` (cash in −
cash out) is what the drawer must hold: a card sale is money in the bank, a comp none.
Prizes are paid in cash, or credited to the winner's machine (tender ``machine (AFT)``,
house clause P6: no money leaves the drawer).  The cash figures are also summed in SQL,
and a stored tender that differs from the one its audit row recorded is a mismatch.

Reconciliation (see :mod:`.cashup_rows`): every figure is the sum of the day's stored
rows; it must equal the SQL aggregate over the same tables, and every stored row must
have its audit-log row with the same amount and the same account (and every money
audit row written that day must still have its stored row).  The jackpot ledger must
chain (each balance = the one before + the amount) and the day's movements must take
the opening balance to the closing one.  Each difference is one line in
``reconciliation.mismatches`` and ``reconciliation.ok`` is false: the CLI prints them
loudly and exits 1.

**Desk.** Reelgate records the cashier's account on every money row but not the desk
(till) it was taken at.  The report is therefore per cashier; ``desk`` names the desk
it was printed for (``--desk``, else ``$REELGATE_DESK``, else this host's name; over the API the
``desk`` parameter, else the API host's name) and says that the per-row desk is not
recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from gateway.records import cashup_rows as cr
from gateway.records.cashup_rows import LedgerRow, Movement
from storage.enums import Tender
from storage.hotseat import HotseatCommitment, HotseatDraw
from storage.machine_prizes import MACHINE_TENDER
from storage.prizes import PrizePayout, PrizePlace
from storage.super9 import (
    SessionStatus,
    Super9JackpotEntry,
    Super9Prize,
    Super9Session,
    Super9Ticket,
)
from storage.teams import TeamPrizePayout, TeamPrizePlace

CASH, CARD = Tender.CASH.value, Tender.CARD.value
TENDERS = (*(t.value for t in Tender), MACHINE_TENDER)  # P6: prizes credited to a machine

DESK_NOTE = (
    "the desk (till) is not recorded on sales, refunds or payouts: figures are per "
    "cashier account, and the desk is where this report was produced"
)


def parse_day(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise OperatorError(f"date: {text!r} is not a date (YYYY-MM-DD)") from None


def day_window(day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=zone)
    nxt = day + timedelta(days=1)
    return start, datetime(nxt.year, nxt.month, nxt.day, tzinfo=zone)


def _figures(moves: Iterable[Movement]) -> dict[str, Any]:
    moves = list(moves)

    def of(kind: str) -> list[Movement]:
        return [m for m in moves if m.kind == kind]

    def moved(kinds: frozenset[str], tender: str) -> int:
        return sum(m.cents for m in moves if m.kind in kinds and m.tender == tender)

    cash_in, cash_out = moved(cr.CASH_IN, CASH), moved(cr.CASH_OUT, CASH)
    card_in, card_out = moved(cr.CASH_IN, CARD), moved(cr.CASH_OUT, CARD)
    return {
        "entries_sold": {
            "purchases": len(of(cr.SALE)),
            "seats": sum(m.seats for m in of(cr.SALE)),
            "amount_cents": sum(m.cents for m in of(cr.SALE)),
        },
        "entries_complimentary": {
            "purchases": len(of(cr.COMP)),
            "seats": sum(m.seats for m in of(cr.COMP)),
        },
        "entries_refunded": {
            "entries": len(of(cr.REFUND)),
            "amount_cents": sum(m.cents for m in of(cr.REFUND)),
        },
        "super9_buy_ins": {
            "tickets": len(of(cr.BUY_IN)),
            "amount_cents": sum(m.cents for m in of(cr.BUY_IN)),
        },
        "super9_prizes_paid": {
            "prizes": len(of(cr.S9_PRIZE)),
            "amount_cents": sum(m.cents for m in of(cr.S9_PRIZE)),
        },
        "tournament_prizes_paid": {
            "prizes": len(of(cr.T_PRIZE)),
            "amount_cents": sum(m.cents for m in of(cr.T_PRIZE)),
        },
        "hotseat_prizes_paid": {  # HS7
            "prizes": len(of(cr.HS_PRIZE)),
            "amount_cents": sum(m.cents for m in of(cr.HS_PRIZE)),
        },
        "team_prizes_paid": {  # H12
            "prizes": len(of(cr.TEAM_PRIZE)),
            "amount_cents": sum(m.cents for m in of(cr.TEAM_PRIZE)),
        },
        "by_tender": [
            {
                "tender": tender,
                "movements": sum(1 for m in moves if m.tender == tender),
                "in_cents": moved(cr.CASH_IN, tender),
                "out_cents": moved(cr.CASH_OUT, tender),
            }
            for tender in TENDERS
        ],
        "cash_in_cents": cash_in,
        "cash_out_cents": cash_out,
        "drawer_cents": cash_in - cash_out,  # what the till's drawer must hold
        "card_in_cents": card_in,
        "card_out_cents": card_out,
        "net_cents": cash_in + card_in - cash_out - card_out,
    }


def _check_aggregates(moves: list[Movement], agg: dict[str, dict[str, int]]) -> list[str]:
    out = []
    for kind in cr.KINDS:
        rows = [m for m in moves if m.kind == kind]
        count, cents = len(rows), sum(m.cents for m in rows)
        if (count, cents) != (agg[kind]["count"], agg[kind]["cents"]):
            out.append(
                f"{kind}: rows give {count} for {cents} c, the SQL total {agg[kind]['count']} "
                f"for {agg[kind]['cents']} c"
            )
    return out


def _check_drawer(moves: list[Movement], sql: dict[str, int]) -> list[str]:
    cash_in = sum(m.cents for m in moves if m.kind in cr.CASH_IN and m.tender == CASH)
    cash_out = sum(m.cents for m in moves if m.kind in cr.CASH_OUT and m.tender == CASH)
    if (cash_in, cash_out) == (sql["in"], sql["out"]):
        return []
    return [
        f"cash: rows give {cash_in} c in and {cash_out} c out, the SQL totals "
        f"{sql['in']} c and {sql['out']} c"
    ]


def _check_ledger(
    moves: list[Movement],
    book: dict[tuple[str, str], list[LedgerRow]],
    stored: set[tuple[str, str]],
) -> list[str]:
    """Each of the day's rows against its audit row; and every money audit row (of any
    day: the day a deleted row belonged to is gone with it) against a stored row."""
    out = []
    for m in moves:
        rows = book.get(m.audit_key, [])
        if not rows:
            out.append(f"{m.ref}: {m.cents} c by {m.cashier} has no audit-log row")
            continue
        last = rows[-1]
        if last.cents != m.cents or last.actor != m.cashier:
            out.append(
                f"{m.ref}: stored {m.cents} c by {m.cashier}, audit row {last.audit_id} "
                f"says {last.cents} c by {last.actor}"
            )
        elif last.tender is not None and last.tender != m.tender:
            # cash turned into card on the row would take it out of the drawer's count
            out.append(
                f"{m.ref}: stored as {m.tender}, audit row {last.audit_id} says {last.tender}"
            )
    for key, rows in sorted(book.items()):
        if key not in stored:
            row = rows[-1]
            out.append(
                f"audit row {row.audit_id} ({row.at:%Y-%m-%d %H:%M} UTC) records {key[0]} "
                f"{key[1]} of {row.cents} c by {row.actor}; no such row is stored"
            )
    return out


async def _jackpot(
    db: AsyncSession, start: datetime, end: datetime
) -> tuple[dict[str, Any], list[str]]:
    rows = list(
        (await db.execute(select(Super9JackpotEntry).order_by(Super9JackpotEntry.id))).scalars()
    )
    problems, balance = [], 0
    for r in rows:
        if r.balance_cents != balance + r.amount_cents:
            problems.append(
                f"jackpot ledger row {r.id}: balance {r.balance_cents} c, but "
                f"{balance} c + {r.amount_cents} c = {balance + r.amount_cents} c"
            )
        balance = r.balance_cents
    before = [r for r in rows if r.at < start]
    today = [r for r in rows if start <= r.at < end]
    opening = before[-1].balance_cents if before else 0
    closing = today[-1].balance_cents if today else opening
    moved = sum(r.amount_cents for r in today)
    if opening + moved != closing:
        problems.append(
            f"jackpot: opening {opening} c + today's movements {moved} c != closing {closing} c"
        )
    return {
        "opening_cents": opening,
        "movements": [
            {
                "id": r.id,
                "session": r.session_id,
                "kind": r.kind,
                "amount_cents": r.amount_cents,
                "balance_cents": r.balance_cents,
                "at": r.at,
            }
            for r in today
        ],
        "moved_cents": moved,
        "carried_cents": closing,
    }, problems


async def _liability(db: AsyncSession, end: datetime, jackpot_cents: int) -> dict[str, Any]:
    """What the venue owes at the end of the day: prizes won and not yet paid, tournament
    prizes advertised and not yet paid, and the jackpot balance."""
    s9 = await db.execute(
        select(Super9Prize, Super9Ticket.serial, Super9Session.closed_at)
        .join(Super9Ticket, Super9Ticket.id == Super9Prize.ticket_id)
        .join(Super9Session, Super9Session.id == Super9Prize.session_id)
        .where(Super9Session.status == SessionStatus.CLOSED, Super9Session.closed_at < end)
        .order_by(Super9Prize.id)
    )
    s9_unpaid: list[dict[str, Any]] = [
        {
            "session": p.session_id,
            "ticket": serial,
            "kind": p.kind,
            "amount_cents": p.amount_cents,
            "won_at": closed,
        }
        for p, serial, closed in s9.all()
        if p.amount_cents > 0 and (p.signed_at is None or p.signed_at >= end)
    ]
    paid = {
        (p.tournament_id, p.stage, p.place)
        for p in (await db.execute(select(PrizePayout).where(PrizePayout.paid_at < end))).scalars()
    }
    places = await db.execute(
        select(PrizePlace)
        .where(PrizePlace.set_at < end)
        .order_by(PrizePlace.tournament_id, PrizePlace.stage, PrizePlace.place)
    )
    t_unpaid: list[dict[str, Any]] = [
        {
            "tournament": p.tournament_id,
            "stage": p.stage,
            "place": p.place,
            "amount_cents": p.minimum_cents + p.surplus_cents,
        }
        for p in places.scalars()
        if (p.tournament_id, p.stage, p.place) not in paid
    ]
    drawn = await db.execute(
        select(HotseatDraw, HotseatCommitment.subject)
        .join(HotseatCommitment, HotseatCommitment.id == HotseatDraw.commitment_id)
        .where(
            HotseatDraw.taken_at < end,
            HotseatDraw.entry_id.is_not(None),
            HotseatDraw.prize_cents > 0,
        )
        .order_by(HotseatDraw.id)
    )
    hs_unpaid: list[dict[str, Any]] = [  # HS7: won, and not paid by the day's end
        {
            "draw": d.id,
            "subject": subject,
            "seat": d.winner,
            "entry": d.entry_id,
            "amount_cents": d.prize_cents,
            "won_at": d.taken_at,
        }
        for d, subject in drawn.all()
        if d.paid_at is None or d.paid_at >= end
    ]
    team_paid = {
        (p.tournament_id, p.stage, p.place)
        for p in (
            await db.execute(select(TeamPrizePayout).where(TeamPrizePayout.paid_at < end))
        ).scalars()
    }
    team_places = await db.execute(
        select(TeamPrizePlace)
        .where(TeamPrizePlace.set_at < end)
        .order_by(TeamPrizePlace.tournament_id, TeamPrizePlace.stage, TeamPrizePlace.place)
    )
    team_unpaid: list[dict[str, Any]] = [  # H11 advertised, H12 not paid by the day's end
        {"tournament": p.tournament_id, "stage": p.stage, "place": p.place,
         "amount_cents": p.cents}
        for p in team_places.scalars()
        if (p.tournament_id, p.stage, p.place) not in team_paid
    ]  # fmt: skip
    s9_cents = sum(int(x["amount_cents"]) for x in s9_unpaid)
    t_cents = sum(int(x["amount_cents"]) for x in t_unpaid)
    hs_cents = sum(int(x["amount_cents"]) for x in hs_unpaid)
    team_cents = sum(int(x["amount_cents"]) for x in team_unpaid)
    return {
        "super9_prizes_unpaid": s9_unpaid,
        "super9_prizes_unpaid_cents": s9_cents,
        "tournament_prizes_unpaid": t_unpaid,
        "tournament_prizes_unpaid_cents": t_cents,
        "hotseat_prizes_unpaid": hs_unpaid,
        "hotseat_prizes_unpaid_cents": hs_cents,
        "team_prizes_unpaid": team_unpaid,
        "team_prizes_unpaid_cents": team_cents,
        "jackpot_cents": jackpot_cents,
        "total_cents": s9_cents + t_cents + hs_cents + team_cents + jackpot_cents,
    }


def _row(m: Movement) -> dict[str, Any]:
    return {
        "at": m.at,
        "kind": m.kind,
        "what": m.ref,
        "cashier": m.cashier,
        "tender": m.tender,
        "seats": m.seats,
        "amount_cents": m.cents,
    }


async def cashup_body(
    db: AsyncSession,
    day: date,
    *,
    zone: ZoneInfo,
    cashier: str | None = None,
    desk: str | None = None,
) -> dict[str, Any]:
    """The day's cash-up in the venue's ``zone`` (``gateway.super9.venue.venue_zone``: the
    caller reads it, the records know no Super 9)."""
    start, end = day_window(day, zone)
    book = await cr.ledger(db)
    moves = await cr.movements(db, start, end, book)
    problems = _check_aggregates(moves, await cr.aggregates(db, start, end))
    problems += _check_drawer(moves, await cr.cash_aggregates(db, start, end))
    problems += _check_ledger(moves, book, await cr.stored_keys(db))
    jackpot, jackpot_problems = await _jackpot(db, start, end)
    problems += jackpot_problems
    wanted = cashier.strip().casefold() if cashier else None
    shown = [m for m in moves if wanted is None or m.cashier.casefold() == wanted]
    cashiers = sorted({m.cashier for m in shown})
    return {
        "day": day,
        "zone": str(zone),
        "from": start,
        "until": end,
        "desk": {"name": desk, "note": DESK_NOTE},
        "cashier_filter": cashier,
        "by_cashier": [
            {"cashier": c, **_figures(m for m in shown if m.cashier == c)} for c in cashiers
        ],
        "totals": _figures(shown),
        "rows": [_row(m) for m in shown],
        "jackpot": jackpot,
        "liability_carried_forward": await _liability(db, end, jackpot["carried_cents"]),
        "reconciliation": {
            "ok": not problems,
            "ways": "stored rows summed; SQL totals; audit-log rows; jackpot ledger chain",
            "mismatches": problems,
        },
    }
