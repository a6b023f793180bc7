"""The console's Schedule screen (issue 26, item 2): each bank's week (seven venue days
from a date, today by default) with the next heat's start for its countdown, and the
director's changes on the API's services and permissions: schedule (T10a: no overlap on
a bank, T11: ahead of time), move (T10: the notice period), cancel (T10), postpone and
restart (T20).  Each change is audited under the signed-in account; a refusal is one
line naming the field (422) and changes nothing; the other roles are refused."""

from __future__ import annotations

import re
from collections.abc import Mapping

import httpx
import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import HeatStatus, Stage
from storage.audit import AuditEntry
from storage.tournament import Heat
from tests.gateway.web.api.conftest import NOW

from .conftest import Desk, csrf_of, playing_pair, signed_in

PATH = "/console/schedule"
NEW = {"stage": "qualifying", "bank": "A", "starts_at": "2026-11-22T18:00",
       "duration_minutes": "10", "starting_credits": "1000", "announced_via": ""}  # fmt: skip
MOVE = {"starts_at": "2026-11-21T12:00", "announced_via": "MC", "reason": "bank service"}


def _writes_of(desk: Desk) -> dict[str, P]:
    heat = desk.ids["heat"]
    return {
        f"{PATH}/heats": P.HEAT_SCHEDULE,
        f"{PATH}/heats/{heat}/reschedule": P.HEAT_SCHEDULE,
        f"{PATH}/heats/{heat}/cancel": P.HEAT_SCHEDULE,
        f"{PATH}/heats/{heat}/postpone": P.HEAT_CONDUCT,
        f"{PATH}/heats/{heat}/restart": P.HEAT_CONDUCT,
    }


async def _form(client: httpx.AsyncClient, path: str, data: Mapping[str, str]) -> httpx.Response:
    """A form of the Schedule page, posted with the page's CSRF token."""
    page = await client.get(PATH)
    assert page.status_code == 200, page.text
    return await client.post(path, data={**data, "csrf": csrf_of(page.text)})


async def _heats(desk: Desk) -> list[tuple[int, str, str]]:
    """Every heat: number, start (UTC, to the minute) and status."""
    async with desk.sessions() as s:
        rows = (await s.scalars(select(Heat).order_by(Heat.id))).all()
        return [(h.number, f"{h.scheduled_start:%Y-%m-%d %H:%M}", h.status.value) for h in rows]


async def _audit(desk: Desk, action: str) -> list[AuditEntry]:
    async with desk.sessions() as s:
        query = select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id)
        return list((await s.scalars(query)).all())


async def _writes(desk: Desk) -> int:
    async with desk.sessions() as s:
        query = select(func.count()).select_from(AuditEntry)
        return await s.scalar(query.where(AuditEntry.action.startswith("heat."))) or 0


def _day(html: str, day: str) -> str:
    """The section of one day of bank A's week."""
    found = re.search(rf'<section class="day[^"]*" data-day="{day}".*?</section>', html, re.S)
    assert found is not None, f"no day {day} on the page"
    return found.group(0)


async def test_the_week_shows_each_bank_s_heats_by_day(desk: Desk) -> None:
    """Issue 26, item 2: seven venue days from today (Friday 20 November), each heat with
    its time, tournament, stage, state and seats; previous and next weeks; the next heat's
    start rendered for the countdown."""
    async with signed_in(desk, "desk") as client:
        r = await client.get(PATH)
        later = await client.get(PATH, params={"start": "2026-11-27"})
        bad = await client.get(PATH, params={"start": "someday"})
    assert r.status_code == 200
    assert re.findall(r'data-day="([\d-]+)"', r.text) == [f"2026-11-{d}" for d in range(20, 27)]
    today = _day(r.text, "2026-11-20")
    for shown in ("08:00</time>–08:10", "Spring", "qualifying heat 1", "closed", "1 / 3 seats"):
        assert shown in today
    tomorrow = _day(r.text, "2026-11-21")
    for shown in ("10:00</time>–10:10", "Spring", "qualifying heat 2", "scheduled", "0 / 3"):
        assert shown in tomorrow
    assert 'href="/console/schedule?start=2026-11-13"' in r.text
    assert 'href="/console/schedule?start=2026-11-27"' in r.text
    assert 'id="countdown" data-countdown-to="2026-11-21T10:00:00+02:00"' in r.text
    assert 'data-heat="{}"'.format(desk.ids["heat"]) in r.text
    assert 'action="/console/schedule/heats' not in r.text  # the desk changes nothing
    assert later.status_code == 200
    assert "qualifying heat" not in _day(later.text, "2026-11-27")
    assert bad.status_code == 422
    assert "start: a date as YYYY-MM-DD" in bad.text


