"""Sit-and-go heats (house clauses F6, F7; docs/rules.md#f6): started by the scheduler
once their seats fill, never into another heat's time, at the latest start otherwise.
The scheduler's clock is injected: no test here waits for a wall-clock moment."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from gateway.app.context import GatewayContext
from gateway.floor.store import set_bank_enabled
from gateway.heats.scheduler import Scheduler
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services import (
    add_player,
    begin_heat,
    register_for_heat,
    sell_entries,
    unit_of_work,
)
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from storage.tournament import Heat, HeatStatus

T0 = datetime(2026, 12, 7, 16, 0, tzinfo=UTC)
FLOOR = """[[bank]]
name = "A"
machines = [
  { id = "A01", endpoint = "sas+tcp://127.0.0.1:1" },
  { id = "A02", endpoint = "sas+tcp://127.0.0.1:2" },
  { id = "A03", endpoint = "sas+tcp://127.0.0.1:3" },
]
"""


@dataclass
class Venue:
    ctx: GatewayContext
    tournament: int
    players: list[str]

    async def heat(self, starts: datetime, *, seats: int | None, seconds: int = 600) -> int:
        async with unit_of_work(self.ctx.sessions) as s:
            heat = await schedule_heat(
                s, self.tournament, stage=Stage.QUALIFYING, starts_at=starts, bank_name="A",
                duration_seconds=seconds, starting_credits=300, actor="director", now=T0,
                sit_and_go_seats=seats,
            )  # fmt: skip
            return int(heat.id)

    async def register(self, heat: int, *players: str) -> None:
        for player in players:
            async with unit_of_work(self.ctx.sessions) as s:
                await register_for_heat(s, heat, player, actor="desk", now=T0)


@pytest.fixture
async def venue(tmp_path: Path) -> AsyncIterator[Venue]:
    floor = tmp_path / "floor.toml"
    floor.write_text(FLOOR)
    ctx = await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}",
        floor_path=str(floor),
        spool=tmp_path / "spool",
        upgrade=True,
    )
    await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
    ids = [f"80010{i}5800089" for i in range(3)]
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(
            s, "T", TournamentSettings(validity=EntryValidity.HOURS_48), actor="director"
        )
        for i, id_number in enumerate(ids):
            p = await add_player(
                s, id_number=id_number, name=f"Player {i}", date_of_birth=date(1980, 1, 1 + i),
                actor="desk", now=T0,
            )  # fmt: skip
            await sell_entries(s, t.id, p.id, package_code="R200", cashier="desk", now=T0)
    try:
        yield Venue(ctx, int(t.id), ids)
    finally:
        await ctx.close()


def _scheduler(ctx: GatewayContext, now: datetime) -> Scheduler:
    return Scheduler(ctx, {}, now=lambda: now)


async def test_f6_a_sit_and_go_heat_needs_seats_that_fit_on_its_bank(venue: Venue) -> None:
    for seats in (0, 4):
        with pytest.raises(RuleViolation, match="rule F6: sit_and_go_seats must be 1 to 3"):
            await venue.heat(T0 + timedelta(hours=2), seats=seats)


async def test_f7_a_sit_and_go_heat_starts_once_its_seats_fill(venue: Venue) -> None:
    now = T0 + timedelta(minutes=5)
    heat = await venue.heat(T0 + timedelta(hours=2), seats=3)  # the latest start
    scheduler = _scheduler(venue.ctx, now)
    await venue.register(heat, *venue.players[:2])
    assert await scheduler._sit_and_go("A", now) is None  # 2 of 3 seats
    async with unit_of_work(venue.ctx.sessions) as s:  # the tournament refuses it too
        with pytest.raises(RuleViolation, match=r"rule F7: .* has 2 of its 3 seats filled"):
            await begin_heat(s, heat, at=now, actor="gateway")
    await venue.register(heat, venue.players[2])
    due = await scheduler._sit_and_go("A", now)
    assert due is not None
    assert due.id == heat
    assert heat in scheduler._early  # started now, not at a synchronised instant
    async with unit_of_work(venue.ctx.sessions) as s:  # T22a: its actual start, early
        assert await begin_heat(s, heat, at=now, actor="gateway") == []


async def test_f7_a_sit_and_go_heat_never_starts_into_another_heat_s_time(venue: Venue) -> None:
    now = T0 + timedelta(minutes=5)
    timed = await venue.heat(T0 + timedelta(minutes=20), seats=None, seconds=300)
    heat = await venue.heat(T0 + timedelta(hours=2), seats=1, seconds=1200)
    await venue.register(heat, venue.players[0])
    # Now + 20 min would run past the timed heat's start at 16:20: it waits.
    assert await _scheduler(venue.ctx, now)._sit_and_go("A", now) is None
    # Once the timed heat is over (closed), the bank is free for it.
    later = T0 + timedelta(minutes=30)
    async with unit_of_work(venue.ctx.sessions) as s:
        row = await s.get(Heat, timed)
        assert row is not None
        row.status = HeatStatus.CLOSED
    due = await _scheduler(venue.ctx, later)._sit_and_go("A", later)
    assert due is not None
    assert due.id == heat


async def test_f7_at_its_latest_start_a_sit_and_go_heat_is_due_as_any_heat(venue: Venue) -> None:
    latest = T0 + timedelta(hours=2)
    heat = await venue.heat(latest, seats=3)
    await venue.register(heat, venue.players[0])
    scheduler = _scheduler(venue.ctx, latest)
    assert await scheduler._sit_and_go("A", latest) is None  # no longer before its start
    due = await scheduler._due("A", latest)
    assert due is not None
    assert due.id == heat
