"""The Teams screen (issue 30, item 3; house format H1-H12): the tournament's teams with
their captains and members, the stage's team standings made from its individual
standings (who goes on through the team cut, H10), the director's team settings, the
desk's registration and withdrawal, and the stage's team prizes: advertised by the
director (H11) and paid to a team's captain under dual control (H12).

Each form is the API's (``gateway/web/api/routes/teams.py``) on the same service,
permission and model: ``PUT .../team-settings`` (``tournament.decide``), ``POST
.../teams`` and ``POST .../teams/{team}/withdraw`` (``player.add``), ``PUT
.../team-prizes/{stage}`` (``tournament.prizes``) and ``POST .../team-prizes/{stage}/
places/{place}/receipt`` (``team.prize-receipt``, a pending action a second account
approves as the witness).  A refusal is the page
again (422) with the one line naming the clause or the field, and changes nothing."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services.team_prizes import set_team_schedule, team_prize_lines
from gateway.tournament.services.teams import (
    list_teams,
    register_team,
    set_team_scoring,
    team_scoring,
    team_standings,
    withdraw_team,
)
from gateway.web.api import actions
from gateway.web.api.auth import api_of
from gateway.web.api.director_models import PayIn
from gateway.web.api.errors import ApiError
from gateway.web.api.team_models import (
    TeamIn,
    TeamPrizePay,
    TeamScheduleIn,
    TeamSettingsIn,
    TeamStandingsOut,
)
from gateway.web.console import prize_forms as forms
from gateway.web.console.acting import attempt, done, parse
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.desk_pages import _chosen, _tournaments
from gateway.web.console.state import console_of
from storage.tournament import Tournament

router = APIRouter()
PATH = "/console/teams"
STAGES = [s.value for s in Stage]


def _stage(text: str) -> Stage:
    return Stage(text) if text in STAGES else Stage.QUALIFYING


async def _context(me: Viewer, t: Tournament | None, stage: Stage) -> dict[str, Any]:
    context: dict[str, Any] = {
        "tournament": t, "tournaments": await _tournaments(me.session), "stage": stage.value,
        "stages": STAGES, "scoring": None, "teams": [], "table": None,
        "can_decide": me.can(P.TOURNAMENT_DECIDE), "can_register": me.can(P.PLAYER_ADD),
        "can_schedule": me.can(P.TOURNAMENT_PRIZES), "can_pay": me.can(P.TEAM_PRIZE_RECEIPT),
        "prizes": [],
    }  # fmt: skip
    if t is None:
        return context
    scoring = await team_scoring(me.session, t.id)
    context.update(scoring=scoring, teams=await list_teams(me.session, t.id))
    if scoring is not None:
        table = await team_standings(me.session, t.id, stage)
        context["table"] = TeamStandingsOut.of(table)
        context["prizes"] = await team_prize_lines(me.session, t.id, stage, table)
    return context


async def _page(
    request: Request, me: Viewer, t: str, stage: str, *, status: int = 200, error: str = ""
) -> Response:
    context = await _context(me, await _chosen(me.session, t), _stage(stage))
    return console_of(request).pages.render(
        request, "teams.html", me, status=status, active="teams", error=error, **context
    )


@router.get("/teams", response_class=HTMLResponse)
async def teams(
    request: Request, t: str = "", stage: str = "", me: Viewer = viewer(P.TOURNAMENT_READ)
) -> Response:
    return await _page(request, me, t[:100], stage)


async def _answer(
    request: Request, me: Viewer, work: Callable[[Tournament], Awaitable[str]]
) -> Response:
    ref, stage = me.field("tournament"), me.field("stage")

    async def run() -> str:
        tournament = await _chosen(me.session, ref)
        if tournament is None or ref not in (str(tournament.id), tournament.name):
            raise OperatorError("tournament: pick the tournament")
        return await work(tournament)

    out = await attempt(me, run)
    if not out.ok or out.value is None:
        return await _page(request, me, ref, stage, status=422, error=out.error)
    return done(f"{PATH}?{urlencode({'t': ref, 'stage': _stage(stage).value})}", out.value)


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) <= 3 else None


def _advance(text: str) -> int | str | None:
    """H10: blank is no team cut; anything else goes to the model, which names the field."""
    text = text.strip()
    return None if not text else int(text) if text.isdigit() and len(text) <= 6 else text


@router.post("/teams/settings")
async def settings(request: Request, me: Viewer = viewer(P.TOURNAMENT_DECIDE)) -> Response:
    async def work(t: Tournament) -> str:
        body = parse(TeamSettingsIn, {
            "scoring": me.field("scoring") or "sum", "best_n": _number(me.field("best_n")),
            "min_size": me.field("min_size") or 2, "max_size": me.field("max_size") or 4,
            "advance": _advance(me.field("advance")), "reason": me.field("reason"),
        })  # fmt: skip
        scoring = TeamScoring(body.scoring, body.best_n, body.min_size, body.max_size, body.advance)
        await set_team_scoring(
            me.session, t.id, scoring, actor=me.name, now=api_of(request).clock(),
            reason=body.reason,
        )  # fmt: skip
        how = "sum" if scoring.best_n is None else f"best {scoring.best_n}"
        cut = "" if scoring.advance is None else f", top {scoring.advance} go on (H10)"
        return f"teams: {how}, {scoring.min_size} to {scoring.max_size} players{cut} (H1, H6)"

    return await _answer(request, me, work)


@router.post("/teams/register")
async def register(request: Request, me: Viewer = viewer(P.PLAYER_ADD)) -> Response:
    async def work(t: Tournament) -> str:
        members = [m for m in re.split(r"[\n,]+", str(me.form.get("members", ""))) if m.strip()]
        body = parse(TeamIn, {
            "name": me.field("name"), "members": [m.strip() for m in members],
            "captain": me.field("captain"),
        })  # fmt: skip
        team = await register_team(
            me.session, t.id, body.name, body.members, body.captain, actor=me.name,
            now=api_of(request).clock(),
        )  # fmt: skip
        return (
            f"team {team.name} registered: {len(team.members)} players, captain {team.captain.name}"
        )

    return await _answer(request, me, work)


@router.post("/teams/withdraw")
async def withdraw(request: Request, me: Viewer = viewer(P.PLAYER_ADD)) -> Response:
    async def work(t: Tournament) -> str:
        team = me.field("team")
        if not team:
            raise OperatorError("team: pick the team to withdraw")
        gone = await withdraw_team(me.session, t.id, team, actor=me.name)
        return f"team {gone.name} withdrawn (H9)"

    return await _answer(request, me, work)


@router.post("/teams/prizes")
async def prizes(request: Request, me: Viewer = viewer(P.TOURNAMENT_PRIZES)) -> Response:
    """H11: the stage's team prizes, ``PLACE=CENTS`` per place."""

    async def work(t: Tournament) -> str:
        stage = _stage(me.field("stage"))
        body = forms.validated(TeamScheduleIn, {
            "prizes": forms.places("prizes", str(me.form.get("prizes", ""))),
            "reason": me.field("reason") or None,
        })  # fmt: skip
        amounts = {p.place: p.cents for p in body.prizes}
        await set_team_schedule(me.session, t.id, stage, amounts, actor=me.name,
                                now=api_of(request).clock(), reason=body.reason)  # fmt: skip
        return f"{stage.value} team prizes: {len(amounts)} place(s) advertised (H11)"

    return await _answer(request, me, work)


@router.post("/teams/pay")
async def pay(request: Request, me: Viewer = viewer(P.TEAM_PRIZE_RECEIPT)) -> Response:
    """H12: a team place paid to the captain, waiting for its witness's approval."""

    async def work(t: Tournament) -> str:
        stage = _stage(me.field("stage"))
        place = me.field("place")
        if not place.isdigit() or len(place) > 5:
            raise OperatorError("place: pick the team place to pay")
        body = forms.validated(
            PayIn, {"signer": me.field("signer"), "signature": me.field("signature")}
        )
        order = TeamPrizePay(tournament=str(t.id), stage=stage.value, place=int(place),
                             **body.model_dump())  # fmt: skip
        try:
            pending = await actions.request(api_of(request), me, P.TEAM_PRIZE_RECEIPT, order)
        except ApiError as exc:
            raise OperatorError(str(exc.detail)) from None
        return (
            f"payout of team place {place} of the {stage.value} waits for its witness: a "
            f"director or supervisor other than {me.name} approves it (approval "
            f"{pending.pending}, H12)"
        )

    return await _answer(request, me, work)
