"""Tournaments and their heat schedule (T10, T13, T14, T21).

Clauses: docs/rules.md#t10, #t13, #t14, #t21.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.heat_limits import heat_limit_problem
from gateway.tournament.rules.enums import (
    EntryStatus,
    HeatStatus,
    NoticeKind,
    SeatStatus,
    Stage,
    is_final_stage,
)
from gateway.tournament.rules.seating import (
    BANK_HOLDING,
    BankSlot,
    check_bank_free,
    check_reschedule,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.amendments import amend_cut, cut_sealed, refuse_if_drawn_from
from gateway.tournament.services.common import (
    aware,
    find_tournament,
    get,
    heat_facts,
    heat_label,
    live_seats,
    load_settings,
    record,
    require_actor,
    require_reason,
    seat_numbers,
    store_settings,
)
from gateway.tournament.settings import TournamentSettings
from storage.floor import FloorBank
from storage.tournament import Entry, Heat, HeatNotice, SitAndGoHeat, Tournament


async def create_tournament(
    session: AsyncSession,
    name: str,
    settings: TournamentSettings,
    *,
    actor: str,
    qualifying_starts_at: datetime | None = None,
    qualifying_ends_at: datetime | None = None,
) -> Tournament:
    actor = require_actor(actor)
    if not name.strip():
        raise RuleViolation(None, "name: a tournament needs a name")
    exists = await session.execute(select(Tournament.id).where(Tournament.name == name))
    if exists.first() is not None:
        raise RuleViolation(None, f"name: tournament {name!r} already exists")
    if qualifying_starts_at and qualifying_ends_at and qualifying_ends_at <= qualifying_starts_at:
        raise RuleViolation(13, "the qualifying period must end after it starts")
    tournament = Tournament(
        name=name.strip(),
        qualifying_starts_at=qualifying_starts_at,
        qualifying_ends_at=qualifying_ends_at,
    )
    session.add(tournament)
    await store_settings(session, tournament, settings)
    await record(
        session,
        actor,
        "tournament.create",
        f"tournament:{tournament.id}",
        None,
        name=tournament.name,
        settings=settings.to_json(),
    )
    return tournament


async def change_settings(
    session: AsyncSession,
    tournament_ref: int | str,
    changes: dict[str, object],
    *,
    reason: str,
    actor: str,
) -> TournamentSettings:
    """Change a tournament's settings (a director decision, T23), recorded with a reason.

    ``changes`` uses the JSON names of :meth:`TournamentSettings.to_json`.
    """
    actor = require_actor(actor)
    reason = require_reason(reason)
    tournament = await find_tournament(session, tournament_ref)
    current = await load_settings(session, tournament)
    base = current.to_json()
    if "format" in changes and "games_per_seat" not in changes:
        base["games_per_seat"] = None  # F1: a new format names its own games (F2)
    merged = TournamentSettings.from_json({**base, **changes})
    if merged.heat_format != current.heat_format:
        await _check_format_change(session, tournament.id)
    await store_settings(session, tournament, merged)
    await record(
        session,
        actor,
        "tournament.settings",
        f"tournament:{tournament.id}",
        reason,
        settings=merged.to_json(),
        changed=sorted(changes),
        before={key: current.to_json()[key] for key in sorted(changes)},
    )
    return merged


async def _check_seats(session: AsyncSession, bank_name: str, sit_and_go: int | None) -> None:
    """The bank has a machine in service, and a sit-and-go heat's seats fit on it (F6)."""
    in_service = len(await seat_numbers(session, bank_name))
    if not in_service:
        raise RuleViolation(None, f"bank {bank_name!r} has no machine in service")
    if sit_and_go is not None and not 1 <= sit_and_go <= in_service:
        raise RuleViolation(
            None,
            f"rule F6: sit_and_go_seats must be 1 to {in_service} (the machines in service "
            f"on bank {bank_name}), got {sit_and_go}",
        )


