"""Scripted Super 9 sessions through the desk, with hand-computed payouts.

Money in cents.  Default buy-in R50 (5000 c); consolation = floor(25%) (S9-16);
contribution = the rest (S9-15); jackpot seed R5,000 (500000 c).
"""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.errors import OperatorError
from gateway.feed import MemoryFeed
from gateway.super9.desk import Super9Desk
from storage.audit import AuditEntry
from storage.db import make_sessionmaker
from storage.super9 import Super9Ticket, TicketStatus

from .conftest import key_in

SAST = ZoneInfo("Africa/Johannesburg")
WED = date(2026, 12, 2)  # Wednesday: 19:00 and 21:00 (S9-4)
P1, P2, P3, P4, P5, MINOR = "C1", "C2", "C3", "C4", "C5", "C6"


def at(day: date, hh: int, mm: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hh, mm, tzinfo=SAST)


async def _sell_and_hand_in(desk: Super9Desk, tickets: dict[str, tuple[str, str]]) -> int:
    """Sell at 10:00 and hand in at 18:00 for the 19:00 session; returns its id."""
    session_ids = set()
    for serial, (player, numbers) in tickets.items():
        await desk.sell(serial, player, actor="cashier", now=at(WED, 10))
        session_ids.add(await key_in(desk, serial, numbers, actor="grd", now=at(WED, 18)))
    assert len(session_ids) == 1
    return session_ids.pop()


async def _spin_all(desk: Super9Desk, sid: int, numbers: list[int], first_game: int = 100) -> None:
    for i, n in enumerate(numbers):
        await desk.record_result(sid, first_game + i, n, now=at(WED, 19, 5))


async def test_jackpot_within_18_counted_spins_with_repeats(
    desk: Super9Desk, feed: MemoryFeed
) -> None:
    sid = await _sell_and_hand_in(
        desk,
        {
            "A": (P1, "1 2 3 4 5 6 7 8 9"),
            "B": (P2, "10 11 12 13 14 15 16 17 18"),
            "C": (P3, "19 20 21 22 23 24 25 26 27"),
            "D": (P4, "28 29 30 31 32 33 34 35 36"),
        },
    )
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    # 20 valid spins; 30 and 31 each repeat twice (4 repeats), so A's ninth number comes
    # on valid spin 20 but only the 16th distinct number: inside the jackpot window
    # under S9-19's default reading.
    spins = [30, 31, 1, 2, 30, 3, 4, 31, 5, 6, 30, 7, 8, 31, 32, 33, 34, 35, 36, 9]
    await _spin_all(desk, sid, spins)
    live = feed.retained[f"super9/{sid}/draw"]
    assert live["spins"] == 20
    assert live["counted_spins"] == 16
    assert live["completed"][0]["ticket"] == "A"
    claim = await desk.claim(sid, "A", "9 8 7 6 5 4 3 2 1", actor="grd", now=at(WED, 19, 40))
    assert claim.valid
    assert claim.complete
    result = await desk.close_session(sid, actor="director", now=at(WED, 19, 45))
    # buy-ins 4 × 5000 = 20000; consolation 5000; contribution 15000.
    assert result.jackpot_won  # S9-14, S9-19
    paid = {(p.kind.value, p.amount_cents) for p in result.payouts}
    assert paid == {("jackpot", 500_000), ("consolation", 5_000)}  # S9-16 default: both
    # RESTART_AT_SEED (S9-15 default): exactly R5,000 again; this session adds nothing.
    assert await desk.jackpot() == 500_000
    assert feed.retained["super9/jackpot"]["jackpot_cents"] == 500_000  # signage
    # Between draws a sign shows what comes next (issue 24, problem 8): 21:00 that day.
    assert feed.retained["super9/jackpot"]["next_session"] == at(WED, 21).isoformat()
    history = await desk.jackpot_history()
    assert [(h["kind"], h["amount_cents"], h["balance_cents"]) for h in history] == [
        ("seed", 500_000, 500_000),
        ("payout", -500_000, 0),
        ("seed", 500_000, 500_000),
    ]
    assert result.retained_cents == 15_000


