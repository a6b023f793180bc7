"""The console over the API's seeded desk (:mod:`tests.gateway.web.api.conftest`): one
account per role, bank A with a trap-marked machine, tournament "Spring", Super 9
sessions.  :func:`signed_in` signs a client in through the console's own form
(:func:`sign_in_form`: its page, then the POST with the page's login CSRF token)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import HeatStatus, SeatStatus
from storage.tournament import Heat, Seat
from tests.gateway.web.api.conftest import NOW, PASSWORD, Desk, cheap_argon2, desk

__all__ = [
    "Desk", "cheap_argon2", "csrf_of", "desk", "playing_pair", "sign_in_form", "signed_in",
]  # fmt: skip


async def playing_pair(s: AsyncSession, d: Desk) -> tuple[Heat, list[Seat]]:
    """p1 and p2 each buy an entry and sit in the desk's heat, which is being played."""
    seats = []
    for key in ("p1", "p2"):
        sale = await svc.sell_entries(s, d.ids["tournament"], d.ids[key], cashier="c", now=NOW)
        seat = await svc.register_for_heat(
            s, d.ids["heat"], d.ids[key], actor="desk", now=NOW, entry_id=sale.entry_ids[0]
        )
        seats.append(seat)
    heat = await s.get(Heat, d.ids["heat"])
    assert heat is not None
    heat.status = HeatStatus.RUNNING
    for seat in seats:
        seat.status = SeatStatus.PRESENT
    await s.flush()
    return heat, seats


@asynccontextmanager
async def signed_in(d: Desk, account: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client of its own (its own cookies), signed in to the console as ``account``."""
    transport = httpx.ASGITransport(app=d.client._transport.app)  # type: ignore[attr-defined]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        r = await sign_in_form(client, {"name": account, "password": PASSWORD})
        assert r.status_code == 303, r.text
        yield client


async def sign_in_form(client: httpx.AsyncClient, data: dict[str, str]) -> httpx.Response:
    """The sign-in form as a browser sends it: its page first (the login CSRF token, in
    the form and in a cookie), then the POST with the token."""
    page = await client.get("/console/login")
    assert page.status_code == 200, page.text
    return await client.post(
        "/console/login", data={"next": "/console/", **data, "csrf": csrf_of(page.text)}
    )


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, "no form on the page"
    return found.group(1)
