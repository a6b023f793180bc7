"""The change feed: one row per subject a screen shows, in the changing transaction."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from storage import change_feed
from storage.change_feed import Change, Subject
from storage.db import make_sessionmaker
from storage.testing import Builder


async def _subjects(engine: AsyncEngine, after: int = 0) -> list[Subject]:
    async with make_sessionmaker(engine)() as session:
        return [row.subject for row in await change_feed.read_after(session, after)]


async def test_a_score_commits_its_change_rows_with_it(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as session:
        b = Builder(session)
        await b.make_tournament()
        player = await b.player("Ada")
        score = await b.played(player, 1500)
        tid, heat_id = b.t.id, score.heat_id
    subjects = await _subjects(engine)
    # One row per distinct subject, whatever number of flushes made it.
    assert Subject("scores", tid, heat_id, None) in subjects
    assert Subject("heats", tid, heat_id, None) in subjects
    assert Subject("entry_purchases", tid, None, None) in subjects
    assert len(subjects) == len(set(subjects))
    async with sessions() as session:
        last = await change_feed.last_id(session)
    assert last > 0

    # A correction (T23) is a change of the score row: announced again.
    async with sessions.begin() as session:
        row = await session.get(type(score), score.id)
        assert row is not None
        row.final_credits = 1700
    assert await _subjects(engine, last) == [Subject("scores", tid, heat_id, None)]


async def test_a_rolled_back_change_announces_nothing(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    async with sessions() as session:
        before = await change_feed.last_id(session)
    async with sessions() as session:
        b = Builder(session)
        await b.make_tournament()
        await b.played(await b.player("Bo"), 900)
        await session.rollback()
    assert await _subjects(engine, before) == []


async def test_a_read_only_transaction_and_unwatched_tables_write_no_row(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    async with sessions() as session:
        before = await change_feed.last_id(session)
    async with sessions.begin() as session:
        await session.execute(select(Change.id))
    async with sessions.begin() as session:
        b = Builder(session)
        await b.player("Cy")  # a player alone is on no screen
    assert await _subjects(engine, before) == []


async def test_old_rows_are_pruned(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as session:
        b = Builder(session)
        await b.make_tournament()
    async with sessions.begin() as session:
        rows = (await session.scalars(select(Change))).all()
        assert rows
        newest = max(r.at for r in rows)
        assert await change_feed.prune(session, now=newest, keep=timedelta(hours=1)) == 0
        later = newest + timedelta(hours=2)
        assert await change_feed.prune(session, now=later, keep=timedelta(hours=1)) == len(rows)
    assert await _subjects(engine) == []