async def test_literal_reading_counts_repeats_so_only_consolation(desk: Super9Desk) -> None:
    await desk.change_settings(
        {"repeat_rule": "count-every-spin"},
        actor="director",
        reason="house reading of rule 19",
        now=at(WED, 9),
    )
    sid = await _sell_and_hand_in(
        desk,
        {
            "A": (P1, "1 2 3 4 5 6 7 8 9"),
            "B": (P2, "10 11 12 13 14 15 16 17 18"),
        },
    )
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    await _spin_all(
        desk, sid, [30, 31, 1, 2, 30, 3, 4, 31, 5, 6, 30, 7, 8, 31, 32, 33, 34, 35, 36, 9]
    )
    await desk.claim(sid, "A", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 19, 40))
    result = await desk.close_session(sid, actor="director", now=at(WED, 19, 45))
    # Spin 20 > 18: no jackpot; consolation 25% of 10000 = 2500 (S9-16);
    # jackpot grows by 7500 (S9-15).
    assert not result.jackpot_won
    assert [(p.ticket, p.kind.value, p.amount_cents) for p in result.payouts] == [
        (result.payouts[0].ticket, "consolation", 2_500)
    ]
    assert await desk.jackpot() == 507_500


async def test_consolation_after_18th_two_simultaneous_winners_odd_cent(
    desk: Super9Desk,
) -> None:
    await desk.change_settings(
        {"buy_in_cents": 3333}, actor="director", reason="promo price", now=at(WED, 9)
    )
    sid = await _sell_and_hand_in(
        desk,
        {
            "X": (P1, "0 1 2 3 4 5 6 7 36"),
            "Y": (P2, "0 1 2 3 4 5 6 8 36"),
            "Z": (P3, "10 11 12 13 14 15 16 17 18"),
        },
    )
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    # 19 distinct numbers before 36: X and Y both complete on the 20th (S9-13),
    # after the 18th spin, so no jackpot (S9-14).
    spins = [0, 1, 2, 3, 4, 5, 6, 7, 8, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 36]
    await _spin_all(desk, sid, spins)
    for serial, dup in (("X", "0 1 2 3 4 5 6 7 36"), ("Y", "36 8 6 5 4 3 2 1 0")):
        await desk.claim(sid, serial, dup, actor="grd", now=at(WED, 19, 40))
    result = await desk.close_session(sid, actor="director", now=at(WED, 19, 45))
    # buy-ins 9999; consolation floor(2499.75) = 2499; contribution 7500.
    # S9-20: 2499 / 2 = 1249 each; the odd cent goes to the jackpot carry.
    assert not result.jackpot_won
    assert sorted((p.amount_cents, p.kind.value) for p in result.payouts) == [
        (1249, "consolation"),
        (1249, "consolation"),
    ]
    assert result.remainder_cents == 1
    assert await desk.jackpot() == 500_000 + 7_500 + 1