_NOT_STARTED = (HeatStatus.SCHEDULED, HeatStatus.CANCELLED, HeatStatus.POSTPONED)
# A restarted heat (T20) is to be played again: its stage is part played.
_TO_RUN = (HeatStatus.SCHEDULED, HeatStatus.POSTPONED, HeatStatus.RESTARTED)


async def _check_format_change(session: AsyncSession, tournament_id: int) -> None:
    """F1: the heat format may not change while a stage is part played (a heat of it
    started, another still to run): every heat of a stage is played to one format."""
    rows = (
        await session.execute(
            select(Heat.stage, Heat.status).where(Heat.tournament_id == tournament_id)
        )
    ).all()
    for stage in {stage for stage, _ in rows}:
        statuses = [status for s, status in rows if s == stage]
        started = any(status not in _NOT_STARTED for status in statuses)
        to_run = any(status in _TO_RUN for status in statuses)
        if started and to_run:
            raise RuleViolation(
                None,
                f"rule F1: the {stage.value} stage is part played: its heats keep their "
                "format until every one has run",
            )


async def schedule_heat(
    session: AsyncSession,
    tournament_ref: int | str,
    *,
    stage: Stage,
    starts_at: datetime,
    bank_name: str,
    duration_seconds: int,
    starting_credits: int,
    actor: str,
    now: datetime,
    number: int | None = None,
    announced_via: str | None = None,
    sit_and_go_seats: int | None = None,
) -> Heat:
    """Put a heat on the schedule.  ``announced_via`` makes it an added heat (T21);
    ``sit_and_go_seats`` a sit-and-go heat (F6): ``starts_at`` is then its latest start."""
    actor = require_actor(actor)
    tournament = await find_tournament(session, tournament_ref)
    aware(starts_at, "starts_at")
    if starts_at <= now:
        raise RuleViolation(11, "a heat is scheduled ahead of time (advertised dates and times)")
    if duration_seconds <= 0:
        raise RuleViolation(None, f"duration_seconds: must be positive, got {duration_seconds}")
    if starting_credits <= 0:  # T12: every seat starts with the same tournament credits
        raise RuleViolation(12, f"starting_credits: must be positive, got {starting_credits}")
    problem = heat_limit_problem(starting_credits, duration_seconds)  # what a machine can carry
    if problem is not None:
        raise RuleViolation(None, problem)
    if await session.get(FloorBank, bank_name) is None:
        raise RuleViolation(None, f"bank {bank_name!r} is not on the floor")
    await _check_seats(session, bank_name, sit_and_go_seats)
    await _check_bank_free(session, bank_name, starts_at, duration_seconds)
    sealed = await _may_reopen_cut(session, tournament.id, stage, announced_via)
    if number is None:
        highest = await session.scalar(
            select(func.max(Heat.number)).where(
                Heat.tournament_id == tournament.id, Heat.stage == stage
            )
        )
        number = (highest or 0) + 1
    taken = await session.execute(
        select(Heat.id).where(
            Heat.tournament_id == tournament.id, Heat.stage == stage, Heat.number == number
        )
    )
    if number < 1 or taken.first() is not None:
        raise RuleViolation(None, f"number: {stage.value} heat {number} already exists")
    heat = Heat(
        tournament_id=tournament.id,
        stage=stage,
        number=number,
        scheduled_start=starts_at,
        duration_seconds=duration_seconds,
        starting_credits=starting_credits,
        bank_name=bank_name,
        status=HeatStatus.SCHEDULED,
    )
    session.add(heat)
    await session.flush()
    extra: dict[str, object] = {}
    if sit_and_go_seats is not None:  # F6: starts once this many seats would play
        session.add(SitAndGoHeat(heat_id=heat.id, seats=sit_and_go_seats))
        extra["sit_and_go_seats"] = sit_and_go_seats
    if announced_via:
        session.add(
            HeatNotice(
                heat_id=heat.id,
                kind=NoticeKind.ADDED,
                new_start=starts_at,
                announced_via=announced_via,
                announced_at=now,
                changed_by=actor,
            )
        )
    await record(
        session,
        actor,
        "heat.schedule",
        f"heat:{heat.id}",
        None,
        tournament_id=tournament.id,
        stage=stage,
        number=number,
        starts_at=starts_at,
        bank=bank_name,
        duration_seconds=duration_seconds,
        starting_credits=starting_credits,
        **extra,
    )
    if sealed:
        await amend_cut(
            session,
            heat,
            kind="heat.added",
            rule=21 if is_final_stage(stage) else 10,
            change={"number": number, "bank": bank_name, "starts_at": starts_at},
            entries=[],
            reason=f"heat added, announced via {announced_via}",
            actor=actor,
            approved_by=None,
            at=now,
        )
    return heat


