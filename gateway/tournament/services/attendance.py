"""T22 roll call: a floor attendant marks seats present or absent before a heat starts;
at the start (``begin_heat``) the seats not counted present forfeit, no refund.

What counts as present is :func:`gateway.tournament.rules.attendance.counted_present`
over the latest marks and the tournament's ``unmarked_at_start`` setting.  Marks are
state in ``seat_attendance``; each marking is audited.

Clauses: docs/rules.md#t22.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.attendance import (
    UnmarkedAtStart,
    check_roll_call_open,
    counted_present,
)
from gateway.tournament.rules.enums import HeatStatus, SeatStatus
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import (
    aware,
    get,
    heat_label,
    live_seats,
    load_settings,
    record,
    require_actor,
)
from storage.attendance import SeatAttendance
from storage.tournament import Heat, Player, Proxy, Seat, Tournament

# Seats a roll call is about: booked and not yet played (a restarted heat's played seats
# are put back to present by the restart, T20).
_CALLED = (SeatStatus.ASSIGNED, SeatStatus.PRESENT)
# After the start the call is the record of it: who played, who forfeited (T22).
_DECIDED = (SeatStatus.PLAYED, SeatStatus.FORFEITED, SeatStatus.DISQUALIFIED)
_NOT_STARTED = (HeatStatus.SCHEDULED, HeatStatus.RESTARTED, HeatStatus.POSTPONED)


@dataclass(frozen=True, slots=True)
class RollCallSeat:
    seat_id: int
    seat_number: int
    machine_id: str
    played_by: str  # the holder, or the proxy nominee in a final stage (T16)
    status: SeatStatus
    mark: bool | None  # the attendant's latest mark: True present, False absent, None unmarked
    marked_at: datetime | None
    marked_by: str | None
    counts_present: bool  # what the start would do now (T22)


@dataclass(frozen=True, slots=True)
class RollCall:
    heat_id: int
    label: str
    heat_status: str
    taken: bool  # any seat marked
    unmarked_at_start: UnmarkedAtStart
    seats: list[RollCallSeat]

    @property
    def started(self) -> bool:
        """The heat has started: the call is a record, no longer to be marked."""
        return self.heat_status not in {*(h.value for h in _NOT_STARTED), "cancelled"}

    @property
    def present(self) -> list[int]:
        return [s.seat_number for s in self.seats if s.counts_present]

    @property
    def absent(self) -> list[int]:
        return [s.seat_number for s in self.seats if not s.counts_present]


async def _marks(session: AsyncSession, heat_id: int) -> dict[int, SeatAttendance]:
    """Seat id -> its latest mark, for the heat's seats."""
    rows = await session.execute(select(SeatAttendance).where(SeatAttendance.heat_id == heat_id))
    return {row.seat_id: row for row in rows.scalars()}


async def _policy(session: AsyncSession, heat: Heat) -> UnmarkedAtStart:
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    return (await load_settings(session, tournament)).unmarked_at_start


async def present_at_start(session: AsyncSession, heat: Heat) -> set[int]:
    """Seat numbers that count as present if the heat started now (T22)."""
    seats = [s for s in await live_seats(session, heat.id) if s.status in _CALLED]
    marks = await _marks(session, heat.id)
    by_number = {s.seat_number: marks[s.id].present for s in seats if s.id in marks}
    numbers = [s.seat_number for s in seats]
    # Marks of seats since moved or cancelled still say a roll call was taken.
    present = counted_present(
        numbers, by_number, await _policy(session, heat), roll_call_taken=bool(marks)
    )
    if heat.status is HeatStatus.RESTARTED:
        # T20: the casino's failure, not the players'.  Whoever was present at the
        # heat's start keeps the seat through a restart unless marked absent since.
        present |= {
            s.seat_number
            for s in seats
            if s.status is SeatStatus.PRESENT and by_number.get(s.seat_number) is not False
        }
    return present


