"""The floor: banks as stored (the database is the floor's truth), a director's orders
to the running gateway, queued through the journal (:mod:`gateway.heats.orders`), and a
technician clearing a machine's SNMP trap marks (:class:`storage.marks.MarkStore`, the
same call as ``reelgate bank clear-mark``).

Checking, enabling and disabling a bank talk to its machines, which only the process
holding the bank may do: :mod:`.technician` offers them through the running gateway when
the API runs inside ``reelgate serve``.  Clearing marks needs no such process: the marks
are rows, and preflight re-reads them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.floor.model import NAME_PATTERN
from gateway.floor.store import load_floor
from gateway.heats.orders import queue_order
from gateway.web.api import actions
from gateway.web.api.auth import api_of, who
from gateway.web.api.errors import ApiError
from gateway.web.api.models import (
    BankOut,
    ClearMarksIn,
    MarksClearedOut,
    OrderIn,
    OrderOut,
    TrapMarkOut,
)
from gateway.web.api.routes import needs
from storage.floor import FloorMachine
from storage.marks import MarkRow, clear_marks

router = APIRouter(tags=["floor"])
BankName = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,32}$")]
MachineId = Annotated[str, Path(pattern=NAME_PATTERN.pattern)]


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


@router.post("/machines/{machine_id}/trap-marks/clear", openapi_extra=needs(P.BANK_CLEAR_MARK))
async def clear_trap_marks(
    request: Request,
    machine_id: MachineId,
    body: ClearMarksIn,
    me: Principal = who(P.BANK_CLEAR_MARK),
) -> MarksClearedOut:
    """The machine was checked: its trap marks go, audited under the signed-in account.

    A machine on the floor without marks answers 200 with ``cleared: []`` (nothing is
    written, as the CLI); a machine neither on the floor nor marked is a 404.
    """

    async def run(
        session: AsyncSession, b: ClearMarksIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        cleared = await clear_marks(session, machine_id, actor=actor, reason=b.reason)
        if not cleared and await session.get(FloorMachine, machine_id) is None:
            raise ApiError(404, f"machine {machine_id}: not on the floor")
        return {"cleared": cleared}

    out = await actions.perform(api_of(request), me, run, body)
    cleared: list[MarkRow] = out["cleared"]
    return MarksClearedOut(
        machine=machine_id,
        cleared=[
            TrapMarkOut(kind=m.kind, at=m.at, heat=m.heat_id, mid_heat=m.mid_heat) for m in cleared
        ],
    )
