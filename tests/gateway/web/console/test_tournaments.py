"""The console's Tournaments screen (issue 26, item 1): the list (``GET /tournaments``), a
new tournament (``POST /tournaments``), a change of settings (``PATCH
/tournaments/{ref}/settings``: a director's decision, T23, under dual control) and "copy
as template".  Every action is the API's model and service, audited under the signed-in
account; a refusal is one line naming the field (422) and changes nothing; the other
roles are refused as the API refuses them."""

from __future__ import annotations

import re
from collections.abc import Mapping

import httpx
import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.settings import TournamentSettings
from gateway.web.console.tournament_form import values_of
from storage.accounts import PendingAction
from storage.audit import AuditEntry
from storage.tournament import Tournament

from .conftest import Desk, csrf_of, signed_in

PATH = "/console/tournaments"
NEW = {
    **values_of(TournamentSettings()),
    "name": "Summer Slots",
    "qualifying_starts_at": "2026-12-01T09:00",
    "qualifying_ends_at": "2026-12-20T22:00",
}


def _writes_for(desk: Desk) -> dict[str, P]:
    return {
        f"{PATH}/create": P.TOURNAMENT_CREATE,
        f"{PATH}/{desk.ids['tournament']}/settings": P.TOURNAMENT_SETTINGS,
    }


async def _post(
    client: httpx.AsyncClient, path: str, data: Mapping[str, str], page: str = PATH
) -> httpx.Response:
    """A form of the Tournaments page, posted with the page's CSRF token."""
    shown = await client.get(page)
    assert shown.status_code == 200, shown.text
    return await client.post(path, data={**data, "csrf": csrf_of(shown.text)})


async def _count(desk: Desk, model: type[object]) -> int:
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(model)) or 0


async def _audit(desk: Desk, action: str) -> list[AuditEntry]:
    async with desk.sessions() as s:
        query = select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id)
        return list((await s.scalars(query)).all())


async def _writes(desk: Desk) -> int:
    """Audit rows of tournament and dual-control writes."""
    writes = AuditEntry.action.startswith("tournament.") | AuditEntry.action.startswith("dual.")
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(AuditEntry).where(writes)) or 0


async def _settings(desk: Desk, ref: int | str) -> TournamentSettings:
    async with desk.sessions() as s:
        return await load_settings(s, await find_tournament(s, ref))


async def test_every_role_sees_the_list_as_the_api_lists_it(desk: Desk) -> None:
    """Issue 26, item 1: GET /tournaments is tournament.read; the nav item sits just
    before Schedule; the settings show read-only to a role that may not change them."""
    async with signed_in(desk, "cashier") as client:
        home = await client.get("/console/")
        r = await client.get(PATH)
        shown = await client.get(PATH, params={"edit": "Spring"})
        api = await client.get("/console/tournaments", params={"edit": "Nowhere"})
    links = re.findall(r'href="(/console/[a-z0-9]+)"', home.text)
    assert links.index("/console/tournaments") + 1 == links.index("/console/schedule")
    assert r.status_code == 200
    assert 'data-tournament="Spring"' in r.text
    assert "48h" in r.text  # Spring's validity (T5)
    assert "Create tournament" not in r.text  # tournament.create is the director's
    assert "Copy as template" not in r.text
    assert 'data-settings="Spring"' in shown.text
    assert 'action="/console/tournaments/' not in shown.text
    assert "T14a" in shown.text
    assert "edit: tournament &#39;Nowhere&#39; does not exist" in api.text


