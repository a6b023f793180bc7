"""Walk-up sessions (a house format: docs/rules.md#w1 to #w9).

``walkup_windows``   one row per tournament and bank that runs walk-up play: the daily
                     window in venue time (``opens``/``closes`` as ``HH:MM``; a window may
                     cross midnight), a session's length and starting credits, whether it
                     is on, who set it and when (W1).
``walkup_sessions``  one walk-up at one machine: the offer made at card-in (W4), then,
                     once confirmed, the one-seat heat it became (``heat_id``, W5).  Status
                     ``offered`` (waiting for the confirm until ``expires_at``), ``started``
                     (the heat was created) or ``lapsed`` (not confirmed in time).

The session's play is the heat's: its journal, seat, score and standings are the heat's
own rows.  Every decision is also written to the audit log (``storage.audit``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
)
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime

_ID = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER only

OFFERED = "offered"
STARTED = "started"
LAPSED = "lapsed"
SESSION_STATUSES = (OFFERED, STARTED, LAPSED)


class WalkupWindow(Base):
    __tablename__ = "walkup_windows"
    __table_args__ = (
        CheckConstraint("duration_seconds > 0", name="duration_positive"),
        CheckConstraint("starting_credits > 0", name="credits_positive"),
        CheckConstraint("confirm_seconds > 0", name="confirm_positive"),
    )

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    bank_name: Mapped[str] = mapped_column(String(32), primary_key=True)
    opens: Mapped[str] = mapped_column(String(5))  # HH:MM, venue time
    closes: Mapped[str] = mapped_column(String(5))
    duration_seconds: Mapped[int] = mapped_column(Integer)
    starting_credits: Mapped[int] = mapped_column(BigInteger)
    confirm_seconds: Mapped[int] = mapped_column(Integer, default=30, server_default="30")
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    set_by: Mapped[str] = mapped_column(String(100))
    set_at: Mapped[datetime] = mapped_column(UTCDateTime())


class WalkupSession(Base):
    __tablename__ = "walkup_sessions"
    __table_args__ = (
        CheckConstraint("status IN ('offered', 'started', 'lapsed')", name="status_known"),
        Index("ix_walkup_sessions_machine_status", "machine_id", "status"),
        Index("ix_walkup_sessions_heat_id", "heat_id", unique=True),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    bank_name: Mapped[str] = mapped_column(String(32))
    machine_id: Mapped[str] = mapped_column(String(32))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    entry_id: Mapped[int] = mapped_column(ForeignKey("entries.id"))
    card: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(8))
    offered_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    confirmed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    confirmed_by: Mapped[str | None] = mapped_column(String(100))
    heat_id: Mapped[int | None] = mapped_column(ForeignKey("heats.id"))
