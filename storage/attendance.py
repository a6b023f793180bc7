"""T22 roll call: who a floor attendant saw at their machine before a heat's start.

``seat_attendance``   one row per seat the attendant marked, present or absent, with who
                      marked it and when (the latest mark stands; every mark is also in the
                      audit log).  A heat has "had a roll call" once any of its seats has a
                      row.  Marks are open until the heat starts; at the start
                      (``begin_heat``) the seats not counted present forfeit (T22).
``tournament_attendance`` one row per tournament (optional): what happens at the start to a
                      seat nobody marked — ``auto`` (forfeit only when the heat had a roll
                      call, else present: venues that take no roll call keep working),
                      ``forfeit`` or ``present``.  No row means ``auto``.

Clauses: docs/rules.md#t22.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.enums import UnmarkedAtStart
from storage.types import UTCDateTime, check_text_lengths, enum_type


class SeatAttendance(Base):
    __tablename__ = "seat_attendance"
    __table_args__ = (Index("ix_seat_attendance_heat_id", "heat_id"),)

    seat_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("seats.id"), primary_key=True)
    heat_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("heats.id"))
    present: Mapped[bool] = mapped_column(Boolean)
    marked_at: Mapped[datetime] = mapped_column(UTCDateTime())
    marked_by: Mapped[str] = mapped_column(String(100))


class TournamentAttendance(Base):
    __tablename__ = "tournament_attendance"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    unmarked_at_start: Mapped[UnmarkedAtStart] = mapped_column(
        enum_type(UnmarkedAtStart, "unmarked_at_start"),
        default=UnmarkedAtStart.AUTO,
        server_default=UnmarkedAtStart.AUTO.value,
    )


check_text_lengths(SeatAttendance)
