"""The cash desk: entry purchases (T5–T9) and the refunds T20 allows.

Clauses: docs/rules.md#t5 to #t9, #t20.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import IN_PROGRESS, EntryStatus, PurchaseKind, SeatStatus
from gateway.tournament.rules.purchases import (
    check_not_continuing_heat,
    quote_sale,
    tender_of_kind,
    validity_window,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import (
    find_tournament,
    get,
    heat_label,
    load_settings,
    record,
    require_actor,
    require_reason,
)
from gateway.tournament.services.idempotency import SaleKey, digest, prior_sale, sale_key
from gateway.tournament.services.people import check_player_may_play, find_player
from storage.enums import Tender
from storage.tournament import Entry, EntryPurchase, Heat, Refund, Seat


@dataclass(frozen=True, slots=True)
class Sale:
    purchase: EntryPurchase
    entry_ids: tuple[int, ...]
    replayed: bool = False  # a retry answered with the first sale (nothing written)


def tender_of(purchase: EntryPurchase) -> Tender:
    """The stored tender; rows sold before it was stored (NULL) by their kind."""
    return Tender(purchase.tender) if purchase.tender else tender_of_kind(purchase.kind)


async def sell_entries(
    session: AsyncSession,
    tournament_ref: int | str,
    player_ref: int | str,
    *,
    package_code: str = "single",
    quantity: int = 1,
    payment: PurchaseKind = PurchaseKind.CASH,
    complimentary: bool = False,
    cashier: str,
    now: datetime,
    reference: str | None = None,
    tender: Tender | None = None,
    idempotency_key: str | None = None,
) -> Sale:
    """Sell seats: one entry row per seat (T14 single entry), valid per T5–T8.

    ``tender`` (cash, card, comp) says how it is paid, in place of ``payment`` and
    ``complimentary``.  A sale with a till slip (``reference``) or an
    ``idempotency_key`` is made once: a retry answers with the first sale
    (:mod:`.idempotency`)."""
    cashier = require_actor(cashier)
    if tender is not None:
        complimentary = tender is Tender.COMP
        payment = PurchaseKind.CARD if tender is Tender.CARD else PurchaseKind.CASH
    tournament = await find_tournament(session, tournament_ref)
    player = await find_player(session, player_ref)
    key = sale_key(
        cashier, reference=reference, header=idempotency_key, now=now, zone=tournament.venue_tz
    )
    asked = digest(
        tournament=tournament.id, player=player.id, package=package_code, quantity=quantity,
        payment=payment.value, complimentary=complimentary, reference=reference,
    )  # fmt: skip
    if key is not None and (prior := await prior_sale(session, key, asked)) is not None:
        return Sale(*prior, replayed=True)  # before the rules: the sale was made
    settings = await load_settings(session, tournament)
    await check_player_may_play(session, player, tournament, now)
    running = await running_heat_of(session, tournament.id, player.id)
    check_not_continuing_heat(running)  # T9
    quote = quote_sale(settings, package_code, quantity, complimentary=complimentary)
    if complimentary:
        kind = PurchaseKind.COMPLIMENTARY
    elif settings.package(package_code).seats > 1 or quote.casino_credit_cents:
        if payment is not PurchaseKind.CASH:
            raise RuleViolation(6, "entry packages are sold for cash only")
        kind = PurchaseKind.PACKAGE
    elif payment in (PurchaseKind.CASH, PurchaseKind.CARD):
        kind = payment
    else:
        raise RuleViolation(5, f"payment must be cash or card, not {payment.value}")
    # T6/T8: the casino-credit portion is subject to Rewards Programme membership.
    credit = quote.casino_credit_cents if player.card_number else 0
    _, valid_until = validity_window(settings, now)
    purchase = EntryPurchase(
        tournament_id=tournament.id,
        player_id=player.id,
        kind=kind,
        seats=quote.seats,
        amount_cents=quote.price_cents,
        package_code=quote.package_code,
        package_credit_cents=credit,
        purchased_at=now,
        valid_until=valid_until,
        cashier=cashier,
        reference=reference,
        tender=tender_of_kind(kind).value,
        idempotency_key=key.stored if key else None,
        request_digest=asked if key else None,
    )
    if key is not None:
        raced = await _insert_once(session, purchase, key, asked)
        if raced is not None:
            return raced
    else:
        session.add(purchase)
        await session.flush()
    entries = [
        Entry(
            purchase_id=purchase.id,
            tournament_id=tournament.id,
            player_id=player.id,
            status=EntryStatus.AVAILABLE,
            status_changed_at=now,
        )
        for _ in range(quote.seats)
    ]
    session.add_all(entries)
    await session.flush()
    ids = tuple(e.id for e in entries)
    await record(
        session,
        cashier,
        "purchase.sell",
        f"player:{player.id}",
        None,
        tournament_id=tournament.id,
        purchase_id=purchase.id,
        kind=kind,
        package=quote.package_code,
        quantity=quantity,
        seats=quote.seats,
        amount_cents=quote.price_cents,
        casino_paid_cents=quote.casino_paid_cents,
        casino_credit_cents=credit,
        casino_credit_withheld=quote.casino_credit_cents - credit,
        valid_until=valid_until,
        entries=list(ids),
        reference=reference,
        tender=purchase.tender,
    )
    return Sale(purchase, ids)


async def _insert_once(
    session: AsyncSession, purchase: EntryPurchase, key: SaleKey, asked: str
) -> Sale | None:
    """Insert the keyed purchase; None when it is the first, else the sale a concurrent
    retry made first under the same key (the insert undone in its savepoint)."""
    try:
        async with session.begin_nested():
            session.add(purchase)
            await session.flush()
    except IntegrityError:
        prior = await prior_sale(session, key, asked)
        if prior is None:  # another constraint refused it: the usual conflict
            raise
        return Sale(*prior, replayed=True)
    return None


async def running_heat_of(session: AsyncSession, tournament_id: int, player_id: int) -> str | None:
    """Label of a heat under way in which the player holds a live seat (T9)."""
    heat = (
        await session.execute(
            select(Heat)
            .join(Seat, Seat.heat_id == Heat.id)
            .where(
                Heat.tournament_id == tournament_id,
                Heat.status.in_(IN_PROGRESS),
                Seat.holder_player_id == player_id,
                Seat.status.in_((SeatStatus.ASSIGNED, SeatStatus.PRESENT)),
            )
            .limit(1)
        )
    ).scalar_one_or_none()
    return heat_label(heat) if heat else None


def refund_amount(purchase: EntryPurchase) -> int:
    """What one entry of a purchase cost the player (0 for a complimentary entry)."""
    return purchase.amount_cents // purchase.seats


async def refund_entry(
    session: AsyncSession,
    entry_id: int,
    *,
    rule: int,
    reason: str,
    actor: str,
    now: datetime,
    tender: Tender | None = None,
) -> Refund:
    """Refund one entry, in ``tender`` (default: as it was paid).  The rules allow it
    after a machine malfunction with no future seat (T20); any other refund is a
    Tournament Director decision (T23).  Only an entry that is not seated and not played
    can be refunded."""
    actor = require_actor(actor)
    reason = require_reason(reason, rule)
    if rule not in (20, 23):
        raise RuleViolation(rule, "refunds are made under rule 20 (malfunction) or rule 23")
    entry = await get(session, Entry, entry_id, "entry")
    if entry.status is not EntryStatus.AVAILABLE:
        raise RuleViolation(
            22 if entry.status is EntryStatus.FORFEITED else rule,
            f"entry {entry.id} is {entry.status.value}; only an unused entry can be refunded",
        )
    return await refund_row(
        session, entry, rule=rule, reason=reason, actor=actor, now=now, tender=tender
    )


async def refund_row(
    session: AsyncSession,
    entry: Entry,
    *,
    rule: int,
    reason: str,
    actor: str,
    now: datetime,
    tender: Tender | None = None,
) -> Refund:
    purchase = await get(session, EntryPurchase, entry.purchase_id, "purchase")
    paid = tender_of(purchase)
    given = tender or paid
    # A comp cost the player nothing: its refund moves no money, and money is never
    # returned as a comp.
    if (given is Tender.COMP) != (paid is Tender.COMP):
        raise RuleViolation(
            rule,
            f"tender: entry {entry.id} was paid {paid.value}; "
            + ("a complimentary entry is refunded as comp" if paid is Tender.COMP
               else "its refund is cash or card"),
        )  # fmt: skip
    refund = Refund(
        entry_id=entry.id,
        amount_cents=refund_amount(purchase),
        rule=str(rule),
        reason=reason,
        refunded_by=actor,
        refunded_at=now,
        tender=given.value,
    )
    entry.status = EntryStatus.REFUNDED
    entry.status_changed_at = now
    session.add(refund)
    await session.flush()
    await record(
        session,
        actor,
        "entry.refund",
        f"entry:{entry.id}",
        reason,
        rule=rule,
        amount_cents=refund.amount_cents,
        player_id=entry.player_id,
        complimentary=purchase.kind is PurchaseKind.COMPLIMENTARY,
        tender=refund.tender,
    )
    return refund


async def expire_entries(
    session: AsyncSession, tournament_ref: int | str, *, now: datetime, actor: str
) -> list[int]:
    """Mark unused entries whose validity window closed (T5–T8) as expired."""
    actor = require_actor(actor)
    tournament = await find_tournament(session, tournament_ref)
    rows = (
        (
            await session.execute(
                select(Entry)
                .join(EntryPurchase, EntryPurchase.id == Entry.purchase_id)
                .where(
                    Entry.tournament_id == tournament.id,
                    Entry.status == EntryStatus.AVAILABLE,
                    EntryPurchase.valid_until <= now,
                )
                .order_by(Entry.id)
            )
        )
        .scalars()
        .all()
    )
    for entry in rows:
        entry.status = EntryStatus.EXPIRED
        entry.status_changed_at = now
    if rows:
        await session.flush()
        await record(
            session,
            actor,
            "entry.expire",
            f"tournament:{tournament.id}",
            None,
            entries=[e.id for e in rows],
        )
    return [e.id for e in rows]
