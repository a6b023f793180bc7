"""Floor tables: tournament banks and the machines in them.

The floor file seeds these rows; after that the database is the truth, so a machine a
technician adds or moves at run time survives a restart (see :mod:`gateway.floor`).

In a multi-venue tournament every venue's gateway is a client of one central database;
``floor_bank.venue`` says whose banks are whose, so each gateway loads (and leases) only
its own.  NULL is the single-venue installation: its one gateway serves every bank.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, String, Text, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.enums import Stage
from storage.tournament import Heat, Score
from storage.types import UTCDateTime


class FloorBank(Base):
    __tablename__ = "floor_bank"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    # A bank runs heats only once enabled (``reelgate bank enable``) after a clean check.
    enabled: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    enabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    enabled_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The venue (site) whose gateway serves the bank; NULL: the only venue (revision 0015).
    venue: Mapped[str | None] = mapped_column(String(64), nullable=True)


class FloorMachine(Base):
    __tablename__ = "floor_machine"

    machine_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    bank_name: Mapped[str] = mapped_column(
        String(32), ForeignKey("floor_bank.name", ondelete="RESTRICT"), nullable=False
    )
    # T11: machines are allocated in sequential order; position keeps the file order.
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    endpoint: Mapped[str] = mapped_column(String(255), nullable=False)
    # Set by ``bank enable --exclude M --reason R``: the machine sits out until re-enabled.
    excluded_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The board's SNMP agent, if it has one (``gateway.floor.SnmpRef`` text form:
    # ``udp://host:port?user=u`` for v3 authPriv, ``?version=2c`` for v2c).  Never a
    # secret: passphrases and communities come from the SNMP secrets file (revision 0005
    # stripped the ones older databases held).  Its health is polled and its traps feed
    # preflight and T20/T21 (gateway.machines.health).
    snmp_endpoint: Mapped[str | None] = mapped_column(String(512), nullable=True)
    # The gateway's AFT host identity for this machine (SAS LP 73): registration key as
    # 40 hex digits and POS ID.  No secret: the EGM hands the key to any host that asks.
    aft_registration_key: Mapped[str | None] = mapped_column(String(40), nullable=True)
    aft_pos_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


async def venues_of_entries(
    session: AsyncSession, tournament_id: int, stage: Stage, entry_ids: Iterable[int]
) -> dict[int, str | None]:
    """Where each entry played its score of the stage: the venue of the bank of the heat
    (None: the only venue, or a bank the floor no longer has)."""
    ids = sorted(set(entry_ids))
    if not ids:
        return {}
    rows = await session.execute(
        select(Score.entry_id, FloorBank.venue)
        .join(Heat, Heat.id == Score.heat_id)
        .outerjoin(FloorBank, FloorBank.name == Heat.bank_name)
        .where(Score.tournament_id == tournament_id, Score.stage == stage, Score.entry_id.in_(ids))
    )
    return {entry_id: venue for entry_id, venue in rows}
