"""Super 9 tickets: the cash desk sale, the hand-in with its verification section,
number changes before the game (dual control, rule 23), disqualifications, and prize
receipts witnessed by a second account (dual control, rule 26)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.super9.desk.core import Disqualified
from gateway.super9.rules.verification import Verification
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.errors import problem
from gateway.web.api.keyed_time import judged, recorded
from gateway.web.api.models import INT32, PendingOut, Problem
from gateway.web.api.routes import needs
from gateway.web.api.super9_desk import desk_in, hand_in_at, sell_at
from gateway.web.api.super9_models import (
    DisqualifyIn,
    HandInIn,
    NumberChange,
    NumbersIn,
    Receipt,
    ReceiptIn,
    SaleIn,
    TicketOut,
)
from storage.enums import Tender
from storage.super9 import Super9Ticket

router = APIRouter(prefix="/super9", tags=["super9"])
Key = Annotated[int, Path(ge=1, le=INT32)]
SerialPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_./-]{1,32}$")]


@router.post("/tickets", status_code=201, openapi_extra=needs(P.SUPER9_SELL))
async def sell(request: Request, body: SaleIn, me: Principal = who(P.SUPER9_SELL)) -> TicketOut:
    """Rule 5 at the cash desk; ``keyed_at`` keys a sale from paper (S9-6b still holds
    at the real time unless the database is a training one)."""
    write = judged(api_of(request), me, body.keyed_at, body.keyed_reason)

    async def run(session: AsyncSession, b: SaleIn, actor: str, now: datetime) -> dict[str, Any]:
        desk = await desk_in(session)
        sid = await sell_at(desk, b.ticket, b.player, Tender(b.tender), actor=actor, write=write)
        return {"ticket": b.ticket, "session": sid}

    with recorded(write):
        return TicketOut(**await actions.perform(api_of(request), me, run, body))


@router.post(
    "/tickets/{serial}/hand-in",
    status_code=201,
    openapi_extra=needs(P.SUPER9_HAND_IN),
    response_model=TicketOut,
    responses={422: {"model": Problem}},
)
async def hand_in(
    request: Request, serial: SerialPath, body: HandInIn, me: Caller = who(P.SUPER9_HAND_IN)
) -> TicketOut | JSONResponse:
    """Rules 6-11.  A top copy that breaks rule 9 disqualifies the ticket and the player
    for the day: that is kept (committed) and the refusal says so, as at the CLI."""
    section = Verification(body.name, body.id, body.contact, body.signed)
    write = judged(api_of(request), me, body.keyed_at, body.keyed_reason)
    desk = await desk_in(me.session)
    try:
        with recorded(write):
            sid = await hand_in_at(desk, serial, body.numbers, section, actor=me.name, write=write)
    except Disqualified as exc:
        return problem(422, str(exc), 9)  # returned, not raised: the request commits
    return TicketOut(ticket=serial, session=sid)


@actions.dual(P.SUPER9_NUMBERS, NumberChange, approver="approved_by")
async def _change(
    session: AsyncSession, b: NumberChange, actor: str, now: datetime
) -> dict[str, Any]:
    await (await desk_in(session)).change_numbers(
        b.ticket,
        b.numbers,
        actor=actor,
        approved_by=b.approved_by or "",
        reason=b.reason,
        now=now,
    )
    return {"ticket": b.ticket, "approved_by": b.approved_by}


@router.post("/tickets/{serial}/numbers", status_code=202, openapi_extra=needs(P.SUPER9_NUMBERS))
async def change_numbers(
    request: Request, serial: SerialPath, body: NumbersIn, me: Principal = who(P.SUPER9_NUMBERS)
) -> PendingOut:
    """Rule 23: only before the game, only valid numbers; the approving Promotion
    Director's sign-off is recorded with the change."""
    order = NumberChange(ticket=serial, numbers=body.numbers, reason=body.reason)
    return await actions.request(api_of(request), me, P.SUPER9_NUMBERS, order)


@router.post(
    "/tickets/{serial}/disqualify", status_code=201, openapi_extra=needs(P.SUPER9_DISQUALIFY)
)
async def disqualify(
    request: Request,
    serial: SerialPath,
    body: DisqualifyIn,
    me: Principal = who(P.SUPER9_DISQUALIFY),
) -> TicketOut:
    async def run(
        session: AsyncSession, b: DisqualifyIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        desk = await desk_in(session)
        await desk.disqualify(serial, actor=actor, reason=b.reason, rule=b.rule, now=now)
        row = (
            await session.execute(select(Super9Ticket).where(Super9Ticket.serial == serial))
        ).scalar_one()
        return {"ticket": serial, "session": row.session_id}

    return TicketOut(**await actions.perform(api_of(request), me, run, body))


@actions.dual(P.SUPER9_PRIZE_RECEIPT, Receipt, approver="witness")
async def _receipt(session: AsyncSession, b: Receipt, actor: str, now: datetime) -> dict[str, Any]:
    await (await desk_in(session)).sign_prize(
        b.session,
        b.ticket,
        b.kind,
        signature=b.signature,
        witness=b.witness or "",
        signer=b.signer,
        actor=actor,
        now=now,
    )
    return {"session": b.session, "ticket": b.ticket, "kind": b.kind, "witness": b.witness}


@router.post(
    "/sessions/{key}/prizes/{serial}/receipt",
    status_code=202,
    openapi_extra=needs(P.SUPER9_PRIZE_RECEIPT),
)
async def receipt(
    request: Request,
    key: Key,
    serial: SerialPath,
    body: ReceiptIn,
    me: Principal = who(P.SUPER9_PRIZE_RECEIPT),
) -> PendingOut:
    """Rule 26: the winner signs for the prize; the approving account is the witness."""
    order = Receipt(session=key, ticket=serial, **body.model_dump())
    return await actions.request(api_of(request), me, P.SUPER9_PRIZE_RECEIPT, order)
