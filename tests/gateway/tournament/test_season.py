"""A scripted 25-week season on each database backend (rules 1–23 end to end).

Qualifying: one heat every Monday at 18:00 (weeks 3 and 10 also at 20:00), 2 June–16 Nov
2026, bank A (6 machines).  Settings: top 1 straight to the final (rule 13), the next 5 to
the semi-finals (rule 14, configurable; 49 at The Ridge), 2 finalists from the semis
(rule 17), 3 prize places (rule 19).

Scores.  Two "filler" players play every week with ``100 + 10*week + n`` credits (n = the
player number: all below 400, all distinct); the explicit scores below decide every cut.
The expected standings are written out by hand from this script, not recomputed.

  week  heat    player  credits   event
   2    18:00   X        4000     X is self-excluded from week 15 (CSV import): out (rule 2)
   3    18:00   P01      3000     from an R200 package (rule 6); 2 of its 4 seats expire
   3    20:00   P01      2800     second seat of the package, second heat that day
   5    18:00   P02      5000     ties P03 for the top score: digital card draw (rule 19)
   6    18:00   P09      absent   seat forfeited, no refund (rule 22)
   7    18:00   X        3900
   8    18:00   P04      2600
  10    18:00   P05      —        machine malfunction: re-seated at 20:00, seat 2 (rule 20)
  10    20:00   P05      2200
  12    18:00   P03      5000
  14    18:00   P04      2500     three-way tie at 2500 straddles the semi cut (6th place)
  16    18:00   P07      2500       physical draw: P04 7H, P08 7C, P07 3S; then P04 QH,
  18    18:00   P08      2500       P08 2D drawn by a member of the public (P08 absent)
  18    18:00   P08      (9000)   first run: system failure, whole heat restarted (rule 20)
  20    19:00   P09      2400     moved from 18:00, announced a week before (rule 10)
  22    18:00   P10      1500
  25    18:00   P11      1200
  25    18:00   P06      —        machine malfunction in the last heat: refunded (rule 20)
  plus P12 (turns 18 on 10 June; refused before, rule 1): 250 (wk 4), 300 (wk 9,
  complimentary entry), 305 (wk 10, 20:00 — registered before P05 was moved there).

Semi-finals (bank F, 4 machines; heats S1 and S2, seats by seeded draw, rule 14): the top
draw's loser 700, P01's 3000-entry 950, P01's 2800-entry 600 (played by proxy Nomsa
Dlamini, rule 16), P04's 2600-entry 800; P04's 2500-entry has no proxy form: forfeited.
One S1 machine malfunctions: that player is moved to S2's first free seat (rule 21).
Final (rule 17: top 2 of the semis + the top qualifier): P04 1800, top winner 1500, P01
1500: the tie for 2nd is drawn, P01's card picked by a member of the public (rule 19).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.records.verify import verify as records_verify
from gateway.tournament import services as svc
from gateway.tournament.rules.cards import Card
from gateway.tournament.rules.enums import CardSuit, DrawnBy, EntryStatus, SeatStatus, Stage
from gateway.tournament.rules.incidents import MalfunctionOutcome
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services import live_standings
from gateway.tournament.services.draws import DrawnCard
from gateway.tournament.services.finals import verify_seat_draws
from gateway.tournament.settings import TournamentSettings
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


QUALIFYING_END = at(date(2026, 11, 17), 9)
SEMI_1_START = at(date(2026, 11, 21), 10)
SEMI_2_START = at(date(2026, 11, 21), 14)
FINAL_START = at(date(2026, 11, 22), 12)

# The weeks whose 18:00 heat is only explicit scores plus the fillers (no other event).
PLAIN_SCORES: dict[int, list[tuple[str, int]]] = {
    2: [("X", 4000)],
    4: [("P12", 250)],
    5: [("P02", 5000)],
    7: [("X", 3900)],
    8: [("P04", 2600)],
    9: [("P12", 300)],
    12: [("P03", 5000)],
    22: [("P10", 1500)],
}
COMPLIMENTARY = {9: "P12"}  # rule 5: paid by the casino


@dataclass
class Season:
    """The season's desk, people and schedule, and the entry behind each qualifying seat."""

    desk: Desk
    tid: int
    ids: dict[str, int]
    heat: dict[tuple[int, str], int]
    s1: int
    s2: int
    f1: int
    # (player, week) -> entry id of its 18:00 seat; (player, -week) of its 20:00 seat
    entry_of: dict[tuple[str, int], int] = field(default_factory=dict)

    async def seat_up(
        self, week: int, slot: str, who: str, *, package: str | None = None, **sale: Any
    ) -> int:
        day = monday(week)
        if package is None:
            (entry,) = await self.desk.sell(self.ids[who], at(day, 12), **sale)
        else:
            entry = (await self.desk.sell(self.ids[who], at(day, 12), package=package))[0]
        seat = await self.desk.register(self.heat[(week, slot)], self.ids[who], at(day, 17))
        self.entry_of[(who, week) if slot == "a" else (who, -week)] = seat.entry_id
        assert seat.entry_id == entry or package is not None
        return int(seat.entry_id)

    async def week_plain(self, week: int, explicit: list[tuple[str, int]], comp: str = "") -> None:
        for who, _ in explicit:
            await self.seat_up(week, "a", who, complimentary=who == comp)
        for who, _ in fillers(week):
            await self.seat_up(week, "a", who)
        seats = {
            s.holder_player_id: s.seat_number
            for s in await self.desk.run(svc.heat_seats, self.heat[(week, "a")])
        }
        credits = {seats[self.ids[who]]: c for who, c in explicit + fillers(week)}
        await self.desk.play(self.heat[(week, "a")], credits, at(monday(week), 18))

    async def seats_by_player(self, week: int) -> dict[int, Any]:
        """The 18:00 heat's seats by holder."""
        return {
            s.holder_player_id: s
            for s in await self.desk.run(svc.heat_seats, self.heat[(week, "a")])
        }