async def test_a_director_creates_a_tournament_audited_under_the_account(desk: Desk) -> None:
    """Issue 26, item 1 (T5–T8, T13, T14a, T19, T22): every setting of ``tournament
    create`` and ``set``, stored as given; the create audited under the director."""
    form = {**NEW, "validity": "48h", "packages": "single:6000:1\nR250:25000:5:1000",
            "seat_price_cents": "6000", "direct_final_places": "2",
            "semi_final_qualifiers": "30", "finalists_from_semis": "6", "prize_places": "5",
            "postpone_after_s": "2700", "reschedule_notice_s": "1800",
            "unmarked_at_start": "forfeit", "top_player_excluded": "false",
            "minimum_age": "21"}  # fmt: skip
    async with signed_in(desk, "director") as client:
        r = await _post(client, f"{PATH}/create", form)
        assert r.status_code == 303, r.text
        assert r.headers["location"].startswith(f"{PATH}?edit=")
        page = await client.get(r.headers["location"])
    assert "tournament Summer Slots created" in page.text
    assert 'data-settings="Summer Slots"' in page.text
    got = (await _settings(desk, "Summer Slots")).to_json()
    assert got["validity"] == "48h"
    assert got["packages"] == [
        {"code": "single", "price_cents": 6000, "seats": 1, "casino_credit_cents": 0},
        {"code": "R250", "price_cents": 25000, "seats": 5, "casino_credit_cents": 1000},
    ]
    assert (got["direct_final_places"], got["semi_final_qualifiers"]) == (2, 30)
    assert (got["finalists_from_semis"], got["prize_places"], got["minimum_age"]) == (6, 5, 21)
    assert (got["postpone_after_s"], got["reschedule_notice_s"]) == (2700, 1800)
    assert got["unmarked_at_start"] == "forfeit"
    assert got["top_player_excluded"] is False
    async with desk.sessions() as s:
        t = (await s.scalars(select(Tournament).where(Tournament.name == "Summer Slots"))).one()
    assert t.qualifying_starts_at is not None
    assert t.qualifying_starts_at.hour == 7  # 09:00 in Johannesburg, stored in UTC
    (row,) = [
        a for a in await _audit(desk, "tournament.create") if a.subject == f"tournament:{t.id}"
    ]
    assert row.actor == "director"


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"name": ""}, "name: String should have at least 1 character"),
        ({"name": "Spring"}, "name: tournament &#39;Spring&#39; already exists"),
        ({"minimum_age": "17"}, "minimum_age: rule 1: minimum_age may not be below 18"),
        ({"semi_final_qualifiers": "0"},
         "semi_final_qualifiers: rule 14: qualifier counts must be at least 1"),
        ({"prize_places": "0"}, "prize_places: rule 19: prize_places must be at least 1"),
        ({"postpone_after_s": "0"}, "postpone_after_s: rule 20: postpone_after must be"),
        ({"seat_price_cents": "fifty"}, "seat_price_cents: Input should be a valid integer"),
        ({"validity": "72h"}, "validity: Input should be &#39;same-day&#39; or &#39;48h&#39;"),
        ({"venue_zone": "Mars/Base"}, "venue_zone: unknown time zone &#39;Mars/Base&#39;"),
        ({"unmarked_at_start": "maybe"}, "unmarked_at_start: rule 22: settings: unmarked_at"),
        ({"top_player_excluded": "perhaps"}, "top_player_excluded: Input should be a valid"),
        ({"packages": "single:5000"}, "packages: line 1: expected CODE:CENTS:SEATS[:CREDIT]"),
        ({"packages": "single:4000:1"}, "packages: rule 5: package &#39;single&#39; is one seat"),
        ({"packages": "R200:20000:0"}, "packages: package 1 seats: Input should be greater"),
        ({"qualifying_ends_at": "2026-11-30T09:00"},
         "qualifying_ends_at: rule 13: the qualifying period must end after it starts"),
        ({"qualifying_starts_at": "soon"}, "qualifying_starts_at: expected a date and time"),
    ],
)  # fmt: skip
async def test_a_refused_tournament_changes_nothing(
    desk: Desk, fields: dict[str, str], line: str
) -> None:
    """Issue 26, item 1 (T1, T5, T13, T14, T19, T20, T22): the API's TournamentIn, then
    the settings' and the service's checks; one line naming the field, nothing made."""
    before = await _writes(desk), await _count(desk, Tournament)
    async with signed_in(desk, "director") as client:
        r = await _post(client, f"{PATH}/create", {**NEW, **fields})
    assert r.status_code == 422
    assert line in r.text
    assert len(re.findall(r'class="flash error"', r.text)) == 1
    assert (await _writes(desk), await _count(desk, Tournament)) == before


