"""What preflight found of each machine's AFT registration (SAS LP 73), kept per machine.

The asset number an EGM reports is its identity on the floor: stored here, a later
check that reads another one at the same endpoint means another machine is there.
Each check replaces the machine's row; ``registered_since`` survives while the machine
stays registered to us, so a technician can see since when.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, String, Text, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime


class MachineAftRegistration(Base):
    __tablename__ = "machine_aft_registration"

    machine_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("floor_machine.machine_id", ondelete="CASCADE"), primary_key=True
    )
    asset_number: Mapped[int] = mapped_column(BigInteger, nullable=False)
    registered: Mapped[bool] = mapped_column(Boolean, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    pos_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    registered_since: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


@dataclass(frozen=True, slots=True)
class RegistrationRow:
    machine_id: str
    asset_number: int
    registered: bool
    status: str
    pos_id: int | None
    reason: str | None
    checked_at: datetime
    registered_since: datetime | None = None


async def record(sessions: async_sessionmaker[AsyncSession], rows: list[RegistrationRow]) -> None:
    """Store what one preflight found (one transaction for the whole bank)."""
    async with sessions.begin() as session:
        for row in rows:
            stored = await session.get(MachineAftRegistration, row.machine_id)
            if stored is None:
                stored = MachineAftRegistration(machine_id=row.machine_id)
                session.add(stored)
            since = stored.registered_since if stored.registered else None
            stored.asset_number = row.asset_number
            stored.registered = row.registered
            stored.status = row.status
            stored.pos_id = row.pos_id
            stored.reason = row.reason
            stored.checked_at = row.checked_at
            stored.registered_since = (since or row.checked_at) if row.registered else None


async def load(sessions: async_sessionmaker[AsyncSession]) -> dict[str, RegistrationRow]:
    async with sessions() as session:
        rows = (await session.scalars(select(MachineAftRegistration))).all()
    return {
        r.machine_id: RegistrationRow(
            r.machine_id,
            r.asset_number,
            r.registered,
            r.status,
            r.pos_id,
            r.reason,
            r.checked_at,
            r.registered_since,
        )
        for r in rows
    }
