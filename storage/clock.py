"""The database server's own clock: the one clock every venue's gateway can read.

PostgreSQL's ``clock_timestamp()`` is the instant of the call (``now()`` would be the
transaction's start); SQLite has no server, so its clock is this host's, at millisecond
resolution (an offset measured against it is zero, as it should be for a lone gateway).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


async def database_now(conn: AsyncConnection) -> datetime:
    """The database's clock, aware UTC: one round trip on a connection already open (so
    a measurement brackets the query alone, not a pool check-out or a ping)."""
    if conn.dialect.name == "sqlite":
        raw = await conn.scalar(text("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')"))
        return datetime.fromisoformat(str(raw)).replace(tzinfo=UTC)
    value = await conn.scalar(text("SELECT clock_timestamp()"))
    if not isinstance(value, datetime):
        raise TypeError(f"database clock: {value!r} is not a time")
    return value.astimezone(UTC)
