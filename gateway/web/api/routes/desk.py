"""The desks: players (find, add, reinstate), entries (sell, refund), heat seats
(register, list) and manual scores.  Refunds, reinstatements and manual scores are
dual-control actions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Header, Path, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import PurchaseKind
from gateway.tournament.services.cards import cards_at_machines as cards_at_machines_of
from gateway.tournament.services.cashdesk import tender_of
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.idempotency import HEADER_MAX as IDEMPOTENCY_MAX
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.models import (
    INT32,
    PLAYER_REF_DOC,
    PLAYER_REF_EXAMPLES,
    PLAYER_REF_PATTERN,
    REF_PATTERN,
    CardAtMachineOut,
    ManualScore,
    ManualScoreIn,
    PendingOut,
    PlayerIn,
    PlayerOut,
    Problem,
    Refund,
    RefundIn,
    RegisterIn,
    Reinstate,
    ReinstateIn,
    SaleIn,
    SaleOut,
    SeatOut,
    SeatRow,
)
from gateway.web.api.routes import needs
from storage.enums import Tender

router = APIRouter(tags=["desk"])
Ref = Annotated[str, Path(pattern=REF_PATTERN)]
PlayerPath = Annotated[
    str,
    Path(pattern=PLAYER_REF_PATTERN, description=PLAYER_REF_DOC, examples=PLAYER_REF_EXAMPLES),
]
Key = Annotated[int, Path(ge=1, le=INT32)]


def _player(p: Any) -> PlayerOut:
    return PlayerOut(
        id=p.id,
        id_number=p.id_number,
        name=p.name,
        date_of_birth=p.date_of_birth,
        card_number=p.card_number,
    )


@router.get("/players/{ref}", openapi_extra=needs(P.PLAYER_READ))
async def find_player(
    request: Request, ref: PlayerPath, me: Caller = who(P.PLAYER_READ)
) -> PlayerOut:
    session = me.session
    return _player(await svc.find_player(session, ref))


@router.get("/cards", openapi_extra=needs(P.PLAYER_READ))
async def cards_at_machines(
    request: Request, me: Caller = who(P.PLAYER_READ)
) -> list[CardAtMachineOut]:
    """Each machine's last player card and the decision at card-in (T1-T3, T23)."""
    rows = await cards_at_machines_of(me.session)
    return [
        CardAtMachineOut(
            machine=r.machine, card=r.card, action=r.action,  # type: ignore[arg-type]
            outcome=r.outcome, in_machine=r.in_machine,  # type: ignore[arg-type]
            player_id=r.player_id, player_name=r.player_name, rule=r.rule, reason=r.reason,
            at=r.at,
        )
        for r in rows
    ]  # fmt: skip


@router.post("/players", status_code=201, openapi_extra=needs(P.PLAYER_ADD))
async def add_player(
    request: Request, body: PlayerIn, me: Principal = who(P.PLAYER_ADD)
) -> PlayerOut:
    async def run(session: AsyncSession, b: PlayerIn, actor: str, now: datetime) -> dict[str, Any]:
        p = await svc.add_player(
            session,
            id_number=b.id_number,
            name=b.name,
            date_of_birth=b.date_of_birth,
            actor=actor,
            now=now,
            card_number=b.card_number,
        )
        return _player(p).model_dump()

    return PlayerOut(**await actions.perform(api_of(request), me, run, body))


@actions.dual(P.PLAYER_REINSTATE, Reinstate)
async def _reinstate(
    session: AsyncSession, b: Reinstate, actor: str, now: datetime
) -> dict[str, Any]:
    dq = await svc.reinstate(session, b.disqualification_id, reason=b.reason, actor=actor, now=now)
    return {"disqualification": dq.id, "revoked_at": dq.revoked_at}


@router.post(
    "/disqualifications/{key}/reinstate",
    status_code=202,
    openapi_extra=needs(P.PLAYER_REINSTATE),
)
async def reinstate(
    request: Request, key: Key, body: ReinstateIn, me: Principal = who(P.PLAYER_REINSTATE)
) -> PendingOut:
    order = Reinstate(disqualification_id=key, reason=body.reason)
    return await actions.request(api_of(request), me, P.PLAYER_REINSTATE, order)


