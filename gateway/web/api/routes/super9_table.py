"""The Super 9 table and its sessions: calendar, open, close, report, wheel results and
"No spin" voids, manual spins (dual control, rule 29), claims and the jackpot.  Every
operation is the CLI's (``reelgate super9 …``) on the same desk."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.super9.rules.calendar import hand_in_cutoff, sales_window
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.keyed_time import judged, recorded
from gateway.web.api.models import INT32, PendingOut
from gateway.web.api.routes import needs
from gateway.web.api.super9_desk import desk_in
from gateway.web.api.super9_models import (
    CalendarChangeIn,
    CalendarRow,
    ClaimIn,
    ClaimOut,
    JackpotOut,
    ManualSpin,
    ManualSpinIn,
    OpenIn,
    SessionOut,
    SpinOut,
    VoidIn,
    VoidOut,
    WheelResultIn,
)
from storage import audit

router = APIRouter(prefix="/super9", tags=["super9"])
Key = Annotated[int, Path(ge=1, le=INT32)]


@router.get("/calendar", openapi_extra=needs(P.SUPER9_READ))
async def calendar(
    request: Request,
    start: Annotated[date | None, Query(alias="from")] = None,
    days: Annotated[int, Query(ge=1, le=400)] = 14,
    me: Caller = who(P.SUPER9_READ),
) -> list[CalendarRow]:
    cal = await (await desk_in(me.session)).calendar()
    first = start or api_of(request).clock().astimezone(cal.tz).date()
    if not 1900 <= first.year <= 2200:
        first = api_of(request).clock().astimezone(cal.tz).date()
    rows = []
    for s in cal.between(first, first + timedelta(days=days - 1)):
        opens, closes = sales_window(s)
        rows.append(
            CalendarRow(
                starts_at=s.isoformat(),
                sales_open=opens.isoformat(),
                sales_close=closes.isoformat(),
                hand_in_cutoff=hand_in_cutoff(s).isoformat(),
            )
        )
    return rows


@router.post("/calendar", status_code=201, openapi_extra=needs(P.SUPER9_SESSIONS))
async def change_calendar(
    request: Request, body: CalendarChangeIn, me: Principal = who(P.SUPER9_SESSIONS)
) -> CalendarRow:
    write = judged(api_of(request), me, body.keyed_at, body.keyed_reason)

    async def run(
        session: AsyncSession, b: CalendarChangeIn, actor: str, now: datetime
    ) -> dict[str, Any]:
        desk = await desk_in(session)
        await desk.change_calendar(
            b.at, cancel=b.cancel, actor=actor, reason=b.reason, now=write.at
        )
        opens, closes = sales_window(b.at)
        return {
            "starts_at": b.at.isoformat(),
            "sales_open": opens.isoformat(),
            "sales_close": closes.isoformat(),
            "hand_in_cutoff": hand_in_cutoff(b.at).isoformat(),
        }

    with recorded(write):
        return CalendarRow(**await actions.perform(api_of(request), me, run, body))


@router.post("/sessions", status_code=201, openapi_extra=needs(P.SUPER9_SESSIONS))
async def open_session(
    request: Request, body: OpenIn, me: Principal = who(P.SUPER9_SESSIONS)
) -> SessionOut:
    write = judged(api_of(request), me, body.keyed_at, body.keyed_reason)

    async def run(session: AsyncSession, b: OpenIn, actor: str, now: datetime) -> dict[str, Any]:
        desk = await desk_in(session)
        return {"session": await desk.open_session(b.starts_at, actor=actor, now=write.at)}

    with recorded(write):
        return SessionOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/sessions/{key}", openapi_extra=needs(P.SUPER9_READ))
async def report(key: Key, me: Caller = who(P.SUPER9_READ)) -> dict[str, Any]:
    return await (await desk_in(me.session)).report(key)


@router.post("/sessions/{key}/close", openapi_extra=needs(P.SUPER9_SESSIONS))
async def close_session(
    request: Request, key: Key, me: Caller = who(P.SUPER9_SESSIONS)
) -> dict[str, Any]:
    desk = await desk_in(me.session)
    await desk.close_session(key, actor=me.name, now=api_of(request).clock())
    return await desk.report(key)


@router.get("/sessions/{key}/spins", openapi_extra=needs(P.SUPER9_READ))
async def spins(key: Key, me: Caller = who(P.SUPER9_READ)) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (await (await desk_in(me.session)).report(key))["spins"]
    return found


def _spin(s: Any) -> SpinOut:
    return SpinOut(
        session=s.session_id,
        seq=s.seq,
        number=s.number,
        voided=s.voided,
        completed=list(s.completed),
    )


@router.post("/sessions/{key}/spins", status_code=201, openapi_extra=needs(P.SUPER9_SPIN))
async def wheel_result(
    request: Request, key: Key, body: WheelResultIn, me: Caller = who(P.SUPER9_SPIN)
) -> SpinOut | None:
    """A wheel result as the wheel follower posts it; null if that game is recorded.
    The desk records wheel results as the wheel's; who posted it is audited here."""
    desk = await desk_in(me.session)
    spin = await desk.record_result(key, body.game, body.number, now=api_of(request).clock())
    if spin is None:
        return None
    await audit.record(
        me.session,
        actor=me.name,
        action="super9.spin.wheel-result",
        subject=f"super9/session/{key}/spin/{spin.seq}",
        details={"game": body.game, "number": body.number},
    )
    return _spin(spin)


