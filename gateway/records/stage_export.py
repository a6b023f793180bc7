"""The body of a stage export: its heats, the standings with the cuts they decide
(T13, T14, T17, T19), unresolved ties, the card draws that broke ties (with seeds for
digital ones), the seat draws (with seed, algorithm and whether they still recompute),
and the prizes (T15): the advertised schedule, the director's surplus decision, payouts;
and the amendments of the stage's sealed cut (each line says whether it was amended).

A stage's standings are ``official`` once every heat of it is run or cancelled.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.records.heat_export import audit_row, result_status
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.hotseat import wildcard_subject
from gateway.tournament.services.amendments import CutRecord, amendments
from gateway.tournament.services.finals import SEAT_DRAW_ACTIONS, verify_seat_draws
from gateway.tournament.services.hotseat import export_items
from gateway.tournament.services.prizes import prize_lines, surplus_decision
from gateway.tournament.services.standings import (
    Qualifiers,
    StageStandings,
    qualifiers,
    stage_over,
    stage_standings,
)
from storage.audit import AuditEntry
from storage.tournament import CardDraw, Heat, Tournament


def _outcome(stage: Stage, q: Qualifiers) -> dict[str, Any]:
    """Who goes on, as decided so far, and the ties a cut still waits on."""
    if stage is Stage.QUALIFYING:
        return {
            "direct_finalists": list(q.qualifying.direct_finalists),  # T13
            "semi_finalists": list(q.qualifying.semi_finalists),  # T14
            "pending_ties": list(q.qualifying.pending),
            "complete": q.qualifying.complete,
        }
    cut = q.finalists_from_semis if stage is Stage.SEMI_FINAL else q.winners
    return {
        "selected": list(cut.selected),
        "pending_ties": list(cut.pending),
        "complete": cut.complete,
    }


def _going_on(stage: Stage, q: Qualifiers) -> dict[int, str]:
    if stage is Stage.QUALIFYING:
        out = {e: "final (T13)" for e in q.qualifying.direct_finalists}
        out.update({e: "semi-final (T14)" for e in q.qualifying.semi_finalists})
        return out
    if stage is Stage.SEMI_FINAL:
        return {e: "final (T17)" for e in q.finalists_from_semis.selected}
    return {e: f"prize place {i} (T19)" for i, e in enumerate(q.winners.selected, start=1)}


def _standings(
    table: StageStandings, going_on: dict[int, str], amended: set[int]
) -> list[dict[str, Any]]:
    return [
        {
            "place": x.place,
            "position": x.position,
            "entry_id": x.entry_id,
            "player": {"id": x.player_id, "name": x.player_name},
            "credits": x.credits,
            "tied": x.tied,
            "heat_number": x.heat_number,
            "goes_on_to": going_on.get(x.entry_id),
            "amended": x.entry_id in amended,  # changed after the sealed cut
        }
        for x in table.lines
    ]


def _amended(changes: list[CutRecord]) -> list[int]:
    return sorted({e for c in changes for e in c.affected})


def _card(d: CardDraw) -> dict[str, Any]:
    return {
        "tie_credits": d.tie_credits,
        "round": d.round,
        "entry_id": d.entry_id,
        "player_id": d.player_id,
        "drawn_by": d.drawn_by,
        "drawer_name": d.drawer_name,
        "card_rank": d.card_rank,
        "card_suit": d.card_suit,
        "method": d.method,
        "seed": d.seed,
        "algorithm": d.algorithm,
        "context": d.context,
        "recorded_by": d.recorded_by,
        "recorded_at": d.recorded_at,
    }


async def _seat_draws(session: AsyncSession, tournament: Tournament, stage: Stage) -> list[Any]:
    rows = await session.execute(
        select(AuditEntry).where(AuditEntry.action.in_(SEAT_DRAW_ACTIONS)).order_by(AuditEntry.id)
    )
    prefix = f"tournament={tournament.id}|stage={stage.value}|"
    return [audit_row(r) for r in rows.scalars() if r.details_dict()["context"].startswith(prefix)]


async def prizes_of(
    session: AsyncSession, tournament_id: int, stage: Stage, table: StageStandings
) -> dict[str, Any]:
    decision = await surplus_decision(session, tournament_id, stage)
    lines = await prize_lines(session, tournament_id, stage, table.lines)
    return {
        "places": list(lines),
        "advertised_cents": sum(x.minimum_cents for x in lines),
        "surplus_cents": sum(x.surplus_cents for x in lines),
        "paid_cents": sum(x.paid_cents or 0 for x in lines),
        "unpaid_cents": sum(x.total_cents for x in lines if not x.paid),
        "surplus_decision": None
        if decision is None
        else {
            "surplus_cents": decision.surplus_cents,
            "reason": decision.reason,
            "decided_by": decision.decided_by,
            "decided_at": decision.decided_at,
        },
    }


async def stage_body(session: AsyncSession, tournament: Tournament, stage: Stage) -> dict[str, Any]:
    table = await stage_standings(session, tournament.id, stage)
    q = await qualifiers(session, tournament.id)
    over = await stage_over(session, tournament.id, stage)
    heats = await session.execute(
        select(Heat)
        .where(Heat.tournament_id == tournament.id, Heat.stage == stage)
        .order_by(Heat.number)
    )
    cards = await session.execute(
        select(CardDraw)
        .where(CardDraw.tournament_id == tournament.id, CardDraw.stage == stage)
        .order_by(CardDraw.tie_credits.desc(), CardDraw.round, CardDraw.entry_id)
    )
    seat_problems = await verify_seat_draws(session, tournament.id)
    changes = await amendments(session, tournament.id, stage)
    wildcard = await export_items(session, wildcard_subject(tournament.id, stage.value))  # HS6
    return {
        **({"hotseat": wildcard} if wildcard else {}),
        "tournament": {"id": tournament.id, "name": tournament.name},
        "stage": stage,
        "result": result_status(over),
        "heats": [
            {
                "id": h.id,
                "number": h.number,
                "bank": h.bank_name,
                "status": h.status,
                "scheduled_start": h.scheduled_start,
                "started_at": h.started_at,
                "ended_at": h.ended_at,
            }
            for h in heats.scalars()
        ],
        "cuts": list(table.cuts),
        "standings": _standings(table, _going_on(stage, q), set(_amended(changes))),
        "amendments": [c.listing() for c in changes],  # the cut as amended after its seal
        "ties": list(table.standings.ties),
        "ties_to_draw": list(table.ties_to_draw),
        "outcome": _outcome(stage, q),
        "card_draws": [_card(d) for d in cards.scalars()],
        "seat_draws": await _seat_draws(session, tournament, stage),
        "seat_draws_recompute": not seat_problems,
        "seat_draw_problems": seat_problems,
        "prizes": await prizes_of(session, tournament.id, stage, table),
    }