@router.post(
    "/tournaments/{ref}/entries",
    status_code=201,
    openapi_extra=needs(P.ENTRY_SELL),
    responses={200: {"model": SaleOut, "description": "a retry: the first sale, unchanged"},
               409: {"model": Problem, "description": "the key was used for another sale"}},
)  # fmt: skip
async def sell(
    request: Request,
    response: Response,
    ref: Ref,
    body: SaleIn,
    idempotency_key: Annotated[
        str | None, Header(alias="Idempotency-Key", max_length=IDEMPOTENCY_MAX)
    ] = None,
    me: Principal = who(P.ENTRY_SELL),
) -> SaleOut:
    """Sell entries.  With a till slip (``reference``) or an ``Idempotency-Key`` header
    a retry answers 200 with the first sale (same purchase and entries); the same key
    for a different sale is 409."""

    async def run(session: AsyncSession, b: SaleIn, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(session, ref)
        sale = await svc.sell_entries(
            session,
            t.id,
            b.player,
            package_code=b.package,
            quantity=b.quantity,
            payment=PurchaseKind.CARD if b.payment == "card" else PurchaseKind.CASH,
            complimentary=b.complimentary,
            tender=Tender(b.tender) if b.tender else None,
            cashier=actor,
            now=now,
            reference=b.reference,
            idempotency_key=idempotency_key,
        )
        p = sale.purchase
        return {
            "replayed": sale.replayed,
            **SaleOut(
                purchase=p.id,
                kind=p.kind.value,
                tender=tender_of(p).value,
                package=p.package_code,
                seats=p.seats,
                amount_cents=p.amount_cents,
                # in the venue's zone: a retry, read back from the database, answers alike
                valid_until=p.valid_until.astimezone(ZoneInfo(t.venue_tz)),
                entries=list(sale.entry_ids),
            ).model_dump(),
        }

    done = await actions.perform(api_of(request), me, run, body)
    if done.pop("replayed"):
        response.status_code = 200
    return SaleOut(**done)


@actions.dual(P.ENTRY_REFUND, Refund)
async def _refund(session: AsyncSession, b: Refund, actor: str, now: datetime) -> dict[str, Any]:
    refund = await svc.refund_entry(
        session, b.entry_id, rule=b.rule, reason=b.reason, actor=actor, now=now,
        tender=Tender(b.tender) if b.tender else None,
    )  # fmt: skip
    return {
        "entry": refund.entry_id,
        "amount_cents": refund.amount_cents,
        "tender": refund.tender,
    }


@router.post("/entries/{key}/refund", status_code=202, openapi_extra=needs(P.ENTRY_REFUND))
async def refund(
    request: Request, key: Key, body: RefundIn, me: Principal = who(P.ENTRY_REFUND)
) -> PendingOut:
    order = Refund(entry_id=key, rule=body.rule, reason=body.reason, tender=body.tender)
    return await actions.request(api_of(request), me, P.ENTRY_REFUND, order)


@router.post("/heats/{key}/seats", status_code=201, openapi_extra=needs(P.HEAT_REGISTER))
async def register(
    request: Request, key: Key, body: RegisterIn, me: Principal = who(P.HEAT_REGISTER)
) -> SeatOut:
    async def run(
        session: AsyncSession, b: RegisterIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        seat = await svc.register_for_heat(
            session, key, b.player, actor=actor, now=now, entry_id=b.entry
        )
        return {
            "seat_id": seat.id,
            "seat": seat.seat_number,
            "machine": seat.machine_id,
            "entry": seat.entry_id,
        }

    return SeatOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/heats/{key}/seats", openapi_extra=needs(P.HEAT_READ))
async def seats(request: Request, key: Key, me: Caller = who(P.HEAT_READ)) -> list[SeatRow]:
    session = me.session
    found = await svc.heat_seats(session, key)
    return [
        SeatRow(
            seat_id=s.seat_id,
            seat_number=s.seat_number,
            machine_id=s.machine_id,
            entry_id=s.entry_id,
            holder_player_id=s.holder_player_id,
            holder_name=s.holder_name,
            played_by=s.played_by,
            status=s.status.value,
            credits=s.credits,
            source=None if s.source is None else s.source.value,
        )
        for s in found
    ]


@actions.dual(P.HEAT_MANUAL_SCORE, ManualScore, approver="approved_by")
async def _score(
    session: AsyncSession, b: ManualScore, actor: str, now: datetime
) -> dict[str, Any]:
    meters = TournamentMeters(b.games_played, b.games_won, b.credits_wagered, b.credits_won)
    s = await svc.enter_manual_score(
        session, b.seat_id, HeatScore(b.credits, meters), reason=b.reason, actor=actor, at=now,
        approved_by=b.approved_by,
    )  # fmt: skip
    return {"seat": s.seat_id, "entry": s.entry_id, "credits": s.final_credits}


@router.post("/seats/{key}/manual-score", status_code=202, openapi_extra=needs(P.HEAT_MANUAL_SCORE))
async def manual_score(
    request: Request, key: Key, body: ManualScoreIn, me: Principal = who(P.HEAT_MANUAL_SCORE)
) -> PendingOut:
    order = ManualScore(seat_id=key, **body.model_dump())
    return await actions.request(api_of(request), me, P.HEAT_MANUAL_SCORE, order)
