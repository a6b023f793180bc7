"""The floor: banks as stored (the database is the floor's truth) and a director's
orders to the running gateway, queued through the journal (:mod:`gateway.heats.orders`).

Enabling and disabling a bank talks to its machines, which only the process holding the
bank may do; the API does not offer it (``reelgate bank enable|disable`` does)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.floor.store import load_floor
from gateway.heats.orders import queue_order
from gateway.web.api import actions
from gateway.web.api.auth import api_of, who
from gateway.web.api.models import BankOut, OrderIn, OrderOut
from gateway.web.api.routes import needs

router = APIRouter(tags=["floor"])
BankName = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,32}$")]


@router.get("/banks", openapi_extra=needs(P.BANK_READ))
async def banks(request: Request, _: Principal = who(P.BANK_READ)) -> list[BankOut]:
    floor = await load_floor(api_of(request).sessions)
    return [
        BankOut(
            name=b.name,
            enabled=b.enabled,
            machines=[m.id for m in b.machines],
            excluded={m.id: m.excluded_reason for m in b.machines if m.excluded_reason},
        )
        for b in floor.banks.values()
    ]


@router.post("/banks/{bank}/orders", status_code=201, openapi_extra=needs(P.HEAT_DIRECT))
async def order(
    request: Request, bank: BankName, body: OrderIn, me: Principal = who(P.HEAT_DIRECT)
) -> OrderOut:
    async def run(session: AsyncSession, b: OrderIn, actor: str, now: datetime) -> dict[str, Any]:
        cmd = await queue_order(
            session, bank=bank, order=b.order, heat_id=b.heat, reason=b.reason, actor=actor, now=now
        )
        return {"order": cmd.id, "bank": cmd.bank_name, "command": cmd.command}

    return OrderOut(**await actions.perform(api_of(request), me, run, body))