async def test_mismatched_duplicate_voids_claim_and_disqualifies_for_the_day(
    desk: Super9Desk, engine: AsyncEngine
) -> None:
    # P1 holds A in the 19:00 session and A2 in the 21:00 one.
    sid = await _sell_and_hand_in(
        desk,
        {
            "A": (P1, "1 2 3 4 5 6 7 8 9"),
            "B": (P2, "1 2 3 4 5 6 7 8 10"),
        },
    )
    await desk.sell("A2", P1, actor="cashier", now=at(WED, 12))
    later = await key_in(desk, "A2", "20 21 22 23 24 25 26 27 28", actor="grd", now=at(WED, 18, 50))
    assert later != sid  # after the 18:45 cut-off: rolled to 21:00 (S9-6)
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    await _spin_all(desk, sid, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    claim = await desk.claim(sid, "A", "1 2 3 4 5 6 7 8 19", actor="grd", now=at(WED, 19, 30))
    assert not claim.valid
    assert claim.reason is not None
    assert "rule 9" in claim.reason
    await desk.record_result(sid, 200, 10, now=at(WED, 19, 31))  # play goes on
    await desk.claim(sid, "B", "1 2 3 4 5 6 7 8 10", actor="grd", now=at(WED, 19, 32))
    with pytest.raises(OperatorError, match="rule 9"):
        await desk.claim(sid, "A", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 19, 33))
    result = await desk.close_session(sid, actor="director", now=at(WED, 19, 45))
    report = await desk.report(sid)
    # B completed at spin 10 = 10 distinct numbers: jackpot (S9-14) + consolation.
    assert report["result"]["payouts"] == [
        {"ticket": "B", "kind": "jackpot", "amount_cents": 500_000},
        {"ticket": "B", "kind": "consolation", "amount_cents": 2_500},
    ]
    assert report["result"]["claims"] == {"A": "invalid", "B": "winner"}
    assert result.jackpot_won
    async with make_sessionmaker(engine)() as db:
        query = select(Super9Ticket).where(Super9Ticket.serial == "A2")
        a2 = (await db.execute(query)).scalar_one()
        assert a2.status is TicketStatus.DISQUALIFIED  # S9-9: the whole day
        actions = (await db.execute(select(AuditEntry.action))).scalars().all()
    assert "super9.claim" in actions
    assert "super9.session.close" in actions


async def test_voided_spin_whose_number_arrives_anyway(desk: Super9Desk, feed: MemoryFeed) -> None:
    sid = await _sell_and_hand_in(
        desk,
        {
            "A": (P1, "1 2 3 4 5 6 7 8 9"),
            "B": (P2, "11 12 13 14 15 16 17 18 19"),
        },
    )
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    await _spin_all(desk, sid, [1, 2, 3, 4, 5, 6, 7, 8])
    # Dealer calls "No spin" on game 300 before the ball drops (S9-18) ...
    await desk.void_spin(
        sid, game_no=300, actor="dealer", reason="ball under 3 revolutions", now=at(WED, 19, 20)
    )
    # ... and the wheel still reports 9 for it: never called (S9-18.2, S9-18.3).
    recorded = await desk.record_result(sid, 300, 9, now=at(WED, 19, 21))
    assert recorded is not None
    assert recorded.voided
    assert recorded.completed == ()
    live = feed.retained[f"super9/{sid}/draw"]
    assert 9 not in live["called"]
    assert live["voided_games"] == [300]
    # A spin voided after its result is un-called too (S9-18.2).
    await desk.record_result(sid, 301, 11, now=at(WED, 19, 22))
    await desk.void_spin(
        sid, game_no=301, actor="supervisor", reason="foreign object", now=at(WED, 19, 23)
    )
    assert 11 not in feed.retained[f"super9/{sid}/draw"]["called"]
    done = await desk.record_result(sid, 302, 9, now=at(WED, 19, 24))
    assert done is not None
    assert done.completed == ("A",)
    assert await desk.record_result(sid, 302, 9, now=at(WED, 19, 24)) is None  # repeat line
    await desk.claim(sid, "A", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 19, 25))
    result = await desk.close_session(sid, actor="director", now=at(WED, 19, 45))
    assert result.valid_spins == 9
    assert result.jackpot_won


async def test_manual_spins_need_a_second_person(desk: Super9Desk) -> None:
    sid = await _sell_and_hand_in(desk, {"A": (P1, "1 2 3 4 5 6 7 8 9")})
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    with pytest.raises(OperatorError, match="rule 29"):
        await desk.manual_spin(
            sid,
            5,
            confirm_number=5,
            keyed_by="dealer",
            confirmed_by="dealer",
            reason="sensor failed",
            now=at(WED, 19, 5),
        )
    with pytest.raises(OperatorError, match="rule 29"):
        await desk.manual_spin(
            sid,
            5,
            confirm_number=6,
            keyed_by="dealer",
            confirmed_by="supervisor",
            reason="sensor failed",
            now=at(WED, 19, 5),
        )
    spin = await desk.manual_spin(
        sid,
        5,
        confirm_number=5,
        keyed_by="dealer",
        confirmed_by="supervisor",
        reason="sensor failed",
        now=at(WED, 19, 5),
    )
    report = await desk.report(sid)
    assert report["spins"][0]["keyed_by"] == "dealer"
    assert report["spins"][0]["confirmed_by"] == "supervisor"
    assert spin.number == 5


