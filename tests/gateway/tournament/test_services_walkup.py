"""Walk-up play over the database (docs/rules.md#w1 ... #w9): the window set by a director,
offers and refusals at card-in, the confirm into a one-seat heat, the entry used and its
score in the qualifying standings; every decision audited."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta

import pytest
from sqlalchemy import select

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.rules.walkup import CONFIRM, OFFER, REFUSE
from gateway.tournament.services.standings import stage_standings
from gateway.tournament.services.walkup import (
    WalkupDecision,
    confirm_offer,
    list_sessions,
    list_windows,
    set_window,
    walkup_at_card_in,
)
from storage.audit import AuditEntry
from storage.floor import FloorMachine
from storage.tournament import Entry, EntryStatus, Heat, HeatStatus, Seat, SeatStatus
from storage.walkup import LAPSED, STARTED

from .conftest import Desk, at

DAY = date(2026, 12, 7)
EVENING = at(DAY, 19)


async def _setup(desk: Desk) -> tuple[int, int]:
    t = await desk.tournament()
    player = await desk.run(
        svc.add_player, id_number="8001015009087", name="Thabo Mokoena",
        date_of_birth=date(1980, 1, 1), actor="desk", now=at(DAY, 9), card_number="C1",
    )  # fmt: skip
    await desk.sell(player.id, at(DAY, 10))
    await desk.run(
        set_window, t, "A", opens="18:00", closes="23:00", seconds=300, credits=500,
        confirm_seconds=30, enabled=True, actor="director", reason="evening walk-up",
        at=at(DAY, 9),
    )  # fmt: skip
    return t, int(player.id)


async def _card(
    desk: Desk, player: int, when: datetime, machine: str = "A-01"
) -> WalkupDecision:
    decision = await desk.run(
        walkup_at_card_in, machine=machine, card="C1", player_id=player, at=when
    )
    assert decision is not None
    return decision  # type: ignore[no-any-return]


async def _actions(desk: Desk) -> list[tuple[str, dict[str, object]]]:
    async with desk.maker() as s:
        rows = await s.scalars(
            select(AuditEntry).where(AuditEntry.action.like("walkup.%")).order_by(AuditEntry.id)
        )
        return [(r.action, json.loads(r.details)) for r in rows]


async def test_w1_window_is_a_directors_decision_checked_and_audited(desk: Desk) -> None:
    t, _ = await _setup(desk)
    windows = await desk.run(list_windows, at=EVENING)
    assert [(w.bank, w.opens, w.closes, w.open_now) for w in windows] == [
        ("A", "18:00", "23:00", True)
    ]
    with pytest.raises(RuleViolation, match="reason"):
        await desk.run(set_window, t, "A", opens="18:00", closes="23:00", seconds=300,
                       credits=500, confirm_seconds=30, enabled=True, actor="director",
                       reason=" ", at=EVENING)  # fmt: skip
    with pytest.raises(RuleViolation, match="bank"):
        await desk.run(set_window, t, "Z", opens="18:00", closes="23:00", seconds=300,
                       credits=500, confirm_seconds=30, enabled=True, actor="director",
                       reason="x", at=EVENING)  # fmt: skip
    with pytest.raises(RuleViolation, match="opens"):
        await desk.run(set_window, t, "A", opens="6pm", closes="23:00", seconds=300,
                       credits=500, confirm_seconds=30, enabled=True, actor="director",
                       reason="x", at=EVENING)  # fmt: skip
    assert [a for a, _ in await _actions(desk)] == ["walkup.window"]


async def test_w2_w4_refusals_are_audited_with_their_clause(desk: Desk) -> None:
    _, player = await _setup(desk)
    early = await _card(desk, player, at(DAY, 17, 30))
    assert early.verdict.kind == REFUSE
    assert early.verdict.clause == "W2"
    broke = await desk.run(
        svc.add_player, id_number="9002025009088", name="Anna Botha",
        date_of_birth=date(1990, 2, 2), actor="desk", now=at(DAY, 9), card_number="C2",
    )  # fmt: skip
    none = await desk.run(
        walkup_at_card_in, machine="A-02", card="C2", player_id=broke.id, at=EVENING
    )
    assert none.verdict.clause == "W4"
    assert "walk-up refused, W4" in none.line
    # A machine the technician excluded from the bank is not idle (W3).
    async with desk.maker() as s, s.begin():
        spec = await s.get(FloorMachine, "A-03")
        assert spec is not None
        spec.excluded_reason = "note acceptor jammed"
    excluded = await _card(desk, player, EVENING, machine="A-03")
    assert (excluded.verdict.clause, excluded.verdict.reason) == (
        "W3", "the machine is excluded from its bank: note acceptor jammed"
    )
    # A machine of a bank with no walk-up window is not walk-up's business.
    await desk.floor("B", 1)
    none_here = await desk.run(
        walkup_at_card_in, machine="B-01", card="C1", player_id=player, at=EVENING
    )
    assert none_here is None
    actions = await _actions(desk)
    assert [(a, d["clause"]) for a, d in actions[1:]] == [
        ("walkup.refuse", "W2"), ("walkup.refuse", "W4"), ("walkup.refuse", "W3")
    ]


async def test_w5_w6_offer_confirmed_by_the_card_again_becomes_a_one_seat_heat(
    desk: Desk,
) -> None:
    t, player = await _setup(desk)
    offer = await _card(desk, player, EVENING)
    assert offer.verdict.kind == OFFER
    # Another player's card at the reserved machine is refused (W3).
    other = await desk.run(
        svc.add_player, id_number="9002025009088", name="Anna Botha",
        date_of_birth=date(1990, 2, 2), actor="desk", now=at(DAY, 9), card_number="C2",
    )  # fmt: skip
    await desk.sell(other.id, at(DAY, 10))
    held = await desk.run(
        walkup_at_card_in, machine="A-01", card="C2", player_id=other.id,
        at=EVENING + timedelta(seconds=5),
    )  # fmt: skip
    assert (held.verdict.kind, held.verdict.clause) == (REFUSE, "W3")
    started = await _card(desk, player, EVENING + timedelta(seconds=20))
    assert started.verdict.kind == CONFIRM
    heat_id = started.heat_id
    assert heat_id is not None
    async with desk.maker() as s:
        heat = await s.get(Heat, heat_id)
        assert heat is not None
        assert (heat.status, heat.bank_name, heat.duration_seconds, heat.starting_credits) == (
            HeatStatus.SCHEDULED, "A", 300, 500
        )
        assert heat.scheduled_start == EVENING + timedelta(seconds=20)  # due at once
        seats = (await s.scalars(select(Seat).where(Seat.heat_id == heat_id))).all()
        assert [(x.machine_id, x.status) for x in seats] == [("A-01", SeatStatus.PRESENT)]
        entry = await s.get(Entry, seats[0].entry_id)
        assert entry is not None
        assert entry.status is EntryStatus.SEATED  # W4: the entry is used
    # A heat cannot be scheduled over the session on its bank (W3 through T10/T11).
    with pytest.raises(RuleViolation, match="bank A"):
        await desk.run(
            svc.schedule_heat, t, stage=Stage.QUALIFYING, starts_at=EVENING + timedelta(minutes=2),
            bank_name="A", duration_seconds=600, starting_credits=1000, actor="director",
            now=EVENING,
        )  # fmt: skip
    # The machine is busy now (W3); the player's entry is gone (W4) on another machine.
    busy = await _card(desk, player, EVENING + timedelta(seconds=40))
    assert busy.verdict.clause == "W3"
    elsewhere = await _card(desk, player, EVENING + timedelta(seconds=40), machine="A-02")
    assert elsewhere.verdict.clause == "W4"
    # W8: the session's score is the entry's, ranked with the qualifying heats.
    await desk.play(heat_id, {1: 740}, EVENING + timedelta(seconds=21))
    standings = await desk.run(stage_standings, t, Stage.QUALIFYING)
    assert [(x.entry_id, x.credits) for x in standings.lines] == [(entry.id, 740)]
    rows = await desk.run(list_sessions)
    assert [(r.status, r.heat_status, r.score, r.active) for r in rows] == [
        (STARTED, "closed", 740, False)
    ]
    actions = [a for a, _ in await _actions(desk)]
    assert actions == [
        "walkup.window", "walkup.offer", "walkup.refuse", "walkup.start",
        "walkup.refuse", "walkup.refuse",
    ]


async def test_w5_an_offer_lapses_and_an_attendant_may_confirm_in_time(desk: Desk) -> None:
    _, player = await _setup(desk)
    await _card(desk, player, EVENING)
    again = await _card(desk, player, EVENING + timedelta(seconds=31))
    assert again.verdict.kind == OFFER  # the first lapsed: a fresh offer
    rows = await desk.run(list_sessions)
    assert [r.status for r in rows] == ["offered", LAPSED]
    with pytest.raises(RuleViolation, match="lapsed"):
        await desk.run(confirm_offer, rows[0].id, at=EVENING + timedelta(minutes=5),
                       actor="attendant")  # fmt: skip
    third = await _card(desk, player, EVENING + timedelta(minutes=6))
    assert third.verdict.kind == OFFER
    newest = (await desk.run(list_sessions))[0]
    heat = await desk.run(
        confirm_offer, newest.id, at=EVENING + timedelta(minutes=6, seconds=10),
        actor="attendant",
    )  # fmt: skip
    assert heat.status is HeatStatus.SCHEDULED
    with pytest.raises(RuleViolation, match="started"):
        await desk.run(confirm_offer, newest.id, at=EVENING + timedelta(minutes=7),
                       actor="attendant")  # fmt: skip
    starts = [d for a, d in await _actions(desk) if a == "walkup.start"]
    assert len(starts) == 1
    assert (await desk.run(list_sessions))[0].confirmed_by == "attendant"


async def test_w4_w5_an_entry_gone_before_the_confirm_is_refused_and_nothing_starts(
    desk: Desk,
) -> None:
    _, player = await _setup(desk)
    offer = await _card(desk, player, EVENING)
    assert offer.verdict.entry_id is not None
    async with desk.maker() as s, s.begin():  # refunded at the desk meanwhile (T20)
        entry = await s.get(Entry, offer.verdict.entry_id)
        assert entry is not None
        entry.status = EntryStatus.REFUNDED
    refused = await _card(desk, player, EVENING + timedelta(seconds=10))
    assert (refused.verdict.kind, refused.verdict.clause) == (REFUSE, "W4")
    assert "refunded" in refused.verdict.reason
    assert refused.heat_id is None
    async with desk.maker() as s:
        assert (await s.scalars(select(Heat))).all() == []
    assert [r.status for r in await desk.run(list_sessions)] == [LAPSED]
    assert [a for a, _ in await _actions(desk)][-2:] == ["walkup.offer", "walkup.refuse"]


async def test_w6_a_session_after_the_sealed_cut_is_chained_as_an_amendment(desk: Desk) -> None:
    """W6 with T10's amendments: the first session's close is the qualifying's last heat,
    so its cut is sealed (``stage.close``); a second session confirmed after that reopens
    the cut as an added heat does (``stage.amend``, kind ``walkup.session``, rule W6,
    naming the entry), and once it is scored ``audit verify``'s standings at the cuts
    find nothing moved without a record.  Found by the end-to-end night (issue 30)."""
    from gateway.records.verify import standings_at_cuts

    t, player = await _setup(desk)
    first = await _card(desk, player, EVENING)
    first = await _card(desk, player, EVENING + timedelta(seconds=20))
    assert first.heat_id is not None
    await desk.play(first.heat_id, {1: 480}, EVENING + timedelta(seconds=21))
    assert await desk.run(standings_at_cuts) == ([], [])  # the cut sealed, no amendment
    await desk.sell(player, at(DAY, 19, 10))
    later = EVENING + timedelta(minutes=15)
    await _card(desk, player, later)
    second = await _card(desk, player, later + timedelta(seconds=20))
    assert second.heat_id is not None
    await desk.play(second.heat_id, {1: 620}, later + timedelta(seconds=21))
    found, listed = await desk.run(standings_at_cuts)
    assert [f.line() for f in found] == []
    (amended,) = listed
    assert (amended["kind"], amended["rule"], amended["requested_by"]) == (
        "walkup.session", "W6", "system:board/A-01"
    ), amended
    standings = await desk.run(stage_standings, t, Stage.QUALIFYING)
    assert sorted(x.credits for x in standings.lines) == [480, 620]
