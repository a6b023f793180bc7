"""SQLite through aiosqlite, one hand-off to the connection's thread per statement
(:mod:`storage.sqlite_driver`): the same results, rows, counts and errors as the stock
adapter, with a quarter of the thread hops."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.db import make_engine
from storage.sqlite_driver import OneHopCursor

meta = MetaData()
things = Table(
    "things",
    meta,
    Column("id", Integer, primary_key=True),
    Column("name", String(20), unique=True),
)


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    eng = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'driver.db'}")
    async with eng.begin() as conn:
        await conn.run_sync(meta.create_all)
    try:
        yield eng
    finally:
        await eng.dispose()


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every function aiosqlite hands to its thread."""
    seen: list[str] = []
    real = aiosqlite.Connection._execute

    async def counted(self: aiosqlite.Connection, fn: Any, *args: Any, **kw: Any) -> Any:
        seen.append(getattr(fn, "__name__", "?"))
        return await real(self, fn, *args, **kw)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
    return seen


async def test_rows_counts_and_ids_come_back(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        assert isinstance((await conn.get_raw_connection()).driver_connection, aiosqlite.Connection)
        made = await conn.execute(insert(things).values(name="reel"))
        assert made.inserted_primary_key == (1,)
        await conn.execute(insert(things), [{"name": "gate"}, {"name": "spin"}])
        changed = await conn.execute(update(things).where(things.c.id > 1).values(name=None))
        assert changed.rowcount == 2
        rows = (await conn.execute(select(things).order_by(things.c.id))).mappings().all()
    assert [dict(r) for r in rows] == [
        {"id": 1, "name": "reel"},
        {"id": 2, "name": None},
        {"id": 3, "name": None},
    ]


async def test_a_statement_is_one_hop(engine: AsyncEngine, hops: list[str]) -> None:
    async with engine.connect() as conn:
        hops.clear()
        found = (await conn.execute(text("SELECT 1 AS one, 'x' AS two"))).one()
    assert tuple(found) == (1, "x")
    # BEGIN (storage.db issues it), the query, the rollback at the end: the stock adapter
    # would add a cursor, a fetch and a close to each statement.
    assert hops == ["_run", "_run", "rollback"]


async def _insert_twice(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(insert(things).values(name="other"))
        await conn.execute(insert(things).values(name="once"))


async def test_errors_are_the_databases_and_roll_back(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(insert(things).values(name="once"))
    with pytest.raises(IntegrityError, match="UNIQUE"):
        await _insert_twice(engine)
    async with engine.connect() as conn:
        names = (await conn.execute(select(things.c.name))).scalars().all()
        cursor = (await conn.get_raw_connection()).dbapi_connection.cursor()  # type: ignore[union-attr]
    assert names == ["once"]  # the failed transaction left nothing
    assert isinstance(cursor, OneHopCursor)


async def test_streamed_results_keep_the_stock_cursor(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(insert(things), [{"name": f"n{i}"} for i in range(5)])
        streamed = await conn.stream(select(things.c.name).order_by(things.c.id))
        names = [n async for n in streamed.scalars()]
    assert names == [f"n{i}" for i in range(5)]