async def test_late_ticket_rolls_to_next_session(desk: Super9Desk) -> None:
    await desk.sell("L", P1, actor="cashier", now=at(WED, 10))
    first = await desk.session_for(at(WED, 19))
    # S9-6: hand-in closes at 18:45 for the 19:00 session; 18:46 enters 21:00.
    entered = await key_in(desk, "L", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 18, 46))
    assert entered == await desk.session_for(at(WED, 21))
    assert entered != first
    # Sales for 19:00 closed at 18:30; a sale at 18:31 is for 21:00.
    assert await desk.sell("M", P2, actor="cashier", now=at(WED, 18, 31)) == entered
    with pytest.raises(OperatorError, match="rule 6"):
        await desk.sell("N", P2, actor="cashier", now=at(WED, 7, 59))


async def test_last_sunday_has_no_session(desk: Super9Desk) -> None:
    last_sunday, sunday_before = date(2026, 11, 29), date(2026, 11, 22)
    cal = await desk.calendar()
    assert cal.on_day(last_sunday) == []  # S9-4
    assert [t.hour for t in cal.on_day(sunday_before)] == [15, 17]
    with pytest.raises(OperatorError, match="rule 6"):
        await desk.sell("S", P1, actor="cashier", now=at(last_sunday, 10))
    assert await desk.sell("S", P1, actor="cashier", now=at(sunday_before, 10)) > 0
    # A one-off extra session on the last Sunday (S9-4 "one-off changes"), audited.
    await desk.change_calendar(
        at(last_sunday, 15),
        cancel=False,
        actor="director",
        reason="festive special",
        now=at(sunday_before, 12),
    )
    assert await desk.sell("S2", P1, actor="cashier", now=at(last_sunday, 10)) > 0
    with pytest.raises(OperatorError, match="rule 4"):
        await desk.change_calendar(
            at(last_sunday, 15),
            cancel=False,
            actor="director",
            reason="twice",
            now=at(sunday_before, 12),
        )


async def test_eligibility_and_bad_input_change_nothing(desk: Super9Desk) -> None:
    with pytest.raises(OperatorError, match="rule 1"):
        await desk.sell("K", MINOR, actor="cashier", now=at(WED, 10))
    await desk.sell("T", P1, actor="cashier", now=at(WED, 10))
    with pytest.raises(OperatorError, match="rule 8"):
        await key_in(desk, "T", "1 2 3 4 5 6 7 8", actor="grd", now=at(WED, 18))
    with pytest.raises(OperatorError, match="rule 8"):
        await key_in(desk, "T", "1 2 3 4 5 6 7 8 37", actor="grd", now=at(WED, 18))
    with pytest.raises(OperatorError, match="already sold"):
        await desk.sell("T", P2, actor="cashier", now=at(WED, 10))
    sid = await key_in(desk, "T", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 18))
    # S9-23: a change needs the director's sign-off, and only before the game.
    with pytest.raises(OperatorError, match="rule 23"):
        await desk.change_numbers(
            "T",
            "1 2 3 4 5 6 7 8 10",
            actor="grd",
            approved_by="grd",
            reason="player asked",
            now=at(WED, 18, 10),
        )
    await desk.change_numbers(
        "T",
        "1 2 3 4 5 6 7 8 10",
        actor="grd",
        approved_by="director",
        reason="player asked",
        now=at(WED, 18, 10),
    )
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    with pytest.raises(OperatorError, match="rule 23"):
        await desk.change_numbers(
            "T",
            "1 2 3 4 5 6 7 8 11",
            actor="grd",
            approved_by="director",
            reason="too late",
            now=at(WED, 19, 1),
        )
    report = await desk.report(sid)
    assert report["tickets"] == {"in_play": 1, "disqualified": 0, "total": 1}


