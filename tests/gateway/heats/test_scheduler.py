"""Heats start by themselves from the schedule, and the tournament side is kept in step.

An emulated bank in another process over SAS/TCP; a tournament with players seated
through the tournament services; the scheduler starts the heat when it is due, the heat
clock stops it, and the seats' scores land in the tournament tables (T12).  A
director's order arrives through the database (``reelgate heat direct``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from gateway.app.context import GatewayContext, bank_links, close_links
from gateway.floor.store import set_bank_enabled
from gateway.heats.scheduler import Scheduler
from gateway.tournament.bridge import TournamentBridge
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, register_for_heat, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from storage.journal import DirectorCommand, RunState
from storage.tournament import Heat, HeatStatus, Score

from ..emulated import BankProcess

# Entries are sold on the wall clock moments before the heat: T5's 48 h entries, so a run at
# the venue's midnight still reaches its heat (a T7 same-day entry would not).
SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)


@pytest.fixture
def bank() -> Iterator[Any]:
    with BankProcess(3, players=True) as b:
        yield b


async def _setup(ctx: GatewayContext, starts_in_s: float, seconds: int) -> list[int]:
    now = datetime.now(UTC)
    heats = []
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(s, "T", SETTINGS, actor="test")
        for number, start in ((1, starts_in_s), (2, 3600.0)):
            heat = await schedule_heat(
                s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=start),
                bank_name="A", duration_seconds=seconds, starting_credits=300, actor="test",
                now=now, number=number,
            )  # fmt: skip
            heats.append(heat.id)
        for i in range(3):
            p = await add_player(
                s, id_number=f"80010{i}5800089", name=f"Player {i}",
                date_of_birth=date(1980, 1, 1 + i), actor="test", now=now,
            )  # fmt: skip
            await sell_entries(s, t.id, p.id, package_code="R200", cashier="test", now=now)
    for i in range(3):
        for heat_id in heats:
            async with unit_of_work(ctx.sessions) as s:
                # keyed at the set-up instant: the desk registered before the heat began
                # (rule 11), however long a loaded machine takes to get here
                await register_for_heat(s, heat_id, f"80010{i}5800089", actor="test", now=now)
    return heats


async def test_due_heat_starts_by_itself_and_scores_reach_the_tournament(
    bank: Any, tmp_path: Path
) -> None:
    floor = tmp_path / "floor.toml"
    floor.write_text(bank.floor_toml())
    ctx = await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}",
        floor_path=str(floor),
        spool=tmp_path / "spool",
        upgrade=True,
    )
    links: dict[str, Any] = {}
    try:
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        heat_1, heat_2 = await _setup(ctx, starts_in_s=1.0, seconds=3)
        links, _ = await bank_links(ctx.bank("A"))
        scheduler = Scheduler(ctx, {"A": links}, tick_s=0.2)
        stop = asyncio.Event()
        task = asyncio.create_task(scheduler.run(stop))

        async def until(cond: Any, within: float) -> None:
            for _ in range(int(within / 0.1)):  # bounded
                if cond():
                    return
                await asyncio.sleep(0.1)
            raise AssertionError("condition not reached in time")

        # Heat 1 is due in a second: nobody presses anything.
        await until(lambda: len(scheduler.finished) == 1, 30)
        first = scheduler.finished[0]
        assert first.state is RunState.CLOSED
        # Heat 2 is an hour away: a director cannot start it early (T22 advertised time).
        async with ctx.sessions.begin() as s:
            s.add(DirectorCommand(bank_name="A", heat_id=heat_2, command="start", reason="",
                                  actor="director", created_at=datetime.now(UTC)))  # fmt: skip
        await asyncio.sleep(0.6)
        assert "A" not in scheduler.live
        # It is brought forward (T10) and starts by itself; the director aborts it.
        async with ctx.sessions.begin() as s:
            h2 = await s.get(Heat, heat_2)
            assert h2 is not None
            h2.scheduled_start = datetime.now(UTC)
        await until(lambda: "A" in scheduler.live, 10)
        await asyncio.sleep(2.0)  # armed and running by now
        async with ctx.sessions.begin() as s:
            s.add(DirectorCommand(bank_name="A", heat_id=None, command="abort",
                                  reason="power dip on the floor", actor="director",
                                  created_at=datetime.now(UTC)))  # fmt: skip
        await until(lambda: len(scheduler.finished) == 2, 15)
        stop.set()
        await task
        assert scheduler.finished[1].state is RunState.ABORTED
        by_machine = {r.machine_id: r.score for r in await ctx.journal.results(first.run_id)}
        async with ctx.sessions() as s:
            h1 = await s.get(Heat, heat_1)
            assert h1 is not None
            assert h1.status is HeatStatus.CLOSED
            scores = (await s.scalars(select(Score).where(Score.heat_id == heat_1))).all()
            assert len(scores) == 3  # one per seat, from the machines (T12)
            assert sorted(x.final_credits for x in scores) == sorted(by_machine.values())
            orders = (await s.scalars(select(DirectorCommand).order_by(DirectorCommand.id))).all()
            assert orders[0].outcome is not None
            assert "rule 22" in orders[0].outcome
            assert orders[1].outcome == f"sent to heat {heat_2}"
    finally:
        await close_links(links)
        await ctx.close()
    for m in bank.ask("state")["machines"]:
        assert m["play_enabled"]
        assert not m["in_tournament"]


async def test_machine_failing_mid_heat_moves_its_player_to_a_future_heat(
    bank: Any, tmp_path: Path
) -> None:
    """T20: the malfunctioned machine's player gets the first available seat in a future
    similar heat; the others finish and are scored."""
    floor = tmp_path / "floor.toml"
    floor.write_text(bank.floor_toml())
    ctx = await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}",
        floor_path=str(floor),
        spool=tmp_path / "spool",
        upgrade=True,
    )
    links: dict[str, Any] = {}
    try:
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        heat_1, _ = await _setup(ctx, starts_in_s=0.5, seconds=3)
        links, _ = await bank_links(ctx.bank("A"))
        hooks = TournamentBridge(ctx.sessions)
        scheduler = Scheduler(ctx, {"A": links}, tournament=hooks, tick_s=0.2)
        stop = asyncio.Event()
        task = asyncio.create_task(scheduler.run(stop))
        for _ in range(200):  # bounded: until the heat is running
            run = await ctx.journal.latest_run("A")
            if run is not None and run.state is RunState.RUNNING:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.4)
        await asyncio.to_thread(bank.ask, "fault EMU-002 no_reply")
        for _ in range(300):
            if scheduler.finished:
                break
            await asyncio.sleep(0.1)
        stop.set()
        await task
        bank.ask("fault EMU-002 clear")
        out = scheduler.finished[0]
        assert out.state is RunState.CLOSED
        assert out.seats["EMU-002"].state.value == "malfunction"
        assert hooks.problems == []
        async with ctx.sessions() as s:
            scores = (await s.scalars(select(Score).where(Score.heat_id == heat_1))).all()
            assert len(scores) == 2  # the two machines that kept answering
            h1 = await s.get(Heat, heat_1)
            assert h1 is not None
            assert h1.status is HeatStatus.CLOSED
        from gateway.tournament.services.seating import heat_seats

        async with ctx.sessions() as s:
            moved = [x for x in await heat_seats(s, heat_1, include_inactive=True)
                     if x.machine_id == "EMU-002"]  # fmt: skip
            # T20: the player is re-seated in a future heat, or refunded when that is
            # impossible (here they already hold a seat in heat 2: T16)
            assert moved
            assert moved[0].status.value in ("moved", "cancelled")
    finally:
        await close_links(links)
        await ctx.close()


async def test_a_heat_paused_when_the_gateway_restarts_can_be_resumed(
    bank: Any, tmp_path: Path
) -> None:
    """A director pauses a heat; the gateway stops (a crash) and a new one starts: recovery
    leaves the heat paused (machines locked), and the director's resume reaches it."""
    floor = tmp_path / "floor.toml"
    floor.write_text(bank.floor_toml())
    ctx = await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}",
        floor_path=str(floor),
        spool=tmp_path / "spool",
        upgrade=True,
    )
    links: dict[str, Any] = {}

    async def until(cond: Any, within: float) -> None:
        for _ in range(int(within / 0.1)):  # bounded
            if await cond():
                return
            await asyncio.sleep(0.1)
        raise AssertionError("condition not reached in time")

    async def order(command: str) -> None:
        async with ctx.sessions.begin() as s:
            s.add(DirectorCommand(bank_name="A", heat_id=None, command=command, reason="",
                                  actor="director", created_at=datetime.now(UTC)))  # fmt: skip

    async def run_state() -> RunState | None:
        runs = await ctx.journal.unsettled_runs("A")
        return runs[0].state if runs else None

    try:
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        await _setup(ctx, starts_in_s=0.5, seconds=8)
        links, _ = await bank_links(ctx.bank("A"))
        first = Scheduler(ctx, {"A": links}, tick_s=0.2)
        stop = asyncio.Event()
        task = asyncio.create_task(first.run(stop))

        async def running() -> bool:
            return await run_state() is RunState.RUNNING

        async def paused() -> bool:
            return await run_state() is RunState.PAUSED

        await until(running, 30)
        await order("pause")
        await until(paused, 15)
        for live in first.live.values():  # the gateway dies with the heat paused
            live.task.cancel()
        task.cancel()
        await asyncio.gather(task, *(x.task for x in first.live.values()), return_exceptions=True)
        await close_links(links)

        links, _ = await bank_links(ctx.bank("A"))
        second = Scheduler(ctx, {"A": links}, tick_s=0.2)
        stop = asyncio.Event()
        task = asyncio.create_task(second.run(stop))

        async def adopted() -> bool:
            return "A" in second.live

        await until(adopted, 15)
        await order("resume")

        async def finished() -> bool:
            return len(second.finished) == 1

        await until(finished, 30)
        stop.set()
        await task
        assert second.finished[0].state is RunState.CLOSED
        async with ctx.sessions() as s:
            orders = (await s.scalars(select(DirectorCommand).order_by(DirectorCommand.id))).all()
        assert orders[-1].outcome is not None
        assert orders[-1].outcome.startswith("sent to heat")
    finally:
        await close_links(links)
        await ctx.close()
