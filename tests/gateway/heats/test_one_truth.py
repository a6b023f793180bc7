"""One truth per heat: the journal's steps carry their tournament effects, so a gateway
killed between any step and its tournament side loses no score, stores none twice, and
never plays a heat twice without a recorded T20 restart.

The "kill" is a tournament side that stops the runner dead at its n-th drain (a
BaseException, like the process ending there); a fresh recovery with the real bridge —
as a restarted gateway would run it — must then bring everything to rest.

Clauses: docs/rules.md#t20.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.floor.model import Floor as FloorModel
from gateway.floor.store import load_floor
from gateway.heats.recovery import recover_bank
from gateway.heats.runner import HeatRunner
from gateway.heats.scheduler import Scheduler
from gateway.heats.spool import JournalWriter
from gateway.machines.driver import LinkTimeout
from gateway.tournament.bridge import TournamentBridge
from storage import effects
from storage.journal import HeatRun, MachineState, RunState
from storage.tournament import Heat, HeatStatus, Score, SeatStatus

from ..conftest import MACHINES, Floor


class Killed(BaseException):
    """The gateway process ends here."""


class KillAtDrain:
    """A tournament side that drains for real until its ``n``-th call, which kills."""

    def __init__(self, bridge: TournamentBridge, n: int) -> None:
        self.bridge, self.n, self.calls = bridge, n, 0

    async def drain(self, run_id: int | None = None) -> int:
        self.calls += 1
        if self.calls == self.n:
            raise Killed()
        return await self.bridge.drain(run_id)


async def _assert_at_rest(floor: Floor, *, status: HeatStatus) -> Heat:
    """Every effect applied, every run settled, no machine locked or in tournament mode."""
    async with floor.sessions() as s:
        assert await effects.pending(s) == []
        runs = (await s.scalars(select(HeatRun).where(HeatRun.heat_id == floor.heat_id))).all()
        heat = await s.get(Heat, floor.heat_id)
    assert heat is not None
    assert heat.status is status
    assert all(run.settled for run in runs)
    assert all(not m.in_tournament and m.play_enabled() for m in floor.machines.values())
    return heat


async def _scores(floor: Floor) -> dict[int, int]:
    async with floor.sessions() as s:
        rows = await s.scalars(select(Score))
        return {row.seat_id: row.final_credits for row in rows}


async def _runs(floor: Floor) -> int:
    async with floor.sessions() as s:
        n = await s.scalar(
            select(func.count()).select_from(HeatRun).where(HeatRun.heat_id == floor.heat_id)
        )
        return int(n or 0)


def _record_end_credits(floor: Floor) -> dict[str, int]:
    """Each machine's own credit meter as it leaves tournament mode (its first exit)."""
    seen: dict[str, int] = {}
    for machine_id, driver in floor.drivers.items():
        original = driver.exit_tournament

        async def exit_tournament(m: str = machine_id, go: object = original) -> None:
            seen.setdefault(m, floor.machines[m].credits)
            await go()  # type: ignore[operator]

        driver.exit_tournament = exit_tournament  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize(
    "kill_at",
    [1, 2, 3],
    ids=["before-the-start-reaches-the-tournament", "before-the-scores-do", "before-the-close"],
)
async def test_a_kill_at_any_drain_loses_no_score_and_plays_no_heat_twice(
    floor: Floor, kill_at: int
) -> None:
    """T12, T20: the heat is played once; every seat's stored score is its machine's own
    end credits, stored exactly once; the heat closes with restarts 0."""
    bridge = TournamentBridge(floor.sessions)
    runner = HeatRunner(
        floor.writer, floor.links(), tournament=KillAtDrain(bridge, kill_at), poll_interval_s=0.05
    )
    end_credits = _record_end_credits(floor)
    with pytest.raises(Killed):
        await runner.run_new("A", MACHINES, credits=300, seconds=1, heat_id=floor.heat_id)
    for machine in floor.machines.values():  # players play on while the gateway is down
        if machine.in_tournament and machine.play_enabled():
            machine.spin(5)

    reports = await recover_bank(floor.writer, floor.links(), "A")  # a restarted gateway
    assert [r.decision for r in reports] in (["resume"], ["release"])

    heat = await _assert_at_rest(floor, status=HeatStatus.CLOSED)
    assert heat.restarts == 0
    assert await _runs(floor) == 1  # played once
    seats = await floor.seats()
    by_machine = {seat.machine_id: seat for seat in seats.values()}
    stored = await _scores(floor)
    assert len(stored) == len(MACHINES)
    for machine_id in MACHINES:
        assert stored[by_machine[machine_id].id] == end_credits[machine_id]
        assert by_machine[machine_id].status is SeatStatus.PLAYED


