"""The Walk-up screen (issue 30, item 2; house format W1-W9): the walk-up windows per bank
and whether each is open now, the sessions under way (and offers waiting for their
confirm), the finished ones with each entry's score, and the latest refusals at card-in
with their clause (W9: the same audit rows the regulator reads).

An attendant (``heat.roll-call``) confirms a player's offer at the machine (W5): the API's
``POST /walkup/sessions/{id}/confirm`` on the same service.  A refusal is the page again
(422) with its one line, and changes nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.tournament.services.walkup import confirm_offer, list_sessions, list_windows
from gateway.web.api.auth import api_of
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.state import console_of
from storage.audit import AuditEntry

router = APIRouter()
PATH = "/console/walkup"
REFUSALS_SHOWN = 20


@dataclass(frozen=True, slots=True)
class Refusal:
    machine: str
    clause: str
    reason: str
    player_id: int | None
    at: datetime


async def _refusals(session: AsyncSession) -> list[Refusal]:
    rows = await session.scalars(
        select(AuditEntry)
        .where(AuditEntry.action == "walkup.refuse")
        .order_by(AuditEntry.id.desc())
        .limit(REFUSALS_SHOWN)
    )
    out = []
    for entry in rows:
        details = json.loads(entry.details)
        out.append(
            Refusal(
                entry.subject.removeprefix("machine:"), str(details.get("clause", "")),
                entry.reason or "", details.get("player"), entry.at,
            )
        )
    return out


async def _page(request: Request, me: Viewer, *, status: int = 200, error: str = "") -> Response:
    now = api_of(request).clock()
    rows = await list_sessions(me.session)
    context: dict[str, Any] = {
        "windows": await list_windows(me.session, at=now),
        "running": [r for r in rows if r.active],
        "finished": [r for r in rows if not r.active],
        "refusals": await _refusals(me.session),
        "can_confirm": me.can(P.HEAT_ROLL_CALL),
        "now": now,
    }
    return console_of(request).pages.render(
        request, "walkup.html", me, status=status, active="walkup", error=error, **context
    )


@router.get("/walkup", response_class=HTMLResponse)
async def walkup(request: Request, me: Viewer = viewer(P.HEAT_READ)) -> Response:
    return await _page(request, me)


@router.post("/walkup/confirm")
async def confirm(request: Request, me: Viewer = viewer(P.HEAT_ROLL_CALL)) -> Response:
    text = me.field("session")

    async def run() -> str:
        if not text.isdigit() or len(text) > 18:
            raise OperatorError("session: pick the offer to confirm")
        heat = await confirm_offer(
            me.session, int(text), at=api_of(request).clock(), actor=me.name
        )
        return f"walk-up session {text} started: heat {heat.id} on bank {heat.bank_name} (W5)"

    out = await attempt(me, run)
    if not out.ok or out.value is None:
        return await _page(request, me, status=422, error=out.error)
    return done(PATH, out.value)
