"""One transaction per request: authentication runs inside the action's own transaction
(one BEGIN for a sale, a registration or a read), and on SQLite a read begins deferred
(no write lock); write requests wait their turn in order (SQLite's one writer, a few
on PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from gateway.web.api.auth import Api
from storage.db import make_sessionmaker
from tests.gateway.web.api.conftest import Desk


@contextmanager
def begins(engine: AsyncEngine) -> Iterator[list[bool]]:
    """Each transaction begun meanwhile: True when it was read-only."""
    seen: list[bool] = []

    def on_begin(connection: Any) -> None:
        seen.append(bool(connection.get_execution_options().get("reelgate_read_only")))

    event.listen(engine.sync_engine, "begin", on_begin)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "begin", on_begin)


async def test_one_transaction_per_request(desk: Desk, engine: AsyncEngine) -> None:
    with begins(engine) as seen:
        r = await desk.client.post(
            "/api/v1/tournaments/Spring/entries",
            json={"player": "8001015009087"},
            headers=desk.auth("cashier"),
        )
        assert r.status_code == 201, r.text
    assert seen == [False]
    with begins(engine) as seen:
        r = await desk.client.get(
            "/api/v1/tournaments/Spring/standings", headers=desk.auth("dealer")
        )
        assert r.status_code == 200, r.text
    assert seen == [True]
    with begins(engine) as seen:
        r = await desk.client.post(
            f"/api/v1/entries/{desk.ids['spare_entry']}/refund",
            json={"rule": 23, "reason": "goodwill"},
            headers=desk.auth("cashier"),
        )
        assert r.status_code == 202, r.text  # tried in a savepoint, then queued
    assert seen == [False]


async def _audit_count(desk: Desk) -> int:
    audit = await desk.client.get(
        "/api/v1/audit", params={"limit": 1000}, headers=desk.auth("auditor")
    )
    return len(audit.json())


async def test_a_refused_write_leaves_nothing(desk: Desk) -> None:
    before = await _audit_count(desk)
    r = await desk.client.post(
        "/api/v1/tournaments/Spring/entries",
        json={"player": "8001015009087", "package": "nosuch"},
        headers=desk.auth("cashier"),
    )
    assert r.status_code == 422, r.text
    assert await _audit_count(desk) == before


async def test_postgresql_write_requests_take_a_few_turns_in_arrival_order() -> None:
    """Issue 31, item 4: on PostgreSQL at most ``pg_writers`` write requests run at once
    (each ends on the audit chain head's lock, whose round trips wait for the event loop
    behind every request in flight); the next waits, in order, until one ends.  SQLite
    keeps its one writer."""
    pg = create_async_engine("postgresql+asyncpg://nobody@127.0.0.1:1/none")  # not opened
    api = Api(make_sessionmaker(pg), pg_writers=2)
    order: list[int] = []
    release = asyncio.Event()

    async def write(n: int) -> None:
        async with api.writer():
            order.append(n)
            await release.wait()

    tasks = [asyncio.create_task(write(n)) for n in range(4)]
    for _ in range(20):
        await asyncio.sleep(0)
    assert order == [0, 1]  # two at once, the others wait their turn
    release.set()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3]
    assert isinstance(Api(make_sessionmaker(pg), pg_writers=0).writer(), nullcontext)
    sqlite = create_async_engine("sqlite+aiosqlite://")
    one = Api(make_sessionmaker(sqlite), pg_writers=8).writer()
    assert isinstance(one, asyncio.Semaphore)
    async with one:
        assert one.locked()  # SQLite: one writer, whatever pg_writers says
    await pg.dispose()
    await sqlite.dispose()
