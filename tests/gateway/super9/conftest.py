"""Fixtures for Super 9 tests: a desk on each database backend, players, a clock."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.feed import MemoryFeed
from gateway.super9.desk import Super9Desk
from gateway.super9.rules.verification import Verification
from storage.db import make_sessionmaker
from storage.super9 import Super9Ticket
from storage.tournament import Player

SAST = ZoneInfo("Africa/Johannesburg")


def at(day: date, hh: int, mm: int = 0) -> datetime:
    """A venue-local instant."""
    return datetime(day.year, day.month, day.day, hh, mm, tzinfo=SAST)


WED = date(2026, 12, 2)  # a Wednesday: sessions 19:00 and 21:00 (S9-4)


@pytest.fixture
def feed() -> MemoryFeed:
    return MemoryFeed()


@pytest.fixture
async def desk(engine: AsyncEngine, feed: MemoryFeed) -> Super9Desk:
    sm = make_sessionmaker(engine)
    async with sm.begin() as db:
        for i, (idn, born) in enumerate(
            [
                ("8001015009087", date(1980, 1, 1)),
                ("9002026009088", date(1990, 2, 2)),
                ("7503035009089", date(1975, 3, 3)),
                ("8504045009080", date(1985, 4, 4)),
                ("9505055009081", date(1995, 5, 5)),
                ("1001015009082", date(2010, 1, 1)),  # a minor (S9-1)
            ]
        ):
            db.add(
                Player(
                    id_number=idn,
                    card_number=f"C{i + 1}",
                    name=f"Player {i + 1}",
                    date_of_birth=born,
                )
            )
    return Super9Desk(sm, feed=feed)


async def key_in(desk: Super9Desk, serial: str, numbers: str, *, actor: str, now: datetime) -> int:
    """A hand-in with the verification section filled in fully and correctly (S9-7)."""
    async with desk._sm() as db:
        ticket = (
            await db.execute(select(Super9Ticket).where(Super9Ticket.serial == serial))
        ).scalar_one()
        player = await db.get(Player, ticket.player_id)
        assert player is not None
        section = Verification(player.name, player.card_number or "", "082 555 0100", True)
    return await desk.hand_in(serial, numbers, actor=actor, now=now, verification=section)
