"""T15 prizes through the services, on each backend: the advertised schedule, the
surplus decision (every cent), the signed and witnessed payout; refusals name the rule
and change nothing; every change is audited."""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.prizes import PrizeAmount
from gateway.tournament.services.prizes import (
    apportion_surplus,
    pay_prize,
    prize_lines,
    set_schedule,
)
from gateway.tournament.services.standings import stage_standings
from storage.audit import AuditEntry
from storage.prizes import PrizePayout, PrizeSurplus
from storage.tournament import Player

from .conftest import Desk, at
from .test_services_rules import refused

DAY = date(2026, 11, 2)
ANN, BEN, CAT = "8001015009087", "8101015009086", "8201015009085"
Q = Stage.QUALIFYING


async def _heat_of_three(desk: Desk) -> tuple[int, int]:
    """A tournament with one qualifying heat for Ann, Ben and Cat (seats 1-3), not yet
    played; returns (tournament, heat)."""
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben"), (CAT, "Cat")):
        player = await desk.player(id_number, name)
        await desk.sell(player, at(DAY, 12))
        await desk.register(heat, player, at(DAY, 12, 5))
    return tid, heat


async def _audit(desk: Desk, action: str) -> list[AuditEntry]:
    async def work(session: AsyncSession) -> list[AuditEntry]:
        rows = await session.execute(select(AuditEntry).where(AuditEntry.action == action))
        return list(rows.scalars())

    return list(await desk.run(work))


async def test_t15_schedule_surplus_and_a_signed_payout(desk: Desk) -> None:
    """T15: the advertised minimums are the least paid (never lowered), the surplus is
    apportioned by a recorded decision that accounts for every cent, and the winner —
    only the winning entry's player — signs for minimum plus share, witnessed."""
    tid, heat = await _heat_of_three(desk)
    now = at(DAY, 9)
    first = await desk.run(set_schedule, tid, Q, {1: 100000, 2: 50000}, actor="director", now=now)
    assert first == (PrizeAmount(1, 100000), PrizeAmount(2, 50000))
    await refused(
        desk,
        r"^rule 15: place 2 was advertised at 50000 c, the minimum that will be paid",
        set_schedule, tid, Q, {1: 100000, 2: 40000}, actor="director", now=now, reason="budget",
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: a reason is required", set_schedule, tid, Q, {1: 100000, 2: 60000},
        actor="director", now=now,
    )  # fmt: skip
    raised = {1: 100000, 2: 60000, 3: 20000}
    await desk.run(set_schedule, tid, Q, raised, actor="director", now=now, reason="sponsor")
    await refused(
        desk,
        r"^rule 15: the qualifying is not over: place 1 is not settled",
        pay_prize, tid, Q, 1, signer=ANN, signature="slip 1", witness="Floor Lee",
        actor="cashier", now=at(DAY, 17),
    )  # fmt: skip

    await desk.play(heat, {1: 1500, 2: 1200, 3: 900}, at(DAY, 18))
    later = at(DAY, 19)
    await refused(
        desk,
        r"^rule 15: the shares add up to 30000 c but the surplus is 30001 c: every cent",
        apportion_surplus, tid, Q, 30001, {1: 20000, 2: 10000}, reason="larger field",
        actor="director", now=later,
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: a reason is required", apportion_surplus, tid, Q, 100, {1: 100},
        reason=" ", actor="director", now=later,
    )  # fmt: skip
    split = await desk.run(
        apportion_surplus, tid, Q, 30000, {1: 20000, 3: 10000}, reason="larger field",
        actor="director", now=later,
    )  # fmt: skip
    assert split == {1: 20000, 2: 0, 3: 10000}

    await refused(
        desk, r"^rule 15: prizes are not transferable: the prize is Ann's \(ID 8001015009087\)",
        pay_prize, tid, Q, 1, signer=BEN, signature="slip 1", witness="Floor Lee",
        actor="cashier", now=later,
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: the witness must be someone other than the winner",
        pay_prize, tid, Q, 1, signer=ANN, signature="slip 1", witness=ANN,
        actor="cashier", now=later,
    )  # fmt: skip
    payout = await desk.run(
        pay_prize, tid, Q, 1, signer=ANN, signature="slip 1", witness="Floor Lee",
        actor="cashier", now=later,
    )  # fmt: skip
    assert payout.amount_cents == 120000  # minimum + share
    await refused(
        desk, r"^rule 15: place 1 was paid at 2026-11-02 17:00 UTC",
        pay_prize, tid, Q, 1, signer=ANN, signature="slip 2", witness="Floor Lee",
        actor="cashier", now=later + timedelta(minutes=5),
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: qualifying prizes of Ridge are being paid \(place 1 is paid\)",
        apportion_surplus, tid, Q, 0, {}, reason="redo", actor="director", now=later,
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: qualifying prizes of Ridge are being paid",
        set_schedule, tid, Q, {1: 200000, 2: 60000, 3: 20000}, actor="director", now=later,
        reason="more",
    )  # fmt: skip

    table = await desk.run(stage_standings, tid, Q, as_of=later)
    lines = await desk.run(prize_lines, tid, Q, table.lines)
    shown = [(x.place, x.minimum_cents, x.surplus_cents, x.player_name, x.paid) for x in lines]
    assert shown == [
        (1, 100000, 20000, "Ann", True),
        (2, 60000, 0, "Ben", False),
        (3, 20000, 10000, "Cat", False),
    ]
    assert lines[0].paid_cents == 120000
    assert lines[0].witness == "Floor Lee"
    (paid_audit,) = await _audit(desk, "tournament.prizes.paid")
    assert paid_audit.details_dict()["amount_cents"] == 120000
    assert paid_audit.details_dict()["signer"] == ANN
    (surplus_audit,) = await _audit(desk, "tournament.prizes.surplus")
    assert surplus_audit.reason == "larger field"
    assert surplus_audit.details_dict()["shares"] == {"1": 20000, "2": 0, "3": 10000}
    schedules = await _audit(desk, "tournament.prizes.schedule")
    assert [a.reason for a in schedules] == [None, "sponsor"]

    async def stored(session: AsyncSession) -> tuple[int, list[tuple[int, int]]]:
        decision = await session.get(PrizeSurplus, (tid, Q))
        assert decision is not None
        assert decision.decided_by == "director"
        rows = (await session.execute(select(PrizePayout))).scalars().all()
        return decision.surplus_cents, [(r.place, r.amount_cents) for r in rows]

    assert await desk.run(stored) == (30000, [(1, 120000)])


