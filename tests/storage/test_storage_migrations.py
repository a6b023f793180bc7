"""Alembic: an empty database upgraded to head is exactly ``Base.metadata``, both ways."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncEngine

import storage.models  # noqa: F401  (every table on Base.metadata)
from storage import migrate
from storage.db import Base, make_sessionmaker
from storage.ranking import qualifier_cut
from storage.testing import Builder, EmptyDatabase

STALE = (
    "models differ from the migrations: add a revision with "
    '`python -m storage.migrate revision -m "what changed"` and read it before committing'
)


async def _tables(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def test_upgrade_to_head_matches_models(empty_db: EmptyDatabase) -> None:
    engine = empty_db.engine
    await migrate.upgrade_async(engine)
    assert await migrate.current_revision(engine) == migrate.head_revision()
    diffs = await migrate.schema_differences(engine)
    assert diffs == [], STALE
    assert await _tables(engine) == set(Base.metadata.tables) | {"alembic_version"}


async def test_downgrade_to_base_and_back(empty_db: EmptyDatabase) -> None:
    engine = empty_db.engine
    await migrate.upgrade_async(engine)
    await migrate.downgrade_async(engine, "base")
    assert await _tables(engine) == {"alembic_version"}
    assert await migrate.current_revision(engine) is None
    await migrate.upgrade_async(engine)
    assert await migrate.schema_differences(engine) == [], STALE


async def test_upgrade_is_idempotent_and_the_schema_works(empty_db: EmptyDatabase) -> None:
    engine = empty_db.engine
    await migrate.upgrade_async(engine)
    await migrate.upgrade_async(engine)  # already at head: nothing to do
    async with make_sessionmaker(engine).begin() as session:
        b = Builder(session)
        await b.make_tournament(semi_final_size=2)
        for credits in (900, 800, 700):
            await b.played(await b.player(), credits)
        result = await qualifier_cut(session, b.t.id)
    assert [[r.credits for r in g] for g in result.groups] == [[900], [800, 700]]


def test_sync_upgrade_by_url(tmp_path: Path) -> None:
    """The embedded SQLite default is created this way by CLI commands."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'embedded.db'}"
    migrate.upgrade(url)
    assert migrate.main(["check", "--database", url]) == 0, STALE
    assert migrate.main(["current", "--database", url]) == 0
