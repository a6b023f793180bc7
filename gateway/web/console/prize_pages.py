"""The Prizes screen of the director and the cash desk (issue 26, item 5; T15): each
stage's advertised schedule and the surplus decision, the prizes won and not yet paid,
payouts with who paid, who witnessed and when, and a printable payout slip.

Each form is the API's (``gateway/web/api/routes/prizes.py``) on the same service,
permission and model: ``PUT .../schedule``, ``PUT .../surplus``, ``PUT .../surplus/weights``
(``tournament.prizes``, the director) and ``POST .../places/{place}/receipt``
(``tournament.prize-receipt``): a dual-control request whose approving account is the
witness, so the payer can never witness their own payout.  A refusal is one line naming
the form's field (a 422 page) and changes nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts import service
from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.prizes import split_by_weights
from gateway.tournament.services.prizes import (
    PrizeLine,
    apportion_surplus,
    prize_lines,
    set_schedule,
    surplus_decision,
)
from gateway.tournament.services.standings import stage_over, stage_standings
from gateway.web.api import actions
from gateway.web.api.auth import api_of
from gateway.web.api.director_models import MachinePayIn, PrizePay
from gateway.web.api.errors import ApiError
from gateway.web.console import prize_forms as forms
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.desk_pages import _chosen, _tournaments
from gateway.web.console.state import console_of
from storage.prizes import PrizePayout
from storage.tournament import Player, Tournament

router = APIRouter()
T = TypeVar("T")
PATH = "/console/prizes"
STAGES = [s.value for s in Stage]


def _now(request: Request) -> datetime:
    return api_of(request).clock()


def _stage(text: str) -> Stage:
    return Stage(text) if text in STAGES else Stage.QUALIFYING


def _back(tournament: str, stage: str) -> str:
    return f"{PATH}?{urlencode({'t': tournament, 'stage': _stage(stage).value})}"


async def _waiting(session: AsyncSession, t: Tournament) -> dict[tuple[str, int], int]:
    """(stage, place) -> the payout asked for and waiting for its witness."""
    out = {}
    for pending in await service.list_pending(session):
        if pending.kind != P.TOURNAMENT_PRIZE_RECEIPT.value:
            continue
        body = pending.payload_dict()
        if str(body.get("tournament")) in (str(t.id), t.name):
            out[(str(body.get("stage")), int(body.get("place") or 0))] = pending.id
    return out


async def _lines(session: AsyncSession, t: Tournament, stage: Stage) -> tuple[PrizeLine, ...]:
    """As ``GET /tournaments/{ref}/prizes/{stage}``: each place against the standings."""
    table = await stage_standings(session, t.id, stage)
    return await prize_lines(session, t.id, stage, table.lines)


async def _unpaid(session: AsyncSession, t: Tournament) -> list[tuple[str, PrizeLine]]:
    """Prizes won (the stage over, one entry holding the place) and not yet paid."""
    out = []
    for stage in Stage:
        if await stage_over(session, t.id, stage):
            for line in await _lines(session, t, stage):
                if not line.paid and line.entry_id is not None:
                    out.append((stage.value, line))
    return out


async def _context(me: Viewer, t: Tournament | None, stage: Stage) -> dict[str, Any]:
    context: dict[str, Any] = {
        "tournament": t, "tournaments": await _tournaments(me.session), "stage": stage.value,
        "stages": STAGES, "lines": (), "surplus": None, "payouts": {}, "waiting": {},
        "unpaid": [], "over": False, "can_schedule": me.can(P.TOURNAMENT_PRIZES),
        "can_pay": me.can(P.TOURNAMENT_PRIZE_RECEIPT),
    }  # fmt: skip
    if t is None:
        return context
    rows = await me.session.scalars(
        select(PrizePayout).where(PrizePayout.tournament_id == t.id, PrizePayout.stage == stage)
    )
    context.update(
        lines=await _lines(me.session, t, stage),
        surplus=await surplus_decision(me.session, t.id, stage),
        payouts={p.place: p for p in rows},
        waiting=await _waiting(me.session, t),
        unpaid=await _unpaid(me.session, t),
        over=await stage_over(me.session, t.id, stage),
    )
    return context


async def _page(
    request: Request, me: Viewer, t: str, stage: str, *, status: int = 200, error: str = ""
) -> Response:
    context = await _context(me, await _chosen(me.session, t), _stage(stage))
    return console_of(request).pages.render(
        request, "prizes.html", me, status=status, active="prizes", error=error, **context,
    )  # fmt: skip


@router.get("/prizes", response_class=HTMLResponse)
async def prizes(
    request: Request, t: str = "", stage: str = "", me: Viewer = viewer(P.TOURNAMENT_READ)
) -> Response:
    return await _page(request, me, t[:100], stage)


async def _answer(
    request: Request, me: Viewer, work: Callable[[Tournament, Stage], Awaitable[str]]
) -> Response:
    """Run a form on its tournament and stage; a refusal is the page again, 422."""
    ref, stage_text = me.field("tournament"), me.field("stage")

    async def run() -> str:
        if stage_text not in STAGES:
            raise OperatorError(f"stage: one of {', '.join(STAGES)}")
        tournament = await _chosen(me.session, ref)
        if tournament is None or ref not in (str(tournament.id), tournament.name):
            raise OperatorError("tournament: pick the tournament")
        return await work(tournament, Stage(stage_text))

    out = await attempt(me, run)
    if not out.ok or out.value is None:
        return await _page(request, me, ref, stage_text, status=422, error=out.error)
    return done(_back(ref, stage_text), out.value)


async def _refusing(default: str, call: Awaitable[T]) -> T:
    try:
        return await call
    except OperatorError as exc:
        raise OperatorError(forms.field_of(str(exc), default)) from None


@router.post("/prizes/schedule")
async def schedule(request: Request, me: Viewer = viewer(P.TOURNAMENT_PRIZES)) -> Response:
    async def work(t: Tournament, stage: Stage) -> str:
        body = forms.schedule_in(str(me.form.get("minimums", "")), me.field("reason"))
        minimums = {p.place: p.cents for p in body.minimums}
        await _refusing("minimums", set_schedule(
            me.session, t.id, stage, minimums, actor=me.name, now=_now(request),
            reason=body.reason,
        ))  # fmt: skip
        return f"{stage.value} schedule set: {len(minimums)} prize places (rule 15)"

    return await _answer(request, me, work)


@router.post("/prizes/surplus")
async def surplus(request: Request, me: Viewer = viewer(P.TOURNAMENT_PRIZES)) -> Response:
    async def work(t: Tournament, stage: Stage) -> str:
        if me.field("split") == "weights":
            weighed = forms.weights_in(
                me.field("surplus_cents"), me.field("weights"), me.field("reason")
            )
            shares = dict(enumerate(split_by_weights(weighed.surplus_cents, weighed.weights), 1))
            total, reason, field = weighed.surplus_cents, weighed.reason, "weights"
        else:
            body = forms.apportion_in(
                me.field("surplus_cents"), str(me.form.get("shares", "")), me.field("reason")
            )
            shares = {p.place: p.cents for p in body.shares}
            total, reason, field = body.surplus_cents, body.reason, "shares"
        await _refusing(field, apportion_surplus(
            me.session, t.id, stage, total, shares, reason=reason, actor=me.name,
            now=_now(request),
        ))  # fmt: skip
        return f"{stage.value} surplus of {total} c apportioned (rule 15)"

    return await _answer(request, me, work)


@router.post("/prizes/pay")
async def pay(request: Request, me: Viewer = viewer(P.TOURNAMENT_PRIZE_RECEIPT)) -> Response:
    async def work(t: Tournament, stage: Stage) -> str:
        place = me.field("place")
        if not place.isdigit():
            raise OperatorError("place: pick the prize to pay")
        fields = {"signer": me.field("signer"), "signature": me.field("signature")}
        machine = me.field("machine")  # P2: credited to the machine by SAS AFT instead
        body = forms.validated(MachinePayIn, {**fields, "machine": machine or None})
        order = PrizePay(tournament=str(t.id), stage=stage.value, place=int(place),
                         **body.model_dump())  # fmt: skip
        try:
            pending = await _refusing("payout", actions.request(
                api_of(request), me, P.TOURNAMENT_PRIZE_RECEIPT, order
            ))  # fmt: skip
        except ApiError as exc:
            raise OperatorError(forms.field_of(str(exc.detail), "payout")) from None
        to = f" to machine {machine} (AFT, rule P2)" if machine else ""
        return (
            f"payout of place {place} of the {stage.value}{to} waits for its witness: a "
            f"director or supervisor other than {me.name} approves it (approval "
            f"{pending.pending}, rule 15)"
        )

    return await _answer(request, me, work)


@router.get("/prizes/slip", response_class=HTMLResponse)
async def slip(
    request: Request, t: str = "", stage: str = "", place: int = 0,
    me: Viewer = viewer(P.TOURNAMENT_READ),
) -> Response:  # fmt: skip
    """The printable payout slip, from the payout's record."""
    tournament = await _chosen(me.session, t[:100])
    payout = None
    if tournament is not None:
        payout = await me.session.scalar(
            select(PrizePayout).where(
                PrizePayout.tournament_id == tournament.id,
                PrizePayout.stage == _stage(stage),
                PrizePayout.place == place,
            )
        )
    if tournament is None or payout is None:
        return await _page(request, me, t, stage, status=404, error="place: no such payout")
    player = await me.session.get(Player, payout.player_id)
    return console_of(request).pages.render(
        request, "prize_slip.html", me, active="prizes", tournament=tournament,
        payout=payout, player=player,
    )  # fmt: skip
