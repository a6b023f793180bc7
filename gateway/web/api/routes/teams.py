"""Teams, a house format (docs/rules.md#h1 to #h12), as ``reelgate teams ...`` does it: the
director's team settings and team cut (``tournament.decide``), a team registered or
withdrawn at the desk (``player.add``), the teams and team standings every role reads,
the team prize schedule (``tournament.prizes``, H11) and a team place paid to its
captain under dual control, the approving account the witness (``team.prize-receipt``,
H12)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.team_prizes import (
    pay_team_prize,
    set_team_schedule,
    team_prize_lines,
)
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
from gateway.web.api.director_models import PayIn
from gateway.web.api.models import REF_PATTERN, Body, PendingOut
from gateway.web.api.models import Stage as StageName
from gateway.web.api.routes import needs
from gateway.web.api.team_models import (
    TeamIn,
    TeamOut,
    TeamPrizeLineOut,
    TeamPrizePay,
    TeamPrizesOut,
    TeamScheduleIn,
    TeamSettingsIn,
    TeamSettingsOut,
    TeamsOut,
    TeamStandingsOut,
)

router = APIRouter(tags=["teams"])
Ref = Annotated[str, Path(pattern=REF_PATTERN, description="tournament id or name")]
TeamRef = Annotated[str, Path(pattern=REF_PATTERN, description="team id or name")]
Place = Annotated[int, Path(ge=1, le=10_000)]
T = "/tournaments/{ref}"
PRIZES = f"{T}/team-prizes/{{stage}}"


class _Nothing(Body):
    """A write with no body (the team is in the path)."""


@router.put(f"{T}/team-settings", openapi_extra=needs(P.TOURNAMENT_DECIDE))
async def settings(
    request: Request, ref: Ref, body: TeamSettingsIn, me: Principal = who(P.TOURNAMENT_DECIDE)
) -> TeamSettingsOut:
    """H1, H4, H6, H10: how teams score, how big they may be and how many go on; a
    director's decision with a reason, refused once a team member has played (H9)."""

    async def run(s: AsyncSession, b: TeamSettingsIn, actor: str, now: datetime) -> dict[str, Any]:
        scoring = TeamScoring(b.scoring, b.best_n, b.min_size, b.max_size, b.advance)
        done = await set_team_scoring(s, ref, scoring, actor=actor, now=now, reason=b.reason)
        return {"scoring": done.scoring, "best_n": done.best_n, "min_size": done.min_size,
                "max_size": done.max_size, "advance": done.advance}  # fmt: skip

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


async def _prizes(s: AsyncSession, ref: str, stage: Stage) -> dict[str, Any]:
    t = await find_tournament(s, ref)
    lines = await team_prize_lines(s, t.id, stage)
    found = [TeamPrizeLineOut.model_validate(x) for x in lines]
    return TeamPrizesOut(stage=stage.value, prizes=found).model_dump()


@router.get(PRIZES, openapi_extra=needs(P.TOURNAMENT_READ))
async def team_prizes(
    request: Request, ref: Ref, stage: StageName, me: Caller = who(P.TOURNAMENT_READ)
) -> TeamPrizesOut:
    """H11, H12: each advertised team place of the stage, its holder and its payout."""
    return TeamPrizesOut(**await _prizes(me.session, ref, Stage(stage)))


@router.put(PRIZES, openapi_extra=needs(P.TOURNAMENT_PRIZES))
async def team_schedule(
    request: Request,
    ref: Ref,
    stage: StageName,
    body: TeamScheduleIn,
    me: Principal = who(P.TOURNAMENT_PRIZES),
) -> TeamPrizesOut:
    """H11: the advertised prize per team place; a change only raises or adds places,
    with a reason, and the schedule is fixed once a place is paid."""

    async def run(s: AsyncSession, b: TeamScheduleIn, actor: str, now: datetime) -> dict[str, Any]:
        amounts = {p.place: p.cents for p in b.prizes}
        await set_team_schedule(s, ref, Stage(stage), amounts, actor=actor, now=now,
                                reason=b.reason)  # fmt: skip
        return await _prizes(s, ref, Stage(stage))

    return TeamPrizesOut(**await actions.perform(api_of(request), me, run, body))


@actions.dual(P.TEAM_PRIZE_RECEIPT, TeamPrizePay, approver="witness")
async def _pay(s: AsyncSession, b: TeamPrizePay, actor: str, now: datetime) -> dict[str, Any]:
    t = await find_tournament(s, b.tournament)
    paid = await pay_team_prize(
        s, t.id, Stage(b.stage), b.place, signer=b.signer, signature=b.signature,
        witness=b.witness or "", actor=actor, now=now,
    )  # fmt: skip
    return {
        "place": paid.place, "team_id": paid.team_id, "captain": paid.player_id,
        "amount_cents": paid.amount_cents, "witness": paid.witness, "paid_at": paid.paid_at,
    }  # fmt: skip


@router.post(
    f"{PRIZES}/places/{{place}}/receipt",
    status_code=202,
    openapi_extra=needs(P.TEAM_PRIZE_RECEIPT),
)
async def pay_team(
    request: Request,
    ref: Ref,
    stage: StageName,
    place: Place,
    body: PayIn,
    me: Principal = who(P.TEAM_PRIZE_RECEIPT),
) -> PendingOut:
    """H12: pay a team place to the team's captain, who signs keying their ID or card;
    the approving account is the witness (it cannot be the requester)."""
    order = TeamPrizePay(tournament=ref, stage=stage, place=place, **body.model_dump())
    return await actions.request(api_of(request), me, P.TEAM_PRIZE_RECEIPT, order)
