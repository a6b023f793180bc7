"""The database goes away mid-heat: the heat finishes, nothing is lost, nothing doubled.

PostgreSQL is reached through a TCP proxy the test controls; cutting it drops every
connection and refuses new ones, as a failed database host or network does.  Journal
writes go to the local spool meanwhile and reach the database once it is back.
SQLite: the database file is made unreachable (its folder renamed away) mid-heat.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.machine import EmulatedMachine, MachineRefusal
from emulators.wan_link import WanLink
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.runner import HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink
from gateway.records import chain
from storage.db import Base, make_engine, make_sessionmaker
from storage.journal import Journal, MachineState, RunState

from ..gateway.direct_driver import DirectDriver

PG_URL = os.environ.get(
    "REELGATE_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)


async def _pg_available() -> bool:
    try:
        eng = make_engine(PG_URL)
        async with eng.connect() as conn:
            await conn.execute(text("select 1"))
        await eng.dispose()
        return True
    except Exception:
        return False


@pytest.fixture
async def pg_behind_proxy() -> AsyncIterator[tuple[AsyncEngine, WanLink]]:
    if not PG_URL.startswith("postgresql") or not await _pg_available():
        pytest.skip("PostgreSQL not reachable")
    import storage.models  # noqa: F401

    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = make_engine(PG_URL)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(PG_URL)
    if url.host not in ("127.0.0.1", "localhost"):
        pytest.skip("the outage proxy only fronts a loopback database")
    proxy = WanLink(url.port or 5432)
    await proxy.start()
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    engine = make_engine(proxied, schema=schema, connect_args={"timeout": 2})
    chain.bind(engine, proxied)  # the session's test keys (tests/conftest.py)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    try:
        yield engine, proxy
    finally:
        await engine.dispose()
        with contextlib.suppress(Exception):
            await proxy.close()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


def _bank(n: int) -> tuple[list[EmulatedMachine], dict[str, MachineLink]]:
    machines = [EmulatedMachine(f"A{i:02d}", seed=i) for i in range(1, n + 1)]
    links = {
        m.machine_id: MachineLink(m.machine_id, DirectDriver(m), attempts=2, budget_s=0.3)
        for m in machines
    }
    return machines, links


async def _players(machines: list[EmulatedMachine], stop: asyncio.Event) -> None:
    while not stop.is_set():
        for m in machines:
            with contextlib.suppress(MachineRefusal):
                if m.play_enabled() and m.credits > 0:
                    m.spin(1)
        await asyncio.sleep(0.02)


async def _heat_through_outage(journal: Journal, spool: Path, cut: object, restore: object) -> None:
    machines, links = _bank(4)
    writer = JournalWriter(journal, spool, retry_interval=0.1)
    running = asyncio.Event()

    def progress(note: ProgressNote) -> None:
        if note.kind is Progress.STATE and note.state == "running":
            running.set()

    stop = asyncio.Event()
    players = asyncio.create_task(_players(machines, stop))
    runner = HeatRunner(writer, links, poll_interval_s=0.05, progress=progress)
    heat = asyncio.create_task(runner.run_new("A", list(links), credits=300, seconds=2))
    await asyncio.wait_for(running.wait(), 10)
    await cut()  # type: ignore[operator]
    out = await asyncio.wait_for(heat, 30)
    stop.set()
    await players

    # The heat finished on the floor during the outage, and everything is in the spool.
    assert out.state is RunState.CLOSED
    assert all(s.state is MachineState.RELEASED for s in out.seats.values())
    assert all(not m.in_tournament and m.play_enabled() for m in machines)
    assert writer.pending
    assert writer.spooled_total > 0
    scores = {m: s.score for m, s in out.seats.items()}

    await restore()  # type: ignore[operator]
    assert await writer.drain(15.0)
    await writer.close()
    results = await journal.results(out.run_id)
    assert sorted(r.machine_id for r in results) == sorted(links)  # all there, once each
    assert {r.machine_id: r.score for r in results} == scores
    steps = [s for s, _, _ in await journal.steps(out.run_id)]
    assert steps[-3:] == [RunState.ENDING, RunState.COLLECTING, RunState.CLOSED]
    assert (await journal.run(out.run_id)).settled
    # A second replay (say, after a crash mid-flush) stores nothing twice.
    assert await writer.flush()
    assert len(await journal.results(out.run_id)) == len(links)


async def test_postgres_outage_mid_heat(
    pg_behind_proxy: tuple[AsyncEngine, WanLink], tmp_path: Path
) -> None:
    engine, proxy = pg_behind_proxy
    journal = Journal(make_sessionmaker(engine))
    await _heat_through_outage(journal, tmp_path / "spool", proxy.cut, proxy.restore)


async def test_sqlite_file_unreachable_mid_heat(tmp_path: Path) -> None:
    import storage.models  # noqa: F401

    folder = tmp_path / "db"
    folder.mkdir()
    url = f"sqlite+aiosqlite:///{folder / 'gw.db'}"
    engine = make_engine(url, poolclass=_null_pool())
    chain.bind(engine, url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    journal = Journal(make_sessionmaker(engine))
    away = tmp_path / "db-away"

    async def cut() -> None:
        folder.rename(away)  # the volume holding the database is gone

    async def restore() -> None:
        away.rename(folder)

    try:
        await _heat_through_outage(journal, tmp_path / "spool", cut, restore)
    finally:
        await engine.dispose()


def _null_pool() -> object:
    from sqlalchemy.pool import NullPool

    return NullPool
