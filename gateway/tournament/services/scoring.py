"""Scores: one per seat, owned by that seat's entry (T12).

``record_machine_score`` is what the heat runner calls when a machine reports its end of
heat meters; it is idempotent (the same score twice is a no-op) and refuses a different
score for a seat that already has one — changing a score is a director's manual
correction with a reason (T23).

Clauses: docs/rules.md#t12.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament.rules.enums import (
    IN_PROGRESS,
    EntryStatus,
    HeatStatus,
    ScoreSource,
    SeatStatus,
    Stage,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.amendments import amend_cut, refuse_if_drawn_from
from gateway.tournament.services.common import (
    get,
    heat_label,
    record,
    require_actor,
    require_reason,
)
from storage.tournament import Entry, Heat, Score, Seat

_CHUNK = 500


def check_meters(score: HeatScore) -> None:
    m = score.meters
    values = {
        "credits": score.credits,
        "games_played": m.games_played,
        "games_won": m.games_won,
        "credits_wagered": m.credits_wagered,
        "credits_won": m.credits_won,
    }
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise RuleViolation(12, f"{name} must be a whole number of credits >= 0, got {value!r}")
    if m.games_won > m.games_played:
        raise RuleViolation(12, "games_won cannot exceed games_played")


def _same(score: Score, heat_score: HeatScore) -> bool:
    m = heat_score.meters
    return (
        score.final_credits,
        score.games_played,
        score.games_won,
        score.credits_wagered,
        score.credits_won,
    ) == (heat_score.credits, m.games_played, m.games_won, m.credits_wagered, m.credits_won)


async def seat_score(session: AsyncSession, seat_id: int) -> Score | None:
    return (
        await session.execute(select(Score).where(Score.seat_id == seat_id))
    ).scalar_one_or_none()


async def record_machine_score(
    session: AsyncSession, seat_id: int, heat_score: HeatScore, *, at: datetime
) -> Score:
    """Store the score a machine reported for a seat (T12).  Same score again: no-op."""
    return (await record_machine_scores(session, [(seat_id, heat_score, at)]))[0]


async def record_machine_scores(
    session: AsyncSession, scores: Sequence[tuple[int, HeatScore, datetime]]
) -> list[Score]:
    """:func:`record_machine_score` for a bank's seats at once, (seat id, score, read at)
    each (T12), with the same checks in the same order, seat by seat; the first refusal
    raises.  The seats, their scores and entries are read in one query each and the new
    scores flushed once: a heat's 250 seats cost a handful of statements, not 1,000."""
    for _, heat_score, _ in scores:
        check_meters(heat_score)
    ids = list(dict.fromkeys(seat_id for seat_id, _, _ in scores))
    seats = {s.id: s for s in await _rows(session, Seat, Seat.id, ids)}
    done = {s.seat_id: s for s in await _rows(session, Score, Score.seat_id, ids)}
    wanted = [s.entry_id for s in seats.values() if s.stage is Stage.QUALIFYING]
    # Held here: the session's identity map keeps only rows someone references.
    entries = {e.id: e for e in await _rows(session, Entry, Entry.id, wanted)}
    out: list[Score] = []
    for seat_id, heat_score, at in scores:
        seat = seats.get(seat_id) or await get(session, Seat, seat_id, "seat")
        existing = done.get(seat.id)
        if existing is not None:
            if not _same(existing, heat_score):
                raise RuleViolation(
                    12,
                    f"seat {seat.id} already has {existing.final_credits} credits; a different "
                    "score is a director's correction (rule 23)",
                )
            out.append(existing)
            continue
        heat = await get(session, Heat, seat.heat_id, "heat")
        if heat.status not in IN_PROGRESS:
            raise RuleViolation(12, f"{heat_label(heat)} is {heat.status.value}; no scores now")
        if seat.status is not SeatStatus.PRESENT:
            raise RuleViolation(
                22, f"seat {seat.seat_number} is {seat.status.value}; it has no score"
            )
        score = await _store(
            session, seat, heat, heat_score, ScoreSource.MACHINE, None, at,
            entry=entries.get(seat.entry_id), flush=False,
        )  # fmt: skip
        done[seat.id] = score
        out.append(score)
    await session.flush()
    return out


async def _rows(session: AsyncSession, model: Any, column: Any, ids: Sequence[int]) -> list[Any]:
    """Rows of ``model`` whose ``column`` is in ``ids``, read in chunks (bounded IN lists)."""
    found: list[Any] = []
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        found += (await session.scalars(select(model).where(column.in_(chunk)))).all()
    return found