async def test_t15_t19_a_tied_place_is_drawn_before_it_is_paid(desk: Desk) -> None:
    """T15/T19: a prize place shared by a tie names no winner and is refused until cards
    are drawn; the final's schedule cannot go past its strictly ordered prize places."""
    tid, heat = await _heat_of_three(desk)
    now = at(DAY, 9)
    await desk.run(set_schedule, tid, Q, {1: 3000, 2: 2000, 3: 1000}, actor="director", now=now)
    await refused(
        desk, r"^rule 19: 4 prize places but only 3 are strictly ordered",
        set_schedule, tid, Stage.FINAL, {1: 4, 2: 3, 3: 2, 4: 1}, actor="director", now=now,
    )  # fmt: skip
    await desk.play(heat, {1: 1500, 2: 1200, 3: 1200}, at(DAY, 18))
    later = at(DAY, 19)
    await refused(
        desk, r"^rule 19: place 2 is tied between entries \[\d+, \d+\]: draw cards first",
        pay_prize, tid, Q, 2, signer=BEN, signature="slip 2", witness="Floor Lee",
        actor="cashier", now=later,
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: nobody holds place 3 of the qualifying",
        pay_prize, tid, Q, 3, signer=CAT, signature="slip 3", witness="Floor Lee",
        actor="cashier", now=later,
    )  # fmt: skip
    table = await desk.run(stage_standings, tid, Q, as_of=later)
    lines = await desk.run(prize_lines, tid, Q, table.lines)
    assert [(x.place, x.player_name) for x in lines] == [(1, "Ann"), (2, None), (3, None)]


async def test_t15_the_signer_is_named_by_kind_never_guessed(desk: Desk) -> None:
    """T15 (audit 25.6): Ann's card number is Ben's ID number.  Ben keying his own ID
    number used to match Ann's card and sign for her prize; a bare value that is one
    player's card and another's ID number is now refused, naming both, and the typed
    forms say whom they mean."""
    tid, heat = await _heat_of_three(desk)
    await desk.run(set_schedule, tid, Q, {1: 100000}, actor="director", now=at(DAY, 9))
    await desk.play(heat, {1: 1500, 2: 1200, 3: 900}, at(DAY, 18))

    async def give_ann_bens_id_as_card(session: AsyncSession) -> None:
        ann = (await session.execute(select(Player).where(Player.id_number == ANN))).scalar_one()
        ann.card_number = BEN

    await desk.run(give_ann_bens_id_as_card)
    pay = {"signature": "slip 1", "witness": "Floor Lee", "actor": "cashier", "now": at(DAY, 19)}
    await refused(
        desk, rf"^signer: '{BEN}' is the card of player \d+ and the ID number of player \d+; "
        rf"say card:{BEN} or idnum:{BEN}", pay_prize, tid, Q, 1, signer=BEN, **pay,
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: prizes are not transferable", pay_prize, tid, Q, 1,
        signer=f"idnum:{BEN}", **pay,
    )  # fmt: skip
    payout = await desk.run(pay_prize, tid, Q, 1, signer=f"card:{BEN}", **pay)
    assert payout.signer == f"card:{BEN}"
