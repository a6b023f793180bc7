"""Teams, a house format (docs/rules.md#h1 to #h9), as ``reelgate teams ...`` does it: the
director's team settings (``tournament.decide``), a team registered or withdrawn at the
desk (``player.add``), and the teams and team standings every role reads."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services.teams import (
    list_teams,
    register_team,
    set_team_scoring,
    show_team,
    team_standings,
    withdraw_team,
)
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.models import REF_PATTERN, Body
from gateway.web.api.models import Stage as StageName
from gateway.web.api.routes import needs
from gateway.web.api.team_models import (
    TeamIn,
    TeamOut,
    TeamSettingsIn,
    TeamSettingsOut,
    TeamsOut,
    TeamStandingsOut,
)

router = APIRouter(tags=["teams"])
Ref = Annotated[str, Path(pattern=REF_PATTERN, description="tournament id or name")]
TeamRef = Annotated[str, Path(pattern=REF_PATTERN, description="team id or name")]
T = "/tournaments/{ref}"


class _Nothing(Body):
    """A write with no body (the team is in the path)."""


@router.put(f"{T}/team-settings", openapi_extra=needs(P.TOURNAMENT_DECIDE))
async def settings(
    request: Request, ref: Ref, body: TeamSettingsIn, me: Principal = who(P.TOURNAMENT_DECIDE)
) -> TeamSettingsOut:
    """H1, H4, H6: how teams score and how big they may be; a director's decision with a
    reason, refused once a team member has played (H9)."""

    async def run(s: AsyncSession, b: TeamSettingsIn, actor: str, now: datetime) -> dict[str, Any]:
        scoring = TeamScoring(b.scoring, b.best_n, b.min_size, b.max_size)
        done = await set_team_scoring(s, ref, scoring, actor=actor, now=now, reason=b.reason)
        return {"scoring": done.scoring, "best_n": done.best_n, "min_size": done.min_size,
                "max_size": done.max_size}  # fmt: skip

    return TeamSettingsOut(**await actions.perform(api_of(request), me, run, body))


@router.get(f"{T}/teams", openapi_extra=needs(P.TOURNAMENT_READ))
async def teams(request: Request, ref: Ref, me: Caller = who(P.TOURNAMENT_READ)) -> TeamsOut:
    """Every team of the tournament, the captain first in each."""
    return TeamsOut(teams=[TeamOut.of(t) for t in await list_teams(me.session, ref)])


@router.post(f"{T}/teams", openapi_extra=needs(P.PLAYER_ADD), status_code=201)
async def register(
    request: Request, ref: Ref, body: TeamIn, me: Principal = who(P.PLAYER_ADD)
) -> TeamOut:
    """H1-H4: register a team at the desk, its members and captain at once."""

    async def run(s: AsyncSession, b: TeamIn, actor: str, now: datetime) -> dict[str, Any]:
        team = await register_team(s, ref, b.name, b.members, b.captain, actor=actor, now=now)
        return TeamOut.of(team).model_dump()

    return TeamOut(**await actions.perform(api_of(request), me, run, body))


@router.get(f"{T}/teams/{{team}}", openapi_extra=needs(P.TOURNAMENT_READ))
async def team(
    request: Request, ref: Ref, team: TeamRef, me: Caller = who(P.TOURNAMENT_READ)
) -> TeamOut:
    """One team: members, captain, who registered it."""
    return TeamOut.of(await show_team(me.session, ref, team))


@router.post(f"{T}/teams/{{team}}/withdraw", openapi_extra=needs(P.PLAYER_ADD))
async def withdraw(
    request: Request, ref: Ref, team: TeamRef, me: Principal = who(P.PLAYER_ADD)
) -> TeamOut:
    """H9: withdraw a team before any of its members has played."""

    async def run(s: AsyncSession, b: _Nothing, actor: str, now: datetime) -> dict[str, Any]:
        return TeamOut.of(await withdraw_team(s, ref, team, actor=actor)).model_dump()

    return TeamOut(**await actions.perform(api_of(request), me, run, _Nothing()))


@router.get(f"{T}/team-standings/{{stage}}", openapi_extra=needs(P.TOURNAMENT_READ))
async def standings(
    request: Request, ref: Ref, stage: StageName, me: Caller = who(P.TOURNAMENT_READ)
) -> TeamStandingsOut:
    """H5-H8: the stage's team standings, made from its individual standings."""
    return TeamStandingsOut.of(await team_standings(me.session, ref, Stage(stage)))
