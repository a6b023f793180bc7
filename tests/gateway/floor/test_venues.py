"""Several venues' gateways on one central database: each sees and leases its own banks."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.errors import OperatorError
from gateway.floor.model import parse_floor
from gateway.floor.store import load_floor, sync_floor
from storage.db import make_sessionmaker
from storage.floor import FloorBank


def _floor(*banks: str) -> str:
    return "".join(
        f'[[bank]]\nname = "{b}"\nmachines = [{{ id = "{b}01", endpoint = '
        f'"sas+tcp://127.0.0.1:{7000 + i}" }}]\n'
        for i, b in enumerate(banks)
    )


async def test_each_venue_loads_only_its_own_banks(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    ridge = await sync_floor(sessions, parse_floor(_floor("R1", "R2")), venue="ridge")
    coast = await sync_floor(sessions, parse_floor(_floor("C1")), venue="coast")
    assert sorted(ridge.banks) == ["R1", "R2"]
    assert sorted(coast.banks) == ["C1"]
    assert [m.id for m in coast.bank("C1").machines] == ["C101"]
    # Without a file the stored stamp decides; tools naming no venue see the whole floor.
    assert sorted((await load_floor(sessions, venue="ridge")).banks) == ["R1", "R2"]
    assert sorted((await load_floor(sessions)).banks) == ["C1", "R1", "R2"]
    async with sessions() as session:
        assert (await session.get(FloorBank, "C1")).venue == "coast"


async def test_a_bank_of_another_venue_is_refused_and_nothing_written(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    await sync_floor(sessions, parse_floor(_floor("R1")), venue="ridge")
    with pytest.raises(OperatorError, match="bank R1 is served by venue 'ridge', not 'coast'"):
        await sync_floor(sessions, parse_floor(_floor("C1", "R1")), venue="coast")
    assert sorted((await load_floor(sessions)).banks) == ["R1"]  # C1 was not seeded either


async def test_a_single_venue_floor_is_claimed_by_the_first_venue_gateway(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    await sync_floor(sessions, parse_floor(_floor("A")))  # an installation from before
    assert (await load_floor(sessions, venue="ridge")).banks == {}
    claimed = await sync_floor(sessions, parse_floor(_floor("A")), venue="ridge")
    assert list(claimed.banks) == ["A"]
