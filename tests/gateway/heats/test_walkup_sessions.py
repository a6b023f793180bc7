"""Walk-up sessions on a real (emulated) bank, through a gateway kill (docs/rules.md#w6, #w7).

Two players put their cards in two machines of a walk-up bank and confirm by putting the
card in again (the card desk, W5); each session is a one-seat heat the scheduler runs on
its own machine, side by side (W6): one machine native 8C, one host-timed.  A card pulled
mid-session ends nothing (W7).  The gateway is then killed mid-session (its tasks
cancelled, the journal left where it was, as ``test_scheduler.py`` does for a paused heat)
and a new one starts: recovery resumes both sessions at once from the journal, and each
entry ends with its one score in the qualifying standings (W8) -- nothing lost, nothing
played twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from gateway.app.context import GatewayContext, bank_links, close_links
from gateway.cards import CardDesk
from gateway.floor.store import set_bank_enabled
from gateway.heats.scheduler import Scheduler
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.rules.walkup import CONFIRM, OFFER
from gateway.tournament.services import add_player, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament
from gateway.tournament.services.standings import stage_standings
from gateway.tournament.services.walkup import WalkupDecision, list_sessions, set_window
from gateway.tournament.settings import TournamentSettings
from protocols.mqtt import codec
from protocols.mqtt.client import MqttSettings
from protocols.mqtt.codec import CardAction, ReaderKind
from storage.journal import RunState
from storage.tournament import Entry, EntryStatus, Heat, HeatStatus, Score

from ..emulated import BankProcess

SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)
ZONE = "Africa/Johannesburg"
SECONDS = 8


@pytest.fixture
def bank() -> Iterator[Any]:
    with BankProcess(2, host_timed=1, players=True) as b:
        yield b


async def until(cond: Any, within: float) -> None:
    for _ in range(int(within / 0.1)):  # bounded
        if await cond():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("condition not reached in time")


async def test_w6_w7_walkup_sessions_run_side_by_side_and_survive_a_gateway_kill(
    bank: Any, tmp_path: Path
) -> None:
    floor = tmp_path / "floor.toml"
    floor.write_text(bank.floor_toml())
    machines = [m["machine"] for m in bank.machines]
    ctx = await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}",
        floor_path=str(floor),
        spool=tmp_path / "spool",
        upgrade=True,
    )
    links: dict[str, Any] = {}
    seq = iter(range(1, 100))
    walkups: list[WalkupDecision] = []
    desk = CardDesk(
        ctx.sessions, MqttSettings.from_url("mqtt://127.0.0.1:1"), "test",
        venue_zone=ZONE, on_walkup=walkups.append,
    )  # fmt: skip

    async def card(machine: str, number: str, action: CardAction = CardAction.CARD_IN) -> None:
        await desk.decide(
            codec.Card(next(seq), datetime.now(UTC), action, machine, number, ReaderKind.EMULATED)
        )

    try:
        now = datetime.now(UTC)
        local = now.astimezone(ZoneInfo(ZONE))
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        async with unit_of_work(ctx.sessions) as s:
            t = await create_tournament(s, "Walk-up night", SETTINGS, actor="director")
            for i in range(2):
                p = await add_player(
                    s, id_number=f"80010{i}5800089", name=f"Player {i}",
                    date_of_birth=date(1980, 1, 1 + i), actor="desk", now=now,
                    card_number=f"CARD{i}",
                )  # fmt: skip
                await sell_entries(s, t.id, p.id, package_code="single", cashier="c", now=now)
            await set_window(
                s, t.id, "A", opens=f"{local - timedelta(hours=1):%H:%M}",
                closes=f"{local + timedelta(hours=3):%H:%M}", seconds=SECONDS, credits=400,
                confirm_seconds=60, enabled=True, actor="director", reason="walk-up night",
                at=now,
            )  # fmt: skip
        links, _ = await bank_links(ctx.bank("A"))
        first = Scheduler(ctx, {"A": links}, tick_s=0.2)
        stop = asyncio.Event()
        task = asyncio.create_task(first.run(stop))
        for i, machine in enumerate(machines):  # card in, then in again: the confirm (W5)
            await card(machine, f"CARD{i}")
            await card(machine, f"CARD{i}", CardAction.CARD_OUT)
            await card(machine, f"CARD{i}")
        assert [w.verdict.kind for w in walkups] == [OFFER, CONFIRM, OFFER, CONFIRM]

        async def both_running() -> bool:
            runs = await ctx.journal.unsettled_runs("A")
            return len(runs) == 2 and all(r.state is RunState.RUNNING for r in runs)

        await until(both_running, 30)
        assert sorted(first.walkups) == sorted(machines)  # side by side, one per machine
        await card(machines[0], "CARD0", CardAction.CARD_OUT)  # pulled mid-session (W7)
        await asyncio.sleep(1.0)
        assert sorted(first.walkups) == sorted(machines)  # ...ends nothing
        # The gateway is killed mid-session: nothing settles, the journal says where.
        for live in list(first.all_live()):
            live.task.cancel()
        task.cancel()
        await asyncio.gather(task, *(x.task for x in first.all_live()), return_exceptions=True)
        await close_links(links)
        assert len(await ctx.journal.unsettled_runs("A")) == 2

        links, _ = await bank_links(ctx.bank("A"))
        second = Scheduler(ctx, {"A": links}, tick_s=0.2)
        stop = asyncio.Event()
        task = asyncio.create_task(second.run(stop))

        async def settled() -> bool:
            return not await ctx.journal.unsettled_runs("A")

        await until(settled, 60)
        stop.set()
        await task
        async with ctx.sessions() as s:
            scores = (await s.scalars(select(Score))).all()
            assert len(scores) == 2  # one per entry, none twice
            entries = (await s.scalars(select(Entry))).all()
            assert {e.status for e in entries} == {EntryStatus.PLAYED}
            heats = (await s.scalars(select(Heat))).all()
            # resumed from the journal, not restarted (T20): each played once
            assert [(h.status, h.restarts) for h in heats] == [(HeatStatus.CLOSED, 0)] * 2
            standings = await stage_standings(s, t.id, Stage.QUALIFYING)
            sessions = await list_sessions(s)
        assert sorted(x.entry_id for x in standings.lines) == sorted(e.id for e in entries)
        assert {r.heat_status for r in sessions if r.heat_id} == {HeatStatus.CLOSED.value}
        assert all(not r.active for r in sessions)
    finally:
        await close_links(links)
        await ctx.close()
    for m in bank.ask("state")["machines"]:
        assert m["play_enabled"]
        assert not m["in_tournament"]
