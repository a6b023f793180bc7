"""The heat's tournament effects: a transactional outbox beside the journal.

Theory of operation
-------------------
A heat has one truth: the journal.  Each journal step that matters to the tournament
(the heat started, the bank's scores were stored, a seat's machine malfunctioned, the
heat closed, restarted or was aborted) writes a ``heat_effect`` row *in the same
transaction* as the step itself (:func:`add`).  A crash can therefore never leave a step
without its effect, or an effect without its step.

The effects are then carried into the tournament tables by the tournament side
(``gateway.tournament.bridge``), which drains them in id order: for each pending effect
it opens one transaction, :func:`claim`\\ s the row (a locking read that skips an effect
another process has applied meanwhile), makes the tournament change and stamps the row
applied (:func:`finish`) — all in that one transaction.  An effect is thus applied
exactly once, whichever process (``serve``, a test heat, a recovery, a standby) drains
it, however often draining is retried, and a run is only *settled* once none of its
effects is pending (:func:`pending_count`).

Technician's test heats (no tournament heat) write no effects.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.heat_run import HeatRun
from storage.types import UTCDateTime, enum_type


class EffectKind(enum.Enum):
    STARTED = "started"  # unlocks about to fire: the heat's announced start (T22)
    SCORES = "scores"  # the bank's stored results: record every seat's score (T12)
    MALFUNCTION = "malfunction"  # one seat's machine failed mid-heat (T20, T21)
    CLOSED = "closed"  # every score stored: close the heat
    RESTARTED = "restarted"  # the attempt is void, the entire heat runs again (T20)
    ABORTED = "aborted"  # a director's abort: nothing of this attempt counts


class HeatEffect(Base):
    __tablename__ = "heat_effect"
    # A journal write replayed from the outage spool must not write its effects twice.
    __table_args__ = (UniqueConstraint("run_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("heat_run.id"), nullable=False, index=True)
    heat_id: Mapped[int] = mapped_column(Integer, nullable=False)
    kind: Mapped[EffectKind] = mapped_column(enum_type(EffectKind, "effect_kind"), nullable=False)
    machine_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    key: Mapped[str] = mapped_column(String(120), nullable=False)  # kind:machine:at
    at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)  # when it happened
    details: Mapped[str] = mapped_column(Text, nullable=False, default="{}")  # JSON object
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    applied_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True, index=True)
    # What applying it did: "ok", or the refusal the tournament gave (kept for the director).
    outcome: Mapped[str | None] = mapped_column(Text, nullable=True)


@dataclass(frozen=True, slots=True)
class EffectIn:
    """An effect to write with a journal step."""

    kind: EffectKind
    at: datetime
    machine_id: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.kind.value}:{self.machine_id or ''}:{self.at.isoformat()}"


@dataclass(frozen=True, slots=True)
class EffectView:
    id: int
    run_id: int
    heat_id: int
    kind: EffectKind
    machine_id: str | None
    at: datetime
    details: dict[str, Any]
    applied_at: datetime | None
    outcome: str | None


def _view(row: HeatEffect) -> EffectView:
    return EffectView(
        row.id,
        row.run_id,
        row.heat_id,
        row.kind,
        row.machine_id,
        row.at,
        json.loads(row.details),
        row.applied_at,
        row.outcome,
    )


async def add(
    session: AsyncSession,
    run_id: int,
    heat_id: int | None,
    effects: list[EffectIn] | tuple[EffectIn, ...],
    *,
    now: datetime,
) -> None:
    """Write ``effects`` in the caller's (journal step's) transaction, each once: an
    effect already written for the run (a replayed write) is not written again.  A test
    heat (``heat_id`` None) has no tournament side: nothing is written."""
    if heat_id is None or not effects:
        return
    keys = {e.key: e for e in effects}
    known = set(
        (
            await session.scalars(
                select(HeatEffect.key).where(
                    HeatEffect.run_id == run_id, HeatEffect.key.in_(list(keys))
                )
            )
        ).all()
    )
    for key, e in keys.items():
        if key in known:
            continue
        session.add(
            HeatEffect(
                run_id=run_id,
                heat_id=heat_id,
                kind=e.kind,
                machine_id=e.machine_id,
                key=key,
                at=e.at,
                details=json.dumps(dict(e.details), sort_keys=True, default=str),
                created_at=now,
            )
        )


async def pending(
    session: AsyncSession, *, run_id: int | None = None, skip_banks: Collection[str] = ()
) -> list[EffectView]:
    """Effects not yet applied, oldest first: of one run, or of every run except the
    runs of ``skip_banks``."""
    query = select(HeatEffect).where(HeatEffect.applied_at.is_(None)).order_by(HeatEffect.id)
    if run_id is not None:
        query = query.where(HeatEffect.run_id == run_id)
    if skip_banks:
        busy = select(HeatRun.id).where(HeatRun.bank_name.in_(list(skip_banks)))
        query = query.where(HeatEffect.run_id.not_in(busy))
    return [_view(r) for r in await session.scalars(query)]


async def pending_count(session: AsyncSession, run_id: int) -> int:
    n = await session.scalar(
        select(func.count())
        .select_from(HeatEffect)
        .where(HeatEffect.run_id == run_id, HeatEffect.applied_at.is_(None))
    )
    return int(n or 0)


async def claim(
    session: AsyncSession, effect_id: int, *, wait: bool = True
) -> EffectView | None:
    """Lock one pending effect for applying in this transaction; None if another
    process applied it first (then there is nothing to do) or, with ``wait`` False, is
    applying it now (its lock is skipped rather than waited for)."""
    row = await session.scalar(
        select(HeatEffect).where(HeatEffect.id == effect_id).with_for_update(skip_locked=not wait)
    )
    if row is None or row.applied_at is not None:
        return None
    return _view(row)


async def finish(session: AsyncSession, effect_id: int, *, outcome: str, now: datetime) -> None:
    """Stamp a claimed effect applied, in the same transaction as its tournament change."""
    row = await session.get(HeatEffect, effect_id)
    if row is None:  # pragma: no cover - claimed in this very transaction
        raise KeyError(f"heat effect {effect_id} not found")
    row.applied_at = now
    row.outcome = outcome


async def history(session: AsyncSession, run_id: int) -> list[EffectView]:
    """Every effect of a run, applied or not (for the director and the tests)."""
    rows = await session.scalars(
        select(HeatEffect).where(HeatEffect.run_id == run_id).order_by(HeatEffect.id)
    )
    return [_view(r) for r in rows]
