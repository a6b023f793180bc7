"""The venue's time zone, kept as the Super 9 ``timezone`` setting.

Read here and passed to whoever needs it (the cash-up, the signed exports), so the
records know no Super 9.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.super9.rules.settings import Super9Settings
from storage.super9 import Super9Setting


async def venue_zone(db: AsyncSession) -> ZoneInfo:
    """The venue's zone: the Super 9 ``timezone`` setting (default Africa/Johannesburg)."""
    rows = (await db.execute(select(Super9Setting))).scalars().all()
    return ZoneInfo(Super9Settings.from_json({r.key: r.value for r in rows}).timezone)