async def _store(
    session: AsyncSession,
    seat: Seat,
    heat: Heat,
    heat_score: HeatScore,
    source: ScoreSource,
    recorded_by: str | None,
    at: datetime,
    *,
    entry: Entry | None = None,
    flush: bool = True,
) -> Score:
    m = heat_score.meters
    score = Score(
        tournament_id=heat.tournament_id,
        stage=seat.stage,
        heat_id=heat.id,
        seat_id=seat.id,
        entry_id=seat.entry_id,
        player_id=seat.holder_player_id,
        games_played=m.games_played,
        games_won=m.games_won,
        credits_wagered=m.credits_wagered,
        credits_won=m.credits_won,
        final_credits=heat_score.credits,
        source=source,
        recorded_at=at,
        recorded_by=recorded_by,
    )
    session.add(score)
    seat.status = SeatStatus.PLAYED
    if seat.stage is Stage.QUALIFYING:
        entry = entry or await get(session, Entry, seat.entry_id, "entry")
        entry.status = EntryStatus.PLAYED
        entry.status_changed_at = at
    if flush:
        await session.flush()
    return score


async def enter_manual_score(
    session: AsyncSession,
    seat_id: int,
    heat_score: HeatScore,
    *,
    reason: str,
    actor: str,
    at: datetime,
    approved_by: str | None = None,
) -> Score:
    """A score keyed in by the Tournament Director (T23), e.g. read off a machine whose
    link failed, or a correction.  The old values stay in the audit log.  After the
    stage's cut was sealed it is an amendment of the cut (:mod:`.amendments`), naming
    ``actor`` (who asked) and ``approved_by`` (the dual-control approver)."""
    actor = require_actor(actor)
    reason = require_reason(reason)
    check_meters(heat_score)
    seat = await get(session, Seat, seat_id, "seat")
    heat = await get(session, Heat, seat.heat_id, "heat")
    if heat.status not in IN_PROGRESS | {HeatStatus.CLOSED}:
        raise RuleViolation(23, f"{heat_label(heat)} is {heat.status.value}; no scores for it")
    await refuse_if_drawn_from(session, heat.tournament_id, Stage(heat.stage))
    existing = await seat_score(session, seat.id)
    old = None
    if existing is not None:
        old = {
            "credits": existing.final_credits,
            "games_played": existing.games_played,
            "games_won": existing.games_won,
            "credits_wagered": existing.credits_wagered,
            "credits_won": existing.credits_won,
            "source": existing.source,
        }
        m = heat_score.meters
        existing.final_credits = heat_score.credits
        existing.games_played, existing.games_won = m.games_played, m.games_won
        existing.credits_wagered, existing.credits_won = m.credits_wagered, m.credits_won
        existing.source = ScoreSource.MANUAL
        existing.recorded_by = actor
        existing.recorded_at = at
        score = existing
        await session.flush()
    else:
        if seat.status is not SeatStatus.PRESENT:
            raise RuleViolation(22, f"seat {seat.seat_number} is {seat.status.value}; no score")
        score = await _store(session, seat, heat, heat_score, ScoreSource.MANUAL, actor, at)
    await record(
        session,
        actor,
        "score.manual",
        f"seat:{seat.id}",
        reason,
        heat_id=heat.id,
        entry_id=seat.entry_id,
        credits=heat_score.credits,
        meters=_meters_dict(heat_score.meters),
        replaced=old,
    )
    await amend_cut(
        session,
        heat,
        kind="score.manual",
        rule=23,
        change={
            "seat": seat.id,
            "seat_number": seat.seat_number,
            "entry": seat.entry_id,
            "old_credits": None if old is None else old["credits"],
            "new_credits": heat_score.credits,
        },
        entries=[seat.entry_id],
        reason=reason,
        actor=actor,
        approved_by=approved_by,
        at=at,
    )
    return score


def _meters_dict(m: TournamentMeters) -> dict[str, int]:
    return {
        "games_played": m.games_played,
        "games_won": m.games_won,
        "credits_wagered": m.credits_wagered,
        "credits_won": m.credits_won,
    }


def simple_score(credits: int) -> HeatScore:
    """A score known only by its final credits (manual entry from the credit meter)."""
    return HeatScore(credits=credits, meters=TournamentMeters(0, 0, 0, 0))
