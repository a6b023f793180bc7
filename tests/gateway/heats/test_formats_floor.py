"""The heat formats over the TCP emulated floor (SAS over TCP, an emulated bank in its
own process whose players spin by themselves): a sit-and-go heat started by the
scheduler once its seats fill and played games-limited (F2, F4, F6, F7), and a
credit-limited heat whose machines end as their credits run out (F3, F4).  Each heat
is 10 minutes long on paper: the format, not the time, ends it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from gateway.app.context import GatewayContext, bank_links, close_links
from gateway.floor.store import set_bank_enabled
from gateway.heats.scheduler import Scheduler
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, register_for_heat, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from storage.journal import RunState
from storage.tournament import Heat, HeatStatus, Score

from ..emulated import BankProcess

HEAT_SECONDS = 600


async def _until(cond: Callable[[], bool], within: float) -> None:
    for _ in range(int(within / 0.1)):  # bounded
        if cond():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("condition not reached in time")


async def _night(
    tmp_path: Path, bank: Any, settings: dict[str, Any], *, starts_in: timedelta,
    sit_and_go: int | None, credits: int,
) -> tuple[GatewayContext, int]:  # fmt: skip
    floor = tmp_path / "floor.toml"
    floor.write_text(bank.floor_toml())
    ctx = await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}",
        floor_path=str(floor),
        spool=tmp_path / "spool",
        upgrade=True,
    )
    await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
    now = datetime.now(UTC)
    chosen = TournamentSettings.from_json({"validity": EntryValidity.HOURS_48.value, **settings})
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(s, "T", chosen, actor="director")
        heat = await schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now + starts_in, bank_name="A",
            duration_seconds=HEAT_SECONDS, starting_credits=credits, actor="director",
            now=now, sit_and_go_seats=sit_and_go,
        )  # fmt: skip
        for i in range(3):
            p = await add_player(
                s, id_number=f"80010{i}5800089", name=f"Player {i}",
                date_of_birth=date(1980, 1, 1 + i), actor="desk", now=now,
            )  # fmt: skip
            await sell_entries(s, t.id, p.id, package_code="single", cashier="desk", now=now)
    return ctx, int(heat.id)


async def _register_all(ctx: GatewayContext, heat: int) -> None:
    for i in range(3):
        async with unit_of_work(ctx.sessions) as s:
            await register_for_heat(
                s, heat, f"80010{i}5800089", actor="desk", now=datetime.now(UTC)
            )


async def _scores(ctx: GatewayContext, heat: int) -> list[Score]:
    async with ctx.sessions() as s:
        return list((await s.scalars(select(Score).where(Score.heat_id == heat))).all())


async def test_f2_f6_f7_a_sit_and_go_games_limited_heat_on_the_tcp_floor(tmp_path: Path) -> None:
    with BankProcess(3, players=True, pace=0.6) as bank:
        ctx, heat = await _night(
            tmp_path, bank, {"format": "games-limited", "games_per_seat": 3},
            starts_in=timedelta(hours=1), sit_and_go=3, credits=300,
        )  # fmt: skip
        links: dict[str, Any] = {}
        try:
            links, _ = await bank_links(ctx.bank("A"))
            scheduler = Scheduler(ctx, {"A": links}, tick_s=0.2)
            stop = asyncio.Event()
            task = asyncio.create_task(scheduler.run(stop))
            await asyncio.sleep(0.6)  # a few ticks: nobody seated, nothing starts (F7)
            assert "A" not in scheduler.live
            await _register_all(ctx, heat)  # the seats fill: the scheduler starts it
            await _until(lambda: len(scheduler.finished) == 1, 60)
            stop.set()
            await task
            outcome = scheduler.finished[0]
            assert outcome.state is RunState.CLOSED
            results = await ctx.journal.results(outcome.run_id)
            assert len(results) == 3
            for r in results:  # F2: the games on the tournament meters, one more at most
                assert 3 <= r.games_played <= 4
            steps = await ctx.journal.steps(outcome.run_id)
            assert [n for s, _, n in steps if s is RunState.ENDING] == [
                "rule F4: every machine done (games-limited:3)"
            ]
            async with ctx.sessions() as s:
                row = await s.get(Heat, heat)
                assert row is not None
                assert row.status is HeatStatus.CLOSED
                assert row.started_at is not None
                assert row.started_at < row.scheduled_start  # F7: before its latest start
            assert len(await _scores(ctx, heat)) == 3  # T12: one per seat
        finally:
            await close_links(links)
            await ctx.close()
        for m in bank.ask("state")["machines"]:
            assert m["play_enabled"]
            assert not m["in_tournament"]


async def test_f3_a_credit_limited_heat_on_the_tcp_floor(tmp_path: Path) -> None:
    with BankProcess(3, players=True, pace=0.2) as bank:
        ctx, heat = await _night(
            tmp_path, bank, {"format": "credit-limited"},
            starts_in=timedelta(seconds=1.5), sit_and_go=None, credits=2,
        )  # fmt: skip
        links: dict[str, Any] = {}
        try:
            await _register_all(ctx, heat)
            links, _ = await bank_links(ctx.bank("A"))
            scheduler = Scheduler(ctx, {"A": links}, tick_s=0.2)
            stop = asyncio.Event()
            task = asyncio.create_task(scheduler.run(stop))
            await _until(lambda: len(scheduler.finished) == 1, 120)
            stop.set()
            await task
            outcome = scheduler.finished[0]
            assert outcome.state is RunState.CLOSED
            steps = await ctx.journal.steps(outcome.run_id)
            assert [n for s, _, n in steps if s is RunState.ENDING] == [
                "rule F4: every machine done (credit-limited:1)"
            ]
            scores = await _scores(ctx, heat)
            assert len(scores) == 3
            assert {x.final_credits for x in scores} == {0}  # F3: spent to the last credit
        finally:
            await close_links(links)
            await ctx.close()
