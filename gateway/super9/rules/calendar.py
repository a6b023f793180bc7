"""Super 9 session calendar and the sales / hand-in windows (S9-4 to S9-6).

S9-4: Wednesdays 19:00 and 21:00; Sundays 15:00 and 17:00 except the last Sunday of
the month; all in the venue's time zone.  The weekly pattern is configurable, and
one-off changes (a cancelled session, an extra one) are applied on top.

S9-6: sales from 08:00 on the draw day until 30 minutes before a session; completed
tickets handed in until 15 minutes before it.  A ticket handed in after that cut-off
is entered into the next session.

Clauses: docs/rules.md#s9-4 to #s9-6.
"""

from __future__ import annotations

import calendar as _cal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

SALES_OPEN = time(8, 0)  # S9-6
SALES_CLOSE_BEFORE = timedelta(minutes=30)  # S9-6
HAND_IN_CLOSE_BEFORE = timedelta(minutes=15)  # S9-6
#: How far ahead "next session" searches; a calendar with nothing in a year is broken.
SEARCH_DAYS = 400


@dataclass(frozen=True, slots=True)
class WeeklySlot:
    weekday: int  # Monday = 0 ... Sunday = 6
    at: time
    skip_last_of_month: bool = False


#: S9-4.
DEFAULT_SLOTS: tuple[WeeklySlot, ...] = (
    WeeklySlot(2, time(19, 0)),
    WeeklySlot(2, time(21, 0)),
    WeeklySlot(6, time(15, 0), skip_last_of_month=True),
    WeeklySlot(6, time(17, 0), skip_last_of_month=True),
)


def is_last_weekday_of_month(day: date) -> bool:
    days_in_month = _cal.monthrange(day.year, day.month)[1]
    return day.day + 7 > days_in_month


@dataclass(frozen=True)
class SessionCalendar:
    tz: ZoneInfo = field(default_factory=lambda: ZoneInfo("Africa/Johannesburg"))
    slots: tuple[WeeklySlot, ...] = DEFAULT_SLOTS
    added: frozenset[datetime] = frozenset()  # one-off extra sessions
    cancelled: frozenset[datetime] = frozenset()  # one-off cancellations

    def with_changes(
        self, added: Iterable[datetime] = (), cancelled: Iterable[datetime] = ()
    ) -> SessionCalendar:
        return SessionCalendar(
            self.tz,
            self.slots,
            self.added | {self._local(t) for t in added},
            self.cancelled | {self._local(t) for t in cancelled},
        )

    def _local(self, when: datetime) -> datetime:
        if when.tzinfo is None:
            raise ValueError("calendar times must carry a time zone")
        return when.astimezone(self.tz)

    def on_day(self, day: date) -> list[datetime]:
        """The sessions on one local day, in order."""
        out: set[datetime] = set()
        for slot in self.slots:
            if slot.weekday != day.weekday():
                continue
            if slot.skip_last_of_month and is_last_weekday_of_month(day):
                continue  # S9-4: not on the last Sunday of the month
            out.add(datetime.combine(day, slot.at, tzinfo=self.tz))
        out |= {t for t in self.added if t.date() == day}
        out -= {t for t in self.cancelled if t.date() == day}
        return sorted(out)

    def between(self, start: date, end: date) -> list[datetime]:
        """Sessions on local days start..end inclusive."""
        out: list[datetime] = []
        day = start
        while day <= end:
            out += self.on_day(day)
            day += timedelta(days=1)
        return out

    def upcoming(self, after: datetime) -> Iterator[datetime]:
        """Sessions starting strictly after ``after``, in order (bounded search)."""
        local = self._local(after)
        day = local.date()
        for _ in range(SEARCH_DAYS):
            for start in self.on_day(day):
                if start > local:
                    yield start
            day += timedelta(days=1)

    def sale_session(self, now: datetime) -> datetime | None:
        """The session a ticket sold at ``now`` is for, or None if sales are closed."""
        local = self._local(now)
        for start in self.on_day(local.date()):
            opens = datetime.combine(start.date(), SALES_OPEN, tzinfo=self.tz)
            if opens <= local < start - SALES_CLOSE_BEFORE:
                return start
        return None

    def hand_in_session(self, now: datetime, sold_for: datetime) -> datetime | None:
        """The session a ticket handed in at ``now`` enters (S9-6), or None if too late.

        On time (up to and including the cut-off instant) it plays the session it was
        sold for; after the cut-off it is valid for the *next* session only, so it enters
        the one after ``sold_for`` if that one's cut-off has not passed, and none beyond.
        """
        local = self._local(now)
        if sold_for in self.on_day(sold_for.date()) and local <= hand_in_cutoff(sold_for):
            return sold_for
        following = next(self.upcoming(sold_for), None)
        if following is not None and local <= hand_in_cutoff(following):
            return following
        return None


def sales_window(start: datetime) -> tuple[datetime, datetime]:
    """When sales for the session starting at ``start`` open and close (S9-6)."""
    opens = datetime.combine(start.date(), SALES_OPEN, tzinfo=start.tzinfo)
    return opens, start - SALES_CLOSE_BEFORE


def hand_in_cutoff(start: datetime) -> datetime:
    return start - HAND_IN_CLOSE_BEFORE


def session_words(start: datetime, tz: ZoneInfo) -> str:
    """A session as the desk and the player name it: its venue-local day and time
    ("Wed 2 Dec 2026 19:00"), not its row id."""
    local = start.astimezone(tz)
    return f"{local:%a} {local.day} {local:%b %Y %H:%M}"
