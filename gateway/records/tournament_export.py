"""The body of a tournament export: its settings, the entry totals (sold by kind,
refunded, complimentary; T5–T9, T20), the entries by status, every stage as a stage
export has it (standings, cuts, draws, prizes), the prize totals (T15), and — when the
tournament runs teams (house format H1–H9) — its team settings, teams and each stage's
team standings."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.records.stage_export import stage_body
from gateway.tournament.rules.enums import PurchaseKind, Stage
from gateway.tournament.services.team_prizes import team_prize_facts, team_prize_lines
from gateway.tournament.services.teams import (
    list_teams,
    standings_facts,
    team_facts,
    team_scoring,
    team_standings,
)
from storage.tournament import Entry, EntryPurchase, Refund, Tournament


async def entry_totals(session: AsyncSession, tournament_id: int) -> dict[str, Any]:
    sold = await session.execute(
        select(
            EntryPurchase.kind,
            func.count(),
            func.coalesce(func.sum(EntryPurchase.seats), 0),
            func.coalesce(func.sum(EntryPurchase.amount_cents), 0),
        )
        .where(EntryPurchase.tournament_id == tournament_id)
        .group_by(EntryPurchase.kind)
    )
    by_kind = {
        kind.value: {"purchases": n, "seats": int(seats), "amount_cents": int(cents)}
        for kind, n, seats, cents in sold.all()
    }
    refunded = (
        await session.execute(
            select(func.count(), func.coalesce(func.sum(Refund.amount_cents), 0))
            .join(Entry, Entry.id == Refund.entry_id)
            .where(Entry.tournament_id == tournament_id)
        )
    ).one()
    statuses = await session.execute(
        select(Entry.status, func.count())
        .where(Entry.tournament_id == tournament_id)
        .group_by(Entry.status)
    )
    paid = [v for k, v in by_kind.items() if k != PurchaseKind.COMPLIMENTARY.value]
    comped = by_kind.get(PurchaseKind.COMPLIMENTARY.value, {"purchases": 0, "seats": 0})
    return {
        "sold_by_kind": by_kind,
        "sold_seats": sum(v["seats"] for v in paid),
        "sold_cents": sum(v["amount_cents"] for v in paid),
        "complimentary_seats": comped["seats"],
        "refunded_entries": int(refunded[0]),
        "refunded_cents": int(refunded[1]),
        "net_cents": sum(v["amount_cents"] for v in paid) - int(refunded[1]),
        "entries_by_status": {s.value: n for s, n in statuses.all()},
    }


async def teams_body(session: AsyncSession, tournament: Tournament) -> dict[str, Any] | None:
    """H1–H12: how teams score and the team cut, the teams, each stage's team standings
    (made from the stage's standings above; who goes on, H10) and, where advertised, its
    team prizes with their payouts (H11, H12); None when the tournament runs no teams."""
    scoring = await team_scoring(session, tournament.id)
    if scoring is None:
        return None
    standings = {}
    prizes = {}
    for stage in Stage:
        table = await team_standings(session, tournament.id, stage)
        standings[stage.value] = standings_facts(table)["lines"]
        lines = await team_prize_lines(session, tournament.id, stage, table)
        if lines:
            prizes[stage.value] = team_prize_facts(lines)
    return {
        "settings": {
            "scoring": scoring.scoring,
            "best_n": scoring.best_n,
            "min_size": scoring.min_size,
            "max_size": scoring.max_size,
            "advance": scoring.advance,
        },
        "teams": [team_facts(t) for t in await list_teams(session, tournament.id)],
        "standings": standings,
        **({"prizes": prizes} if prizes else {}),
    }


async def tournament_body(session: AsyncSession, tournament: Tournament) -> dict[str, Any]:
    stages = {s.value: await stage_body(session, tournament, s) for s in Stage}
    prizes = {k: v["prizes"] for k, v in stages.items()}
    teams = await teams_body(session, tournament)
    body: dict[str, Any] = {
        "tournament": {
            "id": tournament.id,
            "name": tournament.name,
            "venue_tz": tournament.venue_tz,
            "entry_price_cents": tournament.entry_price_cents,
            "entry_validity": tournament.entry_validity,
            "semi_final_size": tournament.semi_final_size,
            "direct_final_places": tournament.direct_final_places,
            "final_quota": tournament.final_quota,
            "qualifying_starts_at": tournament.qualifying_starts_at,
            "qualifying_ends_at": tournament.qualifying_ends_at,
            "final_date": tournament.final_date,
            "minimum_age": tournament.minimum_age,
        },
        "entries": await entry_totals(session, tournament.id),
        "stages": stages,
        "prizes": {
            "advertised_cents": sum(p["advertised_cents"] for p in prizes.values()),
            "surplus_cents": sum(p["surplus_cents"] for p in prizes.values()),
            "paid_cents": sum(p["paid_cents"] for p in prizes.values()),
            "unpaid_cents": sum(p["unpaid_cents"] for p in prizes.values()),
        },
    }
    if teams is not None:  # a tournament without teams exports as before
        body["teams"] = teams
    return body
