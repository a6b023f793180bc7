"""Readiness checks one by one: each a name, ok and one line, never raising."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

from emulators.machine import EmulatedMachine
from gateway.app.cli import main
from gateway.app.monitoring.checks import (
    bank_checks,
    broker_check,
    database_check,
    recovery_check,
    spool_check,
)
from gateway.floor.model import BankSpec, Floor, MachineSpec
from gateway.heats.spool import JournalWriter
from gateway.heats.supervisor import BankSupervisor
from gateway.machines.links import MachineLink
from protocols.mqtt.client import MqttSession, MqttSettings
from storage.db import make_engine, make_sessionmaker
from storage.journal import Journal

from ...direct_driver import DirectDriver


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


async def test_database_check_follows_the_sqlite_file(tmp_path: Path) -> None:
    file = tmp_path / "gw.db"
    url = f"sqlite+aiosqlite:///{file}"
    assert await asyncio.to_thread(main, ["db", "upgrade", "--database", url]) == 0
    engine = make_engine(url)
    try:
        check = await database_check(url, engine)
        assert check.ok
        assert check.detail.startswith("revision ")
        os.replace(file, tmp_path / "aside.db")  # moved away under the running process
        gone = await database_check(url, engine)
        assert not gone.ok
        assert gone.detail == f"database file {file} is gone"
        os.replace(tmp_path / "aside.db", file)
        assert (await database_check(url, engine)).ok
        async with engine.begin() as conn:
            from sqlalchemy import text

            await conn.execute(text("UPDATE alembic_version SET version_num = '0001'"))
        old = await database_check(url, engine)
        assert not old.ok
        assert "at revision 0001, this reelgate needs" in old.detail
    finally:
        await engine.dispose()


async def test_database_check_on_a_closed_port_is_one_line() -> None:
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{_closed_port()}/reelgate"
    engine = make_engine(url)
    try:
        check = await database_check(url, engine, timeout_s=5.0)
    finally:
        await engine.dispose()
    assert not check.ok
    assert check.name == "database"
    assert "\n" not in check.detail
    assert check.detail


async def test_spool_check_counts_the_writes_waiting(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    writer = JournalWriter(Journal(make_sessionmaker(engine)), tmp_path / "spool")
    try:
        assert spool_check(writer, limit=2).detail == "0 journal writes waiting"
        (tmp_path / "spool").write_text('{"op":"step"}\n{"op":"step"}\n{"op":"seats"}\n')
        assert writer.spool_depth() == 3
        over = spool_check(writer, limit=2)
        assert not over.ok
        assert over.detail == "3 journal writes waiting (limit 2)"
        assert spool_check(writer, limit=3).ok
    finally:
        await engine.dispose()


async def test_broker_check_names_the_broker() -> None:
    session = MqttSession(MqttSettings.from_url(f"mqtt://127.0.0.1:{_closed_port()}"))
    check = broker_check(session)
    assert not check.ok
    assert check.detail.startswith("not connected to 127.0.0.1:")
    session.connected.set()
    assert broker_check(session).ok


async def test_recovery_check_waits_for_every_bank() -> None:
    gate = asyncio.Event()
    pending = asyncio.create_task(gate.wait())
    done = asyncio.create_task(asyncio.sleep(0))
    await done
    check = recovery_check({"A": done, "B": pending})  # type: ignore[dict-item]
    assert not check.ok
    assert check.detail == "recovering bank(s) B"
    gate.set()
    await pending
    assert recovery_check({"A": done, "B": pending}).ok  # type: ignore[dict-item]


def _floor(enabled_b: bool) -> Floor:
    machines = (
        MachineSpec("A-1", "x", "A", 1),
        MachineSpec("A-2", "x", "A", 2),
        MachineSpec("A-3", "x", "A", 3, excluded_reason="door"),
    )
    a = BankSpec("A", machines, enabled=True)
    b = BankSpec("B", (MachineSpec("B-1", "x", "B", 1),), enabled=enabled_b)
    return Floor({"A": a, "B": b})


async def test_bank_checks_cover_active_machines_of_enabled_banks() -> None:
    links = {
        bank: {m: MachineLink(m, DirectDriver(EmulatedMachine(m, seed=1))) for m in ids}
        for bank, ids in {"A": ["A-1", "A-2", "A-3"], "B": ["B-1"]}.items()
    }
    for bank_links in links.values():
        for link in bank_links.values():
            link.opened = True
    supervisor = BankSupervisor(links["A"])
    supervisor.status["A-1"].online = True
    supervisor.status["A-2"].online = False  # its last general poll went unanswered
    checks = bank_checks(_floor(enabled_b=False), links, {"A": supervisor})
    assert [(c.name, c.ok, c.detail) for c in checks] == [("bank:A", False, "links down: A-2")]

    supervisor.claim(["A-2"])  # a heat polls it now: its connection is what counts
    checks = bank_checks(_floor(enabled_b=True), links, {"A": supervisor})
    assert [(c.name, c.ok) for c in checks] == [("bank:A", True), ("bank:B", True)]
    links["B"]["B-1"].opened = False
    assert not bank_checks(_floor(enabled_b=True), links, {"A": supervisor})[1].ok
