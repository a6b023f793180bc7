"""Fixtures for the tournament tests: a floor with banks of machines and a small driver
(:class:`Desk`) that runs the services the way the cash desk, the director and the heat
runner do, one transaction per action."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.settings import TournamentSettings
from storage.db import make_sessionmaker
from storage.floor import FloorBank, FloorMachine

SAST = ZoneInfo("Africa/Johannesburg")


def at(day: date, hour: int, minute: int = 0) -> datetime:
    """A venue-local instant."""
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=SAST)


def score(credits: int, games: int = 50) -> HeatScore:
    won = min(games, max(0, credits // 100))
    return HeatScore(credits, TournamentMeters(games, won, games * 10, credits))


class Desk:
    """Runs services in their own transaction each, like separate CLI invocations."""

    def __init__(self, maker: async_sessionmaker[AsyncSession]) -> None:
        self.maker = maker
        self.tournament_id = 0

    async def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        async with svc.unit_of_work(self.maker) as session:
            return await fn(session, *args, **kwargs)

    async def floor(self, bank: str, machines: int) -> None:
        async with svc.unit_of_work(self.maker) as session:
            session.add(FloorBank(name=bank, enabled=True))
            await session.flush()
            for i in range(1, machines + 1):
                session.add(
                    FloorMachine(
                        machine_id=f"{bank}-{i:02d}",
                        bank_name=bank,
                        position=i,
                        endpoint=f"tcp://127.0.0.1:{9000 + i}",
                        updated_at=datetime(2026, 1, 1, tzinfo=UTC),
                    )
                )

    async def tournament(
        self, settings: TournamentSettings | None = None, name: str = "Ridge"
    ) -> int:
        t = await self.run(
            svc.create_tournament, name, settings or TournamentSettings(), actor="director"
        )
        self.tournament_id = t.id
        return int(t.id)

    async def player(
        self, id_number: str, name: str, dob: date = date(1980, 5, 17), now: datetime | None = None
    ) -> int:
        p = await self.run(
            svc.add_player,
            id_number=id_number,
            name=name,
            date_of_birth=dob,
            actor="desk",
            now=now or datetime(2026, 1, 1, tzinfo=UTC),
        )
        return int(p.id)

    async def heat(
        self,
        starts: datetime,
        bank: str = "A",
        stage: Stage = Stage.QUALIFYING,
        now: datetime | None = None,
    ) -> int:
        h = await self.run(
            svc.schedule_heat,
            self.tournament_id,
            stage=stage,
            starts_at=starts,
            bank_name=bank,
            duration_seconds=600,
            starting_credits=1000,
            actor="director",
            now=now or starts - timedelta(days=30),
        )
        return int(h.id)

    async def sell(
        self, player: int, now: datetime, package: str = "single", quantity: int = 1, **kw: Any
    ) -> tuple[int, ...]:
        sale = await self.run(
            svc.sell_entries,
            self.tournament_id,
            player,
            package_code=package,
            quantity=quantity,
            cashier="cashier",
            now=now,
            **kw,
        )
        return tuple(sale.entry_ids)

    async def register(
        self, heat: int, player: int, now: datetime, entry: int | None = None
    ) -> Any:
        return await self.run(
            svc.register_for_heat, heat, player, actor="desk", now=now, entry_id=entry
        )

    async def play(
        self,
        heat: int,
        credits_by_seat: dict[int, int],
        starts: datetime,
        absent: tuple[int, ...] = (),
    ) -> None:
        """Start a heat with everyone present except ``absent``, record each seat's machine
        score, and close it."""
        seats = await self.run(svc.heat_seats, heat)
        present = [s.seat_number for s in seats if s.seat_number not in absent]
        await self.run(svc.begin_heat, heat, present_seats=present, at=starts, actor="director")
        by_number = {s.seat_number: s for s in seats}
        for number, credits in credits_by_seat.items():
            await self.run(
                svc.record_machine_score,
                by_number[number].seat_id,
                score(credits),
                at=starts + timedelta(minutes=10),
            )
        await self.run(svc.finish_heat, heat, at=starts + timedelta(minutes=11), actor="gateway")


@pytest.fixture
async def desk(engine: AsyncEngine) -> Desk:
    d = Desk(make_sessionmaker(engine))
    await d.floor("A", 6)
    return d
