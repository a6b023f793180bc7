"""Team tournaments (a house format: docs/rules.md#h1 to #h9).

``team_settings``  one row per tournament that runs teams: how a team's score is made
                   (``sum`` of its members' scores or the ``best-n`` of them, with ``n``),
                   the smallest and largest team (H1, H4).  No row: no teams yet.
``teams``          a team of one tournament: its name (unique in the tournament), who
                   registered it and when.
``team_members``   a player in a team; ``tournament_id`` is copied from the team (composite
                   FK) so that UNIQUE(tournament, player) holds a player to one team per
                   tournament (H2).  ``captain`` marks the one captain (H3; a partial
                   unique index keeps it to one per team).

Every change is also written to the audit log (``storage.audit``) under the account that
made it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime, check_text_lengths

_ID = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER only

TEAM_SCORINGS = ("sum", "best-n")


class TeamSettings(Base):
    __tablename__ = "team_settings"
    __table_args__ = (
        CheckConstraint("scoring IN ('sum', 'best-n')", name="scoring_known"),
        CheckConstraint(
            "(scoring = 'sum' AND best_n IS NULL) OR (scoring = 'best-n' AND best_n >= 1)",
            name="best_n_with_best_n",
        ),
        CheckConstraint("min_size >= 1 AND max_size >= min_size", name="sizes_in_order"),
        CheckConstraint("best_n IS NULL OR best_n <= max_size", name="best_n_fits"),
    )

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    scoring: Mapped[str] = mapped_column(String(8))
    best_n: Mapped[int | None] = mapped_column(Integer)
    min_size: Mapped[int] = mapped_column(Integer)
    max_size: Mapped[int] = mapped_column(Integer)
    set_by: Mapped[str] = mapped_column(String(100))
    set_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Team(Base):
    __tablename__ = "teams"
    __table_args__ = (
        UniqueConstraint("tournament_id", "name"),
        UniqueConstraint("id", "tournament_id"),  # the members' composite FK
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    name: Mapped[str] = mapped_column(String(80))
    registered_by: Mapped[str] = mapped_column(String(100))
    registered_at: Mapped[datetime] = mapped_column(UTCDateTime())


class TeamMember(Base):
    __tablename__ = "team_members"
    __table_args__ = (
        ForeignKeyConstraint(["team_id", "tournament_id"], ["teams.id", "teams.tournament_id"]),
        UniqueConstraint("tournament_id", "player_id"),  # H2: one team per tournament
        Index(
            "uq_team_members_one_captain",
            "team_id",
            unique=True,
            sqlite_where=text("captain"),
            postgresql_where=text("captain"),
        ),
    )

    team_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    tournament_id: Mapped[int] = mapped_column(BigInteger)
    captain: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    added_by: Mapped[str] = mapped_column(String(100))
    added_at: Mapped[datetime] = mapped_column(UTCDateTime())


check_text_lengths(TeamSettings, Team, TeamMember)