async def test_25_week_season(desk: Desk) -> None:
    season = await open_season(desk)
    await play_qualifying(season)
    await check_qualifying_standings(season)
    winner, loser = await draw_top_tie(season)
    semi_finalists = await draw_sixth_place_tie(season, winner, loser)
    seat_of = await seat_semi_finals_with_proxy(season, semi_finalists)
    await play_semi_finals(season, seat_of, loser)
    finalists = await check_semi_final_standings(season, winner, loser)
    await play_final(season, winner, finalists)
    await verify_draws_and_audit(season)


async def open_season(desk: Desk) -> Season:
    """Bank F, the tournament, the players (rule 1) and the whole schedule."""
    await desk.floor("F", 4)
    settings = TournamentSettings(semi_final_qualifiers=5, finalists_from_semis=2, prize_places=3)
    tid = await desk.tournament(settings, name="Ridge Reel Season 2026")
    setup = datetime(2026, 5, 1, 9, 0, tzinfo=at(monday(1), 0).tzinfo)

    # --- players (rule 1: P12 is 17 until 10 June 2026) ---------------------------------
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
    s1 = await desk.heat(SEMI_1_START, bank="F", stage=Stage.SEMI_FINAL, now=setup)
    s2 = await desk.heat(SEMI_2_START, bank="F", stage=Stage.SEMI_FINAL, now=setup)
    f1 = await desk.heat(FINAL_START, bank="F", stage=Stage.FINAL, now=setup)
    return Season(desk, tid, ids, heat, s1, s2, f1)


async def play_qualifying(season: Season) -> None:
    """Weeks 1-25 in order: the scripted events of the module docstring, else a plain heat."""
    for week in range(1, 26):
        special = SPECIAL_WEEKS.get(week)
        if special is not None:
            await special(season, monday(week))
        else:
            await season.week_plain(
                week, PLAIN_SCORES.get(week, []), comp=COMPLIMENTARY.get(week, "")
            )


