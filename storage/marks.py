"""SNMP trap marks on machines, kept across restarts.

A board's trap (link down, power lost, door opened) marks its machine until a technician
has checked it; a marked machine is refused by preflight and is a malfunction candidate
in a heat (T20/T21).  A mark held only in memory was lost at a restart, so a machine
that lost power overnight looked fine in the morning: every mark is a row here, written
when the trap arrives, deleted when a technician clears it (audited, :func:`clear`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Boolean, Integer, String, delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from storage import audit
from storage.db import Base
from storage.types import UTCDateTime


class MachineTrapMark(Base):
    __tablename__ = "machine_trap_mark"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    machine_id: Mapped[str] = mapped_column(String(32), nullable=False, index=True)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)  # the event kind's value
    at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)  # when the trap came
    heat_id: Mapped[str] = mapped_column(String(64), nullable=False, default="")
    mid_heat: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)


@dataclass(frozen=True, slots=True)
class MarkRow:
    machine_id: str
    kind: str
    at: datetime
    heat_id: str
    mid_heat: bool


class MarkStore:
    """The ``machine_trap_mark`` table, each call its own transaction."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def load(self) -> list[MarkRow]:
        """Every mark, oldest first (per machine, in the order the traps came)."""
        async with self.sessions() as session:
            rows = await session.scalars(select(MachineTrapMark).order_by(MachineTrapMark.id))
            return [MarkRow(r.machine_id, r.kind, r.at, r.heat_id, r.mid_heat) for r in rows.all()]

    async def add(self, mark: MarkRow) -> None:
        async with self.sessions.begin() as session:
            session.add(
                MachineTrapMark(
                    machine_id=mark.machine_id,
                    kind=mark.kind,
                    at=mark.at,
                    heat_id=mark.heat_id,
                    mid_heat=mark.mid_heat,
                )
            )

    async def clear(self, machine_id: str, *, actor: str, reason: str) -> list[MarkRow]:
        """A technician checked the machine: its marks go, with an audit entry naming who
        and why (in the same transaction).  Returns the marks cleared (none: nothing is
        written)."""
        async with self.sessions.begin() as session:
            return await clear_marks(session, machine_id, actor=actor, reason=reason)


async def clear_marks(
    session: AsyncSession, machine_id: str, *, actor: str, reason: str
) -> list[MarkRow]:
    """:meth:`MarkStore.clear` inside the caller's transaction (the API's request)."""
    rows = (
        await session.scalars(
            select(MachineTrapMark)
            .where(MachineTrapMark.machine_id == machine_id)
            .order_by(MachineTrapMark.id)
        )
    ).all()
    cleared = [MarkRow(r.machine_id, r.kind, r.at, r.heat_id, r.mid_heat) for r in rows]
    if not cleared:
        return []
    await session.execute(delete(MachineTrapMark).where(MachineTrapMark.machine_id == machine_id))
    await audit.record(
        session,
        actor=actor,
        action="machine.clear_mark",
        subject=f"machine:{machine_id}",
        reason=reason,
        details={"marks": [{"kind": m.kind, "at": m.at.isoformat()} for m in cleared]},
    )
    return cleared
