"""T15 prizes of the slot tournament: what is advertised, the surplus, what was paid.

``prize_schedule``  one row per (tournament, stage, place): the advertised minimum in
                    integer cents (T15: the least that will be paid) and the place's share
                    of the surplus (0 until the director apportions one).
``prize_surplus``   one row per (tournament, stage): the director's decision on the surplus
                    beyond the minimums — the amount, who decided, why and when.  The
                    shares on ``prize_schedule`` add up to it (checked by the service).
``prize_payouts``   one row per paid place: the winning entry and its player (composite FK:
                    the player is the entry's, prizes are not transferable), the amount
                    paid, the ID or card the signer keyed, the signature reference, the
                    witness, who paid and when.

Every change is also written to the audit log (``storage.audit``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

# Loaded with the tables it watches: no writer (the host's CLI) is without its listeners.
import storage.change_feed  # noqa: F401
from storage.db import Base
from storage.enums import Stage
from storage.types import UTCDateTime, check_text_lengths, enum_type

_ID = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER only


class PrizePlace(Base):
    __tablename__ = "prize_schedule"
    __table_args__ = (
        UniqueConstraint("tournament_id", "stage", "place"),
        CheckConstraint("place >= 1", name="place_positive"),
        CheckConstraint("minimum_cents > 0", name="minimum_positive_rule_15"),
        CheckConstraint("surplus_cents >= 0", name="surplus_not_negative"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    place: Mapped[int] = mapped_column(Integer)
    minimum_cents: Mapped[int] = mapped_column(BigInteger)
    surplus_cents: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    set_by: Mapped[str] = mapped_column(String(100))
    set_at: Mapped[datetime] = mapped_column(UTCDateTime())


class PrizeSurplus(Base):
    __tablename__ = "prize_surplus"
    __table_args__ = (CheckConstraint("surplus_cents >= 0", name="surplus_not_negative"),)

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"), primary_key=True)
    surplus_cents: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(Text)
    decided_by: Mapped[str] = mapped_column(String(100))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime())


class PrizePayout(Base):
    __tablename__ = "prize_payouts"
    __table_args__ = (
        UniqueConstraint("tournament_id", "stage", "place"),
        ForeignKeyConstraint(
            ["entry_id", "tournament_id", "player_id"],
            ["entries.id", "entries.tournament_id", "entries.player_id"],
        ),
        CheckConstraint("amount_cents > 0", name="amount_positive"),
        CheckConstraint("witness <> signer", name="witness_not_signer_rule_15"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(BigInteger)
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    place: Mapped[int] = mapped_column(Integer)
    entry_id: Mapped[int] = mapped_column(BigInteger)
    player_id: Mapped[int] = mapped_column(BigInteger)
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    signer: Mapped[str] = mapped_column(String(32))  # the ID or card number keyed
    signature: Mapped[str] = mapped_column(String(200))  # receipt / signature reference
    witness: Mapped[str] = mapped_column(String(200))
    paid_by: Mapped[str] = mapped_column(String(100))
    paid_at: Mapped[datetime] = mapped_column(UTCDateTime())


check_text_lengths(PrizePlace, PrizeSurplus, PrizePayout)