async def week_3_package_two_heats(s: Season, day: date) -> None:
    """P12 turns 18; P01's R200 package: two seats played the same day, two lapse."""
    desk, ids, heat = s.desk, s.ids, s.heat
    ids["P12"] = await desk.player("0806105123089", "Player 12", date(2008, 6, 10), now=at(day, 9))
    # rule 6: the R200 package buys four seats; rule 16 allows one per heat.
    sale = await desk.sell(ids["P01"], at(day, 11), package="R200")
    assert len(sale) == 4
    first = await desk.register(heat[(3, "a")], ids["P01"], at(day, 17))
    s.entry_of[("P01", 3)] = first.entry_id
    assert first.entry_id == sale[0]  # the oldest unused entry is used first
    for who, _ in fillers(3):
        await s.seat_up(3, "a", who)
    with pytest.raises(RuleViolation, match=r"^rule 16: player already holds a seat"):
        await desk.register(heat[(3, "a")], ids["P01"], at(day, 17, 5))
    second = await desk.register(heat[(3, "b")], ids["P01"], at(day, 19))
    s.entry_of[("P01", -3)] = second.entry_id
    seats_a = await desk.run(svc.heat_seats, heat[(3, "a")])
    assert [x.seat_number for x in seats_a] == [1, 2, 3]  # rule 11: in sequence
    by_player = {x.holder_player_id: x.seat_number for x in seats_a}
    await desk.play(
        heat[(3, "a")],
        {by_player[ids["P01"]]: 3000, **{by_player[ids[w]]: c for w, c in fillers(3)}},
        at(day, 18),
    )
    await desk.play(heat[(3, "b")], {1: 2800}, at(day, 20))
    expired = await desk.run(
        svc.expire_entries, s.tid, now=at(day + timedelta(days=1), 0), actor="desk"
    )
    assert expired == list(sale[2:])  # rules 7/8: same-day seats lapse unused


async def week_6_absent_forfeits(s: Season, day: date) -> None:
    """P09 does not turn up: the seat is forfeited and cannot be refunded (rule 22)."""
    desk, ids = s.desk, s.ids
    entry = await s.seat_up(6, "a", "P09")
    for who, _ in fillers(6):
        await s.seat_up(6, "a", who)
    seats = {h: seat.seat_number for h, seat in (await s.seats_by_player(6)).items()}
    await desk.play(
        s.heat[(6, "a")],
        {seats[ids[w]]: c for w, c in fillers(6)},
        at(day, 18),
        absent=(seats[ids["P09"]],),
    )
    assert (await desk.run(_entry, entry)).status is EntryStatus.FORFEITED  # rule 22
    with pytest.raises(RuleViolation, match=r"^rule 22: entry .* is forfeited"):
        await desk.run(
            svc.refund_entry, entry, rule=23, reason="asked", actor="desk", now=at(day, 19)
        )