async def test_the_director_schedules_a_heat_audited_under_the_account(desk: Desk) -> None:
    """Issue 26, item 2 (T10a, T11): the API's HeatIn and schedule_heat; times are the
    venue's; post, redirect, get."""
    async with signed_in(desk, "director") as client:
        page = await client.get(PATH)
        assert 'action="/console/schedule/heats"' in page.text
        r = await _form(client, f"{PATH}/heats", {**NEW, "tournament": "Spring"})
        assert r.status_code == 303, r.text
        assert r.headers["location"].startswith(f"{PATH}?start=2026-11-20&ok=")
        shown = await client.get(r.headers["location"])
        later = {**NEW, "tournament": "Spring", "starts_at": "2026-12-02T09:00"}
        far = await _form(client, f"{PATH}/heats", later)
        assert far.headers["location"].startswith(f"{PATH}?start=2026-12-02&ok=")
    assert "qualifying heat 3 scheduled: Sun 22 Nov 18:00" in shown.text
    assert "qualifying heat 3" in _day(shown.text, "2026-11-22")
    assert (await _heats(desk))[2:] == [
        (3, "2026-11-22 16:00", "scheduled"), (4, "2026-12-02 07:00", "scheduled"),
    ]  # fmt: skip
    rows = await _audit(desk, "heat.schedule")
    assert [a.actor for a in rows[-2:]] == ["director", "director"]


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"starts_at": "2026-11-21T10:05"},
         "starts_at: rule 10: bank A is taken from 2026-11-21 10:00 to 10:10 by qualifying "
         "heat 2 of Spring; heats on one bank cannot overlap"),
        ({"starts_at": "2026-11-20T09:00"}, "starts_at: rule 11: a heat is scheduled ahead"),
        ({"starts_at": "tomorrow"}, "starts_at: a date and time, YYYY-MM-DD HH:MM"),
        ({"duration_minutes": "0"}, "duration_minutes: whole minutes, 1 to 1440"),
        ({"starting_credits": "lots"}, "starting_credits: Input should be a valid integer"),
        ({"starting_credits": "9" * 5000}, "starting_credits: "),
        ({"starting_credits": "100000000"},
         "starting_credits: starting credits 100,000,000 outside 1..99,999,999"),
        ({"duration_minutes": "²"}, "duration_minutes: whole minutes, 1 to 1440"),
        ({"bank": "Z"}, "bank: bank &#39;Z&#39; is not on the floor"),
        ({"stage": "warm-up"}, "stage: Input should be &#39;qualifying&#39;"),
        ({"tournament": ""}, "tournament: pick the tournament"),
        ({"tournament": "Autumn"}, "tournament: tournament &#39;Autumn&#39; does not exist"),
    ],
)  # fmt: skip
async def test_a_refused_heat_changes_nothing(
    desk: Desk, fields: dict[str, str], line: str
) -> None:
    """Issue 26, item 2 (T10a, T11): one line naming the field (422); no heat, no audit."""
    before = await _heats(desk), await _writes(desk)
    async with signed_in(desk, "director") as client:
        r = await _form(client, f"{PATH}/heats", {**NEW, "tournament": "Spring", **fields})
    assert r.status_code == 422, r.text
    assert line in r.text
    assert len(re.findall(r'class="flash error"', r.text)) == 1
    keyed = {**NEW, **fields}["starts_at"]
    assert f'name="starts_at" required value="{keyed}"' in r.text  # kept, to be corrected
    assert (await _heats(desk), await _writes(desk)) == before


