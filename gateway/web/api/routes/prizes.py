"""T15 prizes of a stage, as ``reelgate tournament prizes ...`` does it: list each place
(advertised minimum, surplus share, who holds it, paid), the advertised schedule, the
director's apportionment of the surplus (by shares or by weights), and the payout the
winner signs for — a dual-control action whose approving account is the witness."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.prizes import split_by_weights
from gateway.tournament.services import machine_prizes
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.prizes import (
    apportion_surplus,
    pay_prize,
    payout_facts,
    prize_lines,
    set_schedule,
)
from gateway.tournament.services.standings import stage_standings
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.director_models import (
    ApportionIn,
    MachinePayIn,
    PrizeLineOut,
    PrizePay,
    PrizesOut,
    ScheduleIn,
    WeightsIn,
)
from gateway.web.api.models import REF_PATTERN, PendingOut
from gateway.web.api.models import Stage as StageName
from gateway.web.api.routes import needs

router = APIRouter(tags=["prizes"])
Ref = Annotated[str, Path(pattern=REF_PATTERN, description="tournament id or name")]
Place = Annotated[int, Path(ge=1, le=10_000)]
PRIZES = "/tournaments/{ref}/prizes/{stage}"


async def _lines(s: AsyncSession, tournament_id: int, stage: Stage) -> dict[str, Any]:
    lines = await prize_lines(s, tournament_id, stage)
    found = [PrizeLineOut.model_validate(x) for x in lines]
    return PrizesOut(stage=stage.value, prizes=found).model_dump()


@router.get(PRIZES, openapi_extra=needs(P.TOURNAMENT_READ))
async def prizes(
    request: Request, ref: Ref, stage: StageName, me: Caller = who(P.TOURNAMENT_READ)
) -> PrizesOut:
    """Each prize place of the stage against its standings (T15)."""
    t = await find_tournament(me.session, ref)
    table = await stage_standings(me.session, t.id, Stage(stage))
    lines = await prize_lines(me.session, t.id, table.stage, table.lines)
    return PrizesOut(stage=stage, prizes=[PrizeLineOut.model_validate(x) for x in lines])


@router.put(f"{PRIZES}/schedule", openapi_extra=needs(P.TOURNAMENT_PRIZES))
async def schedule(
    request: Request,
    ref: Ref,
    stage: StageName,
    body: ScheduleIn,
    me: Principal = who(P.TOURNAMENT_PRIZES),
) -> PrizesOut:
    """T15: the advertised minimum per place; a change needs a reason and may only
    raise or add places."""

    async def run(s: AsyncSession, b: ScheduleIn, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(s, ref)
        minimums = {p.place: p.cents for p in b.minimums}
        await set_schedule(s, t.id, Stage(stage), minimums, actor=actor, now=now, reason=b.reason)
        return await _lines(s, t.id, Stage(stage))

    return PrizesOut(**await actions.perform(api_of(request), me, run, body))


async def _apportion(
    s: AsyncSession,
    ref: str,
    stage: Stage,
    b: ApportionIn | WeightsIn,
    shares: dict[int, int],
    actor: str,
    now: datetime,
) -> dict[str, Any]:
    t = await find_tournament(s, ref)
    await apportion_surplus(
        s, t.id, stage, b.surplus_cents, shares, reason=b.reason, actor=actor, now=now
    )
    return await _lines(s, t.id, stage)


@router.put(f"{PRIZES}/surplus", openapi_extra=needs(P.TOURNAMENT_PRIZES))
async def apportion(
    request: Request,
    ref: Ref,
    stage: StageName,
    body: ApportionIn,
    me: Principal = who(P.TOURNAMENT_PRIZES),
) -> PrizesOut:
    """T15: the director's decision on the surplus: a share per place, every cent."""

    async def run(s: AsyncSession, b: ApportionIn, actor: str, now: datetime) -> dict[str, Any]:
        shares = {p.place: p.cents for p in b.shares}
        return await _apportion(s, ref, Stage(stage), b, shares, actor, now)

    return PrizesOut(**await actions.perform(api_of(request), me, run, body))


@router.put(f"{PRIZES}/surplus/weights", openapi_extra=needs(P.TOURNAMENT_PRIZES))
async def apportion_by_weights(
    request: Request,
    ref: Ref,
    stage: StageName,
    body: WeightsIn,
    me: Principal = who(P.TOURNAMENT_PRIZES),
) -> PrizesOut:
    """T15: the surplus split by weights over places 1.. (odd cents by largest remainder)."""

    async def run(s: AsyncSession, b: WeightsIn, actor: str, now: datetime) -> dict[str, Any]:
        shares = dict(enumerate(split_by_weights(b.surplus_cents, b.weights), start=1))
        return await _apportion(s, ref, Stage(stage), b, shares, actor, now)

    return PrizesOut(**await actions.perform(api_of(request), me, run, body))


@actions.dual(P.TOURNAMENT_PRIZE_RECEIPT, PrizePay, approver="witness")
async def _pay(s: AsyncSession, b: PrizePay, actor: str, now: datetime) -> dict[str, Any]:
    t = await find_tournament(s, b.tournament)
    if b.machine is not None:  # P2, P4: journaled here, sent by the running gateway
        row = await machine_prizes.journal_prize(
            s, t.id, Stage(b.stage), b.place, machine_id=b.machine, signer=b.signer,
            signature=b.signature, witness=b.witness or "", actor=actor, now=now,
        )  # fmt: skip
        return {"transfer": machine_prizes.transfer_facts(row)}
    payout = await pay_prize(
        s, t.id, Stage(b.stage), b.place, signer=b.signer, signature=b.signature,
        witness=b.witness or "", actor=actor, now=now,
    )  # fmt: skip
    return payout_facts(payout)


@router.post(
    f"{PRIZES}/places/{{place}}/receipt",
    status_code=202,
    openapi_extra=needs(P.TOURNAMENT_PRIZE_RECEIPT),
)
async def pay(
    request: Request,
    ref: Ref,
    stage: StageName,
    place: Place,
    body: MachinePayIn,
    me: Principal = who(P.TOURNAMENT_PRIZE_RECEIPT),
) -> PendingOut:
    """T15: pay a place to its winner, who signs for it keying their ID or card; the
    approving account is the witness (it cannot be the requester).  With ``machine``
    (P2): on approval the transfer is journaled and the running gateway credits it to
    that machine by SAS AFT; the place is paid when the machine says it took it."""
    order = PrizePay(tournament=ref, stage=stage, place=place, **body.model_dump())
    return await actions.request(api_of(request), me, P.TOURNAMENT_PRIZE_RECEIPT, order)
