"""The Super 9 desk's forms in the console (issue 26): the calendar's one-off session
(S9-4), the sale with its tender and price (S9-5), the opening keyed by the session's
time, each keyed from paper on a training database as the night does; the forms are the
API's (same models, same keyed-time policy, same permissions): a role without the
permission gets 403 and nothing changes."""

from __future__ import annotations

import re

import httpx
import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from storage.super9 import Super9Session, Super9Ticket

from .conftest import Desk, csrf_of, signed_in

DAY = "2026-11-22"  # Sunday: S9-4 sessions at 15:00 and 17:00


async def _post(client: httpx.AsyncClient, path: str, data: dict[str, str]) -> httpx.Response:
    page = await client.get("/console/super9")
    assert page.status_code == 200, page.text
    return await client.post(path, data={**data, "csrf": csrf_of(page.text)})


async def _flash(client: httpx.AsyncClient, r: httpx.Response) -> str:
    assert r.status_code == 303, r.text
    return str((await client.get(r.headers["location"])).text)


async def _count(desk: Desk, model: type) -> int:
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(model)) or 0


async def test_s9_4_s9_5_a_paper_session_keyed_at_the_console(desk: Desk) -> None:
    """On a training database: the promotion director adds a one-off session (S9-4),
    the cashier sells a ticket by card for it (S9-5, the price and tender said), Guest
    Relations takes the hand-in, and the supervisor opens the session named by its time,
    each keyed at its paper time."""
    desk.client._transport.app.state.api.training = True  # type: ignore[attr-defined]
    async with signed_in(desk, "promotion-director") as pd:
        said = await _flash(pd, await _post(pd, "/console/super9/calendar", {
            "at": f"{DAY}T11:00", "reason": "rehearsal", "keyed_at": f"{DAY}T07:00"}))  # fmt: skip
    assert "session of Sun 22 Nov 2026 11:00 added (rule 4)" in said, said
    async with signed_in(desk, "cashier") as cashier:
        said = await _flash(cashier, await _post(cashier, "/console/super9/sell", {
            "ticket": "P1", "player": "8001015009087", "tender": "card",
            "keyed_at": f"{DAY}T09:00"}))  # fmt: skip
    assert "ticket P1 sold for the session of" in said, said
    assert "R 50.00 card (rule 5)" in said, said
    receipt = re.search(
        r'<article class="receipt" aria-label="receipt">(.*?)</article>', said, re.S
    )
    assert receipt is not None, said  # the sale's receipt (S9-5), printable
    for line in (
        "Ticket P1",
        "Player: Thandi Mokoena",
        "Session: Sun 22 Nov 2026 11:00",
        "tender card",
        "R 50.00",
        "Cashier: cashier",
        "by Sun 22 Nov 2026 10:45",
    ):
        assert line in receipt.group(1), receipt.group(1)
    async with signed_in(desk, "desk") as guest:
        said = await _flash(guest, await _post(guest, "/console/super9/hand-in", {
            "ticket": "P1", "numbers": "1 2 3 4 5 6 7 8 9", "name": "Thandi Mokoena",
            "id": "8001015009087", "contact": "082", "signed": "on",
            "keyed_at": f"{DAY}T09:20"}))  # fmt: skip
    assert "ticket P1 handed in" in said, said
    async with signed_in(desk, "supervisor") as sup:
        said = await _flash(sup, await _post(sup, "/console/super9/open", {
            "starts_at": "", "session_at": f"{DAY}T11:00",
            "keyed_at": f"{DAY}T10:50"}))  # fmt: skip
    assert "open for the draw" in said, said
    async with desk.sessions() as s:
        ticket = await s.scalar(select(Super9Ticket).where(Super9Ticket.serial == "P1"))
        assert ticket is not None
        opened = await s.get(Super9Session, ticket.session_id)
    assert opened is not None
    assert opened.status.value == "drawing"


async def test_s9_6b_a_back_dated_sale_is_refused_in_one_line(desk: Desk) -> None:
    """Not training: a cashier's sale keyed two hours back is refused (a back-dated
    write is a promotion director's), named on the page (422), nothing saved."""
    before = await _count(desk, Super9Ticket)
    async with signed_in(desk, "cashier") as cashier:
        r = await _post(cashier, "/console/super9/sell", {
            "ticket": "P2", "player": "8001015009087", "keyed_at": "2026-11-20T08:00"})  # fmt: skip
    assert r.status_code == 422
    line = re.search(r'<p class="flash error" role="alert">([^<]*)</p>', r.text)
    assert line is not None, r.text
    assert line.group(1).startswith("keyed_at 2026-11-20T08:00+02:00 is before the real time")
    assert "promotion director&#39;s account (role cashier may not)" in line.group(1)
    assert await _count(desk, Super9Ticket) == before


FORMS = {
    "/console/super9/calendar": P.SUPER9_SESSIONS,
    "/console/super9/open": P.SUPER9_SESSIONS,
    "/console/super9/sell": P.SUPER9_SELL,
    "/console/super9/hand-in": P.SUPER9_HAND_IN,
}


@pytest.mark.parametrize("path", sorted(FORMS))
async def test_each_form_is_forbidden_to_roles_without_its_permission(
    desk: Desk, path: str
) -> None:
    """The API's permissions: 403 for each role without the form's, nothing saved."""
    before = (await _count(desk, Super9Ticket), await _count(desk, Super9Session))
    for role in Role:
        if allowed(role, FORMS[path]) or not allowed(role, P.SUPER9_READ):
            continue
        async with signed_in(desk, role.value) as client:
            r = await _post(client, path, {"ticket": "X9", "player": "8001015009087",
                                           "at": f"{DAY}T11:00", "reason": "x"})  # fmt: skip
        assert r.status_code == 403, (role, r.status_code)
    assert (await _count(desk, Super9Ticket), await _count(desk, Super9Session)) == before


async def test_s9_5_a_receipt_is_read_by_the_super9_desks_only(desk: Desk) -> None:
    """The receipt of a ticket sold (the seeded S2): the Super 9 desks read it; a ticket
    never sold is a 404 naming it; a role without super9.read gets 403."""
    for role in Role:
        async with signed_in(desk, role.value) as client:
            r = await client.get("/console/super9/tickets/S2/receipt")
            if not allowed(role, P.SUPER9_READ):
                assert r.status_code == 403, role
                continue
            assert r.status_code == 200, (role, r.text)
            assert "Ticket S2" in r.text
            missing = await client.get("/console/super9/tickets/NOPE9/receipt")
            assert missing.status_code == 404
            assert "ticket NOPE9: not sold" in missing.text
