"""Rules through the services and the database, on each backend: every refusal names its
rule and changes nothing; every change is audited."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import (
    EntryStatus,
    HeatStatus,
    NoticeKind,
    PurchaseKind,
    SeatStatus,
    Stage,
)
from gateway.tournament.rules.final_stages import SeatSlot, draw_seats
from gateway.tournament.rules.incidents import MalfunctionOutcome
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.services.finals import verify_seat_draws
from gateway.tournament.services.scoring import simple_score
from gateway.tournament.services.setup import change_settings
from gateway.tournament.settings import Package, TournamentSettings, Validity
from storage import audit
from storage.audit import AuditEntry
from storage.tournament import Disqualification, Entry, Heat, HeatNotice, Proxy, Refund, Score, Seat

from .conftest import Desk, at, score

DAY = date(2026, 11, 2)


async def count(session: AsyncSession, model: type) -> int:
    return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def snapshot(desk: Desk) -> tuple[int, ...]:
    async def work(session: AsyncSession) -> tuple[int, ...]:
        return tuple([await count(session, m) for m in (AuditEntry, Entry, Seat, Score, Refund)])

    return tuple(await desk.run(work))


async def refused(desk: Desk, pattern: str, fn: object, *args: object, **kw: object) -> None:
    """The call raises a RuleViolation matching ``pattern`` and leaves every table as it was."""
    before = await snapshot(desk)
    with pytest.raises(RuleViolation, match=pattern):
        await desk.run(fn, *args, **kw)
    assert await snapshot(desk) == before


async def test_rules_1_to_3_players_and_exclusions(desk: Desk) -> None:
    tid = await desk.tournament()
    await refused(
        desk,
        r"^rule 1: participant is 17",
        svc.add_player,
        id_number="0811235009081",
        name="Young",
        date_of_birth=date(2008, 11, 23),
        actor="desk",
        now=at(DAY, 9),
    )
    csv_text = (
        "kind,id_number,name,valid_from,valid_until,note\n"
        "connected-person,7001015009089,Spouse of staff,2026-01-01,,HR\n"
    )
    await desk.run(
        svc.import_exclusions, csv_text, source="hr.csv", actor="compliance", now=at(DAY, 8)
    )
    await refused(
        desk,
        r"^rule 3: 7001015009089 is on the connected-person register",
        svc.add_player,
        id_number="700101 5009 089",
        name="Spouse",
        date_of_birth=date(1970, 1, 1),
        actor="desk",
        now=at(DAY, 9),
    )
    await refused(
        desk,
        r"^rule 2: exclusion CSV line 2: kind 'vip'",
        svc.import_exclusions,
        "kind,id_number,valid_from\nvip,1,2026-01-01\n",
        source="x.csv",
        actor="c",
        now=at(DAY, 9),
    )
    # T2: self-excluded during the tournament -> disqualified, out of every ranking
    heat = await desk.heat(at(DAY, 18))
    p1 = await desk.player("8001015009087", "Ann")
    p2 = await desk.player("8101015009086", "Ben")
    for p in (p1, p2):
        await desk.sell(p, at(DAY, 12))
        await desk.register(heat, p, at(DAY, 13))
    await desk.play(heat, {1: 900, 2: 500}, at(DAY, 18))
    await desk.run(
        svc.import_exclusions,
        "kind,id_number,valid_from\nself-exclusion,8001015009087,2026-11-03\n",
        source="nrgp.csv",
        actor="compliance",
        now=at(DAY + timedelta(days=1), 9),
    )
    table = await desk.run(svc.stage_standings, tid, Stage.QUALIFYING)
    assert [(x.place, x.player_id) for x in table.lines] == [(1, p2)]
    await refused(
        desk,
        r"^rule 2: .*self-exclusion register",
        svc.sell_entries,
        tid,
        p1,
        cashier="c",
        now=at(DAY + timedelta(days=1), 12),
    )
    # T23: reinstating is refused while the register still bars the player
    dq = (await desk.run(_dq_ids))[0]
    await refused(
        desk,
        r"^rule 2: the player is still on an exclusion register",
        svc.reinstate,
        dq,
        reason="appeal",
        actor="director",
        now=at(DAY + timedelta(days=1), 10),
    )


async def _dq_ids(session: AsyncSession) -> list[int]:
    return list((await session.execute(select(Disqualification.id))).scalars())


async def test_rules_5_to_9_sales_and_validity(desk: Desk) -> None:
    tid = await desk.tournament()
    today = await desk.heat(at(DAY, 18))
    tomorrow = await desk.heat(at(DAY + timedelta(days=1), 18))
    p = await desk.player("8001015009087", "Ann")
    await refused(
        desk,
        r"^rule 9: no unused entry: buy one at the cash desk first",
        svc.register_for_heat,
        today,
        p,
        actor="desk",
        now=at(DAY, 13),
    )
    await refused(
        desk,
        r"^rule 6: entry packages are sold for cash only",
        svc.sell_entries,
        tid,
        p,
        package_code="R200",
        payment=PurchaseKind.CARD,
        cashier="c",
        now=at(DAY, 12),
    )
    sale = await desk.run(
        svc.sell_entries, tid, p, payment=PurchaseKind.CARD, cashier="c", now=at(DAY, 12)
    )
    assert (sale.purchase.kind, sale.purchase.amount_cents) == (PurchaseKind.CARD, 5000)
    # T7/T8: bought today, not valid for tomorrow's heat
    await refused(
        desk,
        r"^rule 7: entry bought 2026-11-02 12:00 is valid for heats starting "
        r"before 2026-11-03 00:00",
        svc.register_for_heat,
        tomorrow,
        p,
        actor="desk",
        now=at(DAY, 13),
    )
    comp = await desk.run(
        svc.sell_entries, tid, p, complimentary=True, cashier="c", now=at(DAY, 12)
    )
    assert (comp.purchase.kind, comp.purchase.amount_cents, len(comp.entry_ids)) == (
        PurchaseKind.COMPLIMENTARY,
        0,
        1,
    )
    # T9: no purchase to continue in a heat the player is playing
    await desk.register(today, p, at(DAY, 13))
    await desk.run(svc.begin_heat, today, present_seats=[1], at=at(DAY, 18), actor="director")
    await refused(
        desk,
        r"^rule 9: player is playing in qualifying heat 1",
        svc.sell_entries,
        tid,
        p,
        cashier="c",
        now=at(DAY, 18, 5),
    )
    # the complimentary entry is unused: a director may refund it (T23) — for R0.00
    refund = await desk.run(
        svc.refund_entry,
        comp.entry_ids[0],
        rule=23,
        reason="goodwill",
        actor="director",
        now=at(DAY, 19),
    )
    assert refund.amount_cents == 0


async def test_rules_5_6_48h_mode(desk: Desk) -> None:
    tid = await desk.tournament(TournamentSettings(validity=Validity.HOURS_48))
    tomorrow = await desk.heat(at(DAY + timedelta(days=1), 18))
    later = await desk.heat(at(DAY + timedelta(days=2), 18))
    p = await desk.player("8001015009087", "Ann")
    entries = await desk.sell(p, at(DAY, 12), package="R200")
    seat = await desk.register(tomorrow, p, at(DAY, 13))
    assert seat.entry_id == entries[0]
    await refused(
        desk, r"^rule 5: ", svc.register_for_heat, later, p, actor="desk", now=at(DAY, 13)
    )
    expired = await desk.run(
        svc.expire_entries, tid, now=at(DAY + timedelta(days=2), 0), actor="desk"
    )
    assert expired == list(entries[1:])


async def test_rules_10_11_22_schedule_registration_and_absence(desk: Desk) -> None:
    await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    p1 = await desk.player("8001015009087", "Ann")
    p2 = await desk.player("8101015009086", "Ben")
    for p in (p1, p2):
        await desk.sell(p, at(DAY, 12))
    await refused(
        desk,
        r"^rule 10: the change must be announced at least 60 min ahead",
        svc.reschedule_heat,
        heat,
        new_start=at(DAY, 19),
        announced_via="MC",
        announced_at=at(DAY, 17, 30),
        reason="bank service",
        actor="director",
        now=at(DAY, 17, 30),
    )
    await desk.run(
        svc.reschedule_heat,
        heat,
        new_start=at(DAY, 19),
        announced_via="MC",
        announced_at=at(DAY, 16),
        reason="bank service",
        actor="director",
        now=at(DAY, 16, 5),
    )
    notices = await desk.run(lambda s: _all(s, HeatNotice))
    assert [(n.kind, n.old_start, n.new_start, n.announced_via) for n in notices] == [
        (NoticeKind.RESCHEDULED, at(DAY, 18), at(DAY, 19), "MC")
    ]
    await desk.register(heat, p1, at(DAY, 18, 30))
    await refused(
        desk,
        r"^rule 11: qualifying heat 1 has started; late entries",
        svc.register_for_heat,
        heat,
        p2,
        actor="desk",
        now=at(DAY, 19),
    )
    await desk.register(heat, p2, at(DAY, 18, 59))
    forfeited = await desk.run(
        svc.begin_heat, heat, present_seats=[2], at=at(DAY, 19), actor="director"
    )
    assert forfeited == [1]
    entry = await desk.run(lambda s: _entry_of(s, p1))
    assert entry.status is EntryStatus.FORFEITED  # T22: no refund
    await refused(
        desk,
        r"^rule 22: seat 1 is forfeited",
        svc.record_machine_score,
        (await desk.run(svc.heat_seats, heat))[0].seat_id,
        score(100),
        at=at(DAY, 19, 5),
    )


async def _all(session: AsyncSession, model: type) -> list[Any]:
    return list((await session.execute(select(model))).scalars())


async def _entry_of(session: AsyncSession, player: int) -> Entry:
    return (await session.execute(select(Entry).where(Entry.player_id == player))).scalar_one()


async def test_rules_12_23_scores_are_per_entry_and_corrections_are_audited(desk: Desk) -> None:
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    p = await desk.player("8001015009087", "Ann")
    await desk.sell(p, at(DAY, 12))
    seat = await desk.register(heat, p, at(DAY, 13))
    await desk.play(heat, {1: 700}, at(DAY, 18))
    await refused(
        desk,
        r"^rule 23: a reason is required",
        svc.enter_manual_score,
        seat.id,
        simple_score(900),
        reason=" ",
        actor="director",
        at=at(DAY, 19),
    )
    await refused(
        desk,
        r"^rule 12: games_won cannot exceed games_played",
        svc.record_machine_score,
        seat.id,
        score(700).__class__(700, score(700).meters.__class__(1, 2, 0, 0)),
        at=at(DAY, 19),
    )
    await desk.run(
        svc.enter_manual_score,
        seat.id,
        simple_score(900),
        reason="meter photo shows 900",
        actor="director",
        at=at(DAY, 19),
    )
    table = await desk.run(svc.stage_standings, tid, Stage.QUALIFYING)
    assert [(x.entry_id, x.credits) for x in table.lines] == [(seat.entry_id, 900)]
    rows = await desk.run(lambda s: _all(s, AuditEntry))
    correction = next(r for r in rows if r.action == "score.manual")
    assert correction.reason == "meter photo shows 900"
    assert correction.details_dict()["replaced"]["credits"] == 700


async def test_rule_12_a_banks_scores_at_once_check_each_seat_as_one_would(desk: Desk) -> None:
    """T12 through ``record_machine_scores`` (the bridge's one call per bank): each seat's
    score once, the same score again a no-op, a different one or a seat not present
    refused, and a refusal stores none of the batch."""
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    players = [await desk.player(n, x) for n, x in (("8001015009087", "Ann"),
                                                    ("8101015009086", "Ben"),
                                                    ("8201015009085", "Cal"))]  # fmt: skip
    for p in players:
        await desk.sell(p, at(DAY, 12))
        await desk.register(heat, p, at(DAY, 13))
    await desk.run(svc.begin_heat, heat, present_seats=[1, 2], at=at(DAY, 18), actor="director")
    s1, s2, s3 = (s.seat_id for s in await desk.run(svc.heat_seats, heat))
    late = at(DAY, 18, 10)
    await refused(desk, r"^rule 22: seat 3 is forfeited", svc.record_machine_scores,
                  [(s1, score(700), late), (s3, score(100), late)])  # fmt: skip
    await desk.run(svc.record_machine_scores, [(s1, score(700), late)])
    stored = await desk.run(svc.record_machine_scores, [(s1, score(700), late),
                                                        (s2, score(500), late)])  # fmt: skip
    assert [x.final_credits for x in stored] == [700, 500]
    await refused(desk, r"^rule 12: seat \d+ already has 500 credits", svc.record_machine_scores,
                  [(s2, score(900), late)])  # fmt: skip
    await desk.run(svc.finish_heat, heat, at=at(DAY, 18, 11), actor="gw")
    table = await desk.run(svc.stage_standings, tid, Stage.QUALIFYING)
    assert [x.credits for x in table.lines] == [700, 500]
    entries = await desk.run(lambda s: _all(s, Entry))
    assert sorted(e.status.value for e in entries) == sorted(
        [EntryStatus.PLAYED.value, EntryStatus.PLAYED.value, EntryStatus.FORFEITED.value]
    )


async def test_rule_20_negligence_disqualifies_and_forfeits(desk: Desk) -> None:
    tid = await desk.tournament()
    heat = await desk.heat(await_time := at(DAY, 18))
    await desk.heat(at(DAY, 20))
    p1 = await desk.player("8001015009087", "Ann")
    p2 = await desk.player("8101015009086", "Ben")
    for p in (p1, p2):
        await desk.sell(p, at(DAY, 12), quantity=2)
        await desk.register(heat, p, at(DAY, 13))
    await desk.run(svc.begin_heat, heat, present_seats=[1, 2], at=await_time, actor="director")
    seats = await desk.run(svc.heat_seats, heat)
    result = await desk.run(
        svc.mark_seat_malfunctioned,
        seats[0].seat_id,
        at=at(DAY, 18, 5),
        actor="director",
        reason="kicked the cabinet",
        negligence=True,
    )
    assert result.outcome is MalfunctionOutcome.DISQUALIFIED
    entries = await desk.run(lambda s: _all(s, Entry))
    assert sorted((e.player_id, e.status) for e in entries) == sorted(
        [
            (p1, EntryStatus.DISQUALIFIED),
            (p1, EntryStatus.DISQUALIFIED),  # buy-in forfeited
            (p2, EntryStatus.SEATED),
            (p2, EntryStatus.AVAILABLE),
        ]
    )
    assert await desk.run(lambda s: _all(s, Refund)) == []
    await desk.run(svc.record_machine_score, seats[1].seat_id, score(300), at=at(DAY, 18, 10))
    await desk.run(svc.finish_heat, heat, at=at(DAY, 18, 11), actor="gw")
    table = await desk.run(svc.stage_standings, tid, Stage.QUALIFYING)
    assert [x.player_id for x in table.lines] == [p2]


async def test_rule_20_postpone_when_not_fixed_in_time_then_reschedule(desk: Desk) -> None:
    await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    p = await desk.player("8001015009087", "Ann")
    await desk.sell(p, at(DAY, 12))
    seat = await desk.register(heat, p, at(DAY, 13))
    await desk.run(svc.begin_heat, heat, present_seats=[1], at=at(DAY, 18), actor="director")
    await desk.run(svc.record_machine_score, seat.id, score(800), at=at(DAY, 18, 5))
    await refused(
        desk,
        r"^rule 20: not resolved within 30 min: the heat must be postponed",
        svc.restart_heat,
        heat,
        failed_at=at(DAY, 18, 6),
        now=at(DAY, 18, 40),
        actor="director",
        reason="server down",
    )
    outcome = await desk.run(
        svc.handle_system_failure,
        heat,
        failed_at=at(DAY, 18, 6),
        now=at(DAY, 18, 40),
        actor="director",
        reason="server down",
    )
    assert outcome.value == "postpone"
    h = await desk.run(lambda s: s.get(Heat, heat))
    assert h.status is HeatStatus.POSTPONED
    assert await desk.run(lambda s: _all(s, Score)) == []  # discarded; kept in the audit log
    await desk.run(
        svc.reschedule_heat,
        heat,
        new_start=at(DAY + timedelta(days=1), 18),
        announced_via="MC",
        announced_at=at(DAY, 19),
        reason="postponed (rule 20)",
        actor="director",
        now=at(DAY, 19),
    )
    seats = await desk.run(svc.heat_seats, heat)
    assert [(s.seat_number, s.status) for s in seats] == [(1, SeatStatus.PRESENT)]
    await desk.run(
        svc.begin_heat,
        heat,
        present_seats=[1],
        at=at(DAY + timedelta(days=1), 18),
        actor="director",
    )


async def test_rule_21_final_stage_malfunction_waits_for_an_added_heat(desk: Desk) -> None:
    await desk.floor("S", 2)
    tid = await desk.tournament(TournamentSettings(semi_final_qualifiers=2, finalists_from_semis=1))
    q = await desk.heat(at(DAY, 18))
    semi = await desk.heat(at(DAY + timedelta(days=5), 10), bank="S", stage=Stage.SEMI_FINAL)
    players = [await desk.player(f"800101500{i}087", f"P{i}") for i in range(3)]
    for p in players:
        await desk.sell(p, at(DAY, 12))
        await desk.register(q, p, at(DAY, 13))
    await desk.play(q, {1: 900, 2: 800, 3: 700}, at(DAY, 18))
    await desk.run(
        svc.seat_stage, tid, Stage.SEMI_FINAL, actor="director", at=at(DAY, 20), seed=bytes(16)
    )
    await refused(
        desk,
        r"^rule 14: the semi-final seats have already been drawn",
        svc.seat_stage,
        tid,
        Stage.SEMI_FINAL,
        actor="director",
        at=at(DAY, 20),
        seed=bytes(16),
    )
    start = at(DAY + timedelta(days=5), 10)
    seats = await desk.run(svc.heat_seats, semi)
    await desk.run(
        svc.begin_heat,
        semi,
        present_seats=[s.seat_number for s in seats],
        at=start,
        actor="director",
    )
    victim = seats[0]
    result = await desk.run(
        svc.mark_seat_malfunctioned, victim.seat_id, at=start, actor="tech", reason="power supply"
    )
    assert result.outcome is MalfunctionOutcome.ADDED_HEAT
    waiting = await desk.run(lambda s: svc.seats_waiting(s, tid, Stage.SEMI_FINAL))
    assert [w.entry_id for w in waiting] == [victim.entry_id]
    added = await desk.run(
        svc.schedule_heat,
        tid,
        stage=Stage.SEMI_FINAL,
        starts_at=start + timedelta(hours=2),
        bank_name="S",
        duration_seconds=600,
        starting_credits=1000,
        actor="director",
        now=start + timedelta(minutes=5),
        announced_via="MC",
    )
    draw = await desk.run(
        svc.seat_waiting_in_added_heat,
        added.id,
        actor="director",
        at=start + timedelta(minutes=6),
        seed=bytes(range(16)),
    )
    assert list(draw.seats) == [victim.entry_id]
    assert await desk.run(verify_seat_draws) == []  # both draws recompute from their seeds
    assert await desk.run(lambda s: svc.seats_waiting(s, tid, Stage.SEMI_FINAL)) == []
    notices = await desk.run(lambda s: _all(s, HeatNotice))
    assert [n.kind for n in notices] == [NoticeKind.ADDED]

    async def move_by_hand(session: AsyncSession) -> None:  # not what the draw gave
        seat = await session.scalar(select(Seat).where(Seat.heat_id == added.id))
        assert seat is not None
        seat.seat_number = 9

    await desk.run(move_by_hand)
    assert await desk.run(verify_seat_draws, tid + 1) == []  # another tournament's draws only
    (problem,) = await desk.run(verify_seat_draws, tid)
    assert f"has no seat {draw.seats[victim.entry_id].seat_number}" in problem


async def test_rule_16_no_proxy_after_the_stage_started(desk: Desk) -> None:
    await desk.floor("S", 4)
    tid = await desk.tournament(TournamentSettings(semi_final_qualifiers=3, finalists_from_semis=1))
    q1 = await desk.heat(at(DAY, 18))
    q2 = await desk.heat(at(DAY, 20))
    semi = await desk.heat(at(DAY + timedelta(days=5), 10), bank="S", stage=Stage.SEMI_FINAL)
    ann = await desk.player("8001015009087", "Ann")
    ben = await desk.player("8101015009086", "Ben")
    await desk.sell(ann, at(DAY, 12), quantity=2)
    await desk.sell(ben, at(DAY, 12))
    await desk.register(q1, ann, at(DAY, 13))
    await desk.register(q1, ben, at(DAY, 13))
    await desk.register(q2, ann, at(DAY, 13))
    await desk.play(q1, {1: 100, 2: 900}, at(DAY, 18))  # Ben tops: direct finalist
    await desk.play(q2, {1: 500}, at(DAY, 20))
    await desk.run(
        svc.seat_stage, tid, Stage.SEMI_FINAL, actor="director", at=at(DAY, 21), seed=bytes(16)
    )
    seats = {s.entry_id: s for s in await desk.run(svc.heat_seats, semi)}
    assert len(seats) == 2  # both of Ann's entries
    extra = min(seats.values(), key=lambda s: s.entry_id)  # the 100-credit entry (heat 1)
    start = at(DAY + timedelta(days=5), 10)
    forfeited = await desk.run(
        svc.begin_heat,
        semi,
        present_seats=[s.seat_number for s in seats.values()],
        at=start,
        actor="director",
    )
    assert forfeited == [extra.seat_number]
    await refused(
        desk,
        r"^rule 16: the proxy form arrived after the stage started",
        svc.add_proxy,
        extra.seat_id,
        nominee_name="Late",
        nominee_id_number="9001",
        nominee_date_of_birth=date(1990, 1, 1),
        received_at=start + timedelta(minutes=1),
        actor="director",
    )
    assert await desk.run(lambda s: _all(s, Proxy)) == []


async def test_rule_23_settings_changes_are_recorded_with_a_reason(desk: Desk) -> None:
    tid = await desk.tournament()
    await refused(
        desk,
        r"^rule 23: a reason is required",
        change_settings,
        tid,
        {"prize_places": 5},
        reason="",
        actor="director",
    )
    await refused(
        desk,
        r"settings: unknown key 'bonus'",
        change_settings,
        tid,
        {"bonus": 1},
        reason="x",
        actor="director",
    )
    await desk.run(
        change_settings,
        tid,
        {"prize_places": 5, "validity": "48h"},
        reason="marketing extended validity",
        actor="director",
    )

    async def read(session: AsyncSession) -> TournamentSettings:
        return await load_settings(session, await find_tournament(session, tid))

    settings = await desk.run(read)
    assert (settings.prize_places, settings.validity) == (5, Validity.HOURS_48)
    assert settings.packages == TournamentSettings().packages


def test_times_are_aware() -> None:
    assert at(DAY, 18).utcoffset() == timedelta(hours=2)
    assert isinstance(at(DAY, 18), datetime)


async def test_rules_6_8_casino_credit_needs_rewards_membership(desk: Desk) -> None:
    packages = (Package("single", 5000, 1), Package("R300", 30000, 5, casino_credit_cents=5000))
    tid = await desk.tournament(TournamentSettings(packages=packages))
    member = await desk.run(
        svc.add_player,
        id_number="8001015009087",
        name="Ann",
        date_of_birth=date(1980, 1, 1),
        card_number="RW-1001",
        actor="desk",
        now=at(DAY, 9),
    )
    guest = await desk.player("8101015009086", "Ben")
    for player, expected in ((member.id, 5000), (guest, 0)):
        sale = await desk.run(
            svc.sell_entries, tid, player, package_code="R300", cashier="c", now=at(DAY, 12)
        )
        assert (sale.purchase.seats, sale.purchase.amount_cents) == (5, 30000)
        assert sale.purchase.package_credit_cents == expected


async def test_rule_2_a_register_entry_dated_ahead_takes_effect_on_its_day(desk: Desk) -> None:
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    p = await desk.player("8001015009087", "Ann")
    await desk.sell(p, at(DAY, 12))
    await desk.register(heat, p, at(DAY, 13))
    await desk.play(heat, {1: 900}, at(DAY, 18))
    result = await desk.run(
        svc.import_exclusions,
        "kind,id_number,valid_from\nself-exclusion,8001015009087,2026-11-10\n",
        source="nrgp.csv",
        actor="compliance",
        now=at(DAY, 20),
    )
    assert result.players_disqualified == []  # not yet in force
    before = await desk.run(svc.stage_standings, tid, Stage.QUALIFYING, as_of=at(DAY, 21))
    after = await desk.run(
        svc.stage_standings, tid, Stage.QUALIFYING, as_of=at(date(2026, 11, 10), 0)
    )
    assert [x.player_id for x in before.lines] == [p]
    assert after.lines == ()  # T2: "self-excluded ... during the tournament"


async def test_rules_9_11_16_concurrent_desks_never_share_a_seat(desk: Desk) -> None:
    """Six desks register six players at once for a three-machine heat (bank B)."""
    await desk.floor("B", 3)
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18), bank="B")
    players = [await desk.player(f"800101500{i}087", f"P{i}") for i in range(6)]
    for p in players:
        await desk.sell(p, at(DAY, 12))
    results = await asyncio.gather(
        *(desk.register(heat, p, at(DAY, 13)) for p in players), return_exceptions=True
    )
    seated = [r for r in results if not isinstance(r, BaseException)]
    refusals = [r for r in results if isinstance(r, BaseException)]
    assert sorted(s.seat_number for s in seated) == [1, 2, 3]
    assert len(refusals) == 3
    assert all(isinstance(r, RuleViolation) and r.rule == 9 for r in refusals)
    assert tid


async def test_rules_9_16_refusals_on_committed_seats_do_not_queue_on_the_heat(
    desk: Desk, engine: AsyncEngine
) -> None:
    """A full heat, or one the player holds a seat in, is refused on the seats already
    committed, without locking the heat's row that registrations queue on; the refusals
    are the ones the locked read gives (same rule, same words)."""
    await desk.floor("B", 1)
    await desk.tournament()
    heat = await desk.heat(at(DAY, 18), bank="B")
    ann = await desk.player("8001015000087", "Ann")
    bob = await desk.player("8001015001087", "Bob")
    for p in (ann, bob, ann):
        await desk.sell(p, at(DAY, 12))
    await desk.register(heat, ann, at(DAY, 13))
    locks: list[str] = []

    def note(_c: object, _cur: object, statement: str, *_rest: object) -> None:
        if "FOR UPDATE" in statement and "heats" in statement:
            locks.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", note)
    register = svc.register_for_heat
    full = r"^rule 9: qualifying heat \d+ .*is full \(1 seats\)"
    await refused(desk, full, register, heat, bob, actor="desk", now=at(DAY, 13))
    again = r"^rule 16: player already holds a seat"
    await refused(desk, again, register, heat, ann, actor="desk", now=at(DAY, 13))
    assert locks == []  # (SQLite never locks a row: its one writer holds the database)


async def test_rule_10_a_cancelled_heat_gives_entries_back(desk: Desk) -> None:
    await desk.tournament()
    first = await desk.heat(at(DAY, 18))
    second = await desk.heat(at(DAY, 20))
    p = await desk.player("8001015009087", "Ann")
    (entry,) = await desk.sell(p, at(DAY, 12))
    await desk.register(first, p, at(DAY, 13))
    await refused(
        desk,
        r"^rule 10: say how the cancellation was announced",
        svc.cancel_heat,
        first,
        announced_via=" ",
        reason="bank flooded",
        actor="director",
        now=at(DAY, 14),
    )
    released = await desk.run(
        svc.cancel_heat,
        first,
        announced_via="MC",
        reason="bank flooded",
        actor="director",
        now=at(DAY, 14),
    )
    assert released == [entry]
    seat = await desk.register(second, p, at(DAY, 15))  # the same entry, another heat
    assert (seat.entry_id, seat.seat_number) == (entry, 1)
    await refused(
        desk,
        r"^rule 10: qualifying heat 1 is cancelled",
        svc.cancel_heat,
        first,
        announced_via="MC",
        reason="again",
        actor="director",
        now=at(DAY, 15),
    )


async def test_rule_23_director_overrides_a_wrong_forfeit_and_records_decisions(
    desk: Desk,
) -> None:
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    p = await desk.player("8001015009087", "Ann")
    await desk.sell(p, at(DAY, 12))
    seat = await desk.register(heat, p, at(DAY, 13))
    await refused(
        desk,
        r"^rule 23: seat 1 is assigned, not forfeited",
        svc.reinstate_seat,
        seat.id,
        reason="x",
        actor="director",
        at=at(DAY, 17),
    )
    assert await desk.run(
        svc.begin_heat, heat, present_seats=[], at=at(DAY, 18), actor="attendant"
    ) == [1]
    await desk.run(
        svc.reinstate_seat,
        seat.id,
        reason="was at the machine, list error",
        actor="director",
        at=at(DAY, 18, 2),
    )
    await desk.run(svc.record_machine_score, seat.id, score(640), at=at(DAY, 18, 10))
    assert (await desk.run(lambda s: _entry_of(s, p))).status is EntryStatus.PLAYED
    await refused(
        desk,
        r"^rule 23: say what the decision is about",
        svc.record_decision,
        tid,
        subject=" ",
        decision="x",
        reason="y",
        actor="director",
    )
    await desk.run(
        svc.record_decision,
        tid,
        subject="heat 1 seat 1",
        decision="score stands despite a late spin",
        reason="CCTV reviewed",
        actor="director",
    )
    rows = await desk.run(lambda s: _all(s, AuditEntry))
    decision = next(r for r in rows if r.action == "director.decision")
    assert (decision.actor, decision.reason) == ("director", "CCTV reviewed")
    assert decision.details_dict() == {
        "about": "heat 1 seat 1",
        "decision": "score stands despite a late spin",
    }


async def test_rule_14_a_seat_draw_that_does_not_follow_its_seed_is_reported(desk: Desk) -> None:
    seed = bytes(range(16))
    slots = [[7, 1], [7, 2], [8, 1]]

    async def write(session: AsyncSession, seats: dict[str, list[int]]) -> None:
        await audit.record(
            session,
            actor="x",
            action="seat.draw",
            subject="tournament:1",
            details={
                "seed": seed.hex(),
                "context": "ctx",
                "entries": [3, 4],
                "slots": slots,
                "seats": seats,
            },
        )

    def from_seed(problems: list[str]) -> list[str]:  # no seat rows here: seeds only
        return [p for p in problems if "the seed gives other seats" in p]

    honest = draw_seats(seed, "ctx", [3, 4], [SeatSlot(h, n) for h, n in slots])
    await desk.run(write, {str(e): [s.heat_id, s.seat_number] for e, s in honest.items()})
    assert from_seed(await desk.run(verify_seat_draws)) == []
    swapped = {
        "3": [honest[4].heat_id, honest[4].seat_number],
        "4": [honest[3].heat_id, honest[3].seat_number],
    }
    await desk.run(write, swapped)
    problems = from_seed(await desk.run(verify_seat_draws))
    last = await desk.run(
        lambda session: session.scalar(
            select(func.max(audit.AuditEntry.id)).where(audit.AuditEntry.action == "seat.draw")
        )
    )
    assert problems == [f"audit row {last} (ctx): the seed gives other seats"]
