"""Walk-up sessions through a SIGKILL of ``reelgate serve`` (docs/rules.md#w7), as
``test_serve.py`` does for a scheduled heat: two players confirm walk-up sessions on two
machines of a walk-up bank (one native LP 8C, one host-timed); ``serve`` runs them side by
side (W6); it is SIGKILLed mid-session and started again: recovery resumes both from the
journal, each closes with its entry scored once (W8), nothing restarted, and every machine
is back in normal play."""

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
from zoneinfo import ZoneInfo

from sqlalchemy import select

from gateway.app.context import GatewayContext
from gateway.floor.store import set_bank_enabled
from gateway.tournament.rules.enums import EntryValidity
from gateway.tournament.services import add_player, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament
from gateway.tournament.services.walkup import set_window, walkup_at_card_in
from gateway.tournament.settings import TournamentSettings
from storage.journal import RunState
from storage.tournament import Entry, EntryStatus, Heat, HeatStatus, Score

from ..gateway.emulated import ROOT, BankProcess

SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)
ZONE = "Africa/Johannesburg"
SECONDS = 20  # long enough that the second gateway resumes both sessions inside their time


async def _prepare(db: str, floor: Path, spool: Path, machines: list[str]) -> None:
    """The window open now; each player's card in, out and in again: two sessions (W5)."""
    ctx = await GatewayContext.open(database=db, floor_path=str(floor), spool=spool, upgrade=True)
    try:
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        now = datetime.now(UTC)
        local = now.astimezone(ZoneInfo(ZONE))
        async with unit_of_work(ctx.sessions) as s:
            t = await create_tournament(s, "Walk-up", SETTINGS, actor="test")
            players = []
            for i in range(2):
                p = await add_player(
                    s, id_number=f"70010{i}5800089", name=f"P{i}",
                    date_of_birth=date(1975, 2, 1 + i), actor="test", now=now,
                    card_number=f"CARD{i}",
                )  # fmt: skip
                await sell_entries(s, t.id, p.id, package_code="single", cashier="c", now=now)
                players.append(p.id)
            await set_window(
                s, t.id, "A", opens=f"{local - timedelta(hours=1):%H:%M}",
                closes=f"{local + timedelta(hours=3):%H:%M}", seconds=SECONDS, credits=300,
                confirm_seconds=60, enabled=True, actor="director", reason="walk-up", at=now,
            )  # fmt: skip
        for player, machine, card in zip(players, machines, ("CARD0", "CARD1"), strict=True):
            for step in range(2):  # the offer, then the confirm
                async with unit_of_work(ctx.sessions) as s:
                    decision = await walkup_at_card_in(
                        s, machine=machine, card=card, player_id=player,
                        at=datetime.now(UTC) + timedelta(seconds=step),
                    )  # fmt: skip
                    assert decision is not None
                    assert decision.verdict.kind == ("offer", "confirm")[step], decision.line
    finally:
        await ctx.close()


async def _state(db: str, spool: Path) -> dict[str, Any]:
    ctx = await GatewayContext.open(database=db, floor_path=None, spool=spool)
    try:
        unsettled = await ctx.journal.unsettled_runs("A")
        async with ctx.sessions() as s:
            heats = (await s.scalars(select(Heat).order_by(Heat.id))).all()
            scores = (await s.scalars(select(Score))).all()
            entries = (await s.scalars(select(Entry))).all()
        return {
            "running": [r.state for r in unsettled].count(RunState.RUNNING),
            "unsettled": len(unsettled),
            "heats": [(h.status, h.restarts) for h in heats],
            "scores": len(scores),
            "entries": {e.status for e in entries},
        }
    finally:
        await ctx.close()


def _wait(db: str, spool: Path, cond: Any, within: float) -> dict[str, Any]:
    deadline = time.monotonic() + within
    got: dict[str, Any] = {}
    while time.monotonic() < deadline:
        got = asyncio.run(_state(db, spool))
        if cond(got):
            return got
        time.sleep(0.2)
    raise AssertionError(f"not reached in {within} s: {got}")


def test_w7_a_sigkill_mid_session_loses_no_walkup_session(tmp_path: Path) -> None:
    with BankProcess(2, host_timed=1, players=True) as bank:
        floor = tmp_path / "floor.toml"
        floor.write_text(bank.floor_toml())
        db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
        spool = tmp_path / "spool"
        asyncio.run(_prepare(db, floor, spool, [m["machine"] for m in bank.machines]))
        cmd = [sys.executable, "-m", "gateway", "serve", "--floor", str(floor), "--database", db,
               "--spool", str(spool), "--tick", "0.2", "--log-level", "WARNING"]  # fmt: skip
        first = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            # Both sessions under way side by side (bounds far above a quiet machine's).
            _wait(db, spool, lambda g: g["running"] == 2, 90)
            time.sleep(0.5)
        finally:
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        assert asyncio.run(_state(db, spool))["unsettled"] == 2  # the kill left them running
        second = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            final = _wait(
                db, spool,
                lambda g: g["unsettled"] == 0
                and [s for s, _ in g["heats"]] == [HeatStatus.CLOSED] * 2,
                120,
            )  # fmt: skip
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=15)
        assert second.returncode == 0
        assert second.stderr is not None
        log = second.stderr.read().decode()
        assert "tournament refused" not in log, log
        assert final["heats"] == [(HeatStatus.CLOSED, 0)] * 2  # resumed, not restarted (T20)
        assert final["scores"] == 2  # each entry scored, once
        assert final["entries"] == {EntryStatus.PLAYED}
        for m in bank.ask("state")["machines"]:
            assert m["play_enabled"], m
            assert not m["in_tournament"], m