async def test_t10_a_move_with_notice_is_audited_and_a_late_one_refused(desk: Desk) -> None:
    """T10: a heat moves when announced the notice period (60 min) before the earlier
    start; too late, or into another heat's time on the bank (T10a), it is refused in one
    line and stays where it was."""
    heat = desk.ids["heat"]
    async with desk.sessions() as s, s.begin():
        await svc.schedule_heat(
            s, desk.ids["tournament"], stage=Stage.QUALIFYING,
            starts_at=NOW.replace(day=21, hour=14), bank_name="A", duration_seconds=600,
            starting_credits=1000, actor="setup", now=NOW,
        )  # fmt: skip
    before = await _heats(desk), await _writes(desk)
    url = f"{PATH}/heats/{heat}/reschedule"
    async with signed_in(desk, "director") as client:
        late = await _form(client, url, {**MOVE, "starts_at": "2026-11-20T10:30"})
        onto = await _form(client, url, {**MOVE, "starts_at": "2026-11-21T14:05"})
        quiet = await _form(client, url, {**MOVE, "announced_via": ""})
        ahead = await _form(client, url, {**MOVE, "announced_at": "2026-11-20T11:00"})
        assert (await _heats(desk), await _writes(desk)) == before
        r = await _form(client, url, MOVE)
        assert r.status_code == 303, r.text
        shown = await client.get(r.headers["location"])
    assert late.status_code == onto.status_code == quiet.status_code == ahead.status_code == 422
    assert "announced_at: rule 10: the change must be announced at least 60 min ahead" in late.text
    assert (
        "starts_at: rule 10: bank A is taken from 2026-11-21 14:00 to 14:10 by qualifying heat 3 "
        "of Spring" in onto.text
    )
    assert "announced_via: String should have at least 1 character" in quiet.text
    assert "announced_at: rule 10: the announcement cannot be in the future" in ahead.text
    assert "qualifying heat 2 moved to Sat 21 Nov 12:00" in shown.text
    assert "12:00</time>–12:10" in _day(shown.text, "2026-11-21")
    assert (await _heats(desk))[1] == (2, "2026-11-21 10:00", "scheduled")
    (row,) = await _audit(desk, "heat.reschedule")
    assert (row.actor, row.subject, row.reason) == ("director", f"heat:{heat}", "bank service")


async def test_t10_cancel_is_audited_and_a_heat_run_is_not_cancelled(desk: Desk) -> None:
    """T10: a heat not yet run is cancelled, announced; a closed one is refused."""
    heat, done_heat = desk.ids["heat"], desk.ids["done_heat"]
    before = await _heats(desk), await _writes(desk)
    async with signed_in(desk, "director") as client:
        closed = await _form(
            client, f"{PATH}/heats/{done_heat}/cancel", {"announced_via": "MC", "reason": "r"}
        )
        quiet = await _form(client, f"{PATH}/heats/{heat}/cancel", {"reason": "r"})
        assert (await _heats(desk), await _writes(desk)) == before
        r = await _form(
            client, f"{PATH}/heats/{heat}/cancel", {"announced_via": "MC", "reason": "flooded"}
        )
        assert r.status_code == 303
        shown = await client.get(r.headers["location"])
    assert closed.status_code == quiet.status_code == 422
    assert "heat: rule 10: qualifying heat 1 is closed; it cannot be cancelled" in closed.text
    assert "announced_via: String should have at least 1 character" in quiet.text
    assert "qualifying heat 2 cancelled; entries affected: 0" in shown.text
    assert "cancelled" in _day(shown.text, "2026-11-21")
    assert 'id="countdown"' not in shown.text  # no heat left to start
    assert (await _heats(desk))[1][2] == "cancelled"
    (row,) = await _audit(desk, "heat.cancel")
    assert (row.actor, row.reason) == ("director", "flooded")


async def test_t20_postpone_then_a_new_time(desk: Desk) -> None:
    """T20: a heat postponed keeps its seats and waits for a new time (listed apart),
    which it gets under T10; a closed heat is not postponed."""
    heat = desk.ids["heat"]
    async with signed_in(desk, "director") as client:
        closed = await _form(
            client, f"{PATH}/heats/{desk.ids['done_heat']}/postpone", {"reason": "r"}
        )
        assert closed.status_code == 422
        assert "heat: rule 20: qualifying heat 1 is closed; it cannot be postponed" in closed.text
        r = await _form(client, f"{PATH}/heats/{heat}/postpone", {"reason": "bank down"})
        assert r.status_code == 303
        shown = await client.get(r.headers["location"])
        assert "qualifying heat 2 postponed: give it a new time (rule 10)" in shown.text
        waiting = shown.text.split('id="postponed"')[1]
        assert f'data-heat="{heat}"' in waiting
        assert f'action="/console/schedule/heats/{heat}/reschedule"' in waiting
        r = await _form(client, f"{PATH}/heats/{heat}/reschedule", MOVE)
        assert r.status_code == 303, r.text
    assert (await _heats(desk))[1] == (2, "2026-11-21 10:00", "scheduled")
    (row,) = await _audit(desk, "heat.postpone")
    assert (row.actor, row.reason) == ("director", "bank down")