async def roll_call(session: AsyncSession, heat_id: int) -> RollCall:
    """The heat's roll call as the attendant and the director read it; once the heat has
    started, what the start decided (played, forfeited), not an empty list."""
    heat = await get(session, Heat, heat_id, "heat")
    marks = await _marks(session, heat.id)
    present = await present_at_start(session, heat)
    shown = _CALLED if heat.status in _NOT_STARTED else _CALLED + _DECIDED
    rows = await session.execute(
        select(Seat, Player.name, Proxy.nominee_name)
        .join(Player, Player.id == Seat.holder_player_id)
        .outerjoin(Proxy, Proxy.seat_id == Seat.id)
        .where(Seat.heat_id == heat.id, Seat.status.in_(shown))
        .order_by(Seat.seat_number)
    )
    seats = []
    for seat, name, nominee in rows.all():
        mark = marks.get(seat.id)
        seats.append(
            RollCallSeat(
                seat_id=seat.id,
                seat_number=seat.seat_number,
                machine_id=seat.machine_id,
                played_by=nominee or name,
                status=seat.status,
                mark=None if mark is None else mark.present,
                marked_at=None if mark is None else mark.marked_at,
                marked_by=None if mark is None else mark.marked_by,
                counts_present=seat.status is SeatStatus.PLAYED
                or (seat.status in _CALLED and seat.seat_number in present),
            )
        )
    return RollCall(
        heat_id=heat.id,
        label=heat_label(heat),
        heat_status=heat.status.value,
        taken=bool(marks),
        unmarked_at_start=await _policy(session, heat),
        seats=seats,
    )


async def mark_attendance(
    session: AsyncSession,
    heat_id: int,
    seat_numbers: Collection[int],
    *,
    present: bool,
    at: datetime,
    actor: str,
) -> RollCall:
    """A floor attendant marks seats present (or absent) before the start (T22).

    The latest mark of a seat stands until the start; the whole call is refused (nothing
    marked) if any seat number holds nobody in the heat or the heat has started.
    """
    actor = require_actor(actor)
    at = aware(at, "at")
    if not seat_numbers:
        raise RuleViolation(22, "name at least one seat number")
    # Lock the heat row: a start and a marking never interleave (SQLite: BEGIN IMMEDIATE).
    heat = (
        await session.execute(select(Heat).where(Heat.id == heat_id).with_for_update())
    ).scalar_one_or_none()
    if heat is None:
        raise RuleViolation(None, f"heat {heat_id} does not exist")
    check_roll_call_open(heat.status, heat_label(heat))
    seats = {s.seat_number: s for s in await live_seats(session, heat.id) if s.status in _CALLED}
    unknown = sorted(set(seat_numbers) - set(seats))
    if unknown:
        raise RuleViolation(22, f"seats {unknown} hold nobody in {heat_label(heat)}")
    marks = await _marks(session, heat.id)
    before: dict[int, bool | None] = {}
    for number in sorted(set(seat_numbers)):
        seat = seats[number]
        row = marks.get(seat.id)
        before[number] = None if row is None else row.present
        if row is None:
            row = SeatAttendance(seat_id=seat.id, heat_id=heat.id)
            session.add(row)
        row.present, row.marked_at, row.marked_by = present, at, actor
    await session.flush()
    await record(
        session,
        actor,
        "seat.attendance",
        f"heat:{heat.id}",
        None,
        seats=sorted(before),
        present=present,
        before={str(n): v for n, v in before.items()},
        at=at,
    )
    return await roll_call(session, heat.id)


async def keep_present(session: AsyncSession, seat: Seat, *, at: datetime, actor: str) -> None:
    """A director's reinstatement (T23) overrides the seat's "absent" mark, so a
    restart of the heat (T20) does not forfeit it again.  An unmarked seat stays
    unmarked: a mark would make a heat without a roll call look called."""
    row = await session.get(SeatAttendance, seat.id)
    if row is not None:
        row.present, row.marked_at, row.marked_by = True, at, actor


async def clear_roll_call(session: AsyncSession, heat: Heat) -> dict[str, bool]:
    """Drop a heat's marks (a postponed heat takes a new roll call on its new day).
    Returns the dropped marks by seat number for the audit record."""
    marks = await _marks(session, heat.id)
    if not marks:
        return {}
    rows = await session.execute(select(Seat.id, Seat.seat_number).where(Seat.heat_id == heat.id))
    numbers = {seat_id: number for seat_id, number in rows.all()}
    await session.execute(delete(SeatAttendance).where(SeatAttendance.heat_id == heat.id))
    return {str(numbers[seat_id]): row.present for seat_id, row in sorted(marks.items())}
