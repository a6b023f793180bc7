"""Hot-seat draws and wild cards (house clauses HS1–HS7, docs/rules.md), as
``reelgate hotseat ...`` does it: a heat's draws committed before it starts (the hash
only), taken at its close with the seed revealed; a stage's wild card committed before
it ends and drawn after; a won prize paid to the winner, who signs, under dual control
(the approving account is the witness)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.hotseat import MAX_DRAWS, heat_subject, wildcard_subject
from gateway.tournament.services import hotseat as hs
from gateway.tournament.services import machine_prizes
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.hotseat import Announcement
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.director_models import MachinePayIn
from gateway.web.api.errors import ApiError
from gateway.web.api.models import INT32, REF_PATTERN, Body, Name, PendingOut
from gateway.web.api.models import Stage as StageName
from gateway.web.api.routes import needs
from storage.hotseat import HotseatDraw

router = APIRouter(tags=["hot seat"])
Key = Annotated[int, Path(ge=1, le=INT32)]
TRef = Annotated[str, Path(pattern=REF_PATTERN, description="tournament id or name")]
HEAT = "/heats/{key}/hotseat"
WILD = "/tournaments/{ref}/wildcards/{stage}"


class CommitIn(Body):
    draws: Annotated[int, Field(ge=1, le=MAX_DRAWS)]  # HS2
    prize_cents: Annotated[int, Field(ge=0, le=10**11)]  # HS2: per draw


class WinnerOut(BaseModel):
    index: int
    winner: str | None  # a seat (heat) or an entry id (wild card); None: void (HS3)
    prize_cents: int


class AnnouncementOut(BaseModel):
    subject: str
    commitment: str  # HS4: on the boards before the heat
    draws: int
    prize_cents: int
    seed: str | None  # HS5: only once revealed
    winners: list[WinnerOut]


class DrawOut(BaseModel):
    id: int
    index: int
    moment: datetime | None
    candidates: list[str]
    ineligible: list[str]
    picks: list[str]
    winner: str | None
    entry_id: int | None
    prize_cents: int


class DrawsOut(BaseModel):
    subject: str
    seed: str
    draws: list[DrawOut]


class HotseatPay(MachinePayIn):
    draw: Annotated[int, Field(ge=1, le=INT32)]
    witness: Name | None = None  # the approving account (HS7)


def _announcement(a: Announcement) -> dict[str, Any]:
    return AnnouncementOut(
        subject=a.subject,
        commitment=a.commitment,
        draws=a.draws,
        prize_cents=a.prize_cents,
        seed=a.seed,
        winners=[WinnerOut(index=i, winner=w, prize_cents=c) for i, w, c in a.winners],
    ).model_dump()


def _draw(d: HotseatDraw) -> DrawOut:
    return DrawOut(
        id=d.id, index=d.draw_index, moment=d.moment, candidates=json.loads(d.candidates),
        ineligible=json.loads(d.ineligible), picks=json.loads(d.picks), winner=d.winner,
        entry_id=d.entry_id, prize_cents=d.prize_cents,
    )  # fmt: skip


async def _shown(s: AsyncSession, subject: str) -> dict[str, Any]:
    found = await hs.announcement(s, subject)
    if found is None:
        raise ApiError(404, f"{subject}: no hot-seat commitment (HS4)")
    return _announcement(found)


async def _drawn(s: AsyncSession, subject: str, draws: list[HotseatDraw]) -> dict[str, Any]:
    shown = await hs.announcement(s, subject)
    assert shown is not None  # just revealed
    assert shown.seed is not None
    return DrawsOut(subject=subject, seed=shown.seed, draws=[_draw(d) for d in draws]).model_dump()


@router.get(HEAT, openapi_extra=needs(P.HEAT_READ))
async def heat_hotseat(key: Key, me: Caller = who(P.HEAT_READ)) -> AnnouncementOut:
    """HS4–HS5: the heat's commitment; after the close the seed and the winners."""
    return AnnouncementOut(**await _shown(me.session, heat_subject(key)))


