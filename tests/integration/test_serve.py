"""``reelgate serve`` as a real process: a scheduled heat starts by itself; the gateway is
SIGKILLed mid-heat; started again, it resumes from the journal and the heat closes with
every seat scored once and every machine back in normal play."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from gateway.app.context import GatewayContext
from gateway.floor.store import set_bank_enabled
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, register_for_heat, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from storage.journal import RunState
from storage.tournament import Heat, HeatStatus, Score

from ..gateway.emulated import ROOT, BankProcess

# Entries are sold on the wall clock moments before the heat: T5's 48 h entries, so a run at
# the venue's midnight still reaches its heat (a T7 same-day entry would not).
SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)


async def _prepare(db: str, floor: Path, spool: Path) -> int:
    ctx = await GatewayContext.open(database=db, floor_path=str(floor), spool=spool, upgrade=True)
    try:
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            t = await create_tournament(s, "T", SETTINGS, actor="test")
            heat = await schedule_heat(
                s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=3),
                bank_name="A", duration_seconds=4, starting_credits=300, actor="test", now=now,
            )  # fmt: skip
            for i in range(3):
                p = await add_player(
                    s, id_number=f"70010{i}5800089", name=f"P{i}",
                    date_of_birth=date(1975, 2, 1 + i), actor="test", now=now,
                )  # fmt: skip
                await sell_entries(s, t.id, p.id, cashier="test", now=now)
            heat_id = heat.id
        for i in range(3):
            async with unit_of_work(ctx.sessions) as s:
                await register_for_heat(s, heat_id, f"70010{i}5800089", actor="t", now=now)
        return heat_id
    finally:
        await ctx.close()


async def _state(db: str, spool: Path) -> tuple[RunState | None, HeatStatus | None, int, bool]:
    ctx = await GatewayContext.open(database=db, floor_path=None, spool=spool)
    try:
        run = await ctx.journal.latest_run("A")
        async with ctx.sessions() as s:
            heat = (await s.scalars(select(Heat))).first()
            scores = len((await s.scalars(select(Score))).all())
        settled = run is not None and run.settled  # every machine back in normal play
        return (run.state if run else None), (heat.status if heat else None), scores, settled
    finally:
        await ctx.close()


def _wait(db: str, spool: Path, cond: Any, within: float) -> tuple[Any, ...]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        got = asyncio.run(_state(db, spool))
        if cond(got):
            return got
        time.sleep(0.1)
    raise AssertionError(f"not reached in {within} s: {got}")


def test_serve_runs_the_schedule_and_survives_sigkill(tmp_path: Path) -> None:
    with BankProcess(3, players=True) as bank:
        floor = tmp_path / "floor.toml"
        floor.write_text(bank.floor_toml())
        db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
        spool = tmp_path / "spool"
        asyncio.run(_prepare(db, floor, spool))
        cmd = [sys.executable, "-m", "gateway", "serve", "--floor", str(floor), "--database", db,
               "--spool", str(spool), "--tick", "0.2", "--log-level", "WARNING"]  # fmt: skip
        first = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            # Bounds far above a quiet machine's few seconds: a loaded CI host is slow.
            _wait(db, spool, lambda g: g[0] is RunState.RUNNING, 90)  # started by itself
            time.sleep(0.5)
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        second = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            # Closed in the tournament, and the machines released (the run settled): a
            # SIGTERM before the release leaves that to the next start, by design.
            final = _wait(db, spool, lambda g: g[1] is HeatStatus.CLOSED and g[3], 120)
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=15)
        assert second.returncode == 0
        assert second.stderr is not None
        log = second.stderr.read().decode()
        assert "tournament refused" not in log, log  # a resume applies the start once only
        assert final[0] is RunState.CLOSED
        assert final[2] == 3  # every seat scored, once
        for m in bank.ask("state")["machines"]:
            assert m["play_enabled"], m
            assert not m["in_tournament"], m
