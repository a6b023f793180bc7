"""Walk-up play, a house format (docs/rules.md#w1 to #w9), as ``reelgate walkup ...`` does
it: the director's window per bank (``tournament.decide``), the windows every role reads,
the sessions (offers, under way, finished, with the entry's score) and an attendant's
confirm of a player's offer at the machine (``heat.roll-call``: the floor's own check that
the player is there, W5)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.accounts.service import Principal
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.walkup import (
    confirm_offer,
    list_sessions,
    list_windows,
    set_window,
)
from gateway.web.api import actions
from gateway.web.api.auth import Caller, api_of, who
from gateway.web.api.models import REF_PATTERN
from gateway.web.api.routes import needs
from gateway.web.api.walkup_models import (
    ConfirmIn,
    StartedOut,
    WalkupSessionOut,
    WalkupSessionsOut,
    WindowIn,
    WindowOut,
    WindowsOut,
)

router = APIRouter(tags=["walk-up"])
Ref = Annotated[str, Path(pattern=REF_PATTERN, description="tournament id or name")]
Bank = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.-]{1,32}$", description="the bank's name")]


@router.put("/tournaments/{ref}/walkup/{bank}", openapi_extra=needs(P.TOURNAMENT_DECIDE))
async def window(
    request: Request, ref: Ref, bank: Bank, body: WindowIn,
    me: Principal = who(P.TOURNAMENT_DECIDE),
) -> WindowOut:  # fmt: skip
    """W1: the tournament's walk-up window on a bank; a director's decision with a reason."""

    async def run(s: AsyncSession, b: WindowIn, actor: str, now: datetime) -> dict[str, Any]:
        t = await find_tournament(s, ref)
        await set_window(
            s, t.id, bank, opens=b.opens, closes=b.closes, seconds=b.seconds,
            credits=b.credits, confirm_seconds=b.confirm_seconds, enabled=b.enabled,
            actor=actor, reason=b.reason, at=now,
        )  # fmt: skip
        rows = await list_windows(s, at=now)
        (row,) = [w for w in rows if (w.tournament_id, w.bank) == (t.id, bank)]
        return WindowOut.of(row).model_dump()

    return WindowOut(**await actions.perform(api_of(request), me, run, body))


@router.get("/walkup/windows", openapi_extra=needs(P.TOURNAMENT_READ))
async def windows(request: Request, me: Caller = who(P.TOURNAMENT_READ)) -> WindowsOut:
    """W1, W2: every walk-up window and whether it is open now."""
    rows = await list_windows(me.session, at=api_of(request).clock())
    return WindowsOut(windows=[WindowOut.of(w) for w in rows])


@router.get("/walkup/sessions", openapi_extra=needs(P.HEAT_READ))
async def sessions(
    request: Request,
    tournament: Annotated[str | None, Query(pattern=REF_PATTERN)] = None,
    me: Caller = who(P.HEAT_READ),
) -> WalkupSessionsOut:
    """W5-W8: offers, sessions under way and finished (newest first), with each entry's
    score once its session has closed."""
    tid = (await find_tournament(me.session, tournament)).id if tournament else None
    rows = await list_sessions(me.session, tournament_id=tid)
    return WalkupSessionsOut(
        active=[WalkupSessionOut.of(r) for r in rows if r.active],
        finished=[WalkupSessionOut.of(r) for r in rows if not r.active],
    )


@router.post(
    "/walkup/sessions/{session}/confirm", openapi_extra=needs(P.HEAT_ROLL_CALL), status_code=201
)
async def confirm(
    request: Request,
    session: Annotated[int, Path(ge=1, le=2**62)],
    body: ConfirmIn,
    me: Principal = who(P.HEAT_ROLL_CALL),
) -> StartedOut:
    """W5: an attendant at the machine confirms the player's offer; the session starts."""

    async def run(s: AsyncSession, _: ConfirmIn, actor: str, now: datetime) -> dict[str, Any]:
        heat = await confirm_offer(s, session, at=now, actor=actor)
        return {"session": session, "heat": heat.id, "bank": heat.bank_name}

    return StartedOut(**await actions.perform(api_of(request), me, run, body))
