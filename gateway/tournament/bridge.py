"""The heat's tournament side, through the tournament services (``gateway.tournament``).

Seats are found by machine: a heat seats one player per machine (rule 16), in machine
order (rule 11).  A refusal from the services (a :class:`RuleViolation`) never stops the
heat on the floor: the machine result is already in the journal, and the refusal is
logged and kept in :attr:`ServiceHooks.problems` for the director.

Rule 22 (attendance): the machines the runner arms are those of the seats that would
play if the heat started now (:func:`playing_at_start`: the floor attendant's roll call
and the tournament's ``unmarked_at_start`` setting).  At the start the heat's journal run
is the truth: a seat plays if and only if its machine is in the run, so an absent seat's
machine is never armed, unlocked or scored, and a mark changed after the machines were
armed is reported as a problem rather than half applied.

Rule 20 (system failure): the difficulties are dated from the journal, not from when
they were noticed (:func:`failure_began` reads the journal's failed attempts; the rule
that dates them is :func:`~gateway.tournament.rules.incidents.difficulties_began`), so
a gateway that comes back after the reasonable period postpones the heat instead of
restarting it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import takewhile

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.scores import HeatScore
from gateway.tournament.rules.incidents import (
    FRESH_START_NOTICES,
    FailedAttempt,
    difficulties_began,
    failure_time,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services import (
    begin_heat,
    finish_heat,
    handle_system_failure,
    mark_seat_malfunctioned,
    playing_at_start,
    record_machine_score,
    unit_of_work,
)
from gateway.tournament.services.seating import SeatInfo, heat_seats
from storage.enums import HeatStatus, SeatStatus
from storage.journal import HeatRun, HeatRunMachine, HeatRunStep, RunState, SeatState
from storage.tournament import Heat, HeatNotice

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

_CALLED = (SeatStatus.ASSIGNED, SeatStatus.PRESENT)
_SCORED = (SeatStatus.PRESENT, SeatStatus.PLAYED)
_NOT_STARTED = (HeatStatus.SCHEDULED, HeatStatus.RESTARTED)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ServiceHooks:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        actor: str = "gateway",
        clock: Clock = _utc_now,
    ) -> None:
        self.sessions = sessions
        self.actor = actor
        self.clock = clock  # tests pass time in (rule 20's reasonable period)
        self.problems: list[str] = []

    async def seated_machines(self, heat_id: int) -> list[str]:
        """Machines to arm for the heat, in seat order (rule 11): only seats that would
        play if it started now (rule 22 roll call, rule 16 proxies, rule 2)."""
        async with self.sessions() as session:
            seats = await playing_at_start(session, heat_id)
        return [s.machine_id for s in seats]

    async def _seat(self, session: AsyncSession, heat_id: int, machine_id: str) -> SeatInfo | None:
        for seat in await heat_seats(session, heat_id):
            if seat.machine_id == machine_id:
                return seat
        return None

    async def heat_started(self, heat_id: int, started_at: datetime) -> None:
        try:
            async with unit_of_work(self.sessions) as session:
                run = await _run_machines(session, heat_id)
                present: set[int] | None = None
                if run is not None:
                    called = [s for s in await heat_seats(session, heat_id) if s.status in _CALLED]
                    present = {s.seat_number for s in called if s.machine_id in run}
                    expected = {s.seat_number for s in await playing_at_start(session, heat_id)}
                    if present != expected:
                        self._problem(
                            f"heat {heat_id} start: roll call changed after the machines were "
                            f"armed; seats {sorted(present)} play, the roll call now says "
                            f"{sorted(expected)} (rule 22; the director decides, rule 23)"
                        )
                await begin_heat(
                    session, heat_id, present_seats=present, at=started_at, actor=self.actor
                )
                # Machines that failed while being armed or unlocked, before the start: their
                # players were there, so rule 20 (a future seat or a refund), not rule 22.
                failed = [m for m, s in (run or {}).items() if s is SeatState.MALFUNCTION]
                for seat in await heat_seats(session, heat_id):
                    if seat.machine_id in failed and seat.status is SeatStatus.PRESENT:
                        await mark_seat_malfunctioned(
                            session,
                            seat.seat_id,
                            at=started_at,
                            actor=self.actor,
                            reason=f"machine {seat.machine_id} failed at the start",
                        )
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} start: {exc}")

    async def close_if_nobody_plays(self, heat_id: int, at: datetime) -> bool:
        """A due heat in which no seat would play (everyone marked absent, or nobody
        registered): announce the start so the absent forfeit (rule 22; no late entries,
        rule 11) and close it.  Returns whether the heat was closed."""
        try:
            async with unit_of_work(self.sessions) as session:
                if await playing_at_start(session, heat_id):
                    return False
                await begin_heat(session, heat_id, at=at, actor=self.actor)
                await finish_heat(session, heat_id, at=at, actor=self.actor)
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} start: {exc}")
            return False
        return True

    async def record_score(self, heat_id: int, machine_id: str, score: HeatScore) -> None:
        try:
            async with unit_of_work(self.sessions) as session:
                seat = await self._seat(session, heat_id, machine_id)
                if seat is None:
                    return  # no player on this machine: a result for the record only
                if seat.status not in _SCORED:
                    # e.g. forfeited at the start (rule 22): the machine's result is not
                    # that player's score; it stays in the journal only.
                    self._problem(
                        f"heat {heat_id} {machine_id}: seat {seat.seat_number} is "
                        f"{seat.status.value}; its machine's result is not counted"
                    )
                    return
                await record_machine_score(session, seat.seat_id, score, at=self.clock())
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} {machine_id} score: {exc}")

    async def machine_malfunctioned(self, heat_id: int, machine_id: str, reason: str) -> None:
        try:
            async with unit_of_work(self.sessions) as session:
                heat = await session.get(Heat, heat_id)
                if heat is not None and heat.status in _NOT_STARTED:
                    return  # before the start: heat_started handles it (rule 20)
                seat = await self._seat(session, heat_id, machine_id)
                if seat is None:
                    return
                await mark_seat_malfunctioned(
                    session, seat.seat_id, at=self.clock(), actor=self.actor, reason=reason
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
        """Rule 20: restart the heat, or postpone it when the difficulties began longer
        ago than the tournament's reasonable period."""
        now = self.clock()
        try:
            async with unit_of_work(self.sessions) as session:
                failed_at = failure_time(await failure_began(session, heat_id), now)
                outcome = await handle_system_failure(
                    session, heat_id, failed_at=failed_at, now=now, actor=self.actor, reason=reason
                )
            log.info("heat %s: system failure since %s -> %s", heat_id, failed_at, outcome.value)
        except RuleViolation as exc:
            self._problem(f"heat {heat_id} restart: {exc}")

    def _problem(self, text: str) -> None:
        log.warning("tournament services refused: %s", text)
        self.problems.append(text)


