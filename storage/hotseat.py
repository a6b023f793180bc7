"""Hot-seat draws and wild cards (house clauses HS1–HS7, docs/rules.md).

``hotseat_commitments``  one row per subject (``heat:ID`` or ``wildcard:TOURNAMENT:STAGE``):
                         the heat, or the tournament and stage, the number of draws and the
                         prize per draw, the seed (hex; kept so it can be revealed, never
                         shown before ``revealed_at``), its SHA-256 commitment, who
                         committed and when, who revealed and when.
``hotseat_draws``        one row per draw taken: its index and moment (NULL for a wild
                         card), the candidates, those that could not win, every pick and
                         the winner (JSON lists of text), the winning entry, the prize, and
                         the payout (who asked, the witness who approved, the signer's ID
                         or card, the receipt reference, when).

Every change is also written to the audit log (``storage.audit``); the seed only at reveal.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    ForeignKey,
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


class HotseatCommitment(Base):
    __tablename__ = "hotseat_commitments"
    __table_args__ = (
        UniqueConstraint("subject"),
        CheckConstraint("draws >= 1", name="draws_positive_hs2"),
        CheckConstraint("prize_cents >= 0", name="prize_not_negative_hs2"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    subject: Mapped[str] = mapped_column(String(64))
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    heat_id: Mapped[int | None] = mapped_column(ForeignKey("heats.id"))  # NULL: a wild card
    draws: Mapped[int] = mapped_column(Integer)
    prize_cents: Mapped[int] = mapped_column(BigInteger)
    # The seed is HMAC(audit key, nonce, subject): the database holds the nonce only, so
    # an insider who reads it cannot learn the draw before the reveal (HS5).
    nonce_hex: Mapped[str] = mapped_column(String(64))
    seed_hex: Mapped[str | None] = mapped_column(String(64))  # set at the reveal
    commitment: Mapped[str] = mapped_column(String(64))
    committed_by: Mapped[str] = mapped_column(String(100))
    committed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revealed_by: Mapped[str | None] = mapped_column(String(100))
    revealed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class HotseatDraw(Base):
    __tablename__ = "hotseat_draws"
    __table_args__ = (
        UniqueConstraint("commitment_id", "draw_index"),
        CheckConstraint("draw_index >= 0", name="draw_index_not_negative"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    commitment_id: Mapped[int] = mapped_column(ForeignKey("hotseat_commitments.id"))
    draw_index: Mapped[int] = mapped_column(Integer)
    moment: Mapped[datetime | None] = mapped_column(UTCDateTime())
    candidates: Mapped[str] = mapped_column(Text)  # JSON list, sorted
    ineligible: Mapped[str] = mapped_column(Text)  # JSON list, sorted
    picks: Mapped[str] = mapped_column(Text)  # JSON list, in drawing order
    winner: Mapped[str | None] = mapped_column(String(64))  # NULL: void (HS3)
    entry_id: Mapped[int | None] = mapped_column(ForeignKey("entries.id"))
    prize_cents: Mapped[int] = mapped_column(BigInteger)
    taken_by: Mapped[str] = mapped_column(String(100))
    taken_at: Mapped[datetime] = mapped_column(UTCDateTime())
    paid_by: Mapped[str | None] = mapped_column(String(100))
    witness: Mapped[str | None] = mapped_column(String(200))
    signer: Mapped[str | None] = mapped_column(String(32))
    signature: Mapped[str | None] = mapped_column(String(200))
    paid_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


check_text_lengths(HotseatCommitment, HotseatDraw)
