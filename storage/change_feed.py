"""The change feed: a screen-facing outbox written in the same transaction as each change.

Theory of operation
-------------------
Every stored change a screen shows (a score by the gateway or keyed by a director, a
correction, a disqualification, a card draw, a heat's status, a sale, a Super 9 spin,
void or claim) is a row of a *watched* table (:data:`WATCHED`) written through the ORM.
Two session events, like :mod:`storage.seals`' and beside them, make sure no writer —
the gateway, the CLI on the host, the API, the console — can forget to announce it:

* ``after_flush`` notes what each watched row inserted, changed or deleted belongs to:
  its table, tournament, heat and Super 9 session (:class:`Subject`);
* ``before_commit`` writes one :class:`Change` row per distinct subject, in the same
  transaction, and on PostgreSQL ``NOTIFY``\\ s :data:`CHANNEL` with the newest id (a
  notification is delivered at commit, never for a transaction rolled back).

The reader (``gateway.web.change_reader``) follows the table by id: woken by the
notification on PostgreSQL, by a short poll on SQLite.  A row is a *hint* ("recompute
what shows this tournament / heat / session"), never a delta: a duplicate or a row left
over from a rolled-back savepoint costs one recomputation, nothing more, so savepoints
are not tracked here.  Rows are pruned by age (:func:`prune`): the table stays bounded.

Ids are assigned at insert, not at commit: on PostgreSQL two writers may commit out of
id order, so a reader that has seen id 12 may later find 11.  :func:`read_after` returns
rows by id; the reader keeps the gaps it saw open for a grace period (see there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import (
    BigInteger,
    Engine,
    Integer,
    String,
    delete,
    event,
    func,
    insert,
    select,
    text,
)
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, Session, UOWTransaction, mapped_column

from storage.db import Base
from storage.types import UTCDateTime, utcnow

CHANNEL = "reelgate_changes"  # the PostgreSQL NOTIFY channel
_NOTED = "reelgate_change_feed"  # session.info: {Subject: None}, insertion-ordered
_ID = BigInteger().with_variant(Integer(), "sqlite")
_PRESENT: WeakKeyDictionary[Engine, bool] = WeakKeyDictionary()

# Watched table -> (its tournament column, its heat column, its Super 9 session column);
# "id" names the row's own id (a heat, a session).  A table not here is not on a screen.
WATCHED: dict[str, tuple[str | None, str | None, str | None]] = {
    "tournaments": ("id", None, None),
    "scores": ("tournament_id", "heat_id", None),
    "seats": ("tournament_id", "heat_id", None),
    "heats": ("tournament_id", "id", None),
    "entries": ("tournament_id", None, None),
    "entry_purchases": ("tournament_id", None, None),
    "refunds": ("tournament_id", None, None),
    "disqualifications": ("tournament_id", None, None),
    "card_draws": ("tournament_id", None, None),
    "prize_payouts": ("tournament_id", None, None),
    "hotseat_commitments": ("tournament_id", "heat_id", None),  # HS4 commit, HS5 reveal
    "team_settings": ("tournament_id", None, None),  # H1, H10: the team board
    "teams": ("tournament_id", None, None),
    "team_members": ("tournament_id", None, None),
    "team_prize_schedule": ("tournament_id", None, None),  # H11
    "team_prize_payouts": ("tournament_id", None, None),  # H12
    "super9_session": (None, None, "id"),
    "super9_ticket": (None, None, "session_id"),
    "super9_spin": (None, None, "session_id"),
    "super9_claim": (None, None, "session_id"),
    "super9_prize": (None, None, "session_id"),
    "super9_jackpot_entry": (None, None, "session_id"),
}


class Change(Base):
    __tablename__ = "change_feed"

    id: Mapped[int] = mapped_column(_ID, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), nullable=False, index=True)
    kind: Mapped[str] = mapped_column(String(40), nullable=False)  # the watched table
    tournament_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    heat_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    session_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # Super 9


@dataclass(frozen=True, slots=True)
class Subject:
    """What one change belongs to: the screens showing any of these recompute."""

    kind: str
    tournament_id: int | None = None
    heat_id: int | None = None
    session_id: int | None = None


@dataclass(frozen=True, slots=True)
class ChangeRow:
    id: int
    at: datetime
    subject: Subject


def _value(state: Any, column: str | None) -> int | None:
    if column is None:
        return None
    # The loaded value only: a deleted row's attributes must not be loaded again.
    value = state.dict.get(column)
    if value is None and state.identity and column == "id":
        value = state.identity[0]
    return None if value is None else int(value)


def subject_of(obj: Any) -> Subject | None:
    """The subject of an ORM object of a watched table, ``None`` for any other."""
    name = getattr(type(obj), "__tablename__", None)
    columns = WATCHED.get(name) if isinstance(name, str) else None
    if columns is None:
        return None
    state = sa_inspect(obj)
    t, h, s = (_value(state, c) for c in columns)
    return Subject(str(name), t, h, s)


@event.listens_for(Session, "after_flush")
def _collect(session: Session, _flush: UOWTransaction) -> None:
    noted: dict[Subject, None] | None = None
    groups = ((session.new, False), (session.dirty, True), (session.deleted, False))
    for group, changed_only in groups:
        for obj in group:
            if changed_only and not session.is_modified(obj, include_collections=False):
                continue
            subject = subject_of(obj)
            if subject is not None:
                if noted is None:
                    noted = session.info.setdefault(_NOTED, {})
                noted[subject] = None


def note(session: Session, subject: Subject) -> None:
    """Announce a change made without the ORM's unit of work (a bulk statement)."""
    session.info.setdefault(_NOTED, {})[subject] = None


