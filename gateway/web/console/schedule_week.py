"""What the Schedule screen shows: each bank's heats over seven days from a date (the
venue's days, whatever the tournament), the heats postponed and waiting for a new time,
and the next heat to start.  Read only; the summaries are the API's
(:func:`gateway.tournament.services.setup.summarise_heat`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.services.setup import HeatSummary, summarise_heat
from storage.floor import FloorBank
from storage.tournament import Heat, HeatStatus, Tournament

DAYS = 7
# The orders a heat's state can take on the page (the services decide; this only hides
# a button that would surely be refused).
MOVABLE = frozenset({HeatStatus.SCHEDULED, HeatStatus.POSTPONED, HeatStatus.RESTARTED})
CANCELLABLE = frozenset({HeatStatus.SCHEDULED, HeatStatus.POSTPONED})
UNDER_WAY = frozenset(
    {HeatStatus.ARMED, HeatStatus.RUNNING, HeatStatus.ENDING, HeatStatus.COLLECTING}
)
POSTPONABLE = UNDER_WAY | {HeatStatus.SCHEDULED, HeatStatus.ABORTED, HeatStatus.RESTARTED}
RESTARTABLE = UNDER_WAY | {HeatStatus.ABORTED}


@dataclass(frozen=True)
class Slot:
    """One heat on the week: its summary and the tournament's name."""

    heat: HeatSummary
    tournament: str


@dataclass(frozen=True)
class Day:
    day: date
    slots: list[Slot]


@dataclass(frozen=True)
class BankWeek:
    bank: str
    days: list[Day]


@dataclass(frozen=True)
class Week:
    start: date
    banks: list[BankWeek]
    postponed: list[Slot]
    next_heat: Slot | None

    @property
    def previous(self) -> date:
        return self.start - timedelta(days=DAYS)

    @property
    def following(self) -> date:
        return self.start + timedelta(days=DAYS)

    @property
    def end(self) -> date:
        return self.start + timedelta(days=DAYS - 1)


async def _slots(session: AsyncSession, query: Select[Heat, str]) -> list[Slot]:
    rows = await session.execute(query.order_by(Heat.scheduled_start, Heat.id))
    return [Slot(await summarise_heat(session, h), name) for h, name in rows.all()]


def _heats() -> Select[Heat, str]:
    """Heats of every tournament: a bank is shared, and so is its week."""
    return select(Heat, Tournament.name).join(Tournament, Tournament.id == Heat.tournament_id)


async def week_of(session: AsyncSession, start: date, zone: ZoneInfo, now: datetime) -> Week:
    """The seven venue days from ``start`` (midnight to midnight in ``zone``)."""
    begin = datetime.combine(start, time(0), zone)
    end = datetime.combine(start + timedelta(days=DAYS), time(0), zone)
    banks = list((await session.scalars(select(FloorBank.name).order_by(FloorBank.name))).all())
    slots = await _slots(
        session, _heats().where(Heat.scheduled_start >= begin, Heat.scheduled_start < end)
    )
    for bank in sorted({s.heat.bank_name for s in slots} - set(banks)):
        banks.append(bank)  # a bank since taken off the floor still shows its heats
    days = [start + timedelta(days=n) for n in range(DAYS)]
    weeks = [
        BankWeek(
            bank,
            [
                Day(d, [s for s in slots if s.heat.bank_name == bank and _day(s, zone) == d])
                for d in days
            ],
        )
        for bank in banks
    ]
    postponed = await _slots(session, _heats().where(Heat.status == HeatStatus.POSTPONED))
    upcoming = await _slots(
        session,
        _heats().where(Heat.status == HeatStatus.SCHEDULED, Heat.scheduled_start > now).limit(1),
    )
    return Week(start, weeks, postponed, upcoming[0] if upcoming else None)


def _day(slot: Slot, zone: ZoneInfo) -> date:
    return slot.heat.starts_at.astimezone(zone).date()