async def _may_reopen_cut(
    session: AsyncSession, tournament_id: int, stage: Stage, announced_via: str | None
) -> bool:
    """Whether a heat added now reopens the stage's sealed cut (an amendment: T10,
    T21b); refused once the next stage was drawn from it, or if not announced (T10)."""
    if not await cut_sealed(session, tournament_id, stage):
        return False
    await refuse_if_drawn_from(session, tournament_id, stage)
    if not (announced_via and announced_via.strip()):
        raise RuleViolation(
            10, f"the {stage.value} cut is sealed: a heat added now is announced (say how)"
        )
    return True


async def _check_bank_free(
    session: AsyncSession,
    bank_name: str,
    starts_at: datetime,
    duration_seconds: int,
    moving: int | None = None,
) -> None:
    """T10/T11: refuse a time that overlaps another heat on the bank (any tournament)."""
    ends_at = starts_at + timedelta(seconds=duration_seconds)
    rows = await session.execute(
        select(Heat, Tournament.name)
        .join(Tournament, Tournament.id == Heat.tournament_id)
        .where(
            Heat.bank_name == bank_name,
            Heat.status.in_(BANK_HOLDING),
            Heat.scheduled_start < ends_at,
            Heat.id != (moving or 0),
        )
    )
    zone = starts_at.tzinfo
    check_bank_free(
        bank_name,
        starts_at,
        ends_at,
        [
            BankSlot(
                f"{h.stage.value} heat {h.number} of {name}",
                h.scheduled_start.astimezone(zone),
                (h.scheduled_start + timedelta(seconds=h.duration_seconds)).astimezone(zone),
            )
            for h, name in rows.all()
        ],
    )


async def reschedule_heat(
    session: AsyncSession,
    heat_id: int,
    *,
    new_start: datetime,
    announced_via: str,
    announced_at: datetime,
    reason: str,
    actor: str,
    now: datetime,
) -> Heat:
    """T10: change a heat's time, announced via MC/marketing beforehand and recorded."""
    actor = require_actor(actor)
    reason = require_reason(reason, 10)
    if not announced_via.strip():
        raise RuleViolation(10, "say how the change was announced (MC, POS, marketing)")
    heat = await get(session, Heat, heat_id, "heat")
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    settings = await load_settings(session, tournament)
    aware(new_start, "new start")
    check_reschedule(
        await heat_facts(session, heat), new_start, now, announced_at, settings.reschedule_notice
    )
    await _check_bank_free(session, heat.bank_name, new_start, heat.duration_seconds, heat.id)
    old = heat.scheduled_start
    session.add(
        HeatNotice(
            heat_id=heat.id,
            kind=NoticeKind.RESCHEDULED,
            old_start=old,
            new_start=new_start,
            announced_via=announced_via,
            announced_at=announced_at,
            changed_by=actor,
            note=reason,
        )
    )
    heat.scheduled_start = new_start
    heat.status = HeatStatus.SCHEDULED
    await session.flush()
    await record(
        session,
        actor,
        "heat.reschedule",
        f"heat:{heat.id}",
        reason,
        old_start=old,
        new_start=new_start,
        announced_via=announced_via,
        announced_at=announced_at,
    )
    return heat


@dataclass(frozen=True, slots=True)
class HeatSummary:
    heat_id: int
    tournament_id: int
    stage: Stage
    number: int
    label: str
    status: HeatStatus
    starts_at: datetime
    duration: timedelta
    starting_credits: int
    bank_name: str
    seats: int
    booked: int
    restarts: int


