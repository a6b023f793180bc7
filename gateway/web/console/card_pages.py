"""Cards at the machines: each machine's last card-in or card-out, who it is and what
the gateway decided (T1-T3 at card-in; ``gateway.tournament.services.cards``).  Read-only
and thin over :func:`~gateway.tournament.services.cards.cards_at_machines`; the same
permission as the Players page (names, card numbers, refusals)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from gateway.accounts.roles import Permission as P
from gateway.tournament.services.cards import cards_at_machines
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.state import console_of

router = APIRouter()


@router.get("/cards", response_class=HTMLResponse)
async def cards(request: Request, me: Viewer = viewer(P.PLAYER_READ)) -> Response:
    rows = await cards_at_machines(me.session)
    return console_of(request).pages.render(request, "cards.html", me, active="cards", rows=rows)