async def test_a_heat_that_never_started_on_the_floor_is_restarted_not_scored(
    floor: Floor,
) -> None:
    """T20: killed after RUNNING was journaled but before any unlock left, and found long
    past its end: no machine has proof that it played, so the heat is restarted (and the
    restart recorded), not closed with everyone's starting credits."""
    first = HeatRunner(floor.writer, floor.links(), stop_after=RunState.RUNNING)
    crashed = await first.run_new("A", MACHINES, credits=300, seconds=1, heat_id=floor.heat_id)
    assert all(not m.play_enabled() for m in floor.machines.values())  # locked, never unlocked
    long_ago = datetime.now(UTC) - timedelta(minutes=10)
    async with floor.sessions.begin() as s:  # the gateway stayed down past the end
        await s.execute(
            update(HeatRun)
            .where(HeatRun.id == crashed.run_id)
            .values(started_at=long_ago, ends_at=long_ago + timedelta(seconds=1))
        )

    reports = await recover_bank(floor.writer, floor.links(), "A")

    assert reports[0].outcome is not None
    assert reports[0].outcome.state is RunState.RESTARTED
    heat = await _assert_at_rest(floor, status=HeatStatus.RESTARTED)
    assert heat.restarts == 1
    assert await _scores(floor) == {}


async def test_the_same_outage_restarts_the_heat_while_arming_too(floor: Floor) -> None:
    """T20: two of three machines silent while arming is the tournament system failing —
    the decision a recovery makes for the same outage — not a heat for one machine.  The
    attempt never started, so the tournament has nothing to void: the heat stays due."""
    for machine_id in ("A02", "A03"):
        floor.drivers[machine_id].fault = "timeout"
    runner = HeatRunner(floor.writer, floor.links(), poll_interval_s=0.05)
    outcome = await runner.run_new("A", MACHINES, credits=300, seconds=1, heat_id=floor.heat_id)
    assert outcome.state is RunState.RESTARTED
    assert outcome.seats["A01"].state is MachineState.RELEASED  # the one armed is let go
    assert not floor.machines["A01"].in_tournament
    async with floor.sessions() as s:
        heat = await s.get(Heat, floor.heat_id)
        (restart,) = [
            e for e in await effects.history(s, outcome.run_id) if e.kind.value == "restarted"
        ]
    assert heat is not None
    assert heat.status is HeatStatus.SCHEDULED  # due again: the scheduler retries it
    assert restart.outcome is not None
    assert "before its start" in restart.outcome
    assert "2 of 3 machines silent while arming (T20)" in restart.details["reason"]
    assert await _scores(floor) == {}


async def test_a_release_that_fails_once_is_retried_and_nothing_restarts(
    floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine silent for a moment at the end comes back: it is released on a later
    round, the run settles, the heat stands."""
    monkeypatch.setattr("gateway.heats.floor_actions.RELEASE_PAUSE_S", 0.0)
    driver = floor.drivers["A02"]
    original = driver.exit_tournament
    failures = {"left": 1}

    async def flaky_exit() -> None:
        if failures["left"]:
            failures["left"] -= 1
            driver.fault = "timeout"
            try:
                await original()
            finally:
                driver.fault = None
        await original()

    monkeypatch.setattr(driver, "exit_tournament", flaky_exit)
    runner = HeatRunner(floor.writer, floor.links(), poll_interval_s=0.05)
    outcome = await runner.run_new("A", MACHINES, credits=300, seconds=1, heat_id=floor.heat_id)
    assert outcome.state is RunState.CLOSED
    assert failures["left"] == 0
    assert all(s.state is MachineState.RELEASED for s in outcome.seats.values())
    heat = await _assert_at_rest(floor, status=HeatStatus.CLOSED)
    assert heat.restarts == 0
    assert len(await _scores(floor)) == len(MACHINES)


@dataclass
class _Context:
    """What the scheduler needs of a running gateway (``HeatContext``)."""

    sessions: async_sessionmaker[AsyncSession]
    writer: JournalWriter
    floor: FloorModel

    async def reload_floor(self) -> FloorModel:
        self.floor = await load_floor(self.sessions)
        return self.floor


async def test_a_release_still_pending_at_the_end_is_finished_by_serve(
    floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine silent through every release round leaves the run unsettled, reported,
    nothing restarted; once it answers again the scheduler's periodic settling releases
    it and settles the run."""
    monkeypatch.setattr("gateway.heats.floor_actions.RELEASE_PAUSE_S", 0.0)
    driver = floor.drivers["A02"]
    original = driver.exit_tournament
    silent = {"on": True}

    async def exit_tournament() -> None:
        if silent["on"]:
            raise LinkTimeout("A02: no reply")
        await original()

    monkeypatch.setattr(driver, "exit_tournament", exit_tournament)
    links = floor.links()
    runner = HeatRunner(floor.writer, links, poll_interval_s=0.05)
    outcome = await runner.run_new("A", MACHINES, credits=300, seconds=1, heat_id=floor.heat_id)
    assert outcome.state is RunState.CLOSED
    assert "release pending" in outcome.seats["A02"].error
    assert floor.machines["A02"].in_tournament
    assert not (await floor.journal.run(outcome.run_id)).settled
    heat = await floor.heat()
    assert heat.status is HeatStatus.CLOSED  # the scores stand: nothing restarts
    assert heat.restarts == 0

    silent["on"] = False  # the machine answers again
    ctx = _Context(floor.sessions, floor.writer, await load_floor(floor.sessions))
    scheduler = Scheduler(ctx, {"A": links}, tick_s=0.05)
    await scheduler.tick()
    await asyncio.gather(*scheduler._settling.values())
    assert (await floor.journal.run(outcome.run_id)).settled
    assert not floor.machines["A02"].in_tournament
    assert floor.machines["A02"].play_enabled()