async def week_10_malfunction_reseats(s: Season, day: date) -> None:
    """P05's machine fails at 18:04: re-seated at 20:00 in seat 2 (rule 20)."""
    desk, ids, heat = s.desk, s.ids, s.heat
    await s.seat_up(10, "a", "P05")
    for who, _ in fillers(10):
        await s.seat_up(10, "a", who)
    await s.seat_up(10, "b", "P12")
    seats = await s.seats_by_player(10)
    await desk.run(
        svc.begin_heat,
        heat[(10, "a")],
        present_seats=[x.seat_number for x in seats.values()],
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


async def week_14_standings_so_far(s: Season, day: date) -> None:
    """A plain heat, then the qualifying table mid-season."""
    await s.week_plain(14, [("P04", 2500)])
    table = await s.desk.run(svc.stage_standings, s.tid, Stage.QUALIFYING, as_of=at(day, 20))
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
    await agrees_with_storage_ranking(s.desk, s.tid, Stage.QUALIFYING, at(day, 20))


async def week_15_exclusion_import(s: Season, day: date) -> None:
    """X is self-excluded by a CSV import and disqualified (rule 2)."""
    csv_text = (
        "kind,id_number,name,valid_from,valid_until,note\n"
        f"self-exclusion,7505055123080,Xavier Excluded,{day.isoformat()},,NRGP 4411\n"
        "staff,6001015800086,Floor Manager,2020-01-01,,HR list\n"
    )
    result = await s.desk.run(
        svc.import_exclusions,
        csv_text,
        source="nrgp-2026-09.csv",
        actor="compliance",
        now=at(day, 9),
    )
    assert (result.added, result.players_disqualified) == (2, [(s.tid, s.ids["X"])])
    await s.week_plain(15, [])


async def week_16_excluded_refused(s: Season, day: date) -> None:
    with pytest.raises(RuleViolation, match=r"^rule 2: 7505055123080 is on the self-excl"):
        await s.desk.sell(s.ids["X"], at(day, 12))
    await s.week_plain(16, [("P07", 2500)])


async def week_18_system_failure_restart(s: Season, day: date) -> None:
    """P08's 9000 is discarded: the whole heat is restarted after a system failure (rule 20)."""
    desk, ids = s.desk, s.ids
    for who in ["P08"] + [w for w, _ in fillers(18)]:
        await s.seat_up(18, "a", who)
    seats = await s.seats_by_player(18)
    hid = s.heat[(18, "a")]
    await desk.run(
        svc.begin_heat,
        hid,
        present_seats=[x.seat_number for x in seats.values()],
        at=at(day, 18),
        actor="director",
    )
    await desk.run(
        svc.record_machine_score, seats[ids["P08"]].seat_id, score(9000), at=at(day, 18, 10)
    )
    # the same report twice is a no-op; a different one is refused (rule 12)
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
        sid = next(x.seat_id for x in seats.values() if x.seat_number == number)
        await desk.run(svc.record_machine_score, sid, score(c), at=at(day, 18, 35))
    await desk.run(svc.finish_heat, hid, at=at(day, 18, 36), actor="gw")


async def week_19_announce_move(s: Season, day: date) -> None:
    """A plain heat; week 20's heat is moved to 19:00, announced a week before (rule 10)."""
    await s.week_plain(19, [])
    await s.desk.run(
        svc.reschedule_heat,
        s.heat[(20, "a")],
        new_start=at(monday(20), 19),
        announced_via="MC and POS",
        announced_at=at(day, 20),
        reason="bank service",
        actor="director",
        now=at(day, 20, 5),
    )


async def week_20_moved_heat(s: Season, day: date) -> None:
    """The moved heat cannot begin at its old time (rule 22); it is played at 19:00."""
    desk, ids = s.desk, s.ids
    for who in ["P09"] + [w for w, _ in fillers(20)]:
        await s.seat_up(20, "a", who)
    seats = {h: seat.seat_number for h, seat in (await s.seats_by_player(20)).items()}
    with pytest.raises(RuleViolation, match=r"^rule 22: .* advertised for"):
        await desk.run(
            svc.begin_heat,
            s.heat[(20, "a")],
            present_seats=[],
            at=at(day, 18),
            actor="director",
        )
    await desk.play(
        s.heat[(20, "a")],
        {seats[ids["P09"]]: 2400, **{seats[ids[w]]: c for w, c in fillers(20)}},
        at(day, 19),
    )


async def week_25_malfunction_refunds(s: Season, day: date) -> None:
    """P06's machine fails in the last heat: no later heat to re-seat in, refunded (rule 20)."""
    desk, ids = s.desk, s.ids
    for who in ["P11", "P06"] + [w for w, _ in fillers(25)]:
        await s.seat_up(25, "a", who)
    seats = await s.seats_by_player(25)
    hid = s.heat[(25, "a")]
    await desk.run(
        svc.begin_heat,
        hid,
        present_seats=[x.seat_number for x in seats.values()],
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


SPECIAL_WEEKS: dict[int, Callable[[Season, date], Awaitable[None]]] = {
    3: week_3_package_two_heats,
    6: week_6_absent_forfeits,
    10: week_10_malfunction_reseats,
    14: week_14_standings_so_far,
    15: week_15_exclusion_import,
    16: week_16_excluded_refused,
    18: week_18_system_failure_restart,
    19: week_19_announce_move,
    20: week_20_moved_heat,
    25: week_25_malfunction_refunds,
}


async def check_qualifying_standings(s: Season) -> None:
    """The qualifying table, hand-computed; the ties at the top and at the cut block the
    semi-final seating until drawn (rule 19)."""
    desk, tid, entry_of = s.desk, s.tid, s.entry_of
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
    assert 9000 not in {x.credits for x in table.lines}  # discarded by the restart (rule 20)
    await agrees_with_storage_ranking(desk, tid, Stage.QUALIFYING, QUALIFYING_END)
    assert [(t.place, t.credits, len(t.entry_ids)) for t in table.ties_to_draw] == [
        (1, 5000, 2),
        (6, 2500, 3),
    ]
    q = await desk.run(svc.qualifiers, tid)
    assert q.qualifying_over
    assert not q.qualifying.complete
    with pytest.raises(RuleViolation, match=r"^rule 19: a tie at the qualifying cut"):
        await desk.run(svc.seat_stage, tid, Stage.SEMI_FINAL, actor="director", at=QUALIFYING_END)


async def draw_top_tie(s: Season) -> tuple[int, int]:
    """Rule 19: the top tie by digital cards from a recorded seed; (winner, loser)."""
    desk, tid = s.desk, s.tid
    p02, p03 = s.entry_of[("P02", 5)], s.entry_of[("P03", 12)]
    seed, rounds = await desk.run(
        svc.digital_draw,
        tid,
        Stage.QUALIFYING,
        5000,
        actor="director",
        at=QUALIFYING_END,
        seed=SEED_TOP,
    )
    assert seed == SEED_TOP
    assert len(rounds) == 1
    context = f"tournament={tid}|stage=qualifying|credits=5000"
    expected = reference_card_round(SEED_TOP, context, 1, [p02, p03])
    assert {e: c.value for e, c in rounds[0].cards.items()} == expected
    assert expected[p02] != expected[p03]  # this seed settles it in one round
    winner, loser = (p02, p03) if expected[p02] > expected[p03] else (p03, p02)
    assert await desk.run(svc.verify_digital_draws, tid) == []
    return winner, loser


async def draw_sixth_place_tie(s: Season, winner: int, loser: int) -> tuple[int, ...]:
    """Rule 19: the 6th-place tie by physical cards, re-drawn among the equal sevens;
    returns the semi-finalists (rule 14)."""
    desk, tid, entry_of, end = s.desk, s.tid, s.entry_of, QUALIFYING_END
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
    assert q.qualifying.direct_finalists == (winner,)  # rule 13
    assert q.qualifying.semi_finalists == (  # rule 14
        loser,
        entry_of[("P01", 3)],
        entry_of[("P01", -3)],
        entry_of[("P04", 8)],
        p04b,
    )
    return tuple(q.qualifying.semi_finalists)


async def seat_semi_finals_with_proxy(s: Season, semi_finalists: tuple[int, ...]) -> dict[int, Any]:
    """Semi-final seats by seeded draw (rule 14) and the proxy forms (rule 16); returns
    each semi-finalist's seat."""
    desk, tid, entry_of = s.desk, s.tid, s.entry_of
    p04b = entry_of[("P04", 14)]
    draw = await desk.run(
        svc.seat_stage,
        tid,
        Stage.SEMI_FINAL,
        actor="director",
        at=QUALIFYING_END,
        seed=SEED_SEMI_SEATS,
    )
    assert sorted(draw.seats) == sorted(semi_finalists)
    slots = {(x.heat_id, x.seat_number) for x in draw.seats.values()}
    assert len(slots) == 5
    assert {h for h, _ in slots} <= {s.s1, s.s2}
    seat_of = {}
    for hid in (s.s1, s.s2):
        for x in await desk.run(svc.heat_seats, hid):
            seat_of[x.entry_id] = x
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
    return seat_of


async def play_semi_finals(s: Season, seat_of: dict[int, Any], loser: int) -> None:
    """S1 with one malfunction re-seated into S2 (rule 21), then S2; P04's extra seat has
    no proxy and is forfeited (rule 16)."""
    desk, s1, s2, entry_of = s.desk, s.s1, s.s2, s.entry_of
    p04b = entry_of[("P04", 14)]
    semi_scores = {
        loser: 700,
        entry_of[("P01", 3)]: 950,
        entry_of[("P01", -3)]: 600,
        entry_of[("P04", 8)]: 800,
    }
    s1_ids = {x.seat_id for x in await desk.run(svc.heat_seats, s1)}
    s1_seats = [x for x in seat_of.values() if x.seat_id in s1_ids]
    forfeited = await desk.run(
        svc.begin_heat,
        s1,
        present_seats=[x.seat_number for x in s1_seats],
        at=SEMI_1_START,
        actor="director",
    )
    victim = next(x for x in s1_seats if x.entry_id != p04b)
    moved = await desk.run(
        svc.mark_seat_malfunctioned,
        victim.seat_id,
        at=SEMI_1_START + timedelta(minutes=2),
        actor="tech",
        reason="bill validator fault",
    )
    assert moved.outcome is MalfunctionOutcome.RESEATED
    assert moved.new_heat_id == s2
    for x in s1_seats:
        if x.entry_id in semi_scores and x.seat_id != victim.seat_id:
            await desk.run(
                svc.record_machine_score,
                x.seat_id,
                score(semi_scores[x.entry_id]),
                at=SEMI_1_START + timedelta(minutes=10),
            )
    await desk.run(svc.finish_heat, s1, at=SEMI_1_START + timedelta(minutes=11), actor="gw")
    s2_seats = await desk.run(svc.heat_seats, s2)
    forfeited += await desk.run(
        svc.begin_heat,
        s2,
        present_seats=[x.seat_number for x in s2_seats],
        at=SEMI_2_START,
        actor="director",
    )
    for x in await desk.run(svc.heat_seats, s2):
        if x.status is SeatStatus.PRESENT:
            await desk.run(
                svc.record_machine_score,
                x.seat_id,
                score(semi_scores[x.entry_id]),
                at=SEMI_2_START + timedelta(minutes=10),
            )
    await desk.run(svc.finish_heat, s2, at=SEMI_2_START + timedelta(minutes=11), actor="gw")
    assert forfeited == [seat_of[p04b].seat_number]  # rule 16: extra seat without a proxy
    semi_seats = await desk.run(svc.heat_seats, s1) + await desk.run(svc.heat_seats, s2)
    proxied = next(x for x in semi_seats if x.entry_id == entry_of[("P01", -3)])
    assert proxied.played_by == "Nomsa Dlamini"
    assert proxied.credits == 600  # never pooled


async def check_semi_final_standings(s: Season, winner: int, loser: int) -> tuple[int, ...]:
    """The semi-final table and the finalists (rule 17); returns the finalists."""
    desk, tid, entry_of = s.desk, s.tid, s.entry_of
    semi = await desk.run(svc.stage_standings, tid, Stage.SEMI_FINAL)
    await agrees_with_storage_ranking(desk, tid, Stage.SEMI_FINAL, at(date(2026, 11, 22), 9))
    assert [(x.place, x.entry_id, x.credits) for x in semi.lines] == [
        (1, entry_of[("P01", 3)], 950),
        (2, entry_of[("P04", 8)], 800),
        (3, loser, 700),
        (4, entry_of[("P01", -3)], 600),
    ]
    q = await desk.run(svc.qualifiers, tid)
    assert q.finalists == (winner, entry_of[("P01", 3)], entry_of[("P04", 8)])  # rule 17
    return tuple(q.finalists)


async def play_final(s: Season, winner: int, finalists: tuple[int, ...]) -> None:
    """Final seats by draw; the prize tie drawn with a public stand-in (rule 19)."""
    desk, tid, entry_of, f1 = s.desk, s.tid, s.entry_of, s.f1
    await desk.run(
        svc.seat_stage,
        tid,
        Stage.FINAL,
        actor="director",
        at=SEMI_2_START + timedelta(hours=3),
        seed=SEED_FINAL_SEATS,
    )
    final_seats = {x.entry_id: x.seat_number for x in await desk.run(svc.heat_seats, f1)}
    assert sorted(final_seats) == sorted(finalists)
    await desk.play(
        f1,
        {
            final_seats[entry_of[("P04", 8)]]: 1800,
            final_seats[winner]: 1500,
            final_seats[entry_of[("P01", 3)]]: 1500,
        },
        FINAL_START,
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


async def verify_draws_and_audit(s: Season) -> None:
    """The two seat draws (semi-finals, final) and every digital card recompute from
    their recorded seeds (rules 14, 19); every change a person made is in an unbroken
    audit chain."""
    assert await s.desk.run(verify_seat_draws) == []
    assert await s.desk.run(svc.verify_digital_draws, s.tid) == []
    async with svc.unit_of_work(s.desk.maker) as session:
        result = await records_verify(session, check_signature=None)
    # The season records machine scores straight through the service, as the heat
    # bridge would, but runs no heat journal: the one thing the verifier must then say
    # is that those scores have no heat result to cross-check.  Chain, seals and the
    # standings at every cut are clean.
    unmatched = [f for f in result.findings if "no heat result" in f.problem]
    assert [f.line() for f in result.findings if f not in unmatched] == []
    assert unmatched
    assert {f.table for f in unmatched} == {"scores"}
    assert result.rows_checked > 250
    assert result.sealed_rows > 100


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