async def test_a_settings_change_waits_for_a_second_director(desk: Desk) -> None:
    """Issue 26, item 1 (T23, T14a, T19): only the settings changed are asked for, under
    dual control as over the API; the requester cannot approve; a second director does,
    and the change runs under the requester's name."""
    ref = desk.ids["tournament"]
    page = f"{PATH}?edit={ref}"
    form = {**values_of(await _settings(desk, ref)), "prize_places": "5",
            "top_player_excluded": "false", "reason": "five prizes advertised"}  # fmt: skip
    async with signed_in(desk, "director") as director:
        r = await _post(director, f"{PATH}/{ref}/settings", form, page)
        assert r.status_code == 303, r.text
        shown = await director.get(r.headers["location"])
        assert "change of prize_places, top_player_excluded asked" in shown.text
        assert "A change waits for a second director" in shown.text
        assert (await _settings(desk, ref)).prize_places == 3
        async with desk.sessions() as s:
            pending = (await s.scalars(select(PendingAction))).one()
        assert pending.kind == "tournament.settings"
        changes = {k: v for k, v in pending.payload_dict()["changes"].items() if v is not None}
        assert changes == {"prize_places": 5, "top_player_excluded": False}
        queue = await director.get("/console/pending")
        own = await director.post(
            f"/console/pending/{pending.id}/approve", data={"csrf": csrf_of(queue.text)}
        )
        assert own.status_code == 422
        assert (await _settings(desk, ref)).prize_places == 3
    async with signed_in(desk, "director2") as second:
        queue = await second.get("/console/pending")
        r = await second.post(
            f"/console/pending/{pending.id}/approve", data={"csrf": csrf_of(queue.text)}
        )
        assert r.status_code == 303
    after = await _settings(desk, ref)
    assert (after.prize_places, after.top_player_excluded) == (5, False)
    (asked,) = await _audit(desk, "dual.request")
    assert asked.actor == "director"
    (approved,) = await _audit(desk, "dual.approve")
    assert approved.actor == "director2"
    (changed,) = await _audit(desk, "tournament.settings")
    assert changed.actor == "director"
    assert changed.reason == "five prizes advertised"


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"reason": ""}, "reason: say why"),
        ({}, "settings: no setting differs from the tournament&#39;s"),
        ({"minimum_age": "17"}, "minimum_age: rule 1: minimum_age may not be below 18"),
        ({"finalists_from_semis": "0"}, "finalists_from_semis: rule 14: qualifier counts"),
        ({"validity": "week"}, "validity: Input should be &#39;same-day&#39; or &#39;48h&#39;"),
        ({"packages": "single:5000:1:x"}, "packages: package 1 casino_credit_cents: Input"),
    ],
)
async def test_a_refused_change_asks_nothing(desk: Desk, fields: dict[str, str], line: str) -> None:
    """Issue 26, item 1 (T1, T14, T23): refused at once, as the API's trial run refuses
    it; no pending change, nothing changed."""
    ref = desk.ids["tournament"]
    form = {**values_of(await _settings(desk, ref)), "reason": "why", **fields}
    before = await _writes(desk), (await _settings(desk, ref)).to_json()
    async with signed_in(desk, "director") as client:
        r = await _post(client, f"{PATH}/{ref}/settings", form, f"{PATH}?edit={ref}")
    assert r.status_code == 422
    assert line in r.text
    assert len(re.findall(r'class="flash error"', r.text)) == 1
    assert (await _writes(desk), (await _settings(desk, ref)).to_json()) == before
    assert await _count(desk, PendingAction) == 0


async def test_copy_as_template_makes_a_new_tournament_with_the_same_settings(
    desk: Desk,
) -> None:
    """Issue 26, item 1: last week's settings in the form; a new name and dates; created
    through the same service; the template unchanged."""
    ref = desk.ids["tournament"]
    template = await _settings(desk, ref)
    async with signed_in(desk, "director") as client:
        page = await client.get(PATH, params={"copy": str(ref)})
        assert "New tournament, copied from Spring" in page.text
        assert '<option value="48h" selected>' in page.text  # Spring's validity
        form = {**values_of(template), "name": "Spring, week 2", "template": str(ref),
                "qualifying_starts_at": "2026-12-08T09:00"}  # fmt: skip
        r = await _post(client, f"{PATH}/create", form, f"{PATH}?copy={ref}")
        assert r.status_code == 303, r.text
    copied = await _settings(desk, "Spring, week 2")
    assert copied == template
    assert await _settings(desk, ref) == template
    rows = await _audit(desk, "tournament.create")
    assert rows[-1].actor == "director"


@pytest.mark.parametrize("role", list(Role))
async def test_each_action_needs_its_permission(desk: Desk, role: Role) -> None:
    """Issue 26, item 1: the API's permissions, on the GET and on every POST."""
    before = await _writes(desk), await _count(desk, Tournament)
    async with signed_in(desk, role.value) as client:
        r = await client.get(PATH)
        assert r.status_code == (200 if allowed(role, P.TOURNAMENT_READ) else 403)
        home = await client.get("/console/")
        assert (f'href="{PATH}"' in home.text) == allowed(role, P.TOURNAMENT_READ)
        csrf = csrf_of(home.text)
        for path, permission in _writes_for(desk).items():
            if allowed(role, permission):
                continue
            r = await client.post(path, data={**NEW, "reason": "x", "csrf": csrf})
            assert r.status_code == 403, path
            assert f"role {role.value} may not {permission.value}" in r.text
    assert (await _writes(desk), await _count(desk, Tournament)) == before
    assert await _count(desk, PendingAction) == 0


async def test_without_a_session_or_csrf_token_nothing_changes(desk: Desk) -> None:
    """Issue 26, item 1: anonymous requests go to sign in; a form without the session's
    CSRF token is refused."""
    before = await _writes(desk), await _count(desk, Tournament)
    r = await desk.client.get(PATH)
    assert r.status_code == 303
    assert r.headers["location"] == f"/console/login?next={PATH}"
    data = {**NEW, "reason": "x"}
    for path in _writes_for(desk):
        r = await desk.client.post(path, data=data)
        assert r.status_code == 303, path
        assert r.headers["location"].startswith("/console/login")
    async with signed_in(desk, "director") as client:
        for path in _writes_for(desk):
            for csrf in ("", "forged"):
                r = await client.post(path, data={**data, "csrf": csrf})
                assert r.status_code == 403, path
    assert (await _writes(desk), await _count(desk, Tournament)) == before
