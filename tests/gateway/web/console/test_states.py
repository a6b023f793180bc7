"""Console pages offer what the state allows and say what happened (issue 24, problem 9).

Before: a closed heat's page still offered Pause, Resume, Restart and Abort; the roll call
of a played heat said "Nobody registered."; the Super 9 desk offered sessions that had
already passed and chose one by default."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from sqlalchemy import update

from gateway.tournament.rules.enums import HeatStatus, SeatStatus
from storage.journal import HeatRun, RunState
from storage.tournament import Heat, Seat
from tests.gateway.web.api.conftest import NOW

from .conftest import Desk, signed_in


def _shown(html: str, order: str) -> bool:
    """Whether the page shows the form for ``order`` (rendered without ``hidden``)."""
    for form in re.findall(r"<form[^>]*>.*?</form>", html, flags=re.S):
        if f'value="{order}"' in form:
            return " hidden" not in form.split(">", 1)[0]
    return False


async def _run(desk: Desk, heat_id: int, state: RunState) -> None:
    async with desk.sessions.begin() as s:
        await s.execute(
            update(Heat).where(Heat.id == desk.ids["heat"]).values(status=HeatStatus.CANCELLED)
        )  # no other heat waiting on bank A: the page shows this one
        s.add(HeatRun(bank_name="A", heat_id=heat_id, credits=1000, seconds=600, state=state,
                      created_at=NOW, updated_at=NOW))  # fmt: skip


async def test_a_closed_heat_offers_no_orders(desk: Desk) -> None:
    await _run(desk, desk.ids["done_heat"], RunState.CLOSED)
    async with signed_in(desk, "director") as client:
        page = (await client.get("/console/heat/A")).text
    for order in ("pause", "resume", "restart", "abort", "start"):
        assert not _shown(page, order), order
    assert "is closed: there is nothing to order" in page


async def test_a_running_heat_offers_pause_and_stop_a_paused_one_resume(desk: Desk) -> None:
    async with desk.sessions.begin() as s:
        await s.execute(
            update(Heat).where(Heat.id == desk.ids["done_heat"]).values(status=HeatStatus.RUNNING)
        )
    await _run(desk, desk.ids["done_heat"], RunState.RUNNING)
    async with signed_in(desk, "director") as client:
        page = (await client.get("/console/heat/A")).text
        for order in ("pause", "abort", "restart"):
            assert _shown(page, order), order
        assert not _shown(page, "resume")
        async with desk.sessions.begin() as s:
            await s.execute(update(HeatRun).values(state=RunState.PAUSED))
        page = (await client.get("/console/heat/A")).text
        assert _shown(page, "resume")
        assert _shown(page, "abort")
        assert not _shown(page, "pause")


async def test_the_roll_call_of_a_played_heat_shows_who_played(desk: Desk) -> None:
    """T22: after the start the roll call is its record, not "Nobody registered."."""
    async with desk.sessions.begin() as s:
        await s.execute(
            update(Seat).where(Seat.id == desk.ids["scored_seat"]).values(status=SeatStatus.PLAYED)
        )
    async with signed_in(desk, "director") as client:
        page = (await client.get(f"/console/heats/{desk.ids['done_heat']}/roll-call")).text
    assert "Nobody registered" not in page
    assert "Thandi Mokoena" in page
    assert re.search(r"<td>played</td>", page)
    assert 'name="present"' not in page  # a record, no longer marked
    async with signed_in(desk, "director") as client:
        fresh = (await client.get(f"/console/heats/{desk.ids['heat']}/roll-call")).text
    assert "Nobody registered yet." in fresh


def _options(html: str) -> tuple[list[str], str | None]:
    select = re.search(r'<select name="starts_at">(.*?)</select>', html, flags=re.S)
    assert select is not None
    values = re.findall(r'<option value="([^"]+)"', select.group(1))
    chosen = re.search(r'<option value="([^"]+)" selected', select.group(1))
    return values, chosen.group(1) if chosen else None


async def test_the_super9_desk_offers_no_session_that_passed(desk: Desk) -> None:
    """At 21:30 on Friday 20 November the 19:00 session has passed: not offered, not the
    default.  Wednesday's 18 November session (opened) is never offered."""
    import httpx

    from gateway.web.api import create_app
    from tests.gateway.web.api.conftest import PASSWORD, ZONE
    from tests.gateway.web.console.conftest import sign_in_form

    later = datetime(2026, 11, 20, 21, 30, tzinfo=ZONE)
    app = create_app(desk.sessions, clock=lambda: later)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        login = {"name": "promotion-director", "password": PASSWORD}
        r = await sign_in_form(client, login)
        assert r.status_code == 303, r.text
        page = (await client.get("/console/super9")).text
    values, chosen = _options(page)
    assert values, "no session offered"
    assert all(datetime.fromisoformat(v) > later - timedelta(hours=1) for v in values)
    assert "2026-11-20T19:00:00+02:00" not in values
    assert chosen == values[0]  # the next one, not a passed one


def test_the_default_is_the_session_to_open_now() -> None:
    from gateway.web.console.super9_pages import openable
    from tests.gateway.web.api.conftest import ZONE

    wed = [datetime(2026, 12, 2, 19, tzinfo=ZONE), datetime(2026, 12, 2, 21, tzinfo=ZONE)]
    at = datetime(2026, 12, 2, 18, 50, tzinfo=ZONE)  # after 19:00's cut-off (18:45)
    assert openable(wed, set(), at) == (wed, wed[0])
    late = datetime(2026, 12, 2, 19, 40, tzinfo=ZONE)  # 19:00 opened late is still offered
    assert openable(wed, set(), late) == (wed, wed[0])
    assert openable(wed, {wed[0]}, late) == ([wed[1]], wed[1])  # opened: gone
    after = datetime(2026, 12, 2, 20, 50, tzinfo=ZONE)  # 19:00 passed; 21:00's cut-off too
    assert openable(wed, set(), after) == ([wed[1]], wed[1])
    assert openable(wed, set(), datetime(2026, 12, 2, 22, 30, tzinfo=ZONE)) == ([], None)


async def test_a_rule_9_top_copy_at_the_console_is_kept_and_said(desk: Desk) -> None:
    """S9-9 at the console's hand-in: the disqualification is recorded and said as the
    outcome.  Before, it came back as an error and the console's savepoint rolled it
    back, so the ticket stayed "sold" and the player kept their day."""
    from sqlalchemy import select

    from storage.super9 import Super9Ticket, TicketStatus

    from .conftest import csrf_of

    async with signed_in(desk, "desk") as client:
        page = await client.get("/console/super9")
        r = await client.post("/console/super9/hand-in", data={
            "csrf": csrf_of(page.text), "ticket": "S1", "numbers": "1 2 3 4 5 6 7 8 8",
            "name": "Pieter Botha", "id": "7505055123080", "contact": "082 555 0101",
            "signed": "on",
        })  # fmt: skip
        assert r.status_code == 303
        shown = (await client.get(r.headers["location"])).text
    assert "not entered: ticket S1: rule 9" in shown
    async with desk.sessions() as s:
        status = await s.scalar(select(Super9Ticket.status).where(Super9Ticket.serial == "S1"))
    assert status is TicketStatus.DISQUALIFIED
