"""Floor tables: tournament banks and the machines in them.

The floor file seeds these rows; after that the database is the truth, so a machine a
technician adds or moves at run time survives a restart (see :mod:`gateway.floor`).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime


class FloorBank(Base):
    __tablename__ = "floor_bank"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    # A bank runs heats only once enabled (``reelgate bank enable``) after a clean check.
    enabled: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    enabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    enabled_by: Mapped[str | None] = mapped_column(String(64), nullable=True)


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
