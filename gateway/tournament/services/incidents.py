"""Malfunctions and failures (T20–T21), and what the heat runner calls when they happen.

* :func:`mark_seat_malfunctioned` — one machine failed.  Qualifying (T20): the entry
  gets the first free seat in a future qualifying heat, or a refund if there is none.
  Final stages (T21): the first free seat in a future heat of that stage, or the
  player waits for an added heat (:func:`~.finals.seat_waiting_in_added_heat`).  When the
  player's negligence caused it: disqualified, buy-in forfeited (T20).
* :func:`restart_heat` — the tournament system failed: the whole heat restarts, its
  scores discarded (kept in the audit log).
* :func:`postpone_heat` — not fixed within the reasonable period (T20/T21).
* :func:`handle_system_failure` — picks restart or postpone from the failure time.

Clauses: docs/rules.md#t20, #t21.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import (
    IN_PROGRESS,
    EntryStatus,
    HeatStatus,
    NoticeKind,
    SeatStatus,
    Stage,
    is_final_stage,
)
from gateway.tournament.rules.incidents import (
    FailureOutcome,
    MalfunctionOutcome,
    check_malfunction_allowed,
    failure_outcome,
    malfunction_outcome,
)
from gateway.tournament.rules.seating import FreeSeat, first_free_seat_in_future_heat
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.amendments import amend_cut, refuse_if_drawn_from
from gateway.tournament.services.attendance import clear_roll_call
from gateway.tournament.services.cashdesk import refund_row
from gateway.tournament.services.common import (
    get,
    heat_facts,
    heat_label,
    load_settings,
    occupied_numbers,
    record,
    require_actor,
    require_reason,
    seat_numbers,
)
from gateway.tournament.services.finals import move_proxy
from gateway.tournament.services.people import active_disqualification, disqualify
from gateway.tournament.services.scoring import seat_score
from storage.tournament import Entry, Heat, HeatNotice, Score, Seat, Tournament

# Heats whose current attempt had not started when the system failed (T20).
_NOT_STARTED = frozenset({HeatStatus.SCHEDULED, HeatStatus.RESTARTED})


@dataclass(frozen=True, slots=True)
class MalfunctionResult:
    outcome: MalfunctionOutcome
    new_seat_id: int | None = None
    new_heat_id: int | None = None
    new_seat_number: int | None = None
    refund_cents: int | None = None


async def mark_seat_malfunctioned(
    session: AsyncSession,
    seat_id: int,
    *,
    at: datetime,
    actor: str,
    reason: str,
    negligence: bool = False,
) -> MalfunctionResult:
    """A machine failed under a seat during its heat (T20–T21); see the module notes.
    Any partial score of the seat is discarded (kept in the audit log)."""
    actor = require_actor(actor)
    reason = require_reason(reason, 20)
    seat = await get(session, Seat, seat_id, "seat")
    heat = await get(session, Heat, seat.heat_id, "heat")
    check_malfunction_allowed(heat.status, heat_label(heat))
    if seat.status not in (SeatStatus.ASSIGNED, SeatStatus.PRESENT, SeatStatus.PLAYED):
        raise RuleViolation(20, f"seat {seat.seat_number} is {seat.status.value}")
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    discarded = await _discard_score(session, seat.id)
    if negligence:  # T20: disqualified, buy-in forfeited
        seat.status = SeatStatus.DISQUALIFIED
        await session.flush()
        if await active_disqualification(session, tournament.id, seat.holder_player_id) is None:
            await disqualify(
                session,
                tournament.id,
                seat.holder_player_id,
                rule=20,
                reason=f"machine malfunction by negligence: {reason}",
                actor=actor,
                now=at,
            )
        entry = await get(session, Entry, seat.entry_id, "entry")
        entry.status = EntryStatus.DISQUALIFIED
        entry.status_changed_at = at
        await session.flush()
        await _audit(session, actor, seat, heat, reason, MalfunctionOutcome.DISQUALIFIED, discarded)
        return MalfunctionResult(MalfunctionOutcome.DISQUALIFIED)
    free = await _first_free_seat(session, tournament, heat, seat)
    outcome = malfunction_outcome(is_final_stage(heat.stage), False, free)
    if free is not None:
        seat.status = SeatStatus.MOVED
        await session.flush()  # frees the entry's stage slot before the new seat takes it
        new_heat = await get(session, Heat, free.heat_id, "heat")
        machines = await seat_numbers(session, new_heat.bank_name)
        new = Seat(
            heat_id=new_heat.id,
            stage=seat.stage,
            seat_number=free.seat_number,
            machine_id=machines[free.seat_number],
            entry_id=seat.entry_id,
            holder_player_id=seat.holder_player_id,
            played_by_player_id=seat.played_by_player_id,
            status=SeatStatus.ASSIGNED,
            assigned_at=at,
        )
        session.add(new)
        await session.flush()
        seat.moved_to_seat_id = new.id
        await move_proxy(session, seat.id, new.id)
        if seat.stage is Stage.QUALIFYING:
            await _set_entry(session, seat.entry_id, EntryStatus.SEATED, at)
        await session.flush()
        await _audit(
            session,
            actor,
            seat,
            heat,
            reason,
            outcome,
            discarded,
            new_seat_id=new.id,
            new_heat_id=new_heat.id,
            new_seat_number=free.seat_number,
        )
        return MalfunctionResult(outcome, new.id, new_heat.id, free.seat_number)
    if outcome is MalfunctionOutcome.REFUNDED:
        seat.status = SeatStatus.CANCELLED
        entry = await get(session, Entry, seat.entry_id, "entry")
        await session.flush()
        refund = await refund_row(
            session,
            entry,
            rule=20,
            reason=f"machine malfunction, no future seat: {reason}",
            actor=actor,
            now=at,
        )
        await _audit(
            session, actor, seat, heat, reason, outcome, discarded, refund_cents=refund.amount_cents
        )
        return MalfunctionResult(outcome, refund_cents=refund.amount_cents)
    # T21: no free seat in the stage; the seat waits for an added heat.
    seat.status = SeatStatus.MOVED
    await session.flush()
    await _audit(session, actor, seat, heat, reason, outcome, discarded)
    return MalfunctionResult(outcome)


async def _first_free_seat(
    session: AsyncSession, tournament: Tournament, heat: Heat, seat: Seat
) -> FreeSeat | None:
    heats = (
        (
            await session.execute(
                select(Heat).where(
                    Heat.tournament_id == tournament.id,
                    Heat.stage == heat.stage,
                    Heat.status == HeatStatus.SCHEDULED,
                )
            )
        )
        .scalars()
        .all()
    )
    facts = [await heat_facts(session, h) for h in heats]
    taken = {h.id: await occupied_numbers(session, h.id) for h in heats}
    player_heats = set(
        (
            await session.execute(
                select(Seat.heat_id).where(
                    Seat.holder_player_id == seat.holder_player_id,
                    Seat.stage == heat.stage,
                    Seat.status.not_in((SeatStatus.MOVED, SeatStatus.CANCELLED)),
                )
            )
        ).scalars()
    )
    # The casino's fault, not the player's: the entry's validity window (T5–T8) does
    # not bar the move, and any later heat of the stage counts as "similar".
    after = max(heat.started_at or heat.scheduled_start, heat.scheduled_start)
    return first_free_seat_in_future_heat(heat.stage, after, facts, taken, player_heats, heat.id)


async def _discard_score(session: AsyncSession, seat_id: int) -> dict[str, int] | None:
    score = await seat_score(session, seat_id)
    if score is None:
        return None
    kept = _score_dict(score)
    await session.delete(score)
    await session.flush()
    return kept


def _score_dict(score: Score) -> dict[str, int]:
    return {
        "seat_id": score.seat_id,
        "entry_id": score.entry_id,
        "credits": score.final_credits,
        "games_played": score.games_played,
        "games_won": score.games_won,
        "credits_wagered": score.credits_wagered,
        "credits_won": score.credits_won,
    }


async def _set_entry(
    session: AsyncSession, entry_id: int, status: EntryStatus, at: datetime
) -> None:
    entry = await get(session, Entry, entry_id, "entry")
    entry.status = status
    entry.status_changed_at = at


async def _audit(
    session: AsyncSession,
    actor: str,
    seat: Seat,
    heat: Heat,
    reason: str,
    outcome: MalfunctionOutcome,
    discarded: dict[str, int] | None,
    **extra: int,
) -> None:
    await record(
        session,
        actor,
        "seat.malfunction",
        f"seat:{seat.id}",
        reason,
        heat_id=heat.id,
        seat_number=seat.seat_number,
        machine_id=seat.machine_id,
        entry_id=seat.entry_id,
        outcome=outcome,
        discarded_score=discarded,
        **extra,
    )


async def restart_heat(
    session: AsyncSession,
    heat_id: int,
    *,
    failed_at: datetime,
    now: datetime,
    actor: str,
    reason: str,
) -> Heat:
    """T20: the tournament system failed; the entire heat is restarted.  Scores so far
    are discarded (kept in the audit log); seated players keep their seats."""
    actor = require_actor(actor)
    reason = require_reason(reason, 20)
    heat = await get(session, Heat, heat_id, "heat")
    if heat.status not in IN_PROGRESS | {HeatStatus.ABORTED}:
        raise RuleViolation(20, f"{heat_label(heat)} is {heat.status.value}; nothing to restart")
    await refuse_if_drawn_from(session, heat.tournament_id, Stage(heat.stage))
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    settings = await load_settings(session, tournament)
    if failure_outcome(settings, failed_at, now) is FailureOutcome.POSTPONE:
        minutes = int(settings.postpone_after.total_seconds() // 60)
        raise RuleViolation(20, f"not resolved within {minutes} min: the heat must be postponed")
    discarded = await _reset_heat(session, heat, now)
    heat.status = HeatStatus.RESTARTED
    heat.restarts += 1
    session.add(
        HeatNotice(
            heat_id=heat.id,
            kind=NoticeKind.RESTARTED,
            old_start=heat.started_at,
            new_start=now,
            announced_via="floor",
            announced_at=now,
            changed_by=actor,
            note=reason,
        )
    )
    await session.flush()
    await record(
        session,
        actor,
        "heat.restart",
        f"heat:{heat.id}",
        reason,
        failed_at=failed_at,
        restarts=heat.restarts,
        discarded_scores=discarded,
    )
    await amend_cut(
        session,
        heat,
        kind="heat.restart",
        rule=21 if is_final_stage(Stage(heat.stage)) else 20,
        change={"restarts": heat.restarts, "discarded": len(discarded)},
        entries=[int(d["entry_id"]) for d in discarded],
        reason=reason,
        actor=actor,
        approved_by=None,
        at=now,
    )
    return heat


async def postpone_heat(
    session: AsyncSession, heat_id: int, *, now: datetime, actor: str, reason: str
) -> Heat:
    """T20/T21: not resolved within a reasonable period — postponed.  Players keep their
    seats; a new time is set with ``reschedule_heat`` and announced (T10)."""
    actor = require_actor(actor)
    reason = require_reason(reason, 20)
    heat = await get(session, Heat, heat_id, "heat")
    allowed = IN_PROGRESS | {HeatStatus.ABORTED, HeatStatus.RESTARTED, HeatStatus.SCHEDULED}
    if heat.status not in allowed:
        raise RuleViolation(
            20, f"{heat_label(heat)} is {heat.status.value}; it cannot be postponed"
        )
    discarded = await _reset_heat(session, heat, now)
    # A postponed heat runs another day: its players are called again then (T22).
    cleared = await clear_roll_call(session, heat)
    heat.status = HeatStatus.POSTPONED
    session.add(
        HeatNotice(
            heat_id=heat.id,
            kind=NoticeKind.POSTPONED,
            old_start=heat.scheduled_start,
            announced_via="floor",
            announced_at=now,
            changed_by=actor,
            note=reason,
        )
    )
    await session.flush()
    await record(
        session,
        actor,
        "heat.postpone",
        f"heat:{heat.id}",
        reason,
        discarded_scores=discarded,
        cleared_roll_call=cleared,
    )
    return heat


async def handle_system_failure(
    session: AsyncSession,
    heat_id: int,
    *,
    failed_at: datetime,
    now: datetime,
    actor: str,
    reason: str,
) -> FailureOutcome:
    """T20: restart if resolved within the reasonable period, else postpone.

    ``failed_at`` is when the difficulties began, not when they were noticed: a heat that
    failed, was restarted and keeps failing is measured from the first failure.  A heat
    whose attempt failed before its start (scheduled, or restarted and not yet under way)
    has nothing to void: within the period it simply stays due for another attempt."""
    heat = await get(session, Heat, heat_id, "heat")
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    outcome = failure_outcome(await load_settings(session, tournament), failed_at, now)
    if outcome is FailureOutcome.RESTART and heat.status in _NOT_STARTED:
        return outcome
    if outcome is FailureOutcome.RESTART:
        await restart_heat(
            session, heat_id, failed_at=failed_at, now=now, actor=actor, reason=reason
        )
    else:
        await postpone_heat(session, heat_id, now=now, actor=actor, reason=reason)
    return outcome


async def _reset_heat(session: AsyncSession, heat: Heat, now: datetime) -> list[dict[str, int]]:
    """Discard the heat's scores and put played seats back in play."""
    scores = (await session.execute(select(Score).where(Score.heat_id == heat.id))).scalars().all()
    discarded = [_score_dict(s) for s in scores]
    for score in scores:
        await session.delete(score)
    await session.flush()
    seats = (await session.execute(select(Seat).where(Seat.heat_id == heat.id))).scalars().all()
    for seat in seats:
        if seat.status is SeatStatus.PLAYED:
            seat.status = SeatStatus.PRESENT
            if seat.stage is Stage.QUALIFYING:
                await _set_entry(session, seat.entry_id, EntryStatus.SEATED, now)
    return discarded