async def list_heats(
    session: AsyncSession, tournament_ref: int | str, stage: Stage | None = None
) -> list[HeatSummary]:
    tournament = await find_tournament(session, tournament_ref)
    query = select(Heat).where(Heat.tournament_id == tournament.id)
    if stage is not None:
        query = query.where(Heat.stage == stage)
    heats = (await session.execute(query.order_by(Heat.scheduled_start, Heat.id))).scalars().all()
    out = []
    for heat in heats:
        out.append(await summarise_heat(session, heat))
    return out


async def summarise_heat(session: AsyncSession, heat: Heat) -> HeatSummary:
    facts = await heat_facts(session, heat)
    tournament = await get(session, Tournament, heat.tournament_id, "tournament")
    return HeatSummary(
        heat_id=heat.id,
        tournament_id=heat.tournament_id,
        stage=heat.stage,
        number=heat.number,
        label=heat_label(heat),
        status=heat.status,
        starts_at=heat.scheduled_start.astimezone(ZoneInfo(tournament.venue_tz)),
        duration=timedelta(seconds=heat.duration_seconds),
        starting_credits=heat.starting_credits,
        bank_name=heat.bank_name,
        seats=len(facts.seat_numbers),
        booked=len(await live_seats(session, heat.id)),
        restarts=heat.restarts,
    )


async def cancel_heat(
    session: AsyncSession,
    heat_id: int,
    *,
    announced_via: str,
    reason: str,
    actor: str,
    now: datetime,
) -> list[int]:
    """T10: the casino drops a heat not yet run, announced.  Qualifying players get
    their entries back (unused, to register elsewhere within their validity or be
    refunded by a director, T23); final-stage players wait for a seat in an added heat
    (T21).  Returns the entry ids affected."""
    actor = require_actor(actor)
    reason = require_reason(reason, 10)
    if not announced_via.strip():
        raise RuleViolation(10, "say how the cancellation was announced (MC, POS, marketing)")
    heat = await get(session, Heat, heat_id, "heat")
    if heat.status not in (HeatStatus.SCHEDULED, HeatStatus.POSTPONED):
        raise RuleViolation(
            10, f"{heat_label(heat)} is {heat.status.value}; it cannot be cancelled"
        )
    affected: list[int] = []
    for seat in await live_seats(session, heat.id):
        affected.append(seat.entry_id)
        if heat.stage is Stage.QUALIFYING:
            seat.status = SeatStatus.CANCELLED
            entry = await get(session, Entry, seat.entry_id, "entry")
            entry.status = EntryStatus.AVAILABLE
            entry.status_changed_at = now
        else:
            seat.status = SeatStatus.MOVED  # waiting for an added heat (T21)
    heat.status = HeatStatus.CANCELLED
    session.add(
        HeatNotice(
            heat_id=heat.id,
            kind=NoticeKind.CANCELLED,
            old_start=heat.scheduled_start,
            announced_via=announced_via,
            announced_at=now,
            changed_by=actor,
            note=reason,
        )
    )
    await session.flush()
    await record(
        session,
        actor,
        "heat.cancel",
        f"heat:{heat.id}",
        reason,
        announced_via=announced_via,
        entries=affected,
    )
    return affected


async def record_decision(
    session: AsyncSession,
    tournament_ref: int | str,
    *,
    subject: str,
    decision: str,
    reason: str,
    actor: str,
) -> None:
    """T23: a Tournament Director's decision not covered by another command, kept in
    the audit log with its reason (decisions are final and binding)."""
    actor = require_actor(actor)
    reason = require_reason(reason)
    if not subject.strip() or not decision.strip():
        raise RuleViolation(23, "say what the decision is about and what was decided")
    tournament = await find_tournament(session, tournament_ref)
    await record(
        session,
        actor,
        "director.decision",
        f"tournament:{tournament.id}",
        reason,
        about=subject.strip(),
        decision=decision.strip(),
    )
