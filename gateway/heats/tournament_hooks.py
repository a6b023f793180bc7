"""The heat's tournament side, through the tournament services (``gateway.tournament``).

Seats are found by machine: a heat seats one player per machine (rule 16), in machine
order (rule 11).  A refusal from the services (a :class:`RuleViolation`) never stops the
heat on the floor: the machine result is already in the journal, and the refusal is
logged and kept in :attr:`ServiceHooks.problems` for the director.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.driver import HeatScore
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services import (
    begin_heat,
    finish_heat,
    handle_system_failure,
    mark_seat_malfunctioned,
    record_machine_score,
    unit_of_work,
)
from gateway.tournament.services.seating import SeatInfo, heat_seats
from storage.tournament import SeatStatus

log = logging.getLogger(__name__)

# Who is at their machine when the start is announced (rule 22).  The gateway cannot see
# people; a floor attendant's list can be plugged in here.  Default: every seat present.
Attendance = Callable[[int, list[SeatInfo]], Awaitable[set[int]]]

_PLAYING = (SeatStatus.ASSIGNED, SeatStatus.PRESENT)


class ServiceHooks:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        actor: str = "gateway",
        attendance: Attendance | None = None,
    ) -> None:
        self.sessions = sessions
        self.actor = actor
        self.attendance = attendance
        self.problems: list[str] = []

    async def seated_machines(self, heat_id: int) -> list[str]:
        """Machines with a player seated for the heat, in seat order (rule 11)."""
        async with self.sessions() as session:
            seats = await heat_seats(session, heat_id)
        return [s.machine_id for s in seats if s.status in _PLAYING]

    async def _seat(self, session: AsyncSession, heat_id: int, machine_id: str) -> SeatInfo | None:
        for seat in await heat_seats(session, heat_id):
            if seat.machine_id == machine_id:
                return seat
        return None

    async def heat_started(self, heat_id: int, started_at: datetime) -> None:
        try:
            async with unit_of_work(self.sessions) as session:
                seats = [s for s in await heat_seats(session, heat_id) if s.status in _PLAYING]
                present = (
                    await self.attendance(heat_id, seats)
                    if self.attendance is not None
                    else {s.seat_number for s in seats}
                )
                await begin_heat(
                    session, heat_id, present_seats=present, at=started_at, actor=self.actor
                )
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} start: {exc}")

    async def record_score(self, heat_id: int, machine_id: str, score: HeatScore) -> None:
        try:
            async with unit_of_work(self.sessions) as session:
                seat = await self._seat(session, heat_id, machine_id)
                if seat is None:
                    return  # no player on this machine: a result for the record only
                await record_machine_score(session, seat.seat_id, score, at=datetime.now(UTC))
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} {machine_id} score: {exc}")

    async def machine_malfunctioned(self, heat_id: int, machine_id: str, reason: str) -> None:
        try:
            async with unit_of_work(self.sessions) as session:
                seat = await self._seat(session, heat_id, machine_id)
                if seat is None:
                    return
                await mark_seat_malfunctioned(
                    session, seat.seat_id, at=datetime.now(UTC), actor=self.actor, reason=reason
                )
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} {machine_id} malfunction: {exc}")

    async def heat_finished(self, heat_id: int, ended_at: datetime) -> None:
        try:
            async with unit_of_work(self.sessions) as session:
                await finish_heat(session, heat_id, at=ended_at, actor=self.actor)
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} finish: {exc}")

    async def heat_restarted(self, heat_id: int, reason: str) -> None:
        now = datetime.now(UTC)
        try:
            async with unit_of_work(self.sessions) as session:
                await handle_system_failure(
                    session, heat_id, failed_at=now, now=now, actor=self.actor, reason=reason
                )
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} restart: {exc}")

    def _problem(self, text: str) -> None:
        log.warning("tournament services refused: %s", text)
        self.problems.append(text)
