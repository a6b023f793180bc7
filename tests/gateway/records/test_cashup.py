"""Cash-up of a real day (sales, a package, a comp, a refund, Super 9 buy-ins, prizes
paid), reconciled to the cent three ways; direct edits of the money rows are named."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.records.canonical import canonical_bytes, to_record
from gateway.records.cashup import cashup_body
from gateway.super9.venue import venue_zone
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services import hotseat as hs
from storage.tournament import Player

from .conftest import BEN, SAST, WED, Venue, at


async def _cashup(venue: Venue, **kw: Any) -> dict[str, Any]:
    async def work(session: AsyncSession) -> dict[str, Any]:
        body = await cashup_body(
            session, WED, zone=await venue_zone(session), desk="cash desk 1", **kw
        )
        result: dict[str, Any] = to_record(body, SAST)
        return result

    found: dict[str, Any] = await venue.desk.run(work)
    return found


async def _sql(venue: Venue, statement: str) -> None:
    async with venue.engine.begin() as conn:
        await conn.execute(text(statement))


async def test_cashup_per_cashier_to_the_cent(venue: Venue) -> None:
    """T5 (comp), T6 (package), T15 (prize paid), T23 (refund), S9-5 (buy-ins),
    S9-15 (jackpot carried), S9-26 (prize paid on receipt)."""
    report = await _cashup(venue)
    canonical_bytes(report)  # exportable as it stands: no floats, aware times
    assert report["reconciliation"] == {
        "ok": True,
        "ways": "stored rows summed; SQL totals; audit-log rows; jackpot ledger chain",
        "mismatches": [],
    }
    by = {x["cashier"]: x for x in report["by_cashier"]}
    assert sorted(by) == ["bob", "cashier"]
    assert by["cashier"]["entries_sold"] == {"purchases": 1, "seats": 1, "amount_cents": 5000}
    assert by["cashier"]["entries_complimentary"] == {"purchases": 1, "seats": 1}
    assert by["cashier"]["super9_buy_ins"] == {"tickets": 2, "amount_cents": 10_000}
    assert by["cashier"]["super9_prizes_paid"] == {"prizes": 1, "amount_cents": 2_500}
    assert by["cashier"]["net_cents"] == 5000 + 10_000 - 2_500
    assert by["bob"]["entries_sold"] == {"purchases": 1, "seats": 4, "amount_cents": 20_000}
    assert by["bob"]["entries_refunded"] == {"entries": 1, "amount_cents": 5000}
    assert by["bob"]["tournament_prizes_paid"] == {"prizes": 1, "amount_cents": 100_000}
    assert by["bob"]["net_cents"] == 20_000 - 5000 - 100_000
    totals = report["totals"]
    assert totals["cash_in_cents"] == 5000 + 20_000 + 10_000
    assert totals["cash_out_cents"] == 5000 + 2_500 + 100_000
    # The jackpot: seeded R5,000, won, restarted at R5,000 (S9-15 default).
    assert report["jackpot"]["opening_cents"] == 0
    assert [(m["kind"], m["amount_cents"]) for m in report["jackpot"]["movements"]] == [
        ("seed", 500_000),
        ("payout", -500_000),
        ("seed", 500_000),
    ]
    assert report["jackpot"]["carried_cents"] == 500_000
    owed = report["liability_carried_forward"]
    assert [(x["ticket"], x["kind"], x["amount_cents"]) for x in owed["super9_prizes_unpaid"]] == [
        ("B", "jackpot", 500_000)
    ]
    assert owed["tournament_prizes_unpaid_cents"] == 0  # the one advertised place is paid
    assert owed["total_cents"] == 500_000 + 500_000
    assert report["desk"]["name"] == "cash desk 1"
    assert report["from"] == "2026-12-02T00:00:00+02:00"
    assert len(report["rows"]) == 8


async def test_cashup_for_one_cashier(venue: Venue) -> None:
    report = await _cashup(venue, cashier="Bob")
    assert [x["cashier"] for x in report["by_cashier"]] == ["bob"]
    assert report["totals"]["net_cents"] == 20_000 - 5000 - 100_000
    assert {r["cashier"] for r in report["rows"]} == {"bob"}


async def test_an_edited_sale_is_named(venue: Venue) -> None:
    await _sql(venue, "UPDATE entry_purchases SET amount_cents = 4000 WHERE kind = 'cash'")
    report = await _cashup(venue)
    assert report["reconciliation"]["ok"] is False
    (line,) = report["reconciliation"]["mismatches"]
    assert line.startswith("purchase 1 (cash, tournament 1): stored 4000 c by cashier, audit row")
    assert line.endswith("says 5000 c by cashier")


async def test_a_deleted_refund_and_an_edited_buy_in_are_named(venue: Venue) -> None:
    await _sql(venue, f"DELETE FROM refunds WHERE entry_id = {venue.refunded_entry}")
    await _sql(venue, "UPDATE super9_ticket SET sold_by = 'mallory' WHERE serial = 'A'")
    problems = (await _cashup(venue))["reconciliation"]["mismatches"]
    assert len(problems) == 2
    assert problems[0].startswith("ticket A: stored 5000 c by mallory, audit row")
    assert f"records entry.refund entry:{venue.refunded_entry} of 5000 c by bob" in problems[1]
    assert problems[1].endswith("no such row is stored")


async def test_a_broken_jackpot_ledger_is_named(venue: Venue) -> None:
    await _sql(venue, "UPDATE super9_jackpot_entry SET balance_cents = 1 WHERE kind = 'payout'")
    problems = (await _cashup(venue))["reconciliation"]["mismatches"]
    assert problems == [
        "jackpot ledger row 2: balance 1 c, but 500000 c + -500000 c = 0 c",
        "jackpot ledger row 3: balance 500000 c, but 1 c + 500000 c = 500001 c",
    ]


async def _hotseat_heat(venue: Venue) -> list[Any]:
    """HS7: Ben plays a 21:00 heat alone with two hot-seat draws of R100; the cashier
    pays the first at 22:00 and leaves the second unpaid."""
    desk = venue.desk

    async def ben_id(session: AsyncSession) -> int:
        player = (await session.execute(select(Player).where(Player.id_number == BEN))).scalar_one()
        return player.id

    ben = await desk.run(ben_id)
    added = await desk.run(
        svc.schedule_heat, venue.tournament_id, stage=Stage.QUALIFYING, starts_at=at(21),
        bank_name="A", duration_seconds=600, starting_credits=1000, actor="director",
        now=at(20), announced_via="posted at the desk",
    )  # fmt: skip
    heat = int(added.id)
    await desk.register(heat, ben, at(20, 30))
    await desk.run(hs.commit_heat, heat, draws=2, prize_cents=10_000, actor="director",
                   now=at(20, 40))  # fmt: skip
    await desk.play(heat, {1: 700}, at(21))
    draws: list[Any] = await desk.run(hs.take_heat_draws, heat, actor="director", now=at(21, 20))
    await desk.run(hs.pay_draw, draws[0].id, signer=BEN, signature="slip 21",
                   witness="Floor Lee", actor="cashier", now=at(22))  # fmt: skip
    return draws


async def test_hs7_hot_seat_prizes_paid_are_in_the_cashup_and_reconciled(venue: Venue) -> None:
    """HS7: a hot-seat prize paid at the desk is a cash-out like a desk prize, under the
    paying account, reconciled three ways; the one not yet paid is a liability."""
    draws = await _hotseat_heat(venue)
    report = await _cashup(venue)
    assert report["reconciliation"]["ok"] is True, report["reconciliation"]
    by = {x["cashier"]: x for x in report["by_cashier"]}
    assert by["cashier"]["hotseat_prizes_paid"] == {"prizes": 1, "amount_cents": 10_000}
    assert by["cashier"]["net_cents"] == 5000 + 10_000 - 2_500 - 10_000
    assert report["totals"]["cash_out_cents"] == 5000 + 2_500 + 100_000 + 10_000
    (row,) = [r for r in report["rows"] if r["kind"] == "hotseat-prize"]
    assert row["what"] == f"hot-seat draw {draws[0].id} (seat 001, entry {draws[0].entry_id})"
    owed = report["liability_carried_forward"]
    assert [(x["draw"], x["seat"], x["amount_cents"]) for x in owed["hotseat_prizes_unpaid"]] == [
        (draws[1].id, "001", 10_000)
    ]
    assert owed["total_cents"] == 500_000 + 500_000 + 10_000


async def test_hs7_an_edited_hot_seat_payout_is_named(venue: Venue) -> None:
    draws = await _hotseat_heat(venue)
    await _sql(venue, f"UPDATE hotseat_draws SET prize_cents = 99999 WHERE id = {draws[0].id}")
    problems = (await _cashup(venue))["reconciliation"]["mismatches"]
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"hot-seat draw {draws[0].id} (seat 001, entry")
    assert problems[0].endswith("says 10000 c by cashier")
