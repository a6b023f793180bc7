"""Tournament clauses as the sheet writes them: entries keep the terms they were sold with
(T5-T8), one heat at a time on a bank (T10-T11), the top qualifier out of the
semi-finals (T14).

Clauses: docs/rules.md#t5, #t10, #t14.
"""

from __future__ import annotations

from datetime import date, timedelta

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.ranking import ScoreLine, qualify_from_qualifying, rank
from gateway.tournament.services.setup import change_settings
from gateway.tournament.settings import TournamentSettings, Validity

from .conftest import Desk, at
from .test_services_rules import refused

DAY = date(2026, 11, 2)


async def test_t5_t7_an_entry_keeps_the_validity_it_was_sold_with(desk: Desk) -> None:
    """T5-T8: validity is part of what the player bought.  An entry sold in 48-hour mode
    (T5/T6) still plays the next day after the setting changes to same-day (T7/T8); one
    sold same-day does not gain the next day when the setting changes to 48 hours, and
    registration agrees with ``tournament expire`` in both cases."""
    tid = await desk.tournament(TournamentSettings(validity=Validity.HOURS_48))
    tomorrow = await desk.heat(at(DAY + timedelta(days=1), 18))
    ann = await desk.player("8001015009087", "Ann")
    ben = await desk.player("8101015009086", "Ben")
    (ann_entry,) = await desk.sell(ann, at(DAY, 12))
    await desk.run(
        change_settings, tid, {"validity": "same-day"}, reason="house change", actor="director"
    )
    (ben_entry,) = await desk.sell(ben, at(DAY, 12, 30))
    await desk.run(
        change_settings, tid, {"validity": "48h"}, reason="changed back", actor="director"
    )
    seat = await desk.register(tomorrow, ann, at(DAY + timedelta(days=1), 10))
    assert seat.entry_id == ann_entry  # sold under T5: valid the next day
    await refused(
        desk,
        r"^rule 7: entry bought 2026-11-02 12:30 is valid for heats starting before "
        r"2026-11-03 00:00 \(same-day, as sold\)",
        svc.register_for_heat,
        tomorrow,
        ben,
        actor="desk",
        now=at(DAY + timedelta(days=1), 10),
    )
    expired = await desk.run(
        svc.expire_entries, tid, now=at(DAY + timedelta(days=1), 0), actor="desk"
    )
    assert expired == [ben_entry]  # expiry reads the same stored terms


async def test_t10_t11_overlapping_heats_on_one_bank_are_refused(desk: Desk) -> None:
    """T10/T11: heats run at their published times, one at a time on a bank.  A second
    heat (or a move) whose time overlaps one already on the bank is refused, in one line
    naming the first; back-to-back heats and other banks are fine."""
    await desk.tournament()
    await desk.floor("B", 2)
    first = await desk.heat(at(DAY, 18))  # 18:00-18:10
    await refused(
        desk,
        r"^rule 10: bank A is taken from 2026-11-02 18:00 to 18:10 by qualifying heat 1 "
        r"of Ridge; heats on one bank cannot overlap$",
        svc.schedule_heat,
        desk.tournament_id,
        stage=Stage.QUALIFYING,
        starts_at=at(DAY, 18, 5),
        bank_name="A",
        duration_seconds=600,
        starting_credits=1000,
        actor="director",
        now=at(DAY, 9),
    )
    after = await desk.heat(at(DAY, 18, 10))  # starts as the first ends
    await desk.heat(at(DAY, 18, 5), bank="B")
    await refused(
        desk,
        r"^rule 10: bank A is taken .* by qualifying heat 2 of Ridge",
        svc.reschedule_heat,
        first,
        new_start=at(DAY, 18, 15),
        announced_via="MC",
        announced_at=at(DAY, 9),
        reason="bank service",
        actor="director",
        now=at(DAY, 9),
    )
    assert after > first


def test_t14_top_qualifier_other_entries_take_no_semi_final_seat_by_default() -> None:
    """T14: the semi-finalists are the top 49 "excluding the above-mentioned participant
    who obtained the highest credit score ... and holding the 1st position" — the
    participant, so all their entries.  By default (``top_player_excluded``) the top
    player's other entries are left out and the seats go further down; with the setting
    off, only the top entry is (the other reading)."""
    # Entry 1 (player 10) tops the ranking; entry 3 is player 10's too.
    table = rank(
        [
            ScoreLine(1, 10, 1000),
            ScoreLine(2, 20, 900),
            ScoreLine(3, 10, 800),
            ScoreLine(4, 30, 700),
            ScoreLine(5, 40, 600),
        ]
    )
    assert TournamentSettings().top_player_excluded
    person = qualify_from_qualifying(table, semi_final_places=3)
    assert person.direct_finalists == (1,)
    assert person.semi_finalists == (2, 4, 5)
    entry = qualify_from_qualifying(table, semi_final_places=3, top_player_excluded=False)
    assert entry.semi_finalists == (2, 3, 4)
    stored = TournamentSettings.from_json({"top_player_excluded": False})
    assert not stored.top_player_excluded
    assert stored.to_json()["top_player_excluded"] is False


async def test_t14_top_player_excluded_is_stored_and_drives_the_qualifiers(desk: Desk) -> None:
    """T14: the setting is stored with the tournament and read by the qualifier cut."""
    tid = await desk.tournament(TournamentSettings(semi_final_qualifiers=1))
    heat = await desk.heat(at(DAY, 18))
    ann = await desk.player("8001015009087", "Ann")
    ben = await desk.player("8101015009086", "Ben")
    await desk.sell(ann, at(DAY, 12), package="R200")
    await desk.sell(ben, at(DAY, 12))
    second = await desk.heat(at(DAY, 19))
    await desk.register(heat, ann, at(DAY, 13))
    await desk.register(heat, ben, at(DAY, 13))
    await desk.register(second, ann, at(DAY, 13))
    await desk.play(heat, {1: 1000, 2: 500}, at(DAY, 18))
    await desk.play(second, {1: 900}, at(DAY, 19))
    q = await desk.run(svc.qualifiers, tid)
    (ann_top,) = q.qualifying.direct_finalists
    assert len(q.qualifying.semi_finalists) == 1
    (ben_entry,) = q.qualifying.semi_finalists  # Ann's 900 is left out: Ben's 500 goes
    await desk.run(
        change_settings, tid, {"top_player_excluded": False}, reason="T14 reading", actor="director"
    )
    q = await desk.run(svc.qualifiers, tid)
    assert q.qualifying.semi_finalists != (ben_entry,)
    assert ann_top not in q.qualifying.semi_finalists
