"""SNMP trap marks survive a restart (storage.marks), and a technician clears them with
``reelgate bank clear-mark`` (audited).  T20/T21: a marked machine is refused by
preflight until it has been checked.

Clauses: docs/rules.md#t20, #t21.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app.cli import main
from gateway.app.context import GatewayContext
from gateway.app.identity import host_actor
from gateway.machines.driver import MachineEventKind
from gateway.machines.health import HealthMonitor, TrapMarks
from protocols.snmp.manager import HealthPoller, SnmpTarget, TrapReceiver
from protocols.snmp.mib import BoardTrap, Notification, TournamentMode
from protocols.snmp.security import V2cCommunity
from storage import audit, audit_verify
from storage.db import make_sessionmaker
from storage.marks import MarkRow, MarkStore

PUBLIC = V2cCommunity("public")
T0 = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


async def _monitor(marks: TrapMarks) -> HealthMonitor:
    monitor = HealthMonitor(TrapReceiver(v2c=PUBLIC), HealthPoller(), clock=lambda: T0,
                            marks=marks)  # fmt: skip
    await monitor.add_board(SnmpTarget("A01", "127.0.0.1", 1, PUBLIC))
    return monitor


async def test_a_trap_mark_survives_a_restart(engine: AsyncEngine) -> None:
    store = MarkStore(make_sessionmaker(engine))
    monitor = await _monitor(await TrapMarks.load(store))
    monitor.note_trap(BoardTrap(Notification.DOOR_OPENED, "A01", "17", TournamentMode.PLAYING, 5))
    monitor.note_trap(BoardTrap(Notification.LINK_UP, "A01", "17", TournamentMode.PLAYING, 6))
    await monitor.marks.flush()
    monitor.close()

    # The restart: a new monitor over the same database has the mark back.
    again = await TrapMarks.load(store)
    assert again.is_marked("A01")
    [mark] = again["A01"]  # link up marks nothing
    assert (mark.kind, mark.at, mark.heat_id, mark.mid_heat) == (
        MachineEventKind.DOOR_OPENED,
        T0,
        "17",
        True,
    )
    # A mark cleared meanwhile by another process is gone at the next preflight.
    await store.clear("A01", actor="tech", reason="door closed, seal checked")
    restarted = await _monitor(again)
    try:
        problems = (await restarted.preflight(["A01"]))["A01"]  # the board itself is absent
        assert not [p for p in problems if p.startswith("marked")]
        assert not restarted.is_marked("A01")
    finally:
        restarted.close()


def test_clear_mark_command_clears_and_audits(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
    common = ["--database", db, "--spool", str(tmp_path / "spool")]

    async def seed() -> None:
        ctx = await GatewayContext.open(
            database=db, floor_path=None, spool=tmp_path / "spool", upgrade=True
        )
        try:
            row = MarkRow("A01", MachineEventKind.POWER_LOST.value, T0, "", False)
            await MarkStore(ctx.sessions).add(row)
        finally:
            await ctx.close()

    async def state() -> tuple[list[MarkRow], list[audit.AuditEntry]]:
        ctx = await GatewayContext.open(database=db, floor_path=None, spool=tmp_path / "spool")
        try:
            async with ctx.sessions() as session:
                entries = (await session.scalars(select(audit.AuditEntry))).all()
                assert (await audit_verify.verify(session)).ok
            return await MarkStore(ctx.sessions).load(), list(entries)
        finally:
            await ctx.close()

    asyncio.run(seed())
    argv = ["bank", "clear-mark", "A01", "--reason", "power restored, board checked"]
    assert main([*argv, *common]) == 0
    marks, entries = asyncio.run(state())
    assert marks == []
    [entry] = [e for e in entries if e.action == "machine.clear_mark"]
    assert (entry.actor, entry.subject, entry.reason) == (
        host_actor(),  # the host's OS account, never a typed name
        "machine:A01",
        "power restored, board checked",
    )
    assert main([*argv, *common]) == 1  # nothing left to clear: nothing audited
    assert len(asyncio.run(state())[1]) == len(entries)
