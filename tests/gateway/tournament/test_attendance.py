"""T22 roll call: the floor attendant marks seats before the start; at the start the
seats not counted present forfeit, without refund.  The tournament's ``unmarked_at_start``
setting says what an unmarked seat does (auto / forfeit / present).

Clauses: docs/rules.md#t22.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import func, select

from gateway.app.cli import main
from gateway.app.identity import host_actor
from gateway.tournament import services as svc
from gateway.tournament.rules.attendance import UnmarkedAtStart, counted_present
from gateway.tournament.rules.enums import EntryStatus, HeatStatus, SeatStatus
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import TournamentSettings
from storage.attendance import SeatAttendance
from storage.audit import AuditEntry
from storage.tournament import Entry, Refund, Seat

from .conftest import Desk, at
from .test_cli import _seed_floor

DAY = date(2026, 11, 2)

# -- the pure rule -----------------------------------------------------------------------


def test_counted_present_per_setting() -> None:
    seats = [1, 2, 3, 4]
    marks = {1: True, 2: False}
    assert counted_present(seats, marks, UnmarkedAtStart.AUTO) == {1}  # roll call taken
    assert counted_present(seats, {}, UnmarkedAtStart.AUTO) == {1, 2, 3, 4}  # none taken
    assert counted_present(seats, marks, UnmarkedAtStart.FORFEIT) == {1}
    assert counted_present(seats, {}, UnmarkedAtStart.FORFEIT) == set()
    assert counted_present(seats, marks, UnmarkedAtStart.PRESENT) == {1, 3, 4}
    # marks only for seats that left the heat: the heat was still called
    assert counted_present(seats, {}, UnmarkedAtStart.AUTO, roll_call_taken=True) == set()


@given(
    st.dictionaries(st.integers(1, 20), st.booleans(), max_size=20),
    st.sampled_from(list(UnmarkedAtStart)),
)
def test_a_mark_always_wins_over_the_setting(marks: dict[int, bool], policy: Any) -> None:
    """T22: whatever the setting, a seat marked absent forfeits and one marked present
    plays; the setting only decides the unmarked."""
    present = counted_present(range(1, 21), marks, policy)
    for seat, mark in marks.items():
        assert (seat in present) is mark
    unmarked = set(range(1, 21)) - set(marks)
    plays = policy is UnmarkedAtStart.PRESENT or (policy is UnmarkedAtStart.AUTO and not marks)
    assert (unmarked & present) == (unmarked if plays else set())


# -- services ----------------------------------------------------------------------------


async def _heat_of_four(desk: Desk, settings: TournamentSettings | None = None) -> int:
    await desk.tournament(settings)
    heat = await desk.heat(at(DAY, 18))
    for i in range(4):
        player = await desk.player(f"80010{i}5800089", f"Player {i + 1}")
        await desk.sell(player, at(DAY, 12))
        await desk.register(heat, player, at(DAY, 17))
    return heat


async def test_rule_22_roll_call_decides_the_start(desk: Desk) -> None:
    heat = await _heat_of_four(desk)
    call = await desk.run(svc.roll_call, heat)
    assert (call.taken, call.present, call.unmarked_at_start) == (
        False,
        [1, 2, 3, 4],
        UnmarkedAtStart.AUTO,
    )
    await desk.run(
        svc.mark_attendance, heat, [1, 2], present=True, at=at(DAY, 17, 50), actor="attendant"
    )
    call = await desk.run(
        svc.mark_attendance, heat, [2, 3], present=False, at=at(DAY, 17, 55), actor="attendant"
    )
    # the latest mark stands; seat 4 unmarked in a called heat forfeits (auto)
    assert [s.mark for s in call.seats] == [True, False, False, None]
    assert (call.present, call.absent) == ([1], [2, 3, 4])
    assert [s.machine_id for s in await desk.run(svc.playing_at_start, heat)] == ["A-01"]
    forfeited = await desk.run(svc.begin_heat, heat, at=at(DAY, 18), actor="gateway")
    assert forfeited == [2, 3, 4]
    async with desk.maker() as s:
        seats = (await s.scalars(select(Seat).where(Seat.heat_id == heat))).all()
        assert {x.seat_number: x.status for x in seats} == {
            1: SeatStatus.PRESENT,
            2: SeatStatus.FORFEITED,
            3: SeatStatus.FORFEITED,
            4: SeatStatus.FORFEITED,
        }
        entries = {x.seat_number: await s.get(Entry, x.entry_id) for x in seats}
        assert [e.status for n, e in sorted(entries.items()) if e is not None] == [
            EntryStatus.SEATED,
            EntryStatus.FORFEITED,
            EntryStatus.FORFEITED,
            EntryStatus.FORFEITED,
        ]
        assert await s.scalar(select(func.count()).select_from(Refund)) == 0  # no refund
        marks = (
            await s.scalars(select(AuditEntry).where(AuditEntry.action == "seat.attendance"))
        ).all()
        assert [json.loads(m.details)["seats"] for m in marks] == [[1, 2], [2, 3]]
        assert json.loads(marks[1].details)["before"] == {"2": True, "3": None}
        assert {m.actor for m in marks} == {"attendant"}
    # the roll call closes at the start; a wrong forfeit is the director's (T23)
    with pytest.raises(RuleViolation, match=r"rule 22: .* is running: the roll call"):
        await desk.run(
            svc.mark_attendance, heat, [2], present=True, at=at(DAY, 18, 1), actor="attendant"
        )


@pytest.mark.parametrize(
    ("setting", "marked_absent", "forfeits"),
    [
        (UnmarkedAtStart.AUTO, [], []),  # no roll call taken: everyone present
        (UnmarkedAtStart.FORFEIT, [], [1, 2, 3, 4]),  # strict: no mark, no seat
        (UnmarkedAtStart.PRESENT, [3], [3]),  # only an absent mark forfeits
        (UnmarkedAtStart.AUTO, [3], [1, 2, 3, 4]),  # called: the unmarked forfeit too
    ],
)
async def test_rule_22_unmarked_seats_follow_the_setting(
    desk: Desk, setting: UnmarkedAtStart, marked_absent: list[int], forfeits: list[int]
) -> None:
    heat = await _heat_of_four(desk, TournamentSettings(unmarked_at_start=setting))
    if marked_absent:
        await desk.run(
            svc.mark_attendance,
            heat,
            marked_absent,
            present=False,
            at=at(DAY, 17, 55),
            actor="attendant",
        )
    assert await desk.run(svc.begin_heat, heat, at=at(DAY, 18), actor="gateway") == forfeits


async def test_rule_22_bad_marks_change_nothing(desk: Desk) -> None:
    heat = await _heat_of_four(desk)
    with pytest.raises(RuleViolation, match=r"rule 22: seats \[7\] hold nobody"):
        await desk.run(
            svc.mark_attendance, heat, [1, 7], present=True, at=at(DAY, 17), actor="attendant"
        )
    with pytest.raises(RuleViolation, match="rule 22: name at least one seat"):
        await desk.run(svc.mark_attendance, heat, [], present=True, at=at(DAY, 17), actor="a")
    with pytest.raises(RuleViolation, match="actor"):
        await desk.run(svc.mark_attendance, heat, [1], present=True, at=at(DAY, 17), actor=" ")
    async with desk.maker() as s:
        assert await s.scalar(select(func.count()).select_from(SeatAttendance)) == 0
    assert (await desk.run(svc.roll_call, heat)).taken is False


async def test_rule_20_a_postponed_heat_calls_its_players_again(desk: Desk) -> None:
    heat = await _heat_of_four(desk)
    await desk.run(
        svc.mark_attendance, heat, [1, 2, 3, 4], present=True, at=at(DAY, 17), actor="attendant"
    )
    await desk.run(svc.begin_heat, heat, at=at(DAY, 18), actor="gateway")
    await desk.run(svc.postpone_heat, heat, now=at(DAY, 19), actor="director", reason="rule 20")
    call = await desk.run(svc.roll_call, heat)
    assert call.taken is False
    assert call.heat_status == HeatStatus.POSTPONED.value
    async with desk.maker() as s:
        entry = (
            await s.scalars(select(AuditEntry).where(AuditEntry.action == "heat.postpone"))
        ).one()
        assert json.loads(entry.details)["cleared_roll_call"] == dict.fromkeys("1234", True)


async def test_rule_22_setting_is_stored_and_changed_with_a_reason(desk: Desk) -> None:
    await desk.tournament()
    changed = await desk.run(
        svc.change_settings,
        desk.tournament_id,
        {"unmarked_at_start": "forfeit"},
        reason="the floor takes a roll call at every heat",
        actor="director",
    )
    assert changed.unmarked_at_start is UnmarkedAtStart.FORFEIT
    assert changed.to_json()["unmarked_at_start"] == "forfeit"
    with pytest.raises(RuleViolation, match="rule 22: settings: unmarked_at_start must be"):
        await desk.run(
            svc.change_settings,
            desk.tournament_id,
            {"unmarked_at_start": "maybe"},
            reason="typo",
            actor="director",
        )
    heat = await desk.heat(at(DAY, 18))
    assert (await desk.run(svc.roll_call, heat)).unmarked_at_start is UnmarkedAtStart.FORFEIT


# -- the attendant's commands ------------------------------------------------------------


def test_roll_call_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    db = ["--database", url]

    def ok(*argv: str) -> Any:
        capsys.readouterr()
        assert main([*argv[:2], *db, *argv[2:], "--json"]) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    def fails(*argv: str) -> str:
        capsys.readouterr()
        assert main([*argv[:2], *db, *argv[2:]]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0  # one line
        return err

    ok("tournament", "create", "Ridge")
    ok("heat", "schedule", "-t", "Ridge", "--start", "2026-11-02 18:00", "--bank", "A",
       "--now", "2026-11-01 09:00")  # fmt: skip
    for i, name in enumerate(("Ann", "Ben", "Cy")):
        ok("players", "add", "--id-number", f"80{i}1015009087", "--name", name,
           "--dob", "1980-01-01")  # fmt: skip
        ok("entries", "sell", f"80{i}1015009087", "-t", "Ridge", "--now", "2026-11-02 12:00")
        ok("heat", "register", "1", f"80{i}1015009087", "--now", "2026-11-02 17:00")
    call = ok("heat", "roll-call", "1")
    assert (call["roll_call_taken"], call["forfeit_at_start"]) == (False, [])
    call = ok("heat", "present", "1", "1", "3", "--now", "2026-11-02 17:50")
    assert (call["present"], call["forfeit_at_start"]) == ([1, 3], [2])
    call = ok("heat", "absent", "1", "3", "--now", "2026-11-02 17:55")
    assert [(s["seat_number"], s["mark"], s["marked_by"]) for s in call["seats"]] == [
        (1, True, host_actor()),
        (2, None, None),
        (3, False, host_actor()),
    ]
    assert call["seats"][0]["marked_at"] == "2026-11-02T17:50:00+02:00"  # venue time
    assert "rule 22: seats [9] hold nobody" in fails("heat", "present", "1", "9")
    assert "SEAT 'x'" in fails("heat", "absent", "1", "x")
    assert ok("heat", "roll-call", "1")["forfeit_at_start"] == [2, 3]  # nothing changed
    begun = ok("heat", "begin", "1", "--now", "2026-11-02 18:00")
    assert (begun["present"], begun["forfeited"]) == ([1], [2, 3])
    assert "the roll call is taken before the start" in fails("heat", "present", "1", "2")
    capsys.readouterr()
    assert main(["heat", "roll-call", "1", "--database", url]) == 0
    assert "roll call" in capsys.readouterr().out


async def test_rules_20_23_a_reinstated_seat_stays_in_at_a_restart(desk: Desk) -> None:
    """The director reinstates a seat the attendant marked absent by mistake (T23); when
    the heat is restarted (T20) the old "absent" mark must not forfeit it again."""
    heat = await _heat_of_four(desk)
    await desk.run(
        svc.mark_attendance, heat, [1, 3, 4], present=True, at=at(DAY, 17), actor="attendant"
    )
    await desk.run(svc.mark_attendance, heat, [2], present=False, at=at(DAY, 17), actor="attendant")
    assert await desk.run(svc.begin_heat, heat, at=at(DAY, 18), actor="gateway") == [2]
    seat_2 = next(s for s in await desk.run(svc.heat_seats, heat) if s.seat_number == 2)
    await desk.run(
        svc.reinstate_seat,
        seat_2.seat_id,
        reason="she was at her machine",
        actor="director",
        at=at(DAY, 18, 1),
    )
    assert (await desk.run(svc.roll_call, heat)).present == [1, 2, 3, 4]
    await desk.run(
        svc.restart_heat,
        heat,
        failed_at=at(DAY, 18, 5),
        now=at(DAY, 18, 10),
        actor="director",
        reason="rule 20: controller reboot",
    )
    assert await desk.run(svc.begin_heat, heat, at=at(DAY, 18, 12), actor="gateway") == []


@pytest.mark.parametrize("setting", list(UnmarkedAtStart))
async def test_rule_20_players_present_at_the_start_keep_their_seats_through_a_restart(
    desk: Desk, setting: UnmarkedAtStart
) -> None:
    """Whatever the setting, a restart (the casino's failure) does not forfeit the players
    counted present at the start; only a mark of absent made before the restart does."""
    heat = await _heat_of_four(desk, TournamentSettings(unmarked_at_start=setting))
    await desk.run(svc.begin_heat, heat, present_seats=[1, 2, 3], at=at(DAY, 18), actor="d")
    await desk.run(
        svc.restart_heat,
        heat,
        failed_at=at(DAY, 18, 5),
        now=at(DAY, 18, 10),
        actor="director",
        reason="rule 20: controller reboot",
    )
    await desk.run(
        svc.mark_attendance, heat, [3], present=False, at=at(DAY, 18, 11), actor="attendant"
    )
    assert await desk.run(svc.begin_heat, heat, at=at(DAY, 18, 12), actor="gateway") == [3]
    statuses = {s.seat_number: s.status for s in await desk.run(svc.heat_seats, heat)}
    assert statuses == {
        1: SeatStatus.PRESENT,
        2: SeatStatus.PRESENT,
        3: SeatStatus.FORFEITED,
        4: SeatStatus.FORFEITED,  # absent at the start: a restart does not bring it back
    }