async def _run_machines(session: AsyncSession, heat_id: int) -> dict[str, SeatState] | None:
    """The machines of the heat's latest journal run that the runner took into the heat."""
    run_id = await session.scalar(
        select(HeatRun.id).where(HeatRun.heat_id == heat_id).order_by(HeatRun.id.desc()).limit(1)
    )
    if run_id is None:
        return None
    rows = await session.execute(
        select(HeatRunMachine.machine_id, HeatRunMachine.state).where(
            HeatRunMachine.run_id == run_id
        )
    )
    return {m: s for m, s in rows.all() if s is not SeatState.PENDING}


async def failure_began(session: AsyncSession, heat_id: int) -> datetime | None:
    """When the heat's current tournament-system difficulties began (rule 20), from the
    journal; None if its latest run did not end in a restart.  The journal gives the
    facts (:func:`_failed_attempts`, the director's new times); the rule dates them."""
    failed = await _failed_attempts(session, heat_id)
    if not failed:
        return None
    fresh = await session.scalars(
        select(HeatNotice.announced_at).where(
            HeatNotice.heat_id == heat_id, HeatNotice.kind.in_(FRESH_START_NOTICES)
        )
    )
    return difficulties_began(failed, fresh.all())


async def _failed_attempts(session: AsyncSession, heat_id: int) -> list[FailedAttempt]:
    """The heat's latest journal runs that ended in a restart, newest first."""
    runs = (
        await session.scalars(
            select(HeatRun).where(HeatRun.heat_id == heat_id).order_by(HeatRun.id.desc())
        )
    ).all()
    restarted = list(takewhile(lambda run: run.state is RunState.RESTARTED, runs))
    steps: dict[int, list[tuple[RunState, datetime]]] = {run.id: [] for run in restarted}
    if restarted:
        rows = await session.execute(
            select(HeatRunStep.run_id, HeatRunStep.state, HeatRunStep.at)
            .where(HeatRunStep.run_id.in_(steps))
            .order_by(HeatRunStep.run_id, HeatRunStep.seq)
        )
        for run_id, state, at in rows.all():
            steps[run_id].append((state, at))
    return [_attempt(run, steps[run.id]) for run in restarted]


def _attempt(run: HeatRun, steps: list[tuple[RunState, datetime]]) -> FailedAttempt:
    """A restarted run as the rule's facts: the steps before its restart step."""
    cut = next((i for i, (state, _) in enumerate(steps) if state is RunState.RESTARTED), None)
    before = steps if cut is None else steps[:cut]
    return FailedAttempt(
        opened_at=run.created_at,
        failed_at=run.updated_at if cut is None else steps[cut][1],
        last_in_control=before[-1][1] if before else None,
        under_way=any(state is RunState.RUNNING for state, _ in before),
    )
