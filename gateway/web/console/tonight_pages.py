"""The console's home page: the "Tonight" board (:mod:`.tonight`), then the admin's
first-run panel and the tiles of the account's screens.  Read-only; the board's
fragment is re-rendered by the server when the feed says something on it changed
(``static/console.js``), as the floor map is."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from gateway.web.api.auth import api_of
from gateway.web.console import account_pages
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.state import console_of
from gateway.web.console.tonight import board

router = APIRouter()
# What the board shows changes with: heats and seats (the reader's bank/<B>/next),
# entries and prize payouts (tournament/<T>/leaderboard), machines and heat runs.
TOPICS = "bank/ tournament/ machine/ heat/ current"


async def _board(request: Request, me: Viewer) -> dict[str, Any]:
    console = console_of(request)
    now = api_of(request).clock()
    found = await board(me, now, console.pages.zone, console.control, console.retained())
    return {"board": found, "topics": TOPICS}


@router.get("/", response_class=HTMLResponse)
async def home(request: Request, me: Viewer = viewer(None)) -> Response:
    console = console_of(request)
    hour = api_of(request).clock().astimezone(console.pages.zone).hour
    greeting = "morning" if hour < 12 else "afternoon" if hour < 18 else "evening"
    return console.pages.render(
        request, "home.html", me, greeting=greeting, live=console.feed is not None,
        first_run=await account_pages.first_run(me), **await _board(request, me),
    )  # fmt: skip


@router.get("/tonight/fragment", response_class=HTMLResponse)
async def fragment(request: Request, me: Viewer = viewer(None)) -> Response:
    return console_of(request).pages.render(
        request, "tonight.html", me, **await _board(request, me)
    )