@router.post("/sessions/{key}/voids", status_code=201, openapi_extra=needs(P.SUPER9_SPIN))
async def void(
    request: Request, key: Key, body: VoidIn, me: Principal = who(P.SUPER9_SPIN)
) -> VoidOut:
    async def run(session: AsyncSession, b: VoidIn, actor: str, now: datetime) -> dict[str, Any]:
        desk = await desk_in(session)
        seq = await desk.void_spin(
            key, game_no=b.game, seq=b.seq, actor=actor, reason=b.reason, now=now
        )
        return {"session": key, "seq": seq}

    return VoidOut(**await actions.perform(api_of(request), me, run, body))


@actions.dual(P.SUPER9_MANUAL_SPIN, ManualSpin, approver="confirmed_by")
async def _manual(
    session: AsyncSession, b: ManualSpin, actor: str, now: datetime
) -> dict[str, Any]:
    desk = await desk_in(session)
    spin = await desk.manual_spin(
        b.session,
        b.number,
        confirm_number=b.confirm,
        keyed_by=actor,
        confirmed_by=b.confirmed_by or "",
        reason=b.reason,
        game_no=b.game,
        now=now,
    )
    return _spin(spin).model_dump()


@router.post(
    "/sessions/{key}/manual-spins", status_code=202, openapi_extra=needs(P.SUPER9_MANUAL_SPIN)
)
async def manual_spin(
    request: Request, key: Key, body: ManualSpinIn, me: Principal = who(P.SUPER9_MANUAL_SPIN)
) -> PendingOut:
    """Rule 29: keyed (twice) by the requester, confirmed by the approving account."""
    order = ManualSpin(session=key, **body.model_dump())
    return await actions.request(api_of(request), me, P.SUPER9_MANUAL_SPIN, order)


@router.post("/sessions/{key}/claims", status_code=201, openapi_extra=needs(P.SUPER9_CLAIM))
async def claim(
    request: Request, key: Key, body: ClaimIn, me: Principal = who(P.SUPER9_CLAIM)
) -> ClaimOut:
    async def run(session: AsyncSession, b: ClaimIn, actor: str, now: datetime) -> dict[str, Any]:
        desk = await desk_in(session)
        c = await desk.claim(key, b.ticket, b.duplicate, actor=actor, now=now)
        return {"ticket": c.ticket, "valid": c.valid, "complete": c.complete, "reason": c.reason}

    return ClaimOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/jackpot", openapi_extra=needs(P.SUPER9_READ))
async def jackpot(me: Caller = who(P.SUPER9_READ)) -> JackpotOut:
    desk = await desk_in(me.session)
    return JackpotOut(jackpot_cents=await desk.jackpot(), history=await desk.jackpot_history())
