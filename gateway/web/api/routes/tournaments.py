"""Tournaments: list, create, settings (dual control), heats, standings, qualifiers."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.services.setup import HeatSummary, summarise_heat
from gateway.tournament.settings import TournamentSettings
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.models import (
    REF_PATTERN,
    HeatIn,
    HeatOut,
    PendingOut,
    QualifiersOut,
    SettingsChange,
    SettingsChangeIn,
    StandingLineOut,
    StandingsOut,
    TournamentIn,
    TournamentOut,
    TournamentRow,
)
from gateway.web.api.models import (
    Stage as StageName,
)
from gateway.web.api.routes import needs
from storage.tournament import Tournament

router = APIRouter(tags=["tournaments"])
Ref = Annotated[str, Path(pattern=REF_PATTERN, description="tournament id or name")]


def heat_out(h: HeatSummary) -> HeatOut:
    return HeatOut(
        heat_id=h.heat_id,
        tournament_id=h.tournament_id,
        stage=h.stage.value,
        number=h.number,
        label=h.label,
        status=h.status.value,
        starts_at=h.starts_at,
        duration_s=int(h.duration.total_seconds()),
        starting_credits=h.starting_credits,
        bank_name=h.bank_name,
        seats=h.seats,
        booked=h.booked,
    )


@router.get("/tournaments", openapi_extra=needs(P.TOURNAMENT_READ))
async def list_tournaments(
    request: Request, me: Caller = who(P.TOURNAMENT_READ)
) -> list[TournamentRow]:
    session = me.session
    rows = (await session.execute(select(Tournament).order_by(Tournament.id))).scalars()
    return [
        TournamentRow(id=t.id, name=t.name, validity=t.entry_validity, zone=t.venue_tz)
        for t in rows
    ]


async def run_create(
    session: AsyncSession, body: TournamentIn, actor: str, now: datetime
) -> dict[str, Any]:
    """The create's runner, shared with the console's Tournaments screen (one path)."""
    settings = TournamentSettings.from_json(body.settings.changes())
    settings.validate()
    t = await svc.create_tournament(
        session,
        body.name,
        settings,
        actor=actor,
        qualifying_starts_at=body.qualifying_starts_at,
        qualifying_ends_at=body.qualifying_ends_at,
    )
    return {"id": t.id, "name": t.name, "settings": settings.to_json()}


@router.post("/tournaments", status_code=201, openapi_extra=needs(P.TOURNAMENT_CREATE))
async def create_tournament(
    request: Request, body: TournamentIn, me: Principal = who(P.TOURNAMENT_CREATE)
) -> TournamentOut:
    return TournamentOut(**await actions.perform(api_of(request), me, run_create, body))


@router.get("/tournaments/{ref}/settings", openapi_extra=needs(P.TOURNAMENT_READ))
async def settings(
    request: Request, ref: Ref, me: Caller = who(P.TOURNAMENT_READ)
) -> TournamentOut:
    session = me.session
    t = await find_tournament(session, ref)
    current = await load_settings(session, t)
    return TournamentOut(id=t.id, name=t.name, settings=current.to_json())


@actions.dual(P.TOURNAMENT_SETTINGS, SettingsChange)
async def _change(
    session: AsyncSession, body: SettingsChange, actor: str, now: datetime
) -> dict[str, Any]:
    merged = await svc.change_settings(
        session, body.tournament, body.changes.changes(), reason=body.reason, actor=actor
    )
    return {"tournament": body.tournament, "settings": merged.to_json()}


@router.patch(
    "/tournaments/{ref}/settings", status_code=202, openapi_extra=needs(P.TOURNAMENT_SETTINGS)
)
async def change_settings(
    request: Request, ref: Ref, body: SettingsChangeIn, me: Principal = who(P.TOURNAMENT_SETTINGS)
) -> PendingOut:
    order = SettingsChange(tournament=ref, changes=body.changes, reason=body.reason)
    return await actions.request(api_of(request), me, P.TOURNAMENT_SETTINGS, order)


@router.get("/tournaments/{ref}/heats", openapi_extra=needs(P.HEAT_READ))
async def heats(
    request: Request,
    ref: Ref,
    stage: StageName | None = None,
    me: Caller = who(P.HEAT_READ),
) -> list[HeatOut]:
    session = me.session
    found = await svc.list_heats(session, ref, Stage(stage) if stage else None)
    return [heat_out(h) for h in found]


@router.post("/tournaments/{ref}/heats", status_code=201, openapi_extra=needs(P.HEAT_SCHEDULE))
async def schedule_heat(
    request: Request, ref: Ref, body: HeatIn, me: Principal = who(P.HEAT_SCHEDULE)
) -> HeatOut:
    async def run(session: AsyncSession, b: HeatIn, actor: str, now: datetime) -> dict[str, Any]:
        heat = await svc.schedule_heat(
            session,
            ref,
            stage=Stage(b.stage),
            starts_at=b.starts_at,
            bank_name=b.bank,
            duration_seconds=b.duration_seconds,
            starting_credits=b.starting_credits,
            actor=actor,
            now=now,
            number=b.number,
            announced_via=b.announced_via,
            sit_and_go_seats=b.sit_and_go_seats,
        )
        return heat_out(await summarise_heat(session, heat)).model_dump()

    return HeatOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/tournaments/{ref}/standings", openapi_extra=needs(P.HEAT_READ))
async def standings(
    request: Request,
    ref: Ref,
    stage: StageName = "qualifying",
    limit: Annotated[int, Query(ge=1, le=10_000)] = 50,
    me: Caller = who(P.HEAT_READ),
) -> StandingsOut:
    session = me.session
    found = await svc.top_standings(session, ref, Stage(stage), limit=limit)
    return StandingsOut(
        tournament=found.tournament_id,
        stage=found.stage.value,
        lines=[StandingLineOut.model_validate(line) for line in found.lines],
        cuts=list(found.cuts),
    )


@router.get("/tournaments/{ref}/qualifiers", openapi_extra=needs(P.HEAT_READ))
async def qualifiers(request: Request, ref: Ref, me: Caller = who(P.HEAT_READ)) -> QualifiersOut:
    session = me.session
    q = await svc.qualifiers(session, ref)
    return QualifiersOut(
        finalists=list(q.finalists),
        semi_finalists=list(q.qualifying.semi_finalists),
        qualifying_over=q.qualifying_over,
        semis_over=q.semis_over,
        final_over=q.final_over,
    )
