"""T22 roll call and T20 postponement, through the heat runner, recovery and the
tournament hooks, against in-process machines (DirectDriver) on both database backends.

* T22: seats the floor attendant did not count present forfeit at the start, without
  refund, and their machines are never armed, unlocked or scored for the heat.
* T20: a tournament-system failure restarts the heat if resolved within the
  tournament's reasonable period, and postpones it after; the period is measured from
  when the journal shows the difficulties began (time passed in through the hooks' clock).

Clauses: docs/rules.md#t22, #t20.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from gateway.heats.recovery import recover_bank
from gateway.heats.runner import HeatRunner
from gateway.tournament import services as svc
from gateway.tournament.bridge import TournamentBridge, failure_began
from storage.audit import AuditEntry
from storage.journal import RunState
from storage.tournament import (
    Entry,
    EntryStatus,
    HeatStatus,
    Refund,
    Score,
    SeatStatus,
)

from ..conftest import MACHINES, PERIOD, Floor, clock


async def _mark(floor: Floor, seats: list[int], *, present: bool) -> None:
    async with svc.unit_of_work(floor.sessions) as s:
        await svc.mark_attendance(
            s, floor.heat_id, seats, present=present, at=datetime.now(UTC), actor="attendant:zee"
        )


# -- T22 -----------------------------------------------------------------------------


async def test_absent_seat_forfeits_and_its_machine_stays_out_of_the_heat(floor: Floor) -> None:
    """T22: seat 3 marked absent, seat 2 unmarked (a roll call was taken, default
    setting: forfeit), seat 1 present.  Only A01 is armed, unlocked and scored."""
    await _mark(floor, [1], present=True)
    await _mark(floor, [3], present=False)
    hooks = TournamentBridge(floor.sessions)
    seated = await hooks.seated_machines(floor.heat_id)
    assert seated == ["A01"]
    runner = HeatRunner(floor.writer, floor.links(seated), tournament=hooks, poll_interval_s=0.05)
    outcome = await runner.run_new("A", seated, credits=300, seconds=1, heat_id=floor.heat_id)
    assert outcome.state is RunState.CLOSED
    assert hooks.problems == []
    # The absent seats' machines were never touched: no lock, no tournament mode, no unlock.
    assert floor.drivers["A02"].calls == []
    assert floor.drivers["A03"].calls == []
    assert not floor.machines["A03"].in_tournament
    seats = await floor.seats()
    results = await floor.journal.results(outcome.run_id)
    assert [r.machine_id for r in results] == ["A01"]
    assert seats[1].status is SeatStatus.PLAYED
    assert seats[2].status is SeatStatus.FORFEITED
    assert seats[3].status is SeatStatus.FORFEITED
    async with floor.sessions() as s:
        scores = (await s.scalars(select(Score).where(Score.heat_id == floor.heat_id))).all()
        assert [x.seat_id for x in scores] == [seats[1].id]
        assert scores[0].final_credits == results[0].score
        for number in (2, 3):  # forfeited, no refund (T22)
            entry = await s.get(Entry, seats[number].entry_id)
            assert entry is not None
            assert entry.status is EntryStatus.FORFEITED
        assert await s.scalar(select(func.count()).select_from(Refund)) == 0
        begin = (await s.scalars(select(AuditEntry).where(AuditEntry.action == "heat.begin"))).one()
        assert json.loads(begin.details)["present"] == [1]
        assert json.loads(begin.details)["forfeited_absent"] == [2, 3]
    assert (await floor.heat()).status is HeatStatus.CLOSED


async def test_no_roll_call_means_everyone_present_by_default(floor: Floor) -> None:
    """Default setting (auto): a heat nobody called starts with every seat present."""
    hooks = TournamentBridge(floor.sessions)
    seated = await hooks.seated_machines(floor.heat_id)
    assert seated == MACHINES
    runner = HeatRunner(floor.writer, floor.links(seated), tournament=hooks, poll_interval_s=0.05)
    outcome = await runner.run_new("A", seated, credits=300, seconds=1, heat_id=floor.heat_id)
    assert outcome.state is RunState.CLOSED
    assert hooks.problems == []
    assert {s.status for s in (await floor.seats()).values()} == {SeatStatus.PLAYED}


async def test_a_heat_where_everyone_is_absent_is_closed_at_its_start(floor: Floor) -> None:
    """T22: every seat marked absent; at the start nobody plays, so every seat is
    forfeited without refund and the heat is closed instead of waiting for ever."""
    await _mark(floor, [1, 2, 3], present=False)
    hooks = TournamentBridge(floor.sessions)
    assert await hooks.seated_machines(floor.heat_id) == []
    assert await hooks.close_if_nobody_plays(floor.heat_id, datetime.now(UTC))
    assert hooks.problems == []
    assert {s.status for s in (await floor.seats()).values()} == {SeatStatus.FORFEITED}
    assert (await floor.heat()).status is HeatStatus.CLOSED
    async with floor.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(Refund)) == 0
    assert all(d.calls == [] for d in floor.drivers.values())


async def test_close_if_nobody_plays_leaves_a_heat_with_players_alone(floor: Floor) -> None:
    hooks = TournamentBridge(floor.sessions)
    assert not await hooks.close_if_nobody_plays(floor.heat_id, datetime.now(UTC))
    assert (await floor.heat()).status is HeatStatus.SCHEDULED


async def test_a_mark_changed_after_arming_follows_the_machines(floor: Floor) -> None:
    """The start follows what the runner armed: a seat marked absent once its machine is
    in the heat still plays (and the director is told), never half applied."""
    hooks = TournamentBridge(floor.sessions)
    seated = await hooks.seated_machines(floor.heat_id)
    await _mark(floor, [1, 2], present=True)  # seat 3 now unmarked in a called heat
    runner = HeatRunner(floor.writer, floor.links(seated), tournament=hooks, poll_interval_s=0.05)
    outcome = await runner.run_new("A", seated, credits=300, seconds=1, heat_id=floor.heat_id)
    assert outcome.state is RunState.CLOSED
    assert len(hooks.problems) == 1
    assert "T22" in hooks.problems[0]
    assert {s.status for s in (await floor.seats()).values()} == {SeatStatus.PLAYED}


async def test_a_machine_dead_at_arming_is_a_malfunction_not_an_absence(floor: Floor) -> None:
    """The player of a machine that fails while the bank is armed was present: T20 (a
    future seat, here none: a refund), not a T22 forfeit."""
    floor.drivers["A02"].fault = "down"
    hooks = TournamentBridge(floor.sessions)
    seated = await hooks.seated_machines(floor.heat_id)
    runner = HeatRunner(floor.writer, floor.links(seated), tournament=hooks, poll_interval_s=0.05)
    outcome = await runner.run_new("A", seated, credits=300, seconds=1, heat_id=floor.heat_id)
    assert outcome.state is RunState.CLOSED
    assert hooks.problems == []
    seats = await floor.seats()
    assert [seats[n].status for n in (1, 2, 3)] == [
        SeatStatus.PLAYED,
        SeatStatus.CANCELLED,  # T20: no future heat to move to, so refunded
        SeatStatus.PLAYED,
    ]
    async with floor.sessions() as s:
        refund = (await s.scalars(select(Refund))).one()
        assert refund.entry_id == seats[2].entry_id
        assert refund.rule == "20"
    assert (await floor.heat()).status is HeatStatus.CLOSED


# -- T20 -----------------------------------------------------------------------------


async def _crash_while_running(floor: Floor, hooks: TournamentBridge) -> int:
    """Run the heat until play is journaled, announce the start, then the gateway dies."""
    first = HeatRunner(floor.writer, floor.links(), stop_after=RunState.RUNNING)
    crashed = await first.run_new("A", MACHINES, credits=300, seconds=5, heat_id=floor.heat_id)
    await hooks.drain()  # the start (journaled with RUNNING) announced before the crash
    assert (await floor.heat()).status is HeatStatus.RUNNING
    return crashed.run_id


@pytest.mark.parametrize(
    ("back_after", "expected"),
    [
        (timedelta(minutes=5), HeatStatus.RESTARTED),  # resolved within the period
        (PERIOD + timedelta(minutes=1), HeatStatus.POSTPONED),  # not resolved in time
    ],
)
async def test_recovery_restarts_within_the_period_and_postpones_after(
    floor: Floor, back_after: timedelta, expected: HeatStatus
) -> None:
    """T20: the gateway comes back with most of the bank silent (a tournament-system
    failure).  Dated from the journal's last step, not from the moment it came back."""
    hooks = TournamentBridge(floor.sessions, clock=clock(back_after))
    run_id = await _crash_while_running(floor, hooks)
    for machine_id in ("A01", "A02"):
        floor.drivers[machine_id].fault = "timeout"
    reports = await recover_bank(floor.writer, floor.links(), "A", tournament=hooks)
    assert reports[0].decision == "restart"
    assert hooks.problems == []
    heat = await floor.heat()
    assert heat.status is expected
    assert heat.restarts == (1 if expected is HeatStatus.RESTARTED else 0)
    steps = await floor.journal.steps(run_id)
    running_at = next(at for state, at, _ in steps if state is RunState.RUNNING)
    seats = await floor.seats()
    async with floor.sessions() as s:
        assert await failure_began(s, floor.heat_id) == running_at
        action = "heat.restart" if expected is HeatStatus.RESTARTED else "heat.postpone"
        audited = (await s.scalars(select(AuditEntry).where(AuditEntry.action == action))).one()
        assert audited.actor == "gateway"
        assert "T20" in (audited.reason or "")
    # The players keep their seats either way (T20).
    assert {seat.status for seat in seats.values()} == {SeatStatus.PRESENT}


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [
        (timedelta(minutes=10), HeatStatus.RESTARTED),  # still within: try again later
        (PERIOD + timedelta(minutes=1), HeatStatus.POSTPONED),
    ],
)
async def test_failing_retries_count_from_the_first_failure(
    floor: Floor, retry_after: timedelta, expected: HeatStatus
) -> None:
    """T20: after a restart, every retry fails while arming (no machine answers).  The
    reasonable period runs from the first failure, so the retries cannot reset it."""
    restart_hooks = TournamentBridge(floor.sessions)
    first_run = await _crash_while_running(floor, restart_hooks)
    for machine_id in ("A01", "A02"):
        floor.drivers[machine_id].fault = "timeout"
    await recover_bank(floor.writer, floor.links(), "A", tournament=restart_hooks)
    assert (await floor.heat()).status is HeatStatus.RESTARTED
    running_at = next(
        at for state, at, _ in await floor.journal.steps(first_run) if state is RunState.RUNNING
    )
    for driver in floor.drivers.values():
        driver.fault = "down"
    hooks = TournamentBridge(floor.sessions, clock=clock(retry_after))
    retry = HeatRunner(floor.writer, floor.links(), tournament=hooks)
    outcome = await retry.run_new(
        "A", MACHINES, credits=300, seconds=5, heat_id=floor.heat_id, attempt=2
    )
    assert outcome.state is RunState.RESTARTED
    assert hooks.problems == []
    async with floor.sessions() as s:
        assert await failure_began(s, floor.heat_id) == running_at
    heat = await floor.heat()
    assert heat.status is expected
    assert heat.restarts == 1  # the failed retry never started: nothing more to void


async def test_a_heat_never_restarted_has_no_failure(floor: Floor) -> None:
    async with floor.sessions() as s:
        assert await failure_began(s, floor.heat_id) is None