# First of the commit's hooks (insert=True): its insert is done before the seals lock the
# audit chain's head, which other writers wait on.
@event.listens_for(Session, "before_commit", insert=True)
def _write_at_commit(session: Session) -> None:
    if session.new or session.dirty or session.deleted:
        session.flush()  # the commit would flush next; do it now so its rows are noted
    noted: dict[Subject, None] = session.info.pop(_NOTED, {})
    if not noted or not _table_present(session):
        return
    now = utcnow()
    values = [
        {
            "at": now,
            "kind": s.kind,
            "tournament_id": s.tournament_id,
            "heat_id": s.heat_id,
            "session_id": s.session_id,
        }
        for s in noted
    ]
    session.execute(insert(Change), values)
    if session.get_bind().dialect.name == "postgresql":
        # Delivered at COMMIT to every listener; a rollback sends nothing.
        session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": CHANNEL})


def _table_present(session: Session) -> bool:
    """Whether this database has the table (a database still at an older revision, as a
    migration test writes it, has none): looked up once per engine."""
    connection = session.connection()
    engine = connection.engine
    present = _PRESENT.get(engine)
    if present is None:
        present = _PRESENT[engine] = sa_inspect(connection).has_table(Change.__tablename__)
    return present


def forget_schema(engine: Engine) -> None:
    """The schema changed (a migration ran on ``engine``): look the table up again."""
    _PRESENT.pop(engine, None)


@event.listens_for(Session, "after_soft_rollback")
def _rolled_back(session: Session, transaction: Any) -> None:
    if transaction.parent is None:
        session.info.pop(_NOTED, None)


@event.listens_for(Session, "after_transaction_end")
def _ended(session: Session, transaction: Any) -> None:
    if transaction.parent is None:
        session.info.pop(_NOTED, None)


async def last_id(session: AsyncSession) -> int:
    """The newest change's id (0 when there is none)."""
    return int(await session.scalar(select(func.coalesce(func.max(Change.id), 0))) or 0)


async def read_after(session: AsyncSession, after: int, *, limit: int = 1000) -> list[ChangeRow]:
    """The changes with an id above ``after``, oldest first, at most ``limit``."""
    rows = (
        await session.scalars(
            select(Change).where(Change.id > after).order_by(Change.id).limit(limit)
        )
    ).all()
    return [
        ChangeRow(r.id, r.at, Subject(r.kind, r.tournament_id, r.heat_id, r.session_id))
        for r in rows
    ]


async def read_ids(session: AsyncSession, ids: Sequence[int]) -> list[ChangeRow]:
    """The changes among ``ids`` now committed (a gap the reader waits on)."""
    if not ids:
        return []
    rows = (
        await session.scalars(select(Change).where(Change.id.in_(list(ids))).order_by(Change.id))
    ).all()
    return [
        ChangeRow(r.id, r.at, Subject(r.kind, r.tournament_id, r.heat_id, r.session_id))
        for r in rows
    ]


async def prune(session: AsyncSession, *, now: datetime, keep: timedelta) -> int:
    """Delete the changes older than ``keep``; returns how many."""
    result = await session.execute(delete(Change).where(Change.at < now - keep))
    return int(getattr(result, "rowcount", 0) or 0)
