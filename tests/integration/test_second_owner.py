"""A second process that would drive a held bank is refused: one line, exit 2, nothing
changed (issue "One truth for a heat, one owner per bank", item 2).

The test holds bank A's lease itself (``storage.lease.acquire``, a live expiry, an owner
on another host), then runs each command that drives a bank's machines.  "Nothing
changed" is checked on both sides: the journal, the floor, the audit log and the lease
in the database, and every machine's state on the emulated bank."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from gateway.app.cli import main
from gateway.app.context import GatewayContext
from storage import lease
from storage.audit import AuditEntry
from storage.floor import FloorBank
from storage.journal import HeatRun, HeatRunStep
from storage.lease import Owner
from tests.gateway.emulated import ROOT, BankProcess

HOLDER = Owner("serve", "floor-gw-9", 4242)  # another host: never taken as a dead local pid


@pytest.fixture
def bank() -> Iterator[Any]:
    with BankProcess(2) as b:
        yield b


async def _seed_and_hold(database: str, floor: Path, spool: Path) -> str:
    """The floor stored, one heat run left unsettled on A (what a recovery would drive),
    then A's lease taken by "serve on floor-gw-9"; returns the refusal line expected."""
    ctx = await GatewayContext.open(database=database, floor_path=str(floor), spool=spool)
    try:
        await ctx.journal.create_run("A", ["EMU-001", "EMU-002"], credits=100, seconds=30)
        now = datetime.now(UTC)
        await lease.acquire(ctx.sessions, "A", HOLDER, now=now, period=timedelta(minutes=10))
        return (
            f"reelgate: error: bank A is held by serve on floor-gw-9 pid 4242 "
            f"since {now:%H:%M:%S} UTC"
        )
    finally:
        await ctx.close()


async def _database_state(database: str, spool: Path) -> tuple[Any, ...]:
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=spool)
    try:
        async with ctx.sessions() as s:
            runs = [(r.id, r.state, r.settled) for r in await s.scalars(select(HeatRun))]
            steps = await s.scalar(select(func.count()).select_from(HeatRunStep))
            audit = await s.scalar(select(func.count()).select_from(AuditEntry))
            enabled = [(b.name, b.enabled) for b in await s.scalars(select(FloorBank))]
        held = await lease.lease_of(ctx.sessions, "A")
        return runs, steps, audit, enabled, held
    finally:
        await ctx.close()


COMMANDS = {
    "heat run": ["heat", "run", "--bank", "A", "--seconds", "2", "--credits", "100"],
    "heat recover": ["heat", "recover", "--bank", "A"],
    "bank enable": ["bank", "enable", "A"],
    "bank disable": ["bank", "disable", "A"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_on_a_held_bank_is_refused_in_one_line(
    command: str, bank: Any, database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    floor = tmp_path / "floor.toml"
    floor.write_text(bank.floor_toml())
    spool = tmp_path / "spool"
    expected = asyncio.run(_seed_and_hold(database, floor, spool))
    before = asyncio.run(_database_state(database, spool)), bank.ask("state")
    capsys.readouterr()

    common = ["--floor", str(floor), "--database", database, "--spool", str(spool)]
    assert main([*COMMANDS[command], *common]) == 2
    out = capsys.readouterr()
    assert out.err.splitlines() == [expected]
    assert out.out == ""
    assert (asyncio.run(_database_state(database, spool)), bank.ask("state")) == before


def test_a_second_serve_is_refused_in_one_line(bank: Any, database: str, tmp_path: Path) -> None:
    floor = tmp_path / "floor.toml"
    floor.write_text(bank.floor_toml())
    spool = tmp_path / "spool"
    expected = asyncio.run(_seed_and_hold(database, floor, spool))
    before = asyncio.run(_database_state(database, spool)), bank.ask("state")
    # no live feed for the refused serve: its log would open with the feed's info line,
    # and this test reads the refusal as the only line on stderr
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("REELGATE_MQTT_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "gateway", "serve", "--floor", str(floor), "--database",
         database, "--spool", str(spool)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [expected]
    assert (asyncio.run(_database_state(database, spool)), bank.ask("state")) == before
