"""Session calendar and sales / hand-in windows (S9-4 and S9-6).

Clauses: docs/rules.md#s9-4, #s9-6.
"""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from gateway.super9.rules.calendar import SessionCalendar, is_last_weekday_of_month

SAST = ZoneInfo("Africa/Johannesburg")


def t(d: date, hh: int, mm: int = 0) -> datetime:
    return datetime.combine(d, time(hh, mm), tzinfo=SAST)


def test_rule_4_pattern_and_last_sunday() -> None:
    cal = SessionCalendar()
    month = cal.between(date(2026, 11, 1), date(2026, 11, 30))
    days = sorted({s.date() for s in month})
    # Wednesdays 4, 11, 18, 25; Sundays 1, 8, 15, 22 (29 is the last Sunday: none).
    assert [d.day for d in days] == [1, 4, 8, 11, 15, 18, 22, 25]
    assert {s.time() for s in month} == {time(15), time(17), time(19), time(21)}
    assert is_last_weekday_of_month(date(2026, 11, 29))
    assert not is_last_weekday_of_month(date(2026, 11, 22))
    # A month whose last Sunday is the 31st.
    assert cal.on_day(date(2026, 5, 31)) == []
    assert len(cal.on_day(date(2026, 5, 24))) == 2


def test_one_off_changes() -> None:
    wed = date(2026, 12, 2)
    cal = SessionCalendar().with_changes(added=[t(date(2026, 11, 29), 15)], cancelled=[t(wed, 21)])
    assert cal.on_day(date(2026, 11, 29)) == [t(date(2026, 11, 29), 15)]
    assert cal.on_day(wed) == [t(wed, 19)]


def test_sales_and_hand_in_windows_rule_6() -> None:
    cal, wed = SessionCalendar(), date(2026, 12, 2)
    assert cal.sale_session(t(wed, 7, 59)) is None
    assert cal.sale_session(t(wed, 8)) == t(wed, 19)
    assert cal.sale_session(t(wed, 18, 29)) == t(wed, 19)
    assert cal.sale_session(t(wed, 18, 30)) == t(wed, 21)
    assert cal.sale_session(t(wed, 20, 30)) is None
    assert cal.sale_session(t(date(2026, 12, 3), 10)) is None  # Thursday: no draw
    assert cal.hand_in_session(t(wed, 18, 44), t(wed, 19)) == t(wed, 19)
    assert cal.hand_in_session(t(wed, 18, 45), t(wed, 19)) == t(wed, 19)  # cut-off: on time
    assert cal.hand_in_session(t(wed, 18, 46), t(wed, 19)) == t(wed, 21)
    # Late for 21:00 on Wednesday: valid for Sunday's first session.
    assert cal.hand_in_session(t(wed, 20, 50), t(wed, 21)) == t(date(2026, 12, 6), 15)


def test_s9_6_late_ticket_is_valid_for_the_next_session_only() -> None:
    """S9-6: a ticket handed in after its cut-off plays the very next session; after that
    one's cut-off too it plays none (not a later one). The cut-off instant is on time."""
    cal, wed = SessionCalendar(), date(2026, 12, 2)
    assert cal.hand_in_session(t(wed, 20, 45), t(wed, 19)) == t(wed, 21)
    assert cal.hand_in_session(t(wed, 20, 46), t(wed, 19)) is None
    assert cal.hand_in_session(t(date(2026, 12, 6), 10), t(wed, 19)) is None
