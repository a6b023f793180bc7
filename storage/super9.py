"""Super 9 tables: settings, calendar changes, sessions, tickets, spins, claims, prizes
and the progressive jackpot ledger.

The jackpot's whole history is the ledger (S9-15): every seed, contribution, payout
and odd cent is one row with the balance after it, so the current jackpot after a
restart is the last row's balance and the history can be audited line by line.
Money is integer cents; instants are time-zone aware (:class:`UTCDateTime`).

Clauses: docs/rules.md, one anchor per clause (#s9-1 … #s9-32).
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
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
from storage.types import UTCDateTime, enum_type


class SessionStatus(enum.Enum):
    SCHEDULED = "scheduled"  # selling and taking hand-ins (S9-6)
    DRAWING = "drawing"  # opened by the director: spins count, numbers frozen (S9-23)
    CLOSED = "closed"  # settled; prizes and jackpot fixed


class TicketStatus(enum.Enum):
    SOLD = "sold"  # bought at the cash desk, top copy not keyed yet
    ENTERED = "entered"  # handed in, top copy keyed (S9-11)
    DISQUALIFIED = "disqualified"  # S9-9, S9-21, S9-24
    EXPIRED = "expired"  # never handed in, even for the next session (S9-6)


class SpinSource(enum.Enum):
    WHEEL = "wheel"
    MANUAL = "manual"  # S9-29, dual control


class LedgerKind(enum.Enum):
    SEED = "seed"  # the house starts (or restarts) the jackpot, S9-15
    CONTRIBUTION = "contribution"  # 75% of a session's buy-ins, S9-15
    PAYOUT = "payout"  # jackpot won, S9-14
    REMAINDER = "remainder"  # odd cents of equal shares, S9-20
    UNWON_CONSOLATION = "unwon-consolation"  # S9-16 pool nobody could take


class Super9Setting(Base):
    """Current settings, one JSON document per key (the audit log keeps the changes)."""

    __tablename__ = "super9_setting"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    updated_by: Mapped[str] = mapped_column(String(64), nullable=False)


class Super9CalendarChange(Base):
    """A one-off change to the S9-4 calendar: an extra session or a cancelled one."""

    __tablename__ = "super9_calendar_change"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    cancelled: Mapped[bool] = mapped_column(Boolean, nullable=False)
    changed_by: Mapped[str] = mapped_column(String(64), nullable=False)
    reason: Mapped[str] = mapped_column(Text, nullable=False)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


class Super9Session(Base):
    __tablename__ = "super9_session"
    __table_args__ = (UniqueConstraint("starts_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    status: Mapped[SessionStatus] = mapped_column(
        enum_type(SessionStatus, "super9_session_status"), nullable=False
    )
    # Settings the session was opened with: a later change never re-prices it.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False)
    wheel_url: Mapped[str | None] = mapped_column(String(255), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    opened_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    closed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Filled at close: the settlement as computed (report and receipts read it back).
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class Super9Ticket(Base):
    __tablename__ = "super9_ticket"
    __table_args__ = (
        CheckConstraint("buy_in_cents > 0", name="buy_in_positive"),
        CheckConstraint("tender IS NULL OR tender IN ('cash', 'card')", name="tender_known"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # The number printed on the ticket pair (top copy and duplicate).
    serial: Mapped[str] = mapped_column(String(32), nullable=False, unique=True)
    # The session the ticket plays in; a late hand-in moves it on (S9-6).
    session_id: Mapped[int] = mapped_column(
        ForeignKey("super9_session.id", ondelete="RESTRICT"), nullable=False, index=True
    )
    # The buyer, from the tournament's player register (eligibility S9-1–S9-3).
    # Set when the ticket rolled on from the session it was sold for (S9-6).
    rolled_from_id: Mapped[int | None] = mapped_column(
        ForeignKey("super9_session.id", ondelete="RESTRICT"), nullable=True
    )
    player_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("players.id", ondelete="RESTRICT"), nullable=False, index=True
    )
    buy_in_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    sold_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    sold_by: Mapped[str] = mapped_column(String(64), nullable=False)
    status: Mapped[TicketStatus] = mapped_column(
        enum_type(TicketStatus, "super9_ticket_status"), nullable=False
    )
    # Top copy as keyed at hand-in (S9-11): sorted, comma-separated.
    numbers: Mapped[str | None] = mapped_column(String(64), nullable=True)
    handed_in_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    handed_in_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The verification section as keyed at hand-in (S9-7): name, id, contact, signature.
    verification: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    disqualified_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    # How the buy-in was paid (cash or card); NULL on tickets sold before it was kept: cash.
    tender: Mapped[str | None] = mapped_column(String(8), nullable=True)


class Super9Spin(Base):
    __tablename__ = "super9_spin"
    __table_args__ = (
        UniqueConstraint("session_id", "seq"),
        UniqueConstraint("session_id", "game_no"),
        CheckConstraint("number IS NULL OR (number >= 0 AND number <= 36)", name="number_range"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[int] = mapped_column(
        ForeignKey("super9_session.id", ondelete="RESTRICT"), nullable=False
    )
    seq: Mapped[int] = mapped_column(Integer, nullable=False)  # arrival order in the session
    game_no: Mapped[int | None] = mapped_column(Integer, nullable=True)  # wheel game number
    number: Mapped[int | None] = mapped_column(Integer, nullable=True)  # None: void awaiting
    source: Mapped[SpinSource] = mapped_column(
        enum_type(SpinSource, "super9_spin_source"), nullable=False
    )
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    keyed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)  # S9-29
    confirmed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)  # S9-29
    voided: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    voided_by: Mapped[str | None] = mapped_column(String(64), nullable=True)  # S9-18
    void_reason: Mapped[str | None] = mapped_column(Text, nullable=True)


class Super9Claim(Base):
    """A "SUPER 9" shout registered by staff with the duplicate keyed (S9-9, S9-14, S9-22)."""

    __tablename__ = "super9_claim"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[int] = mapped_column(
        ForeignKey("super9_session.id", ondelete="RESTRICT"), nullable=False, index=True
    )
    ticket_id: Mapped[int] = mapped_column(
        ForeignKey("super9_ticket.id", ondelete="RESTRICT"), nullable=False
    )
    duplicate: Mapped[str] = mapped_column(String(128), nullable=False)  # as keyed
    at_seq: Mapped[int] = mapped_column(Integer, nullable=False)  # last spin seq at the claim
    valid: Mapped[bool] = mapped_column(Boolean, nullable=False)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    registered_by: Mapped[str] = mapped_column(String(64), nullable=False)
    registered_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


class Super9Prize(Base):
    __tablename__ = "super9_prize"
    __table_args__ = (
        UniqueConstraint("session_id", "ticket_id", "kind"),
        CheckConstraint("amount_cents >= 0", name="amount_not_negative"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[int] = mapped_column(
        ForeignKey("super9_session.id", ondelete="RESTRICT"), nullable=False
    )
    ticket_id: Mapped[int] = mapped_column(
        ForeignKey("super9_ticket.id", ondelete="RESTRICT"), nullable=False
    )
    kind: Mapped[str] = mapped_column(String(16), nullable=False)  # jackpot / consolation
    amount_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # S9-26: the winner signs for receipt; staff record the signature reference.
    signed_by: Mapped[str | None] = mapped_column(String(128), nullable=True)
    signed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    witnessed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)


class Super9JackpotEntry(Base):
    """One movement of the progressive jackpot (S9-15); append-only."""

    __tablename__ = "super9_jackpot_entry"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # The entry before this one; unique, so two writers can never fork the history.
    prev_id: Mapped[int | None] = mapped_column(
        ForeignKey("super9_jackpot_entry.id", ondelete="RESTRICT"), nullable=True, unique=True
    )
    session_id: Mapped[int | None] = mapped_column(
        ForeignKey("super9_session.id", ondelete="RESTRICT"), nullable=True
    )
    kind: Mapped[LedgerKind] = mapped_column(
        enum_type(LedgerKind, "super9_ledger_kind"), nullable=False
    )
    amount_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)  # signed
    balance_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)  # after this row
    at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
