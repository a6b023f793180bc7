"""The deadlines a back-dated write keeps at the real time (gateway.clocks.deadlines):
T11b (no late entries) and the tournament's sale window (Super 9's:
tests/gateway/super9/test_deadlines.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.clocks import deadlines
from gateway.clocks.policy import ClockRefused, WriteTime, judge
from storage.db import make_sessionmaker
from storage.testing import Builder
from storage.tournament import Tournament

SAST = ZoneInfo("Africa/Johannesburg")


def _backdated(keyed: datetime, real: datetime, *, training: bool = False) -> WriteTime:
    return judge(keyed, real, training=training, reason="keyed from paper", director="dana")


async def test_t11b_a_back_dated_registration_for_a_heat_started_by_now_is_refused(
    engine: AsyncEngine,
) -> None:
    async with make_sessionmaker(engine)() as session, session.begin():
        b = Builder(session)
        await b.make_tournament()
        heat = await b.heat()
        start = heat.scheduled_start
        real = start + timedelta(minutes=5)
        late = _backdated(start - timedelta(minutes=1), real)
        with pytest.raises(ClockRefused, match=r"rule 11: .* late entries are not accepted"):
            await deadlines.registration(session, heat.id, late)
        # The real time before the start: the keyed time may stand.
        early = start - timedelta(minutes=10)
        in_time = _backdated(early - timedelta(hours=1), early)
        await deadlines.registration(session, heat.id, in_time)
        # A training database rehearses as it likes.
        await deadlines.registration(
            session, heat.id, _backdated(start - timedelta(minutes=1), real, training=True)
        )


def test_sale_window_a_back_dated_sale_after_the_qualifying_period_is_refused() -> None:
    ends = datetime(2026, 11, 30, 0, 0, tzinfo=SAST)
    t = Tournament(name="Ridge", qualifying_ends_at=ends)
    with pytest.raises(ClockRefused, match="qualifying period of Ridge had ended"):
        deadlines.entry_sale(t, _backdated(ends - timedelta(hours=2), ends + timedelta(hours=1)))
    deadlines.entry_sale(t, _backdated(ends - timedelta(hours=3), ends - timedelta(hours=1)))
    deadlines.entry_sale(Tournament(name="Open"), _backdated(ends, ends + timedelta(days=9)))
