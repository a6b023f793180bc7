"""Append-only, tamper-evident audit log: every change a person makes is recorded here.

Each row carries ``hash = sha256(prev_hash + canonical_json(row))`` where the canonical
JSON covers the row's position, instant, actor, action, subject, reason and details.
Editing, deleting or reordering any row breaks the chain from that row on, and
:func:`verify` names the first row that no longer checks out.  A single chain-head row
(``audit_chain_head``, id 1) holds the last position and hash; writers serialise on it
(``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite transactions are already
``BEGIN IMMEDIATE``), so positions are gapless and the chain never forks.  The head also
reveals a truncated tail.

The lock is held until the caller's transaction ends, so record the audit row in the
same transaction as the change it describes and commit promptly.
"""

from __future__ import annotations

import enum
import hashlib
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, Index, Integer, String, Text, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime, utcnow

GENESIS_HASH = "0" * 64
_VERIFY_BATCH = 2000
_MAX_TEXT = {"actor": 100, "action": 100, "subject": 200}

# Facts about *how* a change was made that belong in every audit row it writes — e.g.
# a keyed time: ``{"clock": {"keyed_at": ..., "real_at": ..., "reason": ...}}``.  Set
# by the command around its work (:func:`annotated`), merged into ``details``.
ANNOTATION: ContextVar[dict[str, Any] | None] = ContextVar("audit_annotation", default=None)


@contextmanager
def annotated(**facts: Any) -> Iterator[None]:
    """Every row recorded inside the block carries ``facts`` in its details."""
    token = ANNOTATION.set({**(ANNOTATION.get() or {}), **facts})
    try:
        yield
    finally:
        ANNOTATION.reset(token)


class AuditEntry(Base):
    __tablename__ = "audit_log"
    __table_args__ = (
        Index("ix_audit_log_subject", "subject"),
        Index("ix_audit_log_at", "at"),
    )

    # The chain position, assigned under the head lock (not a sequence: no gaps).
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    actor: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(100))
    subject: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str | None] = mapped_column(Text)
    details: Mapped[str] = mapped_column(Text)  # canonical JSON text, hashed as stored
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64), unique=True)

    def details_dict(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.details)
        return loaded


class AuditChainHead(Base):
    __tablename__ = "audit_chain_head"
    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_id: Mapped[int] = mapped_column(BigInteger)
    last_hash: Mapped[str] = mapped_column(String(64))


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    rows_checked: int
    last_id: int
    last_hash: str
    first_bad_id: int | None = None
    problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "rows_checked": self.rows_checked,
            "last_id": self.last_id,
            "last_hash": self.last_hash,
            "first_bad_id": self.first_bad_id,
            "problem": self.problem,
        }


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    raise TypeError(f"audit details: {type(value).__name__} is not JSON-serialisable")


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8, no NaN: one text per value, so one hash."""
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_json_default,
    )


def row_hash(
    *,
    prev_hash: str,
    id: int,
    at: datetime,
    actor: str,
    action: str,
    subject: str,
    reason: str | None,
    details: str,
) -> str:
    """The chained hash of one row (``details`` is the stored canonical JSON text)."""
    body = canonical_json(
        {
            "id": id,
            "at": at.isoformat(timespec="microseconds"),
            "actor": actor,
            "action": action,
            "subject": subject,
            "reason": reason,
            "details": details,
        }
    )
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def _hash_of(entry: AuditEntry, prev_hash: str) -> str:
    return row_hash(
        prev_hash=prev_hash,
        id=entry.id,
        at=entry.at,
        actor=entry.actor,
        action=entry.action,
        subject=entry.subject,
        reason=entry.reason,
        details=entry.details,
    )


def _check_text(field: str, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"audit {field} must be a non-empty string")
    if len(value) > _MAX_TEXT[field]:
        raise ValueError(f"audit {field} longer than {_MAX_TEXT[field]} characters")


async def _lock_head(session: AsyncSession) -> AuditChainHead:
    """Lock the chain head for this transaction, creating it on the very first record."""
    locked = select(AuditChainHead).where(AuditChainHead.id == 1).with_for_update()
    locked = locked.execution_options(populate_existing=True)
    head = (await session.execute(locked)).scalar_one_or_none()
    if head is not None:
        return head
    # Two first writers may race here: ON CONFLICT lets the loser fall through to the lock.
    dialect = session.get_bind().dialect.name
    values = {"id": 1, "last_id": 0, "last_hash": GENESIS_HASH}
    if dialect == "postgresql":
        await session.execute(
            postgresql.insert(AuditChainHead).values(**values).on_conflict_do_nothing()
        )
    elif dialect == "sqlite":
        await session.execute(
            sqlite.insert(AuditChainHead).values(**values).on_conflict_do_nothing()
        )
    else:  # pragma: no cover - only the two supported backends
        raise RuntimeError(f"audit log: unsupported database {dialect}")
    return (await session.execute(locked)).scalar_one()


async def record(
    session: AsyncSession,
    *,
    actor: str,
    action: str,
    subject: str,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one row to the audit chain inside the caller's transaction.

    Bad input (empty actor, unserialisable details) raises before anything is written.
    """
    _check_text("actor", actor)
    _check_text("action", action)
    _check_text("subject", subject)
    details_text = canonical_json({**(details or {}), **(ANNOTATION.get() or {})})
    head = await _lock_head(session)
    entry = AuditEntry(
        id=head.last_id + 1,
        at=utcnow(),
        actor=actor,
        action=action,
        subject=subject,
        reason=reason,
        details=details_text,
        prev_hash=head.last_hash,
    )
    entry.hash = _hash_of(entry, head.last_hash)
    session.add(entry)
    head.last_id = entry.id
    head.last_hash = entry.hash
    await session.flush()
    return entry


async def verify(session: AsyncSession) -> VerifyResult:
    """Recompute the whole chain; report the first row that does not check out."""
    prev_hash = GENESIS_HASH
    expected_id = 1
    checked = 0
    while True:
        batch = (
            (
                await session.execute(
                    select(AuditEntry)
                    .where(AuditEntry.id >= expected_id)
                    .order_by(AuditEntry.id)
                    .limit(_VERIFY_BATCH)
                    .execution_options(populate_existing=True)
                )
            )
            .scalars()
            .all()
        )
        for entry in batch:
            problem = None
            if entry.id != expected_id:
                problem = f"row {expected_id} is missing (next row is {entry.id})"
                bad_id = expected_id
            elif entry.prev_hash != prev_hash:
                problem = f"row {entry.id} does not link to the row before it"
                bad_id = entry.id
            elif _hash_of(entry, prev_hash) != entry.hash:
                problem = f"row {entry.id} was altered (its hash does not match its content)"
                bad_id = entry.id
            if problem is not None:
                return VerifyResult(False, checked, expected_id - 1, prev_hash, bad_id, problem)
            prev_hash = entry.hash
            expected_id += 1
            checked += 1
        if len(batch) < _VERIFY_BATCH:
            break
    head = await session.get(AuditChainHead, 1, populate_existing=True)
    head_id, head_hash = (head.last_id, head.last_hash) if head else (0, GENESIS_HASH)
    if head_id != checked or head_hash != prev_hash:
        return VerifyResult(
            False,
            checked,
            checked,
            prev_hash,
            checked + 1 if head_id > checked else head_id,
            f"chain head says row {head_id} is last, but the log ends at row {checked}"
            if head_id != checked
            else f"chain head hash does not match row {checked}",
        )
    return VerifyResult(True, checked, checked, prev_hash)
