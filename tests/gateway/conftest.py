"""Shared fixtures of the heat tests: a bank of in-process machines with a tournament
heat due on it (``floor``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from emulators.machine import EmulatedMachine
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.settings import TournamentSettings
from storage.db import make_sessionmaker
from storage.floor import FloorBank, FloorMachine
from storage.journal import Journal
from storage.tournament import Heat, Seat

from .direct_driver import DirectDriver

MACHINES = ["A01", "A02", "A03"]
PERIOD = timedelta(minutes=30)  # the T20 "reasonable period"


@dataclass
class Floor:
    sessions: async_sessionmaker[AsyncSession]
    journal: Journal
    writer: JournalWriter
    machines: dict[str, EmulatedMachine]
    drivers: dict[str, DirectDriver]
    heat_id: int

    def links(self, machine_ids: list[str] | None = None) -> dict[str, MachineLink]:
        # A new process opens new links: tests build them afresh for each runner.
        return {
            m: MachineLink(m, self.drivers[m], attempts=2, budget_s=0.3, first_wait_s=0.01)
            for m in (machine_ids or MACHINES)
        }

    async def seats(self) -> dict[int, Seat]:
        async with self.sessions() as s:
            rows = await s.scalars(select(Seat).where(Seat.heat_id == self.heat_id))
            return {seat.seat_number: seat for seat in rows}

    async def heat(self) -> Heat:
        async with self.sessions() as s:
            heat = await s.get(Heat, self.heat_id)
            assert heat is not None
            return heat


@pytest.fixture
async def floor(engine: AsyncEngine, tmp_path: Path) -> Floor:
    """Bank A of three machines, a tournament with a heat that became due a minute ago, and
    three players seated on it (T11: seats 1-3 on A01-A03)."""
    sessions = make_sessionmaker(engine)
    now = datetime.now(UTC)
    booked = now - timedelta(minutes=5)
    async with svc.unit_of_work(sessions) as s:
        s.add(FloorBank(name="A", enabled=True))
        await s.flush()
        for position, machine_id in enumerate(MACHINES, start=1):
            s.add(
                FloorMachine(
                    machine_id=machine_id,
                    bank_name="A",
                    position=position,
                    endpoint=f"tcp://127.0.0.1:{7100 + position}",
                    updated_at=booked,
                )
            )
        settings = TournamentSettings(validity=EntryValidity.HOURS_48, postpone_after=PERIOD)
        t = await svc.create_tournament(s, "Ridge", settings, actor="director")
        heat = await svc.schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now - timedelta(minutes=1),
            bank_name="A", duration_seconds=1, starting_credits=300, actor="director",
            now=booked - timedelta(hours=1),
        )  # fmt: skip
        heat_id = heat.id
        for i in range(3):
            p = await svc.add_player(
                s, id_number=f"80010{i}5800089", name=f"Player {i + 1}",
                date_of_birth=date(1980, 1, 1 + i), actor="desk", now=booked,
            )  # fmt: skip
            await svc.sell_entries(s, t.id, p.id, cashier="cashier", now=booked)
            await svc.register_for_heat(s, heat_id, p.id, actor="desk", now=booked)
    machines = {m: EmulatedMachine(m, seed=i) for i, m in enumerate(MACHINES, start=1)}
    journal = Journal(sessions)
    return Floor(
        sessions,
        journal,
        JournalWriter(journal, tmp_path / "spool"),
        machines,
        {m: DirectDriver(e) for m, e in machines.items()},
        heat_id,
    )


def clock(offset: timedelta) -> Callable[[], datetime]:
    return lambda: datetime.now(UTC) + offset
