"""The console: the web app of the technician, the director, the cashier and the
Super 9 desk, served by the same FastAPI application as the API (``/console/``).

Pages are rendered on the server (Jinja2 templates in ``templates/``) with a little of
our own JavaScript for the live parts (``static/console.js``: Server-Sent Events from
the gateway's feed) and confirmations; nothing is fetched from elsewhere at run time.
Every screen names the permission of the roles that may open it
(:mod:`gateway.accounts.roles`); each action calls the same service as the API.

Mounting (``gateway.web.api.app``)::

    console.mount(app)                       # pages over the stored floor and tables
    console.attach(app, control=..., feed=...)   # in the process that drives the banks
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from gateway.web.console import (
    account_pages,
    card_pages,
    cashup_pages,
    desk_pages,
    draw_pages,
    finals_pages,
    floor_pages,
    heat_pages,
    hotseat_pages,
    live,
    pages,
    player_pages,
    prize_pages,
    review_pages,
    schedule_pages,
    score_pages,
    super9_pages,
    team_pages,
    tonight_pages,
    tournament_pages,
    walkup_pages,
)
from gateway.web.console.auth import PageForbidden, SignInNeeded
from gateway.web.console.control import FloorControl
from gateway.web.console.render import DEFAULT_ZONE, STATIC, Pages
from gateway.web.console.state import Console
from gateway.web.fanout import FanoutFeed

PREFIX = "/console"


def mount(app: FastAPI, *, zone: str = DEFAULT_ZONE) -> None:
    app.state.console = Console(Pages(zone))
    for module in (
        pages,
        tonight_pages,
        floor_pages,
        heat_pages,
        hotseat_pages,
        score_pages,
        schedule_pages,
        desk_pages,
        cashup_pages,
        player_pages,
        card_pages,
        walkup_pages,
        draw_pages,
        finals_pages,
        prize_pages,
        team_pages,
        review_pages,
        super9_pages,
        account_pages,
        tournament_pages,
        live,
    ):
        app.include_router(module.router, prefix=PREFIX, include_in_schema=False)
    app.mount(f"{PREFIX}/static", StaticFiles(directory=str(STATIC)), name="console-static")
    app.add_exception_handler(SignInNeeded, pages.sign_in_needed)
    app.add_exception_handler(PageForbidden, pages.forbidden)


def attach(
    app: FastAPI, *, control: FloorControl | None = None, feed: FanoutFeed | None = None
) -> None:
    """Give the console the running gateway's floor control and live feed."""
    console: Console = app.state.console
    console.control = control
    console.feed = feed


__all__ = ["FloorControl", "attach", "mount"]
