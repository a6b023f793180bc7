"""Prizes paid to the winner's machine (house clauses P1–P7, docs/rules.md).

``machine_prize_setting``    one row (id 1) when the venue has decided: whether prizes may
                             be paid to a machine at all (off until a director turns it on,
                             P1), how many days the promotional credits last, who decided,
                             why and when.
``machine_prize_transfers``  one row per transfer, written **before** the machine is told
                             anything (P4): what it pays (``kind`` and ``ref``: a T15 place
                             or an HS7 draw), the machine, the amount, the SAS AFT
                             transaction ID it will carry (the same on every retry, so a
                             machine that already took it answers with its first outcome
                             and never credits twice), the receipt (signer, signature,
                             witness), who asked, and then its outcome: ``journaled`` (sent
                             or about to be; its outcome not known), ``done``, ``refused``
                             (nothing moved; the prize stays unpaid) or ``unknown`` (the
                             machine no longer says: a person must look, P5).  At most one
                             transfer per prize is journaled or done (a partial unique index).

A done transfer's payout is the ordinary payout row (``prize_payouts``, ``hotseat_draws``),
named by ``payout_id``: the cash-up reads its tender as ``machine (AFT)`` from here (a
payout no done transfer names is cash), so no sealed table gains a column.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, CheckConstraint, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime, check_text_lengths

_ID = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER only

MACHINE_TENDER = "machine (AFT)"
"""The cash-up's tender for a prize paid as credits to the winner's machine."""

JOURNALED, DONE, REFUSED, UNKNOWN = "journaled", "done", "refused", "unknown"
OPEN = (JOURNALED, DONE)  # a prize has at most one of these


class MachinePrizeSetting(Base):
    __tablename__ = "machine_prize_setting"
    __table_args__ = (
        CheckConstraint("id = 1", name="one_row"),
        CheckConstraint("expiration_days between 1 and 9999", name="expiration_days_range"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    allowed: Mapped[bool] = mapped_column(Boolean)
    expiration_days: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    set_by: Mapped[str] = mapped_column(String(100))
    set_at: Mapped[datetime] = mapped_column(UTCDateTime())


class MachinePrizeTransfer(Base):
    __tablename__ = "machine_prize_transfers"
    __table_args__ = (
        CheckConstraint("amount_cents > 0", name="amount_positive"),
        CheckConstraint("kind in ('prize', 'hotseat')", name="kind_known"),
        CheckConstraint(
            "status in ('journaled', 'done', 'refused', 'unknown')", name="status_known"
        ),
        Index("uq_machine_prize_transfers_transaction_id", "transaction_id", unique=True),
        Index(
            "uq_machine_prize_transfers_one_open_per_prize",
            "kind",
            "ref",
            unique=True,
            sqlite_where=text("status in ('journaled', 'done')"),
            postgresql_where=text("status in ('journaled', 'done')"),
        ),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    transaction_id: Mapped[str] = mapped_column(String(20))
    kind: Mapped[str] = mapped_column(String(16))
    ref: Mapped[str] = mapped_column(String(100))
    machine_id: Mapped[str] = mapped_column(String(32))
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    expiration_days: Mapped[int] = mapped_column(Integer)
    signer: Mapped[str] = mapped_column(String(32))
    signature: Mapped[str] = mapped_column(String(200))
    witness: Mapped[str] = mapped_column(String(200))
    requested_by: Mapped[str] = mapped_column(String(100))
    journaled_at: Mapped[datetime] = mapped_column(UTCDateTime())
    sends: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    status: Mapped[str] = mapped_column(String(16))
    egm_status: Mapped[int | None] = mapped_column(Integer)  # the LP 72 status byte last read
    reason: Mapped[str | None] = mapped_column(Text)
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Once done: the payout row it made (``prize_payouts.id`` or ``hotseat_draws.id``).
    payout_id: Mapped[int | None] = mapped_column(BigInteger)


check_text_lengths(MachinePrizeSetting, MachinePrizeTransfer)
