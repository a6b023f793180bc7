"""The cash-up by tender (issue 24 no. 5): a card sale, a card refund and a Super 9 ticket
paid by card are money, but not in the drawer; the drawer is cash in − cash out; a comp
moves no money.  An insider who turns a cash sale into a card sale in the database is
named by the reconciliation."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.records.canonical import to_record
from gateway.records.cashup import cashup_body
from gateway.super9.venue import venue_zone
from gateway.tournament import services as svc
from gateway.tournament.rules.violations import RuleViolation
from storage.db import make_sessionmaker
from storage.enums import Tender
from storage.tournament import Player

from .conftest import SAST, WED, Venue, at

DAN, P3 = "8301015009084", "9103036009087"


async def _card_day(venue: Venue) -> tuple[int, ...]:
    """Dee sells Dan two singles by card and refunds one (back to the card, as paid),
    and sells ticket C by card for the 21:00 session."""
    async with make_sessionmaker(venue.engine).begin() as db:
        db.add(Player(id_number=P3, card_number="S3", name="Punter 3",
                      date_of_birth=date(1985, 1, 1)))  # fmt: skip
    dan = await venue.desk.player(DAN, "Dan")
    sale = await venue.desk.run(
        svc.sell_entries, venue.tournament_id, dan, quantity=2, tender=Tender.CARD,
        cashier="dee", now=at(13),
    )  # fmt: skip
    await venue.desk.run(svc.refund_entry, sale.entry_ids[0], rule=23, reason="left early",
                         actor="dee", now=at(14))  # fmt: skip
    await venue.super9.sell("C", P3, actor="dee", now=at(20, 15), tender=Tender.CARD)
    return tuple(sale.entry_ids)


async def _cashup(venue: Venue) -> dict[str, Any]:
    async def work(session: AsyncSession) -> dict[str, Any]:
        result: dict[str, Any] = to_record(
            await cashup_body(session, WED, zone=await venue_zone(session), desk="till 1"), SAST
        )
        return result

    found: dict[str, Any] = await venue.desk.run(work)
    return found


def _tenders(figures: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    return {
        t["tender"]: (t["movements"], t["in_cents"], t["out_cents"]) for t in figures["by_tender"]
    }


async def test_the_drawer_holds_cash_only(venue: Venue) -> None:
    await _card_day(venue)
    report = await _cashup(venue)
    assert report["reconciliation"]["ok"], report["reconciliation"]["mismatches"]
    by = {x["cashier"]: x for x in report["by_cashier"]}
    dee = by["dee"]
    assert dee["entries_sold"] == {"purchases": 1, "seats": 2, "amount_cents": 10_000}
    assert dee["entries_refunded"] == {"entries": 1, "amount_cents": 5_000}
    assert dee["super9_buy_ins"] == {"tickets": 1, "amount_cents": 5_000}
    # Nothing Dee took is in a drawer (it used to count R150 cash in).
    assert (dee["cash_in_cents"], dee["cash_out_cents"], dee["drawer_cents"]) == (0, 0, 0)
    assert (dee["card_in_cents"], dee["card_out_cents"]) == (15_000, 5_000)
    assert dee["net_cents"] == 10_000
    assert _tenders(dee) == {
        "cash": (0, 0, 0), "card": (3, 15_000, 5_000), "comp": (0, 0, 0),
        "machine (AFT)": (0, 0, 0),  # P6: prizes paid to a machine, none here
    }  # fmt: skip
    # The cashier's comp for Cat (T5) is a movement without money.
    assert _tenders(by["cashier"])["comp"] == (1, 0, 0)
    totals = report["totals"]
    cash_in = 5_000 + 20_000 + 10_000  # Ann's single, Ben's package (T6), tickets A and B
    cash_out = 5_000 + 2_500 + 100_000  # Ben's refund, the S9-26 consolation, the T15 prize
    assert (totals["cash_in_cents"], totals["cash_out_cents"]) == (cash_in, cash_out)
    assert totals["drawer_cents"] == cash_in - cash_out
    assert totals["net_cents"] == cash_in - cash_out + 15_000 - 5_000
    tender_of_row = {r["what"].split(" (")[0]: r["tender"] for r in report["rows"]}
    assert tender_of_row["ticket C"] == "card"
    assert tender_of_row["ticket A"] == "cash"


async def test_a_refund_may_go_back_in_cash_but_a_comp_is_never_money(venue: Venue) -> None:
    spare = (await _card_day(venue))[1]
    # A paid entry's money is never refunded "as a comp".
    with pytest.raises(RuleViolation, match=r"tender: entry \d+ was paid card"):
        await venue.desk.run(svc.refund_entry, spare, rule=23, reason="x", actor="dee",
                             now=at(15), tender=Tender.COMP)  # fmt: skip
    refund = await venue.desk.run(svc.refund_entry, spare, rule=23, reason="cash back",
                                  actor="dee", now=at(15), tender=Tender.CASH)  # fmt: skip
    assert refund.tender == "cash"
    report = await _cashup(venue)
    dee = {x["cashier"]: x for x in report["by_cashier"]}["dee"]
    assert (dee["cash_out_cents"], dee["drawer_cents"]) == (5_000, -5_000)
    assert report["reconciliation"]["ok"]


async def test_a_cash_sale_turned_into_card_in_the_database_is_named(venue: Venue) -> None:
    """An insider edits Ann's cash sale to card (kind and tender, as the check demands) to
    take R50 from the drawer: the audit row written with the sale still says cash."""
    report = await _cashup(venue)
    ann_sale = next(r for r in report["rows"] if r["kind"] == "entry-sale" and r["cashier"] ==
                    "cashier")  # fmt: skip
    purchase = ann_sale["what"].split()[1]
    async with venue.engine.begin() as conn:
        await conn.execute(
            text(f"UPDATE entry_purchases SET kind = 'card', tender = 'card' WHERE id = {purchase}")
        )
    report = await _cashup(venue)
    assert report["reconciliation"]["ok"] is False
    assert (
        f"purchase {purchase} (card, tournament {venue.tournament_id}): stored as card, audit "
        in ("\n".join(report["reconciliation"]["mismatches"]))
    )
    assert report["totals"]["cash_in_cents"] == 20_000 + 10_000
