"""The technician's commands tell the truth while ``reelgate serve`` holds the bank
(problem 7 of issue 24).

Before: ``bank check A`` polled the machines beside serve and reported every healthy
machine as "NO ... no answer (LinkDown)"; ``heat direct pause`` with no heat running
printed "queued", exit 0, and the refusal reached only serve's log; an order for a bank
no gateway held waited in the database for whichever gateway took the bank next."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select

from gateway.app.cli import main
from gateway.app.context import GatewayContext
from storage.journal import DirectorCommand
from storage.lease import lease_of

from ..gateway.emulated import ROOT, BankProcess


async def _held(db: str, spool: Path) -> bool:
    ctx = await GatewayContext.open(database=db, floor_path=None, spool=spool)
    try:
        view = await lease_of(ctx.sessions, "A")
        return view is not None and view.live(datetime.now(UTC))
    finally:
        await ctx.close()


async def _orders(db: str, spool: Path) -> list[tuple[str, str | None]]:
    ctx = await GatewayContext.open(database=db, floor_path=None, spool=spool)
    try:
        async with ctx.sessions() as s:
            rows = await s.scalars(select(DirectorCommand).order_by(DirectorCommand.id))
            return [(r.command, r.outcome) for r in rows]
    finally:
        await ctx.close()


async def _audit_rows(db: str, spool: Path) -> int:
    from storage.audit import AuditEntry

    ctx = await GatewayContext.open(database=db, floor_path=None, spool=spool)
    try:
        async with ctx.sessions() as s:
            return int(await s.scalar(select(func.count()).select_from(AuditEntry)) or 0)
    finally:
        await ctx.close()


def test_check_and_direct_while_serve_holds_the_bank(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with BankProcess(3) as bank:
        floor = tmp_path / "floor.toml"
        floor.write_text(bank.floor_toml())
        spool = tmp_path / "spool"
        common = ["--floor", str(floor), "--database", database, "--spool", str(spool)]

        # No gateway holds A: an order is refused, not left queued for a later one.
        assert main(["bank", "check", "A", *common, "--json"]) == 0  # the bank is ours
        capsys.readouterr()
        assert main(["heat", "direct", "pause", "--bank", "A", *common]) == 2
        assert "bank A: no gateway holds it" in capsys.readouterr().err
        assert asyncio.run(_orders(database, spool)) == []

        cmd = [sys.executable, "-m", "gateway", "serve", *common, "--tick", "0.2",
               "--log-level", "WARNING"]  # fmt: skip
        serve = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while not asyncio.run(_held(database, spool)):
                assert time.monotonic() < deadline, "serve never took bank A"
                time.sleep(0.1)

            # bank check: one line naming the holder, not 3 machines "no answer".
            assert main(["bank", "check", "A", *common]) == 2
            out = capsys.readouterr()
            assert "LinkDown" not in out.out + out.err
            assert "bank A is held by serve on" in out.err
            assert "--server URL" in out.err

            # heat direct: the outcome serve stamped, and exit 1 for a refusal.
            code = main(["heat", "direct", "pause", "--bank", "A", *common, "--wait", "30"])
            out = capsys.readouterr()
            assert out.out.strip().endswith(
                "(pause) for bank A: refused: no heat under way on bank A"
            )
            assert code == 1
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=20)
    assert asyncio.run(_orders(database, spool)) == [
        ("pause", "refused: no heat under way on bank A")
    ]


def test_direct_checks_its_order_before_the_database(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad order is one line and writes nothing, not even an audit row."""
    floor = tmp_path / "floor.toml"
    floor.write_text('[[bank]]\nname = "A"\nmachines = [\n  { id = "A01", endpoint = '
                     '"sas+tcp://127.0.0.1:9?address=1" },\n]\n')  # fmt: skip
    spool = tmp_path / "spool"
    common = ["--floor", str(floor), "--database", database, "--spool", str(spool)]
    before = asyncio.run(_audit_rows(database, spool))
    assert main(["heat", "direct", "abort", "--bank", "A", *common]) == 2
    assert "--reason" in capsys.readouterr().err
    assert main(["heat", "direct", "pause", "--bank", "A", "--wait", "-1", *common]) == 2
    assert "--wait" in capsys.readouterr().err
    assert asyncio.run(_orders(database, spool)) == []
    assert asyncio.run(_audit_rows(database, spool)) == before


async def _take_as_serve(db: str, floor: Path, spool: Path) -> None:
    from datetime import timedelta

    from storage import lease

    ctx = await GatewayContext.open(database=db, floor_path=str(floor), spool=spool)
    try:
        owner = lease.Owner("serve", "floor-gw-9", 4242)
        now = datetime.now(UTC)
        await lease.acquire(ctx.sessions, "A", owner, now=now, period=timedelta(minutes=10))
    finally:
        await ctx.close()


def test_direct_says_when_the_holder_does_not_answer(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A holder that stamps no outcome (hung, or another host's clock-stopped gateway):
    the command says the order is queued but not carried out, exit 1 — never "done"."""
    floor = tmp_path / "floor.toml"
    floor.write_text('[[bank]]\nname = "A"\nmachines = [\n  { id = "A01", endpoint = '
                     '"sas+tcp://127.0.0.1:9?address=1" },\n]\n')  # fmt: skip
    spool = tmp_path / "spool"
    common = ["--floor", str(floor), "--database", database, "--spool", str(spool)]
    asyncio.run(_take_as_serve(database, floor, spool))
    assert main(["heat", "direct", "resume", "--bank", "A", "--wait", "0.3", *common]) == 1
    out = capsys.readouterr().out
    assert "queued, but serve on floor-gw-9 pid 4242 has not carried it out within 0.3 s" in out
    assert asyncio.run(_orders(database, spool)) == [("resume", None)]
    # bank check names the same holder and polls nothing.
    assert main(["bank", "check", "A", *common]) == 2
    assert "bank A is held by serve on floor-gw-9 pid 4242" in capsys.readouterr().err
