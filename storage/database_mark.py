"""What kind of database this is: production or training, written once, never changed.

``database_mark`` holds one row (``id = 1``) written when the database is created with
``reelgate db init`` (``kind`` = ``training`` or ``production``).  A database upgraded
from before the mark existed has no row and counts as production.  Training databases
(rehearsals, tests, whole seasons run on keyed times) accept free keyed times; every
screen, report and export says TRAINING.

The mark is permanent: no command updates or deletes it, and database triggers
(migration 0012) refuse ``UPDATE`` and ``DELETE`` on the table, so a training database
can never be promoted to production — and a copy or restore of a training database is
a training database, because the mark travels with the data.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import CheckConstraint, Integer, String, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime

TABLE = "database_mark"


class DatabaseKind(StrEnum):
    PRODUCTION = "production"
    TRAINING = "training"


class DatabaseMark(Base):
    __tablename__ = TABLE
    __table_args__ = (
        CheckConstraint("id = 1", name="single_row"),
        CheckConstraint("kind IN ('production', 'training')", name="kind"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(16))
    marked_at: Mapped[datetime] = mapped_column(UTCDateTime())
    marked_by: Mapped[str] = mapped_column(String(100))


class MarkRefused(Exception):
    """A mark that would change the kind of an already marked database."""


async def database_kind(session: AsyncSession) -> DatabaseKind:
    """The database's kind (no row: production, a database from before the mark)."""
    found = await session.scalar(select(DatabaseMark.kind).where(DatabaseMark.id == 1))
    return DatabaseKind(found) if found is not None else DatabaseKind.PRODUCTION


async def is_training(session: AsyncSession) -> bool:
    return await database_kind(session) is DatabaseKind.TRAINING


async def marked(session: AsyncSession) -> bool:
    """Whether the kind was written (False for a database from before the mark)."""
    return await session.scalar(select(DatabaseMark.id).where(DatabaseMark.id == 1)) is not None


async def mark(session: AsyncSession, kind: DatabaseKind, *, at: datetime, by: str) -> None:
    """Write the database's kind once.  The same kind again is a no-op; another kind is
    refused (a training database stays training, a production one production)."""
    current = await session.scalar(select(DatabaseMark.kind).where(DatabaseMark.id == 1))
    if current is not None:
        if current != kind.value:
            raise MarkRefused(
                f"this is a {current} database; its kind is permanent and cannot become {kind}"
            )
        return
    session.add(DatabaseMark(id=1, kind=kind.value, marked_at=at, marked_by=by[:100]))
    await session.flush()
