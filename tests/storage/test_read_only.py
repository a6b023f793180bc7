"""SQLite read-only transactions (``storage.db.READ_ONLY``) begin deferred: a read runs
while a writer holds the write lock, instead of queueing behind it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import OperationalError

from storage.db import READ_ONLY, make_engine


async def test_a_read_does_not_wait_for_the_writer(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'r.db'}")

    @event.listens_for(engine.sync_engine, "connect")
    def _no_waiting(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout=0")  # a lock is reported at once, not awaited
        cursor.close()

    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE t (v INTEGER)"))
        await conn.execute(text("INSERT INTO t VALUES (1)"))
    try:
        async with engine.begin() as writer:  # BEGIN IMMEDIATE: holds the write lock
            await writer.execute(text("UPDATE t SET v = 2"))
            async with engine.connect() as reader:
                read = await reader.execution_options(**READ_ONLY)
                async with read.begin():
                    # The committed snapshot, at once.
                    assert (await read.execute(text("SELECT v FROM t"))).scalar_one() == 1
            async with engine.connect() as other:
                # Without the option a transaction asks for the write lock too.
                with pytest.raises(OperationalError, match="locked"):
                    await other.begin()
    finally:
        await engine.dispose()