async def test_t20_restart_within_the_period_and_refused_after_it(desk: Desk) -> None:
    """T20: a heat under way whose system failed restarts, seats kept, if the trouble
    began within the reasonable period (30 min); after it, it must be postponed."""
    async with desk.sessions() as s, s.begin():
        await playing_pair(s, desk)
    heat = desk.ids["heat"]
    url = f"{PATH}/heats/{heat}/restart"
    async with signed_in(desk, "director") as client:
        page = await client.get(PATH, params={"start": "2026-11-21"})
        assert f'action="{url}"' in page.text
        old = await _form(client, url, {"failed_at": "2026-11-20T09:00", "reason": "feed lost"})
        bad = await _form(client, url, {"failed_at": "", "reason": "feed lost"})
        r = await _form(client, url, {"failed_at": "2026-11-20T09:50", "reason": "feed lost"})
        assert r.status_code == 303, r.text
        shown = await client.get(r.headers["location"])
        again = await _form(client, url, {"failed_at": "2026-11-20T09:50", "reason": "x"})
    assert old.status_code == bad.status_code == again.status_code == 422
    assert "failed_at: rule 20: not resolved within 30 min: the heat must be postponed" in old.text
    assert "failed_at: a date and time" in bad.text
    assert "heat: rule 20: qualifying heat 2 is restarted; nothing to restart" in again.text
    assert "qualifying heat 2 restarted (1 restart(s))" in shown.text
    async with desk.sessions() as s:
        found = await s.get(Heat, heat)
        assert found is not None
        assert found.status is HeatStatus.RESTARTED
    (row,) = await _audit(desk, "heat.restart")
    assert (row.actor, row.reason) == ("director", "feed lost")


@pytest.mark.parametrize("role", list(Role))
async def test_each_action_needs_its_permission(desk: Desk, role: Role) -> None:
    """Issue 26, item 2: the API's permissions (heat.read to see the week, heat.schedule
    and heat.conduct to change it), the forms shown only to a role allowed them."""
    before = await _heats(desk), await _writes(desk)
    data = {**NEW, **MOVE, "tournament": "Spring", "failed_at": "2026-11-20T09:50"}
    async with signed_in(desk, role.value) as client:
        page = await client.get(PATH)
        assert page.status_code == (200 if allowed(role, P.HEAT_READ) else 403)
        csrf = csrf_of(page.text)
        for path, permission in _writes_of(desk).items():
            shown = f'action="{path}"' in page.text
            assert shown == allowed(role, permission) or path.endswith("/restart"), path
            if allowed(role, permission):
                continue
            r = await client.post(path, data={**data, "csrf": csrf})
            assert r.status_code == 403, path
            assert f"role {role.value} may not {permission.value}" in r.text
    assert (await _heats(desk), await _writes(desk)) == before


async def test_without_a_session_or_csrf_token_nothing_changes(desk: Desk) -> None:
    """Issue 26, item 2: anonymous requests go to sign in; a form without the session's
    CSRF token is refused."""
    before = await _heats(desk), await _writes(desk)
    r = await desk.client.get(PATH)
    assert r.status_code == 303
    assert r.headers["location"] == "/console/login?next=/console/schedule"
    data = {**NEW, **MOVE, "tournament": "Spring", "failed_at": "2026-11-20T09:50"}
    for path in _writes_of(desk):
        r = await desk.client.post(path, data=data)
        assert r.status_code == 303, path
        assert r.headers["location"].startswith("/console/login")
    async with signed_in(desk, "director") as client:
        for path in _writes_of(desk):
            for csrf in ("", "forged"):
                r = await client.post(path, data={**data, "csrf": csrf})
                assert r.status_code == 403, path
                assert "CSRF" in r.text
    assert (await _heats(desk), await _writes(desk)) == before
