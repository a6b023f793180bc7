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


def test_a_process_that_loads_a_watched_table_announces_its_changes() -> None:
    """Issue 24: ``reelgate heat score`` on the host (T23) loads the tournament tables but
    never imported this module, so its session had no change-feed listeners: the score
    committed with no change row, and the closed heat's board on the signs kept the
    machine's score.  Every module defining a watched table registers them itself; checked
    in a fresh interpreter, which imports only that module."""
    import subprocess
    import sys

    from storage.db import Base

    modules = sorted(
        {
            m.class_.__module__
            for m in Base.registry.mappers
            if getattr(m.class_, "__tablename__", None) in change_feed.WATCHED
        }
    )
    assert "storage.tournament" in modules  # scores, seats, heats
    probe = (
        "import importlib, sys\n"
        "importlib.import_module(sys.argv[1])\n"
        "from sqlalchemy import event\n"
        "from sqlalchemy.orm import Session\n"
        "ready = 'storage.change_feed' in sys.modules\n"
        "from storage import change_feed as cf\n"
        "assert ready, 'storage.change_feed not loaded'\n"
        "assert event.contains(Session, 'after_flush', cf._collect)\n"
        "assert event.contains(Session, 'before_commit', cf._write_at_commit)\n"
    )
    for module in modules:
        done = subprocess.run(
            [sys.executable, "-c", probe, module], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{module}: {done.stderr}"