@router.post(HEAT, status_code=201, openapi_extra=needs(P.TOURNAMENT_DRAW))
async def commit_heat(
    request: Request, key: Key, body: CommitIn, me: Principal = who(P.TOURNAMENT_DRAW)
) -> AnnouncementOut:
    """HS2, HS4: commit the heat's draws (how many, the prize of each) before it starts;
    only the seed's hash is shown."""

    async def run(s: AsyncSession, b: CommitIn, actor: str, now: datetime) -> dict[str, Any]:
        await hs.commit_heat(s, key, draws=b.draws, prize_cents=b.prize_cents, actor=actor, now=now)
        return await _shown(s, heat_subject(key))

    return AnnouncementOut(**await actions.perform(api_of(request), me, run, body))


@router.post(f"{HEAT}/draw", openapi_extra=needs(P.TOURNAMENT_DRAW))
async def take_heat_draws(
    request: Request, key: Key, me: Principal = who(P.TOURNAMENT_DRAW)
) -> DrawsOut:
    """HS1–HS5: take the closed heat's draws from its recorded seats; reveal the seed."""

    async def run(s: AsyncSession, b: Body, actor: str, now: datetime) -> dict[str, Any]:
        draws = await hs.take_heat_draws(s, key, actor=actor, now=now)
        return await _drawn(s, heat_subject(key), draws)

    return DrawsOut(**await actions.perform(api_of(request), me, run, Body()))


@router.get(WILD, openapi_extra=needs(P.TOURNAMENT_READ))
async def wildcard(
    ref: TRef, stage: StageName, me: Caller = who(P.TOURNAMENT_READ)
) -> AnnouncementOut:
    """HS6: the stage's wild-card commitment; once drawn, the seed and the entry."""
    t = await find_tournament(me.session, ref)
    return AnnouncementOut(**await _shown(me.session, wildcard_subject(t.id, stage)))


@router.post(WILD, status_code=201, openapi_extra=needs(P.TOURNAMENT_DRAW))
async def commit_wildcard(
    request: Request, ref: TRef, stage: StageName, me: Principal = who(P.TOURNAMENT_DRAW)
) -> AnnouncementOut:
    """HS4, HS6: commit the stage's wild card before the stage is over."""

    async def run(s: AsyncSession, b: Body, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(s, ref)
        row = await hs.commit_wildcard(s, t.id, Stage(stage), actor=actor, now=now)
        return await _shown(s, row.subject)

    return AnnouncementOut(**await actions.perform(api_of(request), me, run, Body()))


@router.post(f"{WILD}/draw", openapi_extra=needs(P.TOURNAMENT_DRAW))
async def draw_wildcard(
    request: Request, ref: TRef, stage: StageName, me: Principal = who(P.TOURNAMENT_DRAW)
) -> DrawsOut:
    """HS5, HS6: draw the wild card out of the over stage; reveal the seed."""

    async def run(s: AsyncSession, b: Body, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(s, ref)
        draw = await hs.draw_wildcard(s, t.id, Stage(stage), actor=actor, now=now)
        return await _drawn(s, wildcard_subject(t.id, stage), [draw])

    return DrawsOut(**await actions.perform(api_of(request), me, run, Body()))


@actions.dual(P.HOTSEAT_PRIZE_RECEIPT, HotseatPay, approver="witness")
async def _pay(s: AsyncSession, b: HotseatPay, actor: str, now: datetime) -> dict[str, Any]:
    if b.machine is not None:  # P2, P4: journaled here, sent by the running gateway
        row = await machine_prizes.journal_draw(
            s, b.draw, machine_id=b.machine, signer=b.signer, signature=b.signature,
            witness=b.witness or "", actor=actor, now=now,
        )  # fmt: skip
        return {"transfer": machine_prizes.transfer_facts(row)}
    paid = await hs.pay_draw(
        s, b.draw, signer=b.signer, signature=b.signature, witness=b.witness or "",
        actor=actor, now=now,
    )  # fmt: skip
    return {"draw": paid.id, "entry_id": paid.entry_id, "amount_cents": paid.prize_cents}


@router.post(
    "/hotseat-draws/{key}/receipt",
    status_code=202,
    openapi_extra=needs(P.HOTSEAT_PRIZE_RECEIPT),
)
async def pay(
    request: Request, key: Key, body: MachinePayIn, me: Principal = who(P.HOTSEAT_PRIZE_RECEIPT)
) -> PendingOut:
    """HS7: pay a won draw's prize to the winner, who signs keying their ID or card; the
    approving account is the witness (it cannot be the requester)."""
    order = HotseatPay(draw=key, **body.model_dump())
    return await actions.request(api_of(request), me, P.HOTSEAT_PRIZE_RECEIPT, order)
