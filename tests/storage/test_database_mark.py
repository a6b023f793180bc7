"""The database mark (storage.database_mark): written once, and the database itself
refuses to change or remove it, so a training database never becomes production."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from storage import migrate
from storage.database_mark import DatabaseKind, MarkRefused, database_kind, is_training, mark
from storage.db import make_sessionmaker
from storage.testing import EmptyDatabase

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


async def test_an_unmarked_database_is_production_and_the_mark_is_written_once(
    empty_db: EmptyDatabase,
) -> None:
    await migrate.upgrade_async(empty_db.engine)
    sessions = make_sessionmaker(empty_db.engine)
    async with sessions() as session, session.begin():
        assert await database_kind(session) is DatabaseKind.PRODUCTION
        await mark(session, DatabaseKind.TRAINING, at=NOW, by="os:root@host")
        await mark(session, DatabaseKind.TRAINING, at=NOW, by="again")  # same kind: no-op
        with pytest.raises(MarkRefused, match="training database; its kind is permanent"):
            await mark(session, DatabaseKind.PRODUCTION, at=NOW, by="os:root@host")
    async with sessions() as session:
        assert await is_training(session)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE database_mark SET kind = 'production'",
        "DELETE FROM database_mark",
    ],
)
async def test_the_database_refuses_to_change_or_remove_the_mark(
    empty_db: EmptyDatabase, statement: str
) -> None:
    await migrate.upgrade_async(empty_db.engine)
    sessions = make_sessionmaker(empty_db.engine)
    async with sessions() as session, session.begin():
        await mark(session, DatabaseKind.TRAINING, at=NOW, by="os:root@host")
    with pytest.raises(DBAPIError, match="database_mark is permanent"):
        async with sessions() as session, session.begin():
            await session.execute(text(statement))
    async with sessions() as session:
        assert await is_training(session)


async def test_postgres_refuses_truncate_too(empty_db: EmptyDatabase, db_backend: str) -> None:
    if db_backend != "postgresql":
        pytest.skip("TRUNCATE is PostgreSQL's (SQLite's DELETE is refused above)")
    await migrate.upgrade_async(empty_db.engine)
    sessions = make_sessionmaker(empty_db.engine)
    async with sessions() as session, session.begin():
        await mark(session, DatabaseKind.TRAINING, at=NOW, by="os:root@host")
    with pytest.raises(DBAPIError, match="database_mark is permanent"):
        async with sessions() as session, session.begin():
            await session.execute(text("TRUNCATE database_mark"))
