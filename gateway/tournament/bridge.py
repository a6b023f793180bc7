"""The heat's tournament side: the heat's effects carried into the tournament tables.

A heat has one truth, the journal.  Each step of it that matters to the tournament writes
a tournament *effect* in the same commit (:mod:`storage.effects`: the heat started, the
bank's scores, a seat's malfunction, the heat closed, restarted or aborted).  The
:class:`TournamentBridge` drains them: one transaction per effect, in which the effect is
claimed, applied through the tournament services and stamped applied — so each effect
reaches the tournament exactly once, whichever process drains it (``serve``, a test heat,
a recovery, a standby) and however often.  A run is only settled once none of its
effects is pending (:meth:`storage.journal.Journal.settle`).

Seats are found by machine: a heat seats one player per machine (T16), in machine order
(T11).  A refusal from the services (a :class:`RuleViolation`) never stops the heat on
the floor: the machine result is already in the journal; the effect is stamped with the
refusal as its outcome (for the director), logged, and kept in
:attr:`TournamentBridge.problems`.

T22 (attendance): the machines the runner arms are those of the seats that would play if
the heat started now (:func:`playing_at_start`: the floor attendant's roll call and the
tournament's ``unmarked_at_start`` setting).  At the start the heat's journal run is the
truth: a seat plays if and only if its machine is in the run, so an absent seat's machine
is never armed, unlocked or scored, and a mark changed after the machines were armed is
reported as a problem rather than half applied.

T20 (system failure): the difficulties are dated from the journal, not from when they
were noticed (:func:`failure_began` reads the journal's failed attempts; the rule that
dates them is :func:`~gateway.tournament.rules.incidents.difficulties_began`), so a
gateway that comes back after the reasonable period postpones the heat instead of
restarting it.  A director's abort voids the attempt and postpones the heat for the
director to reschedule (T10, T20).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from datetime import UTC, datetime
from itertools import takewhile

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.heat_formats import TIMED, HeatFormat
from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament.rules.incidents import (
    FRESH_START_NOTICES,
    FailedAttempt,
    FailureOutcome,
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
    postpone_heat,
    record_machine_scores,
    unit_of_work,
)
from gateway.tournament.services.common import load_settings
from gateway.tournament.services.seating import SeatInfo, heat_seats
from storage import effects
from storage.effects import EffectKind, EffectView, HeatEffect
from storage.enums import HeatStatus, SeatStatus
from storage.journal import HeatResult, HeatRun, HeatRunMachine, HeatRunStep, MachineState, RunState
from storage.tournament import Heat, HeatNotice, Tournament

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

_CALLED = (SeatStatus.ASSIGNED, SeatStatus.PRESENT)
_SCORED = (SeatStatus.PRESENT, SeatStatus.PLAYED)
_NOT_STARTED = (HeatStatus.SCHEDULED, HeatStatus.RESTARTED)
OK = "ok"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class TournamentBridge:
    """Drains a heat's tournament effects into the tournament tables (see the module)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        actor: str = "gateway",
        clock: Clock = _utc_now,
    ) -> None:
        self.sessions = sessions
        self.actor = actor
        self.clock = clock  # tests pass time in (T20's reasonable period)
        self.problems: list[str] = []
        self._draining = asyncio.Lock()  # one drain at a time in this process

    async def seated_machines(self, heat_id: int) -> list[str]:
        """Machines to arm for the heat, in seat order (T11): only seats that would play
        if it started now (T22 roll call, T16 proxies, T2)."""
        async with self.sessions() as session:
            seats = await playing_at_start(session, heat_id)
        return [s.machine_id for s in seats]

    async def heat_format(self, heat_id: int) -> HeatFormat:
        """The format the heat is played to (F1): its tournament's, as it stands now;
        the runner journals it on the run (F5), so a later change never reaches it."""
        async with self.sessions() as session:
            heat = await session.get(Heat, heat_id)
            if heat is None:
                return TIMED
            tournament = await session.get(Tournament, heat.tournament_id)
            assert tournament is not None
            return (await load_settings(session, tournament)).heat_format

    async def close_if_nobody_plays(self, heat_id: int, at: datetime) -> bool:
        """A due heat in which no seat would play (everyone marked absent, or nobody
        registered): announce the start so the absent forfeit (T22; no late entries,
        T11) and close it.  Returns whether the heat was closed."""
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

    async def drain(
        self, run_id: int | None = None, *, skip_banks: Collection[str] = ()
    ) -> int:
        """Apply every pending effect (of ``run_id``, or of every run but those of
        ``skip_banks``: banks this process is driving, whose runners drain their own in
        step with the floor), oldest first; returns how many this call applied.  Safe to
        call from any process, any time.

        A run's own drain waits for an effect another process is applying.  The sweep of
        every run does not: it leaves that heat's later effects to the process at work on
        it (or to the next sweep), so gateways sweeping the same central database do not
        queue one behind the other on each effect's lock; a heat's effects still apply in
        order."""
        async with self._draining:
            async with self.sessions() as session:
                found = await effects.pending(session, run_id=run_id, skip_banks=skip_banks)
            wait = run_id is not None
            applied = 0
            elsewhere: set[int] = set()  # heats whose effect another process holds
            for effect in found:
                if effect.heat_id in elsewhere:
                    continue
                done = await self._apply_one(effect.id, wait=wait)
                if done is None:
                    elsewhere.add(effect.heat_id)
                applied += bool(done)
            return applied

    async def _apply_one(self, effect_id: int, *, wait: bool = True) -> bool | None:
        """Apply one effect: True if this call applied it; False if another process had;
        None if another process is applying it now (only without ``wait``)."""
        async with unit_of_work(self.sessions) as session:
            effect = await effects.claim(session, effect_id, wait=wait)
            if effect is None:
                if wait:
                    return False  # another process applied it meanwhile
                applied = await session.scalar(
                    select(HeatEffect.applied_at).where(HeatEffect.id == effect_id)
                )
                return False if applied is not None else None
            try:
                async with session.begin_nested():  # a refusal undoes only its own changes
                    outcome = await self._apply(session, effect)
            except RuleViolation as exc:
                outcome = f"refused: {exc}"
                self._problem(f"heat {effect.heat_id} {effect.kind.value}: {exc}")
            await effects.finish(session, effect.id, outcome=outcome, now=self.clock())
        log.info(
            "heat %s run %s: %s effect applied (%s)",
            effect.heat_id, effect.run_id, effect.kind.value, outcome,
            extra={"heat": effect.heat_id, "run": effect.run_id, "effect": effect.kind.value},
        )  # fmt: skip
        return True

    async def _apply(self, session: AsyncSession, effect: EffectView) -> str:
        appliers: dict[EffectKind, Callable[[AsyncSession, EffectView], Awaitable[str]]] = {
            EffectKind.STARTED: self._started,
            EffectKind.SCORES: self._scores,
            EffectKind.MALFUNCTION: self._malfunction,
            EffectKind.CLOSED: self._closed,
            EffectKind.RESTARTED: self._restarted,
            EffectKind.ABORTED: self._aborted,
        }
        return await appliers[effect.kind](session, effect)

    async def _started(self, session: AsyncSession, effect: EffectView) -> str:
        heat_id = effect.heat_id
        run = await _run_machines(session, effect.run_id)
        called = [s for s in await heat_seats(session, heat_id) if s.status in _CALLED]
        present = {s.seat_number for s in called if s.machine_id in run}
        expected = {s.seat_number for s in await playing_at_start(session, heat_id)}
        notes = []
        if present != expected:
            notes.append(
                f"roll call changed after the machines were armed; seats {sorted(present)} "
                f"play, the roll call now says {sorted(expected)} (T22; the director decides, T23)"
            )
            self._problem(f"heat {heat_id} start: {notes[-1]}")
        await begin_heat(session, heat_id, present_seats=present, at=effect.at, actor=self.actor)
        # Machines that failed while being armed, before the start: their players were
        # there, so T20 (a future seat or a refund), not T22.
        failed = {m for m, s in run.items() if s is MachineState.MALFUNCTION}
        for seat in await heat_seats(session, heat_id):
            if seat.machine_id in failed and seat.status is SeatStatus.PRESENT:
                await mark_seat_malfunctioned(
                    session,
                    seat.seat_id,
                    at=effect.at,
                    actor=self.actor,
                    reason=f"machine {seat.machine_id} failed at the start",
                )
        return "; ".join([OK, *notes]) if notes else OK

    async def _scores(self, session: AsyncSession, effect: EffectView) -> str:
        """T12: every stored result of the bank to its seat, in this one transaction."""
        wanted = set(effect.details.get("machines", []))
        rows = (
            await session.scalars(select(HeatResult).where(HeatResult.run_id == effect.run_id))
        ).all()
        seats = {s.machine_id: s for s in await heat_seats(session, effect.heat_id)}
        skipped = []
        scores: list[tuple[int, HeatScore, datetime]] = []
        for row in rows:
            if wanted and row.machine_id not in wanted:
                continue
            seat = seats.get(row.machine_id)
            if seat is None:
                continue  # no player on this machine: a result for the record only
            if seat.status not in _SCORED:
                # e.g. forfeited at the start (T22): the machine's result is not that
                # player's score; it stays in the journal only.
                skipped.append(f"{row.machine_id} (seat {seat.seat_number} {seat.status.value})")
                continue
            meters = TournamentMeters(
                row.games_played, row.games_won, row.credits_wagered, row.credits_won
            )
            score = HeatScore(credits=row.score, meters=meters)
            scores.append((seat.seat_id, score, row.collected_at))
        await record_machine_scores(session, scores)  # the bank's seats in one flush
        if skipped:
            self._problem(f"heat {effect.heat_id}: not counted {', '.join(skipped)}")
            return f"{OK}; not counted: {', '.join(skipped)}"
        return OK

    async def _malfunction(self, session: AsyncSession, effect: EffectView) -> str:
        heat = await session.get(Heat, effect.heat_id)
        if heat is not None and heat.status in _NOT_STARTED:
            return "before the start: the start's effect handles it (T20)"
        seat = _seat_of(await heat_seats(session, effect.heat_id), effect.machine_id)
        if seat is None:
            return "no seat on this machine"
        reason = str(effect.details.get("reason", "machine malfunction"))
        await mark_seat_malfunctioned(
            session, seat.seat_id, at=effect.at, actor=self.actor, reason=reason
        )
        return OK

    async def _closed(self, session: AsyncSession, effect: EffectView) -> str:
        await finish_heat(session, effect.heat_id, at=effect.at, actor=self.actor)
        return OK

    async def _restarted(self, session: AsyncSession, effect: EffectView) -> str:
        """T20: restart the heat, or postpone it when the difficulties began longer ago
        than the tournament's reasonable period."""
        now = self.clock()
        reason = str(effect.details.get("reason", "tournament system failure (T20)"))
        failed_at = failure_time(await failure_began(session, effect.heat_id), now)
        heat = await session.get(Heat, effect.heat_id)
        before_start = heat is not None and heat.status in _NOT_STARTED
        outcome = await handle_system_failure(
            session, effect.heat_id, failed_at=failed_at, now=now, actor=self.actor, reason=reason
        )
        if before_start and outcome is FailureOutcome.RESTART:
            return "left due: the attempt failed before its start, nothing to void (T20)"
        return outcome.value

    async def _aborted(self, session: AsyncSession, effect: EffectView) -> str:
        """A director's abort: nothing of the attempt counts; the heat waits, postponed,
        for the director to reschedule it (T10) or restart it (T20)."""
        reason = str(effect.details.get("reason") or "director abort")
        await postpone_heat(
            session, effect.heat_id, now=self.clock(), actor=self.actor, reason=reason
        )
        return "postponed"

    def _problem(self, text: str) -> None:
        log.warning("tournament refused a heat effect: %s", text)
        self.problems.append(text)


def _seat_of(seats: list[SeatInfo], machine_id: str | None) -> SeatInfo | None:
    return next((s for s in seats if s.machine_id == machine_id), None)


async def _run_machines(session: AsyncSession, run_id: int) -> dict[str, MachineState]:
    """The machines the runner took into the run (not left pending)."""
    rows = await session.execute(
        select(HeatRunMachine.machine_id, HeatRunMachine.state).where(
            HeatRunMachine.run_id == run_id
        )
    )
    return {m: s for m, s in rows.all() if s is not MachineState.PENDING}


async def failure_began(session: AsyncSession, heat_id: int) -> datetime | None:
    """When the heat's current tournament-system difficulties began (T20), from the
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
