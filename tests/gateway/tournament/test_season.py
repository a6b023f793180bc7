"""A scripted 25-week season on each database backend (T1–T23 end to end).

Qualifying: one heat every Monday at 18:00 (weeks 3 and 10 also at 20:00), 2 June–16 Nov
2026, bank A (6 machines).  Settings: top 1 straight to the final (T13), the next 5 to
the semi-finals (T14, configurable; 49 at The Ridge), 2 finalists from the semis
(T17), 3 prize places (T19).

Scores.  Two "filler" players play every week with ``100 + 10*week + n`` credits (n = the
player number: all below 400, all distinct); the explicit scores below decide every cut.
The expected standings are written out by hand from this script, not recomputed.

  week  heat    player  credits   event
   2    18:00   X        4000     X is self-excluded from week 15 (CSV import): out (T2)
   3    18:00   P01      3000     from an R200 package (T6); 2 of its 4 seats expire
   3    20:00   P01      2800     second seat of the package, second heat that day
   5    18:00   P02      5000     ties P03 for the top score: digital card draw (T19)
   6    18:00   P09      absent   seat forfeited, no refund (T22)
   7    18:00   X        3900
   8    18:00   P04      2600
  10    18:00   P05      —        machine malfunction: re-seated at 20:00, seat 2 (T20)
  10    20:00   P05      2200
  12    18:00   P03      5000
  14    18:00   P04      2500     three-way tie at 2500 straddles the semi cut (6th place)
  16    18:00   P07      2500       physical draw: P04 7H, P08 7C, P07 3S; then P04 QH,
  18    18:00   P08      2500       P08 2D drawn by a member of the public (P08 absent)
  18    18:00   P08      (9000)   first run: system failure, whole heat restarted (T20)
  20    19:00   P09      2400     moved from 18:00, announced a week before (T10)
  22    18:00   P10      1500
  25    18:00   P11      1200
  25    18:00   P06      —        machine malfunction in the last heat: refunded (T20)
  plus P12 (turns 18 on 10 June; refused before, T1): 250 (wk 4), 300 (wk 9,
  complimentary entry), 305 (wk 10, 20:00 — registered before P05 was moved there).

Semi-finals (bank F, 4 machines; heats S1 and S2, seats by seeded draw, T14): the top
draw's loser 700, P01's 3000-entry 950, P01's 2800-entry 600 (played by proxy Nomsa
Dlamini, T16), P04's 2600-entry 800; P04's 2500-entry has no proxy form: forfeited.
One S1 machine malfunctions: that player is moved to S2's first free seat (T21).
Final (T17: top 2 of the semis + the top qualifier): P04 1800, top winner 1500, P01
1500: the tie for 2nd is drawn, P01's card picked by a member of the public (T19).

Clauses: docs/rules.md#t1 to #t23.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament import services as svc
from gateway.tournament.rules.cards import Card
from gateway.tournament.rules.enums import CardSuit, DrawnBy, EntryStatus, SeatStatus, Stage
from gateway.tournament.rules.incidents import MalfunctionOutcome
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services import live_standings
from gateway.tournament.services.draws import DrawnCard
from gateway.tournament.services.finals import verify_seat_draws
from gateway.tournament.settings import TournamentSettings
from storage import audit
from storage.tournament import Entry

from .conftest import Desk, at, score

SEED_TOP = bytes(range(32))
SEED_SEMI_SEATS = bytes(range(32, 64))
SEED_FINAL_SEATS = bytes(range(64, 96))
FILLERS = ["P07", "P08", "P09", "P10", "P11"]


def monday(week: int) -> date:
    return date(2026, 6, 1) + timedelta(days=7 * (week - 1))


def fillers(week: int) -> list[tuple[str, int]]:
    names = [FILLERS[week % 5], FILLERS[(week + 2) % 5]]
    if week == 20:
        names.remove("P09")  # P09 plays an explicit score that week
    return [(n, 100 + 10 * week + int(n[1:])) for n in names]


def reference_card_round(
    seed: bytes, context: str, round_number: int, entries: list[int]
) -> dict[int, int]:
    """An independent re-implementation of the documented digital draw (values only)."""

    def uniform(ctx: str, n: int) -> int:
        counter = 0
        while True:
            d = int.from_bytes(hmac.new(seed, f"{ctx}|{counter}".encode(), hashlib.sha256).digest())
            if d < 2**256 - (2**256 % n):
                return d % n
            counter += 1

    deck = [v for _suit in range(4) for v in range(1, 14)]
    full = f"{context}|round={round_number}"
    for i in range(len(deck) - 1, 0, -1):
        j = uniform(f"{full}|{i}", i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return {e: deck[k] for k, e in enumerate(sorted(entries))}


async def test_25_week_season(desk: Desk) -> None:  # noqa: C901
    await desk.floor("F", 4)
    settings = TournamentSettings(semi_final_qualifiers=5, finalists_from_semis=2, prize_places=3)
    tid = await desk.tournament(settings, name="Ridge Reel Season 2026")
    setup = datetime(2026, 5, 1, 9, 0, tzinfo=at(monday(1), 0).tzinfo)

    # --- players (T1: P12 is 17 until 10 June 2026) ---------------------------------
    ids: dict[str, int] = {}
    for n in range(1, 12):
        ids[f"P{n:02d}"] = await desk.player(f"80010150{n:02d}081", f"Player {n:02d}", now=setup)
    ids["X"] = await desk.player("7505055123080", "Xavier Excluded", now=setup)
    with pytest.raises(RuleViolation, match=r"^rule 1: participant is 17"):
        await desk.player("0806105123089", "Player 12", date(2008, 6, 10), now=at(monday(1), 9))

    # --- the schedule, set before the season (semis and final on bank F) ---------------
    heat: dict[tuple[int, str], int] = {}
    for week in range(1, 26):
        heat[(week, "a")] = await desk.heat(at(monday(week), 18), now=setup)
        if week in (3, 10):
            heat[(week, "b")] = await desk.heat(at(monday(week), 20), now=setup)
    s1 = await desk.heat(at(date(2026, 11, 21), 10), bank="F", stage=Stage.SEMI_FINAL, now=setup)
    s2 = await desk.heat(at(date(2026, 11, 21), 14), bank="F", stage=Stage.SEMI_FINAL, now=setup)
    f1 = await desk.heat(at(date(2026, 11, 22), 12), bank="F", stage=Stage.FINAL, now=setup)

    entry_of: dict[tuple[str, int], int] = {}  # (player, week) -> entry id of its 18:00 seat

    async def seat_up(
        week: int, slot: str, who: str, *, package: str | None = None, **sale: Any
    ) -> int:
        day = monday(week)
        if package is None:
            (entry,) = await desk.sell(ids[who], at(day, 12), **sale)
        else:
            entry = (await desk.sell(ids[who], at(day, 12), package=package))[0]
        seat = await desk.register(heat[(week, slot)], ids[who], at(day, 17))
        entry_of[(who, week) if slot == "a" else (who, -week)] = seat.entry_id
        assert seat.entry_id == entry or package is not None
        return int(seat.entry_id)

    async def week_plain(week: int, explicit: list[tuple[str, int]], comp: str = "") -> None:
        for who, _ in explicit:
            await seat_up(week, "a", who, complimentary=who == comp)
        for who, _ in fillers(week):
            await seat_up(week, "a", who)
        seats = {
            s.holder_player_id: s.seat_number
            for s in await desk.run(svc.heat_seats, heat[(week, "a")])
        }
        credits = {seats[ids[who]]: c for who, c in explicit + fillers(week)}
        await desk.play(heat[(week, "a")], credits, at(monday(week), 18))

    for week in range(1, 26):
        day = monday(week)
        if week == 2:
            await week_plain(2, [("X", 4000)])
        elif week == 3:
            ids["P12"] = await desk.player(
                "0806105123089", "Player 12", date(2008, 6, 10), now=at(day, 9)
            )
            # T6: the R200 package buys four seats; T16 allows one per heat.
            sale = await desk.sell(ids["P01"], at(day, 11), package="R200")
            assert len(sale) == 4
            first = await desk.register(heat[(3, "a")], ids["P01"], at(day, 17))
            entry_of[("P01", 3)] = first.entry_id
            assert first.entry_id == sale[0]  # the oldest unused entry is used first
            for who, _ in fillers(3):
                await seat_up(3, "a", who)
            with pytest.raises(RuleViolation, match=r"^rule 16: player already holds a seat"):
                await desk.register(heat[(3, "a")], ids["P01"], at(day, 17, 5))
            second = await desk.register(heat[(3, "b")], ids["P01"], at(day, 19))
            entry_of[("P01", -3)] = second.entry_id
            seats_a = await desk.run(svc.heat_seats, heat[(3, "a")])
            assert [s.seat_number for s in seats_a] == [1, 2, 3]  # T11: in sequence
            by_player = {s.holder_player_id: s.seat_number for s in seats_a}
            await desk.play(
                heat[(3, "a")],
                {by_player[ids["P01"]]: 3000, **{by_player[ids[w]]: c for w, c in fillers(3)}},
                at(day, 18),
            )
            await desk.play(heat[(3, "b")], {1: 2800}, at(day, 20))
            expired = await desk.run(
                svc.expire_entries, tid, now=at(day + timedelta(days=1), 0), actor="desk"
            )
            assert expired == list(sale[2:])  # T7/T8: same-day seats lapse unused
        elif week == 4:
            await week_plain(4, [("P12", 250)])
        elif week == 5:
            await week_plain(5, [("P02", 5000)])
        elif week == 6:
            entry = await seat_up(6, "a", "P09")
            for who, _ in fillers(6):
                await seat_up(6, "a", who)
            seats = {
                s.holder_player_id: s.seat_number
                for s in await desk.run(svc.heat_seats, heat[(6, "a")])
            }
            await desk.play(
                heat[(6, "a")],
                {seats[ids[w]]: c for w, c in fillers(6)},
                at(day, 18),
                absent=(seats[ids["P09"]],),
            )
            assert (await desk.run(_entry, entry)).status is EntryStatus.FORFEITED  # T22
            with pytest.raises(RuleViolation, match=r"^rule 22: entry .* is forfeited"):
                await desk.run(
                    svc.refund_entry, entry, rule=23, reason="asked", actor="desk", now=at(day, 19)
                )
        elif week == 7:
            await week_plain(7, [("X", 3900)])
        elif week == 8:
            await week_plain(8, [("P04", 2600)])
        elif week == 9:
            await week_plain(9, [("P12", 300)], comp="P12")  # T5: paid by the casino
        elif week == 10:
            await seat_up(10, "a", "P05")
            for who, _ in fillers(10):
                await seat_up(10, "a", who)
            await seat_up(10, "b", "P12")
            seats = {s.holder_player_id: s for s in await desk.run(svc.heat_seats, heat[(10, "a")])}
            await desk.run(
                svc.begin_heat,
                heat[(10, "a")],
                present_seats=[s.seat_number for s in seats.values()],
                at=at(day, 18),
                actor="director",
            )
            moved = await desk.run(
                svc.mark_seat_malfunctioned,
                seats[ids["P05"]].seat_id,
                at=at(day, 18, 4),
                actor="tech",
                reason="reels jammed",
            )
            assert (moved.outcome, moved.new_heat_id, moved.new_seat_number) == (
                MalfunctionOutcome.RESEATED,
                heat[(10, "b")],
                2,
            )
            for who, c in fillers(10):
                await desk.run(
                    svc.record_machine_score, seats[ids[who]].seat_id, score(c), at=at(day, 18, 10)
                )
            await desk.run(svc.finish_heat, heat[(10, "a")], at=at(day, 18, 11), actor="gw")
            await desk.play(heat[(10, "b")], {1: 305, 2: 2200}, at(day, 20))
        elif week == 12:
            await week_plain(12, [("P03", 5000)])
        elif week == 14:
            await week_plain(14, [("P04", 2500)])
            table = await desk.run(svc.stage_standings, tid, Stage.QUALIFYING, as_of=at(day, 20))
            assert [(x.place, x.player_name, x.credits) for x in table.lines[:8]] == [
                (1, "Player 02", 5000),
                (1, "Player 03", 5000),
                (3, "Xavier Excluded", 4000),
                (4, "Xavier Excluded", 3900),
                (5, "Player 01", 3000),
                (6, "Player 01", 2800),
                (7, "Player 04", 2600),
                (8, "Player 04", 2500),
            ]
            await agrees_with_storage_ranking(desk, tid, Stage.QUALIFYING, at(day, 20))
        elif week == 15:
            csv_text = (
                "kind,id_number,name,valid_from,valid_until,note\n"
                f"self-exclusion,7505055123080,Xavier Excluded,{day.isoformat()},,NRGP 4411\n"
                "staff,6001015800086,Floor Manager,2020-01-01,,HR list\n"
            )
            result = await desk.run(
                svc.import_exclusions,
                csv_text,
                source="nrgp-2026-09.csv",
                actor="compliance",
                now=at(day, 9),
            )
            assert (result.added, result.players_disqualified) == (2, [(tid, ids["X"])])
            await week_plain(15, [])
        elif week == 16:
            with pytest.raises(RuleViolation, match=r"^rule 2: 7505055123080 is on the self-excl"):
                await desk.sell(ids["X"], at(day, 12))
            await week_plain(16, [("P07", 2500)])
        elif week == 18:
            for who in ["P08"] + [w for w, _ in fillers(18)]:
                await seat_up(18, "a", who)
            seats = {s.holder_player_id: s for s in await desk.run(svc.heat_seats, heat[(18, "a")])}
            hid = heat[(18, "a")]
            await desk.run(
                svc.begin_heat,
                hid,
                present_seats=[s.seat_number for s in seats.values()],
                at=at(day, 18),
                actor="director",
            )
            await desk.run(
                svc.record_machine_score, seats[ids["P08"]].seat_id, score(9000), at=at(day, 18, 10)
            )
            # the same report twice is a no-op; a different one is refused (T12)
            await desk.run(
                svc.record_machine_score, seats[ids["P08"]].seat_id, score(9000), at=at(day, 18, 10)
            )
            with pytest.raises(RuleViolation, match=r"^rule 12: seat .* already has 9000"):
                await desk.run(
                    svc.record_machine_score,
                    seats[ids["P08"]].seat_id,
                    score(100),
                    at=at(day, 18, 10),
                )
            await desk.run(
                svc.restart_heat,
                hid,
                failed_at=at(day, 18, 9),
                now=at(day, 18, 20),
                actor="director",
                reason="bank controller lost all machines",
            )
            credits = {
                seats[ids["P08"]].seat_number: 2500,
                **{seats[ids[w]].seat_number: c for w, c in fillers(18)},
            }
            await desk.run(
                svc.begin_heat,
                hid,
                present_seats=list(credits),
                at=at(day, 18, 25),
                actor="director",
            )
            for number, c in credits.items():
                sid = next(s.seat_id for s in seats.values() if s.seat_number == number)
                await desk.run(svc.record_machine_score, sid, score(c), at=at(day, 18, 35))
            await desk.run(svc.finish_heat, hid, at=at(day, 18, 36), actor="gw")
        elif week == 19:
            await week_plain(19, [])
            await desk.run(
                svc.reschedule_heat,
                heat[(20, "a")],
                new_start=at(monday(20), 19),
                announced_via="MC and POS",
                announced_at=at(day, 20),
                reason="bank service",
                actor="director",
                now=at(day, 20, 5),
            )
        elif week == 20:
            for who in ["P09"] + [w for w, _ in fillers(20)]:
                await seat_up(20, "a", who)
            seats = {
                s.holder_player_id: s.seat_number
                for s in await desk.run(svc.heat_seats, heat[(20, "a")])
            }
            with pytest.raises(RuleViolation, match=r"^rule 22: .* advertised for"):
                await desk.run(
                    svc.begin_heat,
                    heat[(20, "a")],
                    present_seats=[],
                    at=at(day, 18),
                    actor="director",
                )
            await desk.play(
                heat[(20, "a")],
                {seats[ids["P09"]]: 2400, **{seats[ids[w]]: c for w, c in fillers(20)}},
                at(day, 19),
            )
        elif week == 22:
            await week_plain(22, [("P10", 1500)])
        elif week == 25:
            for who in ["P11", "P06"] + [w for w, _ in fillers(25)]:
                await seat_up(25, "a", who)
            seats = {s.holder_player_id: s for s in await desk.run(svc.heat_seats, heat[(25, "a")])}
            hid = heat[(25, "a")]
            await desk.run(
                svc.begin_heat,
                hid,
                present_seats=[s.seat_number for s in seats.values()],
                at=at(day, 18),
                actor="director",
            )
            refunded = await desk.run(
                svc.mark_seat_malfunctioned,
                seats[ids["P06"]].seat_id,
                at=at(day, 18, 3),
                actor="tech",
                reason="screen dead",
            )
            assert (refunded.outcome, refunded.refund_cents) == (MalfunctionOutcome.REFUNDED, 5000)
            for who, c in [("P11", 1200), *fillers(25)]:
                await desk.run(
                    svc.record_machine_score, seats[ids[who]].seat_id, score(c), at=at(day, 18, 10)
                )
            await desk.run(svc.finish_heat, hid, at=at(day, 18, 11), actor="gw")
        else:
            await week_plain(week, [])

    # --- qualifying standings, hand-computed --------------------------------------------
    end = at(date(2026, 11, 17), 9)
    p02, p03 = entry_of[("P02", 5)], entry_of[("P03", 12)]
    table = await desk.run(svc.stage_standings, tid, Stage.QUALIFYING)
    assert len(table.lines) == 64  # 49 filler + 12 explicit + 3 P12 scores; X's two are out
    assert [(x.place, x.player_name, x.credits) for x in table.lines[:13]] == [
        (1, "Player 02", 5000),
        (1, "Player 03", 5000),
        (3, "Player 01", 3000),
        (4, "Player 01", 2800),
        (5, "Player 04", 2600),
        (6, "Player 04", 2500),
        (6, "Player 07", 2500),
        (6, "Player 08", 2500),
        (9, "Player 09", 2400),
        (10, "Player 05", 2200),
        (11, "Player 10", 1500),
        (12, "Player 11", 1200),
        (13, "Player 09", 359),
    ]
    last = table.lines[-1]
    assert (last.place, last.entry_id, last.player_name, last.credits, last.heat_number) == (
        64,
        entry_of[("P08", 1)],
        "Player 08",
        118,
        1,  # 100 + 10*1 + 8
    )
    assert 9000 not in {x.credits for x in table.lines}  # discarded by the restart (T20)
    await agrees_with_storage_ranking(desk, tid, Stage.QUALIFYING, end)
    assert [(t.place, t.credits, len(t.entry_ids)) for t in table.ties_to_draw] == [
        (1, 5000, 2),
        (6, 2500, 3),
    ]
    q = await desk.run(svc.qualifiers, tid)
    assert q.qualifying_over
    assert not q.qualifying.complete
    with pytest.raises(RuleViolation, match=r"^rule 19: a tie at the qualifying cut"):
        await desk.run(svc.seat_stage, tid, Stage.SEMI_FINAL, actor="director", at=end)

    # T19: the top tie by digital cards from a recorded seed
    seed, rounds = await desk.run(
        svc.digital_draw, tid, Stage.QUALIFYING, 5000, actor="director", at=end, seed=SEED_TOP
    )
    assert seed == SEED_TOP
    assert len(rounds) == 1
    context = f"tournament={tid}|stage=qualifying|credits=5000"
    expected = reference_card_round(SEED_TOP, context, 1, [p02, p03])
    assert {e: c.value for e, c in rounds[0].cards.items()} == expected
    assert expected[p02] != expected[p03]  # this seed settles it in one round
    winner, loser = (p02, p03) if expected[p02] > expected[p03] else (p03, p02)
    assert await desk.run(svc.verify_digital_draws, tid) == []

    # T19: the 6th-place tie by physical cards, re-drawn among the equal sevens
    p04b, p07, p08 = entry_of[("P04", 14)], entry_of[("P07", 16)], entry_of[("P08", 18)]
    with pytest.raises(RuleViolation, match=r"^rule 19: two entries cannot draw the same card"):
        await desk.run(
            svc.record_physical_draw,
            tid,
            Stage.QUALIFYING,
            2500,
            {
                p04b: DrawnCard(Card(7, CardSuit.HEARTS)),
                p07: DrawnCard(Card(7, CardSuit.HEARTS)),
                p08: DrawnCard(Card(7, CardSuit.CLUBS)),
            },
            actor="director",
            at=end,
        )
    await desk.run(
        svc.record_physical_draw,
        tid,
        Stage.QUALIFYING,
        2500,
        {
            p04b: DrawnCard(Card.parse("7H")),
            p07: DrawnCard(Card.parse("3S")),
            p08: DrawnCard(Card.parse("7C")),
        },
        actor="director",
        at=end,
    )
    await desk.run(
        svc.record_physical_draw,
        tid,
        Stage.QUALIFYING,
        2500,
        {
            p04b: DrawnCard(Card.parse("QH")),
            p08: DrawnCard(Card.parse("2D"), DrawnBy.PUBLIC, "Lerato (public)"),
        },
        actor="director",
        at=end,
    )
    table = await desk.run(svc.stage_standings, tid, Stage.QUALIFYING)
    assert [(x.place, x.entry_id) for x in table.lines[:8]] == [
        (1, winner),
        (2, loser),
        (3, entry_of[("P01", 3)]),
        (4, entry_of[("P01", -3)]),
        (5, entry_of[("P04", 8)]),
        (6, p04b),
        (7, p08),
        (8, p07),
    ]
    q = await desk.run(svc.qualifiers, tid)
    await agrees_with_storage_ranking(desk, tid, Stage.QUALIFYING, end)
    assert q.qualifying.complete
    assert q.qualifying.direct_finalists == (winner,)  # T13
    assert q.qualifying.semi_finalists == (  # T14
        loser,
        entry_of[("P01", 3)],
        entry_of[("P01", -3)],
        entry_of[("P04", 8)],
        p04b,
    )

    # --- semi-finals: seats by draw (14), proxy (16), malfunction re-seat (21) ----------
    draw = await desk.run(
        svc.seat_stage, tid, Stage.SEMI_FINAL, actor="director", at=end, seed=SEED_SEMI_SEATS
    )
    assert sorted(draw.seats) == sorted(q.qualifying.semi_finalists)
    slots = {(s.heat_id, s.seat_number) for s in draw.seats.values()}
    assert len(slots) == 5
    assert {h for h, _ in slots} <= {s1, s2}
    seat_of = {}
    for hid in (s1, s2):
        for s in await desk.run(svc.heat_seats, hid):
            seat_of[s.entry_id] = s
    p01_extra = seat_of[entry_of[("P01", -3)]]
    await desk.run(
        svc.add_proxy,
        p01_extra.seat_id,
        nominee_name="Nomsa Dlamini",
        nominee_id_number="9202020456081",
        nominee_date_of_birth=date(1992, 2, 2),
        received_at=at(date(2026, 11, 20), 15),
        actor="director",
    )
    with pytest.raises(RuleViolation, match=r"^rule 16: .*own best-placed seat"):
        await desk.run(
            svc.add_proxy,
            seat_of[entry_of[("P01", 3)]].seat_id,
            nominee_name="Sipho",
            nominee_id_number="9303030456082",
            nominee_date_of_birth=date(1993, 3, 3),
            received_at=at(date(2026, 11, 20), 15),
            actor="director",
        )
    with pytest.raises(RuleViolation, match=r"^rule 16: the proxy holds a seat in this stage"):
        await desk.run(
            svc.add_proxy,
            seat_of[p04b].seat_id,
            nominee_name="Player 01",
            nominee_id_number="8001015001081",
            nominee_date_of_birth=date(1980, 5, 17),
            received_at=at(date(2026, 11, 20), 15),
            actor="director",
        )

    semi_scores = {
        loser: 700,
        entry_of[("P01", 3)]: 950,
        entry_of[("P01", -3)]: 600,
        entry_of[("P04", 8)]: 800,
    }
    s1_seats = [
        s
        for s in seat_of.values()
        if s.seat_id in {x.seat_id for x in await desk.run(svc.heat_seats, s1)}
    ]
    start1 = at(date(2026, 11, 21), 10)
    forfeited = await desk.run(
        svc.begin_heat,
        s1,
        present_seats=[s.seat_number for s in s1_seats],
        at=start1,
        actor="director",
    )
    victim = next(s for s in s1_seats if s.entry_id != p04b)
    moved = await desk.run(
        svc.mark_seat_malfunctioned,
        victim.seat_id,
        at=start1 + timedelta(minutes=2),
        actor="tech",
        reason="bill validator fault",
    )
    assert moved.outcome is MalfunctionOutcome.RESEATED
    assert moved.new_heat_id == s2
    for s in s1_seats:
        if s.entry_id in semi_scores and s.seat_id != victim.seat_id:
            await desk.run(
                svc.record_machine_score,
                s.seat_id,
                score(semi_scores[s.entry_id]),
                at=start1 + timedelta(minutes=10),
            )
    await desk.run(svc.finish_heat, s1, at=start1 + timedelta(minutes=11), actor="gw")
    s2_seats = await desk.run(svc.heat_seats, s2)
    start2 = at(date(2026, 11, 21), 14)
    forfeited += await desk.run(
        svc.begin_heat,
        s2,
        present_seats=[s.seat_number for s in s2_seats],
        at=start2,
        actor="director",
    )
    for s in await desk.run(svc.heat_seats, s2):
        if s.status is SeatStatus.PRESENT:
            await desk.run(
                svc.record_machine_score,
                s.seat_id,
                score(semi_scores[s.entry_id]),
                at=start2 + timedelta(minutes=10),
            )
    await desk.run(svc.finish_heat, s2, at=start2 + timedelta(minutes=11), actor="gw")
    assert forfeited == [seat_of[p04b].seat_number]  # T16: extra seat without a proxy
    semi_seats = await desk.run(svc.heat_seats, s1) + await desk.run(svc.heat_seats, s2)
    proxied = next(s for s in semi_seats if s.entry_id == entry_of[("P01", -3)])
    assert proxied.played_by == "Nomsa Dlamini"
    assert proxied.credits == 600  # never pooled

    semi = await desk.run(svc.stage_standings, tid, Stage.SEMI_FINAL)
    await agrees_with_storage_ranking(desk, tid, Stage.SEMI_FINAL, at(date(2026, 11, 22), 9))
    assert [(x.place, x.entry_id, x.credits) for x in semi.lines] == [
        (1, entry_of[("P01", 3)], 950),
        (2, entry_of[("P04", 8)], 800),
        (3, loser, 700),
        (4, entry_of[("P01", -3)], 600),
    ]
    q = await desk.run(svc.qualifiers, tid)
    assert q.finalists == (winner, entry_of[("P01", 3)], entry_of[("P04", 8)])  # T17

    # --- final: seats by draw, prize tie drawn with a public stand-in (T19) --------
    await desk.run(
        svc.seat_stage,
        tid,
        Stage.FINAL,
        actor="director",
        at=start2 + timedelta(hours=3),
        seed=SEED_FINAL_SEATS,
    )
    final_seats = {s.entry_id: s.seat_number for s in await desk.run(svc.heat_seats, f1)}
    assert sorted(final_seats) == sorted(q.finalists)
    await desk.play(
        f1,
        {
            final_seats[entry_of[("P04", 8)]]: 1800,
            final_seats[winner]: 1500,
            final_seats[entry_of[("P01", 3)]]: 1500,
        },
        at(date(2026, 11, 22), 12),
    )
    q = await desk.run(svc.qualifiers, tid)
    assert q.winners.selected == (entry_of[("P04", 8)],)
    assert len(q.winners.pending) == 1
    await desk.run(
        svc.record_physical_draw,
        tid,
        Stage.FINAL,
        1500,
        {
            winner: DrawnCard(Card.parse("AS")),
            entry_of[("P01", 3)]: DrawnCard(
                Card.parse("5D"), DrawnBy.PUBLIC, "Thabo Mokoena (public)"
            ),
        },
        actor="director",
        at=at(date(2026, 11, 22), 13),
    )
    q = await desk.run(svc.qualifiers, tid)
    assert q.final_over
    assert q.winners.complete
    await agrees_with_storage_ranking(desk, tid, Stage.FINAL, at(date(2026, 11, 23), 9))
    assert q.winners.selected == (entry_of[("P04", 8)], entry_of[("P01", 3)], winner)

    # the two seat draws (semi-finals, final) and every digital card recompute from
    # their recorded seeds (T14, T19)
    assert await desk.run(verify_seat_draws) == []
    assert await desk.run(svc.verify_digital_draws, tid) == []

    # every change a person made is in an unbroken audit chain
    async with svc.unit_of_work(desk.maker) as session:
        result = await audit.verify(session)
    assert result.ok
    assert result.rows_checked > 250


async def agrees_with_storage_ranking(desk: Desk, tid: int, stage: Stage, at_: datetime) -> None:
    """The pure ranking and the SQL window-function ranking (``live_standings``) agree."""
    ours = await desk.run(svc.stage_standings, tid, stage, as_of=at_)

    async def theirs_fn(session: AsyncSession) -> Any:
        return await live_standings.standings(session, tid, stage, limit=10_000, as_of=at_)

    theirs = await desk.run(theirs_fn)
    assert [(r.entry_id, r.place, r.tied) for r in theirs.rows] == [
        (x.entry_id, x.place, x.tied) for x in ours.lines
    ]
    assert [(t.place, t.entry_ids, t.next_round) for t in theirs.ties] == [
        (t.place, t.entry_ids, t.next_round) for t in ours.standings.ties
    ]
    # The live top N (SQL) is the head of the full table, with the boundary tie whole.
    for limit in (1, 2, 5, 50):
        top = await desk.run(svc.top_standings, tid, stage, limit=limit, as_of=at_)
        assert top.lines == ours.lines[: len(top.lines)]
        assert top.cuts == ours.cuts
        if len(ours.lines) > limit:
            boundary = ours.lines[limit - 1].credits
            assert len(top.lines) >= limit
            assert all(x.credits == boundary for x in top.lines[limit:])


async def _entry(session: AsyncSession, entry_id: int) -> Entry:
    entry = await session.get(Entry, entry_id)
    assert entry is not None
    return entry