async def test_marked_ticket_is_out_and_jackpot_survives_restart(
    desk: Super9Desk, feed: MemoryFeed, engine: AsyncEngine
) -> None:
    sid = await _sell_and_hand_in(
        desk,
        {
            "A": (P1, "1 2 3 4 5 6 7 8 9"),
            "B": (P2, "1 2 3 4 5 6 7 8 10"),
        },
    )
    await desk.disqualify(
        "A", actor="grd", reason="scratched numbers", rule=21, now=at(WED, 18, 30)
    )
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    await _spin_all(desk, sid, [*range(1, 10), *range(11, 30), 10])
    with pytest.raises(OperatorError, match="rule 21"):
        await desk.claim(sid, "A", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 19, 40))
    await desk.claim(sid, "B", "1 2 3 4 5 6 7 8 10", actor="grd", now=at(WED, 19, 41))
    result = await desk.close_session(sid, actor="director", now=at(WED, 19, 45))
    # B completes on the 29th distinct number: consolation only; 2 × 5000 buy-ins.
    assert [(p.kind.value, p.amount_cents) for p in result.payouts] == [("consolation", 2_500)]
    await desk.sign_prize(
        sid,
        "B",
        "consolation",
        signature="receipt 0042 signed",
        signer="C2",
        witness="grd",
        actor="cashier",
        now=at(WED, 19, 50),
    )
    restarted = Super9Desk(make_sessionmaker(engine), feed=feed)  # a fresh process
    assert await restarted.jackpot() == 507_500
    assert len(await restarted.jackpot_history()) == 2
    report = await restarted.report(sid)
    assert report["prizes"][0]["signed_by"] == "receipt 0042 signed"


async def test_late_ticket_plays_next_session_and_unplayed_ticket_rolls_once(
    desk: Super9Desk,
) -> None:
    # L is handed in late (S9-6) and plays at 21:00; U is never handed in.
    await desk.sell("L", P1, actor="cashier", now=at(WED, 10))
    await desk.sell("U", P2, actor="cashier", now=at(WED, 10))
    await desk.sell("K", P3, actor="cashier", now=at(WED, 10))
    first = await key_in(desk, "K", "20 21 22 23 24 25 26 27 28", actor="grd", now=at(WED, 18))
    second = await key_in(desk, "L", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 18, 50))
    await desk.open_session(at(WED, 19), actor="director", now=at(WED, 19))
    closed = await desk.close_session(first, actor="director", now=at(WED, 19, 45))
    # 19:00 keeps only K's R50: U rolled on to 21:00 with L (S9-6).
    assert closed.buy_ins_cents == 5_000
    assert closed.payouts == ()
    with pytest.raises(OperatorError, match="rule 6"):  # U's hand-in after 21:00's cut-off
        await key_in(desk, "U", "1 2 3 4 5 6 7 8 10", actor="grd", now=at(WED, 20, 50))
    await desk.open_session(at(WED, 21), actor="director", now=at(WED, 21))
    await _spin_all(desk, second, list(range(1, 10)))
    await desk.claim(second, "L", "1 2 3 4 5 6 7 8 9", actor="grd", now=at(WED, 21, 20))
    result = await desk.close_session(second, actor="director", now=at(WED, 21, 30))
    # L and the expired U: buy-ins 10000; L takes jackpot + consolation 2500.
    # The jackpot in was 500000 + 3750 + 1250 (19:00: contribution + unwon consolation).
    assert result.buy_ins_cents == 10_000
    assert [(p.kind.value, p.amount_cents) for p in result.payouts] == [
        ("jackpot", 505_000),
        ("consolation", 2_500),
    ]
    assert await desk.jackpot() == 500_000  # S9-15 default: restarts at exactly R5,000
