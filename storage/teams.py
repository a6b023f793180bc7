"""Team tournaments (a house format: docs/rules.md#h1 to #h9).

``team_settings``  one row per tournament that runs teams: how a team's score is made
                   (``sum`` of its members' scores or the ``best-n`` of them, with ``n``),
                   the smallest and largest team (H1, H4), and how many teams the
                   qualifying cut sends on (``advance``, H10; NULL: no cut).  No row:
                   no teams yet.
``teams``          a team of one tournament: its name (unique in the tournament), who
                   registered it and when.
``team_members``   a player in a team; ``tournament_id`` is copied from the team (composite
                   FK) so that UNIQUE(tournament, player) holds a player to one team per
                   tournament (H2).  ``captain`` marks the one captain (H3; a partial
                   unique index keeps it to one per team).
``team_prize_schedule``  the advertised prize per team place of a stage, integer cents
                   (H11).
``team_prize_payouts``  one row per paid team place: the team, the captain who signed
                   for it (H3), the amount, the signature, the witness, who paid and
                   when (H12).

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

# Loaded with the tables it watches: no writer (the host's CLI) is without its listeners.
import storage.change_feed  # noqa: F401
from storage.db import Base
from storage.enums import Stage
from storage.types import UTCDateTime, check_text_lengths, enum_type

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
        CheckConstraint("advance IS NULL OR advance >= 1", name="advance_positive_h10"),
    )

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    scoring: Mapped[str] = mapped_column(String(8))
    best_n: Mapped[int | None] = mapped_column(Integer)
    min_size: Mapped[int] = mapped_column(Integer)
    max_size: Mapped[int] = mapped_column(Integer)
    advance: Mapped[int | None] = mapped_column(Integer)  # H10: NULL, no team cut
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


class TeamPrizePlace(Base):
    __tablename__ = "team_prize_schedule"
    __table_args__ = (
        UniqueConstraint("tournament_id", "stage", "place"),
        CheckConstraint("place >= 1", name="place_positive"),
        CheckConstraint("cents > 0", name="cents_positive_h11"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    place: Mapped[int] = mapped_column(Integer)
    cents: Mapped[int] = mapped_column(BigInteger)
    set_by: Mapped[str] = mapped_column(String(100))
    set_at: Mapped[datetime] = mapped_column(UTCDateTime())


class TeamPrizePayout(Base):
    __tablename__ = "team_prize_payouts"
    __table_args__ = (
        UniqueConstraint("tournament_id", "stage", "place"),  # H12: a place is paid once
        ForeignKeyConstraint(["team_id", "tournament_id"], ["teams.id", "teams.tournament_id"]),
        CheckConstraint("amount_cents > 0", name="amount_positive"),
        CheckConstraint("witness <> signer", name="witness_not_signer_h12"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(BigInteger)
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    place: Mapped[int] = mapped_column(Integer)
    team_id: Mapped[int] = mapped_column(BigInteger)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))  # the captain (H3)
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    signer: Mapped[str] = mapped_column(String(32))
    signature: Mapped[str] = mapped_column(String(200))
    witness: Mapped[str] = mapped_column(String(200))
    paid_by: Mapped[str] = mapped_column(String(100))
    paid_at: Mapped[datetime] = mapped_column(UTCDateTime())


check_text_lengths(TeamSettings, Team, TeamMember, TeamPrizePlace, TeamPrizePayout)
