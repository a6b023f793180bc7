"""The technician's bank: preflight, enable, disable (through the process driving the
machines), and the floor's rows: add a machine, move it or change its endpoint.

Checking, enabling and disabling talk to the machines, which only the process holding
the bank's lease may do (:mod:`gateway.heats.ownership`).  Inside ``reelgate serve
--http`` the API uses the gateway's own links, as the console's technician page does
(:class:`~gateway.web.console.control.FloorControl`, the same refusals as ``reelgate
bank``); without a gateway (``reelgate api``) the answer is a 503, and for a bank this
gateway does not drive (another process holds its lease) a 409, each one line saying
where it is done instead.  The floor's rows are changed anywhere, as ``reelgate bank
add-machine|move-machine`` changes them: stored and audited in the request's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.errors import OperatorError
from gateway.floor.model import NAME_PATTERN, MachineSpec
from gateway.floor.store import add_machine, load_floor, move_machine
from gateway.heats.bank_readiness import refuse_machine_in_heat
from gateway.heats.preflight import MachineCheck
from gateway.machines.registry import check_endpoint
from gateway.web.api import actions
from gateway.web.api.alone import who_alone
from gateway.web.api.auth import api_of, who
from gateway.web.api.bound import sessions_in
from gateway.web.api.errors import ApiError
from gateway.web.api.routes import needs
from gateway.web.api.technician_models import (
    BANK_PATTERN,
    AddMachineIn,
    AftOut,
    BankCheckOut,
    DisableOut,
    EnableIn,
    MachineCheckOut,
    MachineOut,
    MoveMachineIn,
)
from gateway.web.console.control import FloorControl
from gateway.web.console.state import console_of
from storage.journal import Journal

router = APIRouter(tags=["technician"])
BankName = Annotated[str, Path(pattern=BANK_PATTERN)]
MachineId = Annotated[str, Path(pattern=NAME_PATTERN.pattern)]


async def _control(request: Request, bank: str) -> FloorControl:
    """The running gateway's floor control for ``bank``, or the one-line refusal."""
    floor = await load_floor(api_of(request).sessions)
    if bank not in floor.banks:
        raise ApiError(404, f"bank {bank}: not on the floor")
    control = console_of(request).control
    if control is None:
        raise ApiError(
            503,
            f"bank {bank}: this API runs without the gateway (reelgate api); check, enable "
            "and disable it through reelgate serve --http, or reelgate bank on its host",
        )
    if not control.drives(bank):
        raise ApiError(
            409,
            f"bank {bank}: not driven by this gateway (another process holds its lease); "
            "use the API of the gateway serving it, or reelgate bank on its host",
        )
    return control


def _check(c: MachineCheck) -> MachineCheckOut:
    a = c.aft
    return MachineCheckOut(
        machine=c.machine_id,
        ready=c.ok,
        blockers=list(c.blockers),
        answers=c.answers,
        tournament=c.tournament,
        credits=c.credits,
        conditions=list(c.conditions),
        health=list(c.health),
        clock_offset_s=c.clock_offset_s,
        clock_set=c.clock_set,
        aft=None
        if a is None
        else AftOut(
            asset_number=a.asset_number,
            registered=a.registered,
            status=a.status,
            pos_id=a.pos_id,
            reason=a.reason,
        ),
    )


def _bank_check(bank: str, checks: Sequence[MachineCheck]) -> BankCheckOut:
    return BankCheckOut(
        bank=bank, ready=all(c.ok for c in checks), machines=[_check(c) for c in checks]
    )


@router.post("/banks/{bank}/check", openapi_extra=needs(P.HEAT_DIRECT))
async def check(
    request: Request, bank: BankName, _: Principal = who_alone(P.HEAT_DIRECT)
) -> BankCheckOut:
    """Preflight every machine of the bank: ready, or blocked with the reasons."""
    control = await _control(request, bank)
    return _bank_check(bank, await control.check(bank))


@router.post("/banks/{bank}/enable", openapi_extra=needs(P.HEAT_DIRECT))
async def enable(
    request: Request, bank: BankName, body: EnableIn, me: Principal = who_alone(P.HEAT_DIRECT)
) -> BankCheckOut:
    """Enable the bank when every machine not excluded passes the check (a blocked one
    refuses it, naming the machine and why: 422)."""
    control = await _control(request, bank)
    result = await control.enable(bank, dict(body.exclude), me.name)
    return _bank_check(bank, result.checks)


@router.post("/banks/{bank}/disable", openapi_extra=needs(P.HEAT_DIRECT))
async def disable(
    request: Request, bank: BankName, me: Principal = who_alone(P.HEAT_DIRECT)
) -> DisableOut:
    """Every machine back to normal play and the bank disabled (refused while a heat is
    under way).  A machine that did not answer is listed in ``stuck``."""
    control = await _control(request, bank)
    result = await control.disable(bank, me.name)
    back = dict(result.back_in_play)
    return DisableOut(bank=bank, back_in_play=back, stuck=[m for m, ok in back.items() if not ok])


def _machine(spec: MachineSpec) -> dict[str, Any]:
    return MachineOut(
        machine=spec.id,
        bank=spec.bank,
        position=spec.position,
        endpoint=spec.endpoint,
        snmp=spec.snmp,
        aft_pos_id=spec.aft_pos_id,
    ).model_dump()


@router.post("/banks/{bank}/machines", status_code=201, openapi_extra=needs(P.BANK_FLOOR))
async def add(
    request: Request, bank: BankName, body: AddMachineIn, me: Principal = who(P.BANK_FLOOR)
) -> MachineOut:
    """A machine added at the end of the bank (the bank is made, disabled, if new)."""
    check_endpoint(body.machine, body.endpoint)  # a bad endpoint is never stored

    async def run(
        session: AsyncSession, b: AddMachineIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        sessions = await sessions_in(session)
        await refuse_machine_in_heat(Journal(sessions), b.machine)
        spec = await add_machine(
            sessions,
            bank,
            b.machine,
            b.endpoint,
            snmp=b.snmp,
            aft_registration_key=b.aft_registration_key,
            aft_pos_id=b.aft_pos_id,
            actor=actor,
        )
        return _machine(spec)

    return MachineOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/machines/{machine_id}/move", openapi_extra=needs(P.BANK_FLOOR))
async def move(
    request: Request, machine_id: MachineId, body: MoveMachineIn, me: Principal = who(P.BANK_FLOOR)
) -> MachineOut:
    """A machine moved to another bank (at its end) and/or given a new endpoint."""
    if body.to is None and body.endpoint is None:
        raise OperatorError("move-machine: give to (a bank) and/or endpoint")
    if body.endpoint is not None:
        check_endpoint(machine_id, body.endpoint)

    async def run(
        session: AsyncSession, b: MoveMachineIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        sessions = await sessions_in(session)
        await refuse_machine_in_heat(Journal(sessions), machine_id)
        spec = await move_machine(sessions, machine_id, bank=b.to, endpoint=b.endpoint, actor=actor)
        return _machine(spec)

    return MachineOut(**await actions.perform(api_of(request), me, run, body))
