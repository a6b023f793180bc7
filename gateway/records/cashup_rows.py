"""The money rows of one day, read three independent ways for the cash-up.

1. **rows** — every stored sale, refund, complimentary entry, Super 9 buy-in and prize
   paid on the day, one :class:`Movement` each (summed in Python by the report);
2. **aggregate** — the same figures as SQL ``SUM``/``COUNT`` over the tables, by kind;
3. **ledger** — the audit log rows the desk wrote in the same transaction as each
   movement (``purchase.sell``, ``entry.refund``, ``super9.ticket.sell``,
   ``super9.prize.receipt``, ``tournament.prizes.paid``, ``hotseat.paid``,
   ``team.prizes.paid``), matched to the stored row by reference (purchase id, entry id,
   ticket serial, place, draw id, team place), never by time: a keyed-in
   ``--now`` moves the stored time but not the audit row's.

The day is a venue-local calendar day ``[start, end)``.  Where Reelgate records who
took or paid the money: ``entry_purchases.cashier``, ``refunds.refunded_by``,
``super9_ticket.sold_by``, ``prize_payouts.paid_by``, ``hotseat_draws.paid_by`` (HS7),
``team_prize_payouts.paid_by`` (H12); a Super 9 prize row keeps the
winner's signature and the witness but not the paying account, which is read from its
receipt's audit row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import PurchaseKind
from gateway.tournament.rules.purchases import tender_of_kind
from storage.audit import AuditEntry
from storage.enums import Tender
from storage.hotseat import HotseatDraw
from storage.machine_prizes import DONE, MACHINE_TENDER, MachinePrizeTransfer
from storage.prizes import PrizePayout
from storage.super9 import Super9Prize, Super9Ticket
from storage.teams import TeamPrizePayout
from storage.tournament import Entry, EntryPurchase, Refund

SALE, COMP, REFUND = "entry-sale", "entry-complimentary", "entry-refund"
BUY_IN, S9_PRIZE, T_PRIZE = "super9-buy-in", "super9-prize", "tournament-prize"
HS_PRIZE = "hotseat-prize"  # HS7: a hot-seat draw's prize, paid at the desk
TEAM_PRIZE = "team-prize"  # H12: a team place, paid to the captain
KINDS = (SALE, COMP, REFUND, BUY_IN, S9_PRIZE, T_PRIZE, HS_PRIZE, TEAM_PRIZE)
CASH_IN = frozenset({SALE, BUY_IN})
CASH_OUT = frozenset({REFUND, S9_PRIZE, T_PRIZE, HS_PRIZE, TEAM_PRIZE})
ACTIONS = {
    SALE: "purchase.sell",
    COMP: "purchase.sell",
    REFUND: "entry.refund",
    BUY_IN: "super9.ticket.sell",
    S9_PRIZE: "super9.prize.receipt",
    T_PRIZE: "tournament.prizes.paid",
    HS_PRIZE: "hotseat.paid",
    TEAM_PRIZE: "team.prizes.paid",
}
UNKNOWN_CASHIER = "(not recorded)"


@dataclass(frozen=True)
class Movement:
    kind: str
    ref: str  # what the row is: "purchase 17", "ticket A-001 consolation (session 3)"
    cashier: str
    at: datetime
    cents: int
    seats: int  # entries a sale or comp covers; 1 otherwise
    audit_key: tuple[str, str]  # (action, reference) the ledger row is found by
    tender: str = Tender.CASH.value  # cash, card or comp: only cash is in the drawer


@dataclass(frozen=True)
class LedgerRow:
    audit_id: int
    at: datetime
    actor: str
    cents: int
    key: tuple[str, str]
    tender: str | None = None  # as the audit row recorded it (None: rows before 0017)


async def _purchases(db: AsyncSession, start: datetime, end: datetime) -> list[Movement]:
    rows = await db.execute(
        select(EntryPurchase)
        .where(EntryPurchase.purchased_at >= start, EntryPurchase.purchased_at < end)
        .order_by(EntryPurchase.purchased_at, EntryPurchase.id)
    )
    return [
        Movement(
            COMP if p.kind is PurchaseKind.COMPLIMENTARY else SALE,
            f"purchase {p.id} ({p.kind.value}, tournament {p.tournament_id})",
            p.cashier,
            p.purchased_at,
            p.amount_cents,
            p.seats,
            ("purchase.sell", str(p.id)),
            p.tender or tender_of_kind(p.kind).value,
        )
        for p in rows.scalars()
    ]


async def _refunds(db: AsyncSession, start: datetime, end: datetime) -> list[Movement]:
    # A refund with no stored tender (before revision 0017) went back as it was paid.
    rows = await db.execute(
        select(Refund, EntryPurchase.kind)
        .join(Entry, Entry.id == Refund.entry_id)
        .join(EntryPurchase, EntryPurchase.id == Entry.purchase_id)
        .where(Refund.refunded_at >= start, Refund.refunded_at < end)
        .order_by(Refund.refunded_at, Refund.id)
    )
    return [
        Movement(
            REFUND,
            f"refund of entry {r.entry_id} (rule {r.rule})",
            r.refunded_by,
            r.refunded_at,
            r.amount_cents,
            1,
            ("entry.refund", f"entry:{r.entry_id}"),
            r.tender or tender_of_kind(kind).value,
        )
        for r, kind in rows.all()
    ]


async def _buy_ins(db: AsyncSession, start: datetime, end: datetime) -> list[Movement]:
    rows = await db.execute(
        select(Super9Ticket)
        .where(Super9Ticket.sold_at >= start, Super9Ticket.sold_at < end)
        .order_by(Super9Ticket.sold_at, Super9Ticket.id)
    )
    return [
        Movement(
            BUY_IN,
            f"ticket {t.serial}",
            t.sold_by,
            t.sold_at,
            t.buy_in_cents,
            1,
            ("super9.ticket.sell", f"super9/ticket/{t.serial}"),
            t.tender or Tender.CASH.value,
        )
        for t in rows.scalars()
    ]


def _prize_key(serial: str, session_id: int, kind: str) -> str:
    return f"super9/ticket/{serial}|{session_id}|{kind}"


async def _super9_prizes(
    db: AsyncSession, start: datetime, end: datetime, payers: dict[str, str]
) -> list[Movement]:
    rows = await db.execute(
        select(Super9Prize, Super9Ticket.serial)
        .join(Super9Ticket, Super9Ticket.id == Super9Prize.ticket_id)
        .where(Super9Prize.signed_at >= start, Super9Prize.signed_at < end)
        .order_by(Super9Prize.signed_at, Super9Prize.id)
    )
    out = []
    for prize, serial in rows.all():
        key = _prize_key(serial, prize.session_id, prize.kind)
        assert prize.signed_at is not None  # filtered on it
        out.append(
            Movement(
                S9_PRIZE,
                f"ticket {serial} {prize.kind} (session {prize.session_id})",
                payers.get(key, UNKNOWN_CASHIER),
                prize.signed_at,
                prize.amount_cents,
                1,
                ("super9.prize.receipt", key),
            )
        )
    return out


def _payout_key(tournament_id: int, stage: str, place: int) -> str:
    return f"tournament:{tournament_id}|{stage}|{place}"


def _to_machines(kind: str) -> Select[int | None]:
    """The payouts of ``kind`` (``prize``, ``hotseat``) credited to a machine (P6)."""
    return select(MachinePrizeTransfer.payout_id).where(
        MachinePrizeTransfer.kind == kind,
        MachinePrizeTransfer.status == DONE,
        MachinePrizeTransfer.payout_id.is_not(None),
    )


async def _tender_of(db: AsyncSession, kind: str) -> Callable[[int], str]:
    machine = set(await db.scalars(_to_machines(kind)))
    return lambda payout_id: MACHINE_TENDER if payout_id in machine else Tender.CASH.value


async def _tournament_prizes(db: AsyncSession, start: datetime, end: datetime) -> list[Movement]:
    tender = await _tender_of(db, "prize")
    rows = await db.execute(
        select(PrizePayout)
        .where(PrizePayout.paid_at >= start, PrizePayout.paid_at < end)
        .order_by(PrizePayout.paid_at, PrizePayout.id)
    )
    return [
        Movement(
            T_PRIZE,
            f"tournament {p.tournament_id} {p.stage.value} place {p.place}",
            p.paid_by,
            p.paid_at,
            p.amount_cents,
            1,
            ("tournament.prizes.paid", _payout_key(p.tournament_id, p.stage.value, p.place)),
            tender(p.id),  # machine (AFT): credited to the machine (P6)
        )
        for p in rows.scalars()
    ]


def _draw_key(draw_id: int) -> str:
    return f"hotseat-draw:{draw_id}"


async def _hotseat_prizes(db: AsyncSession, start: datetime, end: datetime) -> list[Movement]:
    """HS7: hot-seat prizes paid on the day, by the account that paid them."""
    tender = await _tender_of(db, "hotseat")
    rows = await db.execute(
        select(HotseatDraw)
        .where(HotseatDraw.paid_at >= start, HotseatDraw.paid_at < end)
        .order_by(HotseatDraw.paid_at, HotseatDraw.id)
    )
    out = []
    for d in rows.scalars():
        assert d.paid_at is not None  # filtered on it
        out.append(
            Movement(
                HS_PRIZE,
                f"hot-seat draw {d.id} (seat {d.winner}, entry {d.entry_id})",
                d.paid_by or UNKNOWN_CASHIER,
                d.paid_at,
                d.prize_cents,
                1,
                ("hotseat.paid", _draw_key(d.id)),
                tender(d.id),  # machine (AFT): credited to the machine (P6)
            )
        )
    return out


def _team_key(tournament_id: int, stage: str, place: int) -> str:
    return f"team:{tournament_id}|{stage}|{place}"


async def _team_prizes(db: AsyncSession, start: datetime, end: datetime) -> list[Movement]:
    """H12: team places paid on the day, by the account that paid them."""
    rows = await db.execute(
        select(TeamPrizePayout)
        .where(TeamPrizePayout.paid_at >= start, TeamPrizePayout.paid_at < end)
        .order_by(TeamPrizePayout.paid_at, TeamPrizePayout.id)
    )
    return [
        Movement(
            TEAM_PRIZE,
            f"tournament {p.tournament_id} {p.stage.value} team place {p.place} (team {p.team_id})",
            p.paid_by,
            p.paid_at,
            p.amount_cents,
            1,
            ("team.prizes.paid", _team_key(p.tournament_id, p.stage.value, p.place)),
        )
        for p in rows.scalars()
    ]


def ledger_key(row: AuditEntry) -> tuple[tuple[str, str], int, str | None] | None:
    """The (action, reference), amount and tender (None where it was not recorded) an
    audit row records, for money actions."""
    d = row.details_dict()
    tender = d.get("tender")
    if row.action == "purchase.sell":
        return (row.action, str(d["purchase_id"])), int(d["amount_cents"]), tender
    if row.action in ("entry.refund", "super9.ticket.sell"):
        cents = d["amount_cents"] if row.action == "entry.refund" else d["buy_in_cents"]
        return (row.action, row.subject), int(cents), tender
    if row.action == "super9.prize.receipt":
        key = _prize_key(row.subject.removeprefix("super9/ticket/"), int(d["session"]), d["kind"])
        return (row.action, key), int(d["amount_cents"]), None
    if row.action == "tournament.prizes.paid":
        key = _payout_key(int(d["tournament_id"]), str(d["stage"]), int(d["place"]))
        return (row.action, key), int(d["amount_cents"]), None
    if row.action == "hotseat.paid":
        return (row.action, _draw_key(int(d["draw_id"]))), int(d["amount_cents"]), None
    if row.action == "team.prizes.paid":
        key = _team_key(int(d["tournament_id"]), str(d["stage"]), int(d["place"]))
        return (row.action, key), int(d["amount_cents"]), None
    return None


async def ledger(db: AsyncSession) -> dict[tuple[str, str], list[LedgerRow]]:
    """Every money row of the audit log by (action, reference)."""
    rows = await db.execute(
        select(AuditEntry)
        .where(AuditEntry.action.in_(sorted(set(ACTIONS.values()))))
        .order_by(AuditEntry.id)
    )
    out: dict[tuple[str, str], list[LedgerRow]] = {}
    for row in rows.scalars():
        found = ledger_key(row)
        if found is not None:
            key, cents, tender = found
            out.setdefault(key, []).append(LedgerRow(row.id, row.at, row.actor, cents, key, tender))
    return out


async def movements(
    db: AsyncSession, start: datetime, end: datetime, book: dict[tuple[str, str], list[LedgerRow]]
) -> list[Movement]:
    payers = {k[1]: rows[-1].actor for k, rows in book.items() if k[0] == "super9.prize.receipt"}
    found = (
        await _purchases(db, start, end)
        + await _refunds(db, start, end)
        + await _buy_ins(db, start, end)
        + await _super9_prizes(db, start, end, payers)
        + await _tournament_prizes(db, start, end)
        + await _hotseat_prizes(db, start, end)
        + await _team_prizes(db, start, end)
    )
    return sorted(found, key=lambda m: (m.at, m.kind, m.ref))


async def stored_keys(db: AsyncSession) -> set[tuple[str, str]]:
    """The ledger reference of every stored money row, whatever its day: an audit row
    whose stored row is gone (deleted, or a prize receipt undone) has none here."""
    keys: set[tuple[str, str]] = set()
    keys.update(("purchase.sell", str(i)) for i in await db.scalars(select(EntryPurchase.id)))
    keys.update(("entry.refund", f"entry:{i}") for i in await db.scalars(select(Refund.entry_id)))
    keys.update(
        ("super9.ticket.sell", f"super9/ticket/{s}")
        for s in await db.scalars(select(Super9Ticket.serial))
    )
    signed = await db.execute(
        select(Super9Ticket.serial, Super9Prize.session_id, Super9Prize.kind)
        .join(Super9Ticket, Super9Ticket.id == Super9Prize.ticket_id)
        .where(Super9Prize.signed_at.is_not(None))
    )
    keys.update(("super9.prize.receipt", _prize_key(*row)) for row in signed.all())
    paid = await db.execute(select(PrizePayout.tournament_id, PrizePayout.stage, PrizePayout.place))
    keys.update(
        ("tournament.prizes.paid", _payout_key(t, stage.value, place))
        for t, stage, place in paid.all()
    )
    paid_draws = await db.scalars(select(HotseatDraw.id).where(HotseatDraw.paid_at.is_not(None)))
    keys.update(("hotseat.paid", _draw_key(i)) for i in paid_draws)
    teams = await db.execute(
        select(TeamPrizePayout.tournament_id, TeamPrizePayout.stage, TeamPrizePayout.place)
    )
    keys.update(
        ("team.prizes.paid", _team_key(t, stage.value, place)) for t, stage, place in teams.all()
    )
    return keys


async def aggregates(db: AsyncSession, start: datetime, end: datetime) -> dict[str, dict[str, int]]:
    """Count and cents per kind straight from SQL (the second way)."""
    comp = EntryPurchase.kind == PurchaseKind.COMPLIMENTARY
    window = (EntryPurchase.purchased_at >= start, EntryPurchase.purchased_at < end)
    queries: dict[str, Any] = {
        SALE: select(func.count(), func.sum(EntryPurchase.amount_cents)).where(*window, ~comp),
        COMP: select(func.count(), func.sum(EntryPurchase.amount_cents)).where(*window, comp),
        REFUND: select(func.count(), func.sum(Refund.amount_cents)).where(
            Refund.refunded_at >= start, Refund.refunded_at < end
        ),
        BUY_IN: select(func.count(), func.sum(Super9Ticket.buy_in_cents)).where(
            Super9Ticket.sold_at >= start, Super9Ticket.sold_at < end
        ),
        S9_PRIZE: select(func.count(), func.sum(Super9Prize.amount_cents)).where(
            Super9Prize.signed_at >= start, Super9Prize.signed_at < end
        ),
        T_PRIZE: select(func.count(), func.sum(PrizePayout.amount_cents)).where(
            PrizePayout.paid_at >= start, PrizePayout.paid_at < end
        ),
        HS_PRIZE: select(func.count(), func.sum(HotseatDraw.prize_cents)).where(
            HotseatDraw.paid_at >= start, HotseatDraw.paid_at < end
        ),
        TEAM_PRIZE: select(func.count(), func.sum(TeamPrizePayout.amount_cents)).where(
            TeamPrizePayout.paid_at >= start, TeamPrizePayout.paid_at < end
        ),
    }
    out = {}
    for kind, query in queries.items():
        count, cents = (await db.execute(query)).one()
        out[kind] = {"count": int(count), "cents": int(cents or 0)}
    return out


async def cash_aggregates(db: AsyncSession, start: datetime, end: datetime) -> dict[str, int]:
    """The drawer's movements straight from SQL: cash in (sales and buy-ins) and cash out
    (refunds and prizes paid), each row's tender read as the report reads it (NULL:
    by the purchase's kind; a Super 9 ticket's NULL is cash)."""
    cash = Tender.CASH.value
    sale_cash = or_(
        EntryPurchase.tender == cash,
        and_(
            EntryPurchase.tender.is_(None),
            EntryPurchase.kind.in_((PurchaseKind.CASH, PurchaseKind.PACKAGE)),
        ),
    )
    refund_cash = or_(
        Refund.tender == cash,
        and_(
            Refund.tender.is_(None),
            EntryPurchase.kind.in_((PurchaseKind.CASH, PurchaseKind.PACKAGE)),
        ),
    )
    queries = (
        select(func.sum(EntryPurchase.amount_cents)).where(
            EntryPurchase.purchased_at >= start, EntryPurchase.purchased_at < end, sale_cash
        ),
        select(func.sum(Super9Ticket.buy_in_cents)).where(
            Super9Ticket.sold_at >= start,
            Super9Ticket.sold_at < end,
            or_(Super9Ticket.tender == cash, Super9Ticket.tender.is_(None)),
        ),
        select(func.sum(Refund.amount_cents))
        .join(Entry, Entry.id == Refund.entry_id)
        .join(EntryPurchase, EntryPurchase.id == Entry.purchase_id)
        .where(Refund.refunded_at >= start, Refund.refunded_at < end, refund_cash),
        select(func.sum(Super9Prize.amount_cents)).where(
            Super9Prize.signed_at >= start, Super9Prize.signed_at < end
        ),
        select(func.sum(PrizePayout.amount_cents)).where(
            PrizePayout.paid_at >= start,
            PrizePayout.paid_at < end,
            PrizePayout.id.not_in(_to_machines("prize")),
        ),
        select(func.sum(HotseatDraw.prize_cents)).where(
            HotseatDraw.paid_at >= start,
            HotseatDraw.paid_at < end,
            HotseatDraw.id.not_in(_to_machines("hotseat")),
        ),
        select(func.sum(TeamPrizePayout.amount_cents)).where(
            TeamPrizePayout.paid_at >= start, TeamPrizePayout.paid_at < end
        ),
    )
    sums = [int((await db.execute(q)).scalar_one() or 0) for q in queries]
    return {"in": sums[0] + sums[1], "out": sum(sums[2:])}
