"""What the director does around a heat, as ``reelgate heat ...`` does it: show, move
or cancel it (T10, ``heat.schedule``), the roll call (T22), begin and finish it (T16,
T22), its incidents (T20–T21: malfunction, restart, postpone, the added heat's seat
draw), proxy forms (T16) and reinstating a forfeited seat (T23).  Each handler calls
the CLI command's service with the same arguments; the request's clock is the write's
time."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament import services as svc
from gateway.tournament.rules.cards import parse_seed
from gateway.tournament.services.attendance import present_at_start
from gateway.tournament.services.common import get
from gateway.tournament.services.seating import SeatInfo
from gateway.tournament.services.setup import summarise_heat
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.director_models import (
    AddedHeatDrawOut,
    BeginIn,
    BeginOut,
    CancelIn,
    CancelOut,
    HeatShowOut,
    HeatStateOut,
    MalfunctionIn,
    MalfunctionOut,
    MarkIn,
    ProxyIn,
    ProxyOut,
    ReasonIn,
    RescheduleIn,
    RestartIn,
    RollCallOut,
    RollCallSeatOut,
    SeatStateOut,
    SeedIn,
)
from gateway.web.api.models import INT32, Body, HeatOut, SeatRow
from gateway.web.api.routes import needs
from gateway.web.api.routes.tournaments import heat_out
from storage.tournament import Heat

router = APIRouter(tags=["heat desk"])
Key = Annotated[int, Path(ge=1, le=INT32)]


def _seat_row(s: SeatInfo) -> SeatRow:
    return SeatRow(
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


def _roll_call(call: svc.RollCall) -> RollCallOut:
    return RollCallOut(
        heat=call.heat_id,
        label=call.label,
        status=call.heat_status,
        roll_call_taken=call.taken,
        unmarked_at_start=call.unmarked_at_start.value,
        present=call.present,
        forfeit_at_start=call.absent,
        seats=[RollCallSeatOut.model_validate(s) for s in call.seats],
    )


@router.get("/heats/{key}", openapi_extra=needs(P.HEAT_READ))
async def show(
    request: Request,
    key: Key,
    everything: Annotated[bool, Query(alias="all")] = False,
    me: Caller = who(P.HEAT_READ),
) -> HeatShowOut:
    """A heat and its seats with their scores (``all``: moved and cancelled seats too)."""
    heat = await get(me.session, Heat, key, "heat")
    seats = await svc.heat_seats(me.session, heat.id, include_inactive=everything)
    summary = heat_out(await summarise_heat(me.session, heat))
    return HeatShowOut(heat=summary, seats=[_seat_row(s) for s in seats])


@router.post("/heats/{key}/reschedule", openapi_extra=needs(P.HEAT_SCHEDULE))
async def reschedule(
    request: Request, key: Key, body: RescheduleIn, me: Principal = who(P.HEAT_SCHEDULE)
) -> HeatOut:
    """T10: move a heat not yet run, announced at least the notice period before."""

    async def run(s: AsyncSession, b: RescheduleIn, actor: str, now: datetime) -> dict[str, Any]:
        heat = await svc.reschedule_heat(
            s,
            key,
            new_start=b.starts_at,
            announced_via=b.announced_via,
            announced_at=b.announced_at or now,
            reason=b.reason,
            actor=actor,
            now=now,
        )
        return heat_out(await summarise_heat(s, heat)).model_dump()

    return HeatOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/heats/{key}/cancel", openapi_extra=needs(P.HEAT_SCHEDULE))
async def cancel(
    request: Request, key: Key, body: CancelIn, me: Principal = who(P.HEAT_SCHEDULE)
) -> CancelOut:
    """T10: drop a heat not yet run; qualifying entries are handed back unused."""

    async def run(s: AsyncSession, b: CancelIn, actor: str, now: datetime) -> dict[str, Any]:
        entries = await svc.cancel_heat(
            s, key, announced_via=b.announced_via, reason=b.reason, actor=actor, now=now
        )
        return {"heat": key, "status": "cancelled", "entries_released": entries}

    return CancelOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/heats/{key}/postpone", openapi_extra=needs(P.HEAT_CONDUCT))
async def postpone(
    request: Request, key: Key, body: ReasonIn, me: Principal = who(P.HEAT_CONDUCT)
) -> HeatStateOut:
    """T20–T21: not resolved in time; the seats stay, a new time follows under T10."""

    async def run(s: AsyncSession, b: ReasonIn, actor: str, now: datetime) -> dict[str, Any]:
        heat = await svc.postpone_heat(s, key, now=now, actor=actor, reason=b.reason)
        return {"heat": heat.id, "status": heat.status.value}

    return HeatStateOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/heats/{key}/restart", openapi_extra=needs(P.HEAT_CONDUCT))
async def restart(
    request: Request, key: Key, body: RestartIn, me: Principal = who(P.HEAT_CONDUCT)
) -> HeatStateOut:
    """T20: the tournament system failed; the whole heat starts again, seats kept
    (the bank's ``restart`` order is the gateway's side: ``/banks/{bank}/orders``)."""

    async def run(s: AsyncSession, b: RestartIn, actor: str, now: datetime) -> dict[str, Any]:
        heat = await svc.restart_heat(
            s, key, failed_at=b.failed_at, now=now, actor=actor, reason=b.reason
        )
        return {"heat": heat.id, "status": heat.status.value, "restarts": heat.restarts}

    return HeatStateOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/heats/{key}/roll-call", openapi_extra=needs(P.HEAT_READ))
async def roll_call(request: Request, key: Key, me: Caller = who(P.HEAT_READ)) -> RollCallOut:
    """T22: the roll call so far and who would forfeit at the start."""
    return _roll_call(await svc.roll_call(me.session, key))


@router.post("/heats/{key}/roll-call", openapi_extra=needs(P.HEAT_ROLL_CALL))
async def mark(
    request: Request, key: Key, body: MarkIn, me: Principal = who(P.HEAT_ROLL_CALL)
) -> RollCallOut:
    """T22: mark seats present or absent before the start (the latest mark stands)."""

    async def run(s: AsyncSession, b: MarkIn, actor: str, now: datetime) -> dict[str, Any]:
        call = await svc.mark_attendance(
            s, key, sorted(set(b.seats)), present=b.present, at=now, actor=actor
        )
        return _roll_call(call).model_dump()

    return RollCallOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/heats/{key}/begin", openapi_extra=needs(P.HEAT_CONDUCT))
async def begin(
    request: Request, key: Key, body: BeginIn, me: Principal = who(P.HEAT_CONDUCT)
) -> BeginOut:
    """T16, T22: start a heat; absent seats (and extra seats with no proxy) forfeit."""

    async def run(s: AsyncSession, b: BeginIn, actor: str, now: datetime) -> dict[str, Any]:
        present = None if b.present is None else sorted(set(b.present))
        if present is None:  # the roll call and the tournament's setting decide (T22)
            present = sorted(await present_at_start(s, await get(s, Heat, key, "heat")))
        forfeited = await svc.begin_heat(s, key, present_seats=present, at=now, actor=actor)
        return {"heat": key, "present": present, "forfeited": forfeited}

    return BeginOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/heats/{key}/finish", openapi_extra=needs(P.HEAT_CONDUCT))
async def finish(request: Request, key: Key, me: Principal = who(P.HEAT_CONDUCT)) -> HeatStateOut:
    """T12: close a heat once every seat still in play has its score."""

    async def run(s: AsyncSession, b: Body, actor: str, now: datetime) -> dict[str, Any]:
        heat = await svc.finish_heat(s, key, at=now, actor=actor)
        return {"heat": heat.id, "status": heat.status.value, "ended_at": heat.ended_at}

    return HeatStateOut(**await actions.perform(api_of(request), me, run, Body()))


@router.post("/heats/{key}/added-heat-draw", openapi_extra=needs(P.HEAT_CONDUCT))
async def added_heat_draw(
    request: Request, key: Key, body: SeedIn, me: Principal = who(P.HEAT_CONDUCT)
) -> AddedHeatDrawOut:
    """T21: the players waiting for a seat in their final stage draw the added heat's
    seats from a recorded seed."""

    async def run(s: AsyncSession, b: SeedIn, actor: str, now: datetime) -> dict[str, Any]:
        seed = parse_seed(b.seed) if b.seed else None
        draw = await svc.seat_waiting_in_added_heat(s, key, actor=actor, at=now, seed=seed)
        seats = {e: slot.seat_number for e, slot in sorted(draw.seats.items())}
        return {"seed": draw.seed.hex(), "seats": seats}

    return AddedHeatDrawOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/seats/{key}/reinstate", openapi_extra=needs(P.HEAT_CONDUCT))
async def reinstate_seat(
    request: Request, key: Key, body: ReasonIn, me: Principal = who(P.HEAT_CONDUCT)
) -> SeatStateOut:
    """T23: undo a wrong forfeit while the heat runs."""

    async def run(s: AsyncSession, b: ReasonIn, actor: str, now: datetime) -> dict[str, Any]:
        seat = await svc.reinstate_seat(s, key, reason=b.reason, actor=actor, at=now)
        return {"seat": seat.id, "status": seat.status.value}

    return SeatStateOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/seats/{key}/malfunction", openapi_extra=needs(P.HEAT_CONDUCT))
async def malfunction(
    request: Request, key: Key, body: MalfunctionIn, me: Principal = who(P.HEAT_CONDUCT)
) -> MalfunctionOut:
    """T20–T21: a machine failed under a seat: re-seated, refunded or waiting for an
    added heat; with ``negligence`` the player is disqualified instead (T20)."""

    async def run(s: AsyncSession, b: MalfunctionIn, actor: str, now: datetime) -> dict[str, Any]:
        r = await svc.mark_seat_malfunctioned(
            s, key, at=now, actor=actor, reason=b.reason, negligence=b.negligence
        )
        return {
            "outcome": r.outcome.value,
            "new_seat_id": r.new_seat_id,
            "new_heat_id": r.new_heat_id,
            "new_seat_number": r.new_seat_number,
            "refund_cents": r.refund_cents,
        }

    return MalfunctionOut(**await actions.perform(api_of(request), me, run, body))


@router.post("/seats/{key}/proxy", status_code=201, openapi_extra=needs(P.HEAT_CONDUCT))
async def proxy(
    request: Request, key: Key, body: ProxyIn, me: Principal = who(P.HEAT_CONDUCT)
) -> ProxyOut:
    """T16: a signed proxy form naming who plays one of a player's extra final seats."""

    async def run(s: AsyncSession, b: ProxyIn, actor: str, now: datetime) -> dict[str, Any]:
        form = await svc.add_proxy(
            s,
            key,
            nominee_name=b.name,
            nominee_id_number=b.id_number,
            nominee_date_of_birth=b.date_of_birth,
            received_at=b.received_at or now,
            actor=actor,
        )
        return {"proxy": form.id, "seat": form.seat_id, "nominee": form.nominee_name}

    return ProxyOut(**await actions.perform(api_of(request), me, run, body))
