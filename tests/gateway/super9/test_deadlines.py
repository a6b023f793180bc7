"""Super 9's deadlines a back-dated write keeps at the real time
(gateway.super9.deadlines): S9-6b and S9-6c."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from gateway.clocks.policy import ClockRefused, WriteTime, judge
from gateway.super9 import deadlines
from gateway.super9.rules.calendar import SessionCalendar

SAST = ZoneInfo("Africa/Johannesburg")


def _backdated(keyed: datetime, real: datetime) -> WriteTime:
    return judge(keyed, real, training=False, reason="keyed from paper", director="dana")


def test_s9_6b_a_back_dated_super9_sale_after_sales_closed_is_refused() -> None:
    cal = SessionCalendar(SAST)
    session = datetime(2026, 12, 2, 19, 0, tzinfo=SAST)  # a Wednesday (S9-4)
    keyed, real = session - timedelta(minutes=45), session - timedelta(minutes=20)
    with pytest.raises(ClockRefused, match="rule 6"):
        deadlines.super9_sale(cal, _backdated(keyed, real))
    deadlines.super9_sale(cal, _backdated(keyed - timedelta(hours=2), keyed))


def test_s9_6c_a_back_dated_hand_in_after_the_cut_off_is_refused() -> None:
    cal = SessionCalendar(SAST)
    session = datetime(2026, 12, 2, 19, 0, tzinfo=SAST)
    keyed, real = session - timedelta(minutes=20), session - timedelta(minutes=10)
    with pytest.raises(ClockRefused, match=r"rule 6: .* the ticket is for the session at"):
        deadlines.super9_hand_in(cal, session, _backdated(keyed, real))
    deadlines.super9_hand_in(cal, session, _backdated(keyed - timedelta(hours=1), keyed))
    # Live writes are judged by the desk itself, not here.
    deadlines.super9_hand_in(cal, session, judge(None, real.astimezone(UTC), training=False))
