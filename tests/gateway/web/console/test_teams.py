"""The console's Teams screen (issue 30, item 3; house format H1-H12): the director sets
how teams score, a desk registers a team and withdraws it before play, everyone reads
the teams and the team standings.  Each form is the API's service on the API's
permission and model, audited under the signed-in account; a refusal is the page again
(422) with one line naming the clause or field, and changes nothing; a role without the
permission gets 403, as over the API."""

from __future__ import annotations

import re
from collections.abc import Mapping

import httpx
import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from storage.audit import AuditEntry
from storage.teams import Team, TeamSettings
from tests.gateway.web.api import team_samples

from .conftest import Desk, csrf_of, signed_in

PAGE = "/console/teams"
WRITES = {
    "/console/teams/settings": P.TOURNAMENT_DECIDE,
    "/console/teams/register": P.PLAYER_ADD,
    "/console/teams/withdraw": P.PLAYER_ADD,
    "/console/teams/prizes": P.TOURNAMENT_PRIZES,  # H11
    "/console/teams/pay": P.TEAM_PRIZE_RECEIPT,  # H12
}


async def _form(
    client: httpx.AsyncClient, desk: Desk, path: str, data: Mapping[str, str]
) -> httpx.Response:
    page = await client.get(PAGE)
    assert page.status_code == 200, page.text
    base = {"tournament": str(desk.ids["tournament"]), "stage": "qualifying"}
    return await client.post(path, data={**base, **data, "csrf": csrf_of(page.text)})


def _flash(html: str) -> list[str]:
    return re.findall(r'class="flash error" role="alert">([^<]*)', html)


async def _team_writes(desk: Desk) -> list[tuple[str, str]]:
    async with desk.sessions() as s:
        rows = await s.execute(
            select(AuditEntry.action, AuditEntry.actor)
            .where(AuditEntry.action.startswith("team."))
            .order_by(AuditEntry.id)
        )
        return [(a, b) for a, b in rows]


@pytest.mark.parametrize("role", list(Role))
async def test_each_team_form_answers_403_to_a_role_without_its_permission(
    desk: Desk, role: Role
) -> None:
    await team_samples.pieter_s_team(desk)
    async with signed_in(desk, role.value) as client:
        page = await client.get(PAGE)
        assert page.status_code == (200 if allowed(role, P.TOURNAMENT_READ) else 403)
        token = csrf_of((await client.get("/console/pending")).text)
        for path, permission in WRITES.items():
            if allowed(role, permission):
                continue
            r = await client.post(path, data={"csrf": token, "tournament": "Spring"})
            assert r.status_code == 403, (path, role)
            assert f"role {role.value} may not {permission.value}" in r.text
    assert [a for a, _ in await _team_writes(desk)] == ["team.settings", "team.register"]


async def test_h1_h6_the_director_sets_teams_audited_under_the_account(desk: Desk) -> None:
    async with signed_in(desk, "cashier") as client:
        page = await client.get(PAGE)
    assert "does not run teams" in page.text
    assert 'action="/console/teams/settings"' not in page.text  # the director's form only
    assert 'action="/console/teams/register"' not in page.text  # no teams set up yet
    async with signed_in(desk, "director") as client:
        r = await _form(client, desk, "/console/teams/settings",
                        {"scoring": "best-n", "best_n": "2", "min_size": "1",
                         "max_size": "3", "reason": "house format"})  # fmt: skip
        assert r.status_code == 303, r.text
        page = await client.get(r.headers["location"])
    assert "teams: best 2, 1 to 3 players (H1, H6)" in page.text
    assert await _team_writes(desk) == [("team.settings", "director")]


@pytest.mark.parametrize(
    ("path", "fields", "line"),
    [
        ("settings", {"scoring": "best-n", "best_n": "", "reason": "x"},
         "rule H6: best-n: give n, at least 1"),
        ("settings", {"scoring": "sum", "max_size": "40", "reason": "x"},
         "max_size: Input should be less than or equal to 12"),
        ("settings", {"scoring": "sum", "reason": ""},
         "reason: String should have at least 1 character"),
        ("register", {"name": "Kings", "members": "id:999", "captain": "id:999"},
         "members: player 'id:999' does not exist"),
        ("register", {"name": "", "members": "id:1", "captain": "id:1"},
         "name: String should have at least 1 character"),
        ("register", {"name": "Aces", "members": "P2", "captain": "P2"},
         "rule H1: name: team 'Aces' is already registered"),
        ("withdraw", {"team": "Nobody"}, "rule H1: team 'Nobody' is not registered"),
        ("withdraw", {"tournament": "Autumn", "team": "Aces"}, "tournament: pick the tournament"),
    ],
)  # fmt: skip
async def test_a_refused_team_form_changes_nothing(
    desk: Desk, path: str, fields: dict[str, str], line: str
) -> None:
    await team_samples.pieter_s_team(desk)
    fields = {k: v.replace("P2", f"id:{desk.ids['p2']}") for k, v in fields.items()}
    before = await _team_writes(desk)
    async with signed_in(desk, "director") as client:
        r = await _form(client, desk, f"/console/teams/{path}", fields)
    assert r.status_code == 422, r.text
    [shown] = _flash(r.text)
    assert shown.replace("&#39;", "'").startswith(line), shown
    assert await _team_writes(desk) == before
    async with desk.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(Team)) == 1
        assert (await s.get(TeamSettings, desk.ids["tournament"])) is not None


async def test_h2_h5_h9_a_desk_registers_and_withdraws_and_the_standings_show(
    desk: Desk,
) -> None:
    await team_samples.teams_allowed(desk)
    pieter = f"id:{desk.ids['p2']}"
    async with signed_in(desk, "desk") as client:
        r = await _form(client, desk, "/console/teams/register",
                        {"name": "Aces", "members": f"{pieter}\n", "captain": pieter})  # fmt: skip
        assert r.status_code == 303, r.text
        page = await client.get(r.headers["location"])
        assert "team Aces registered: 1 players, captain Pieter Botha" in page.text
        assert 'data-team="Aces"' in page.text  # in the team standings, no place yet
        assert 'data-registered="Aces"' in page.text
        team_id = page.text.split('name="team" value="')[1].split('"')[0]
        r = await _form(client, desk, "/console/teams/withdraw", {"team": team_id})
        assert r.status_code == 303, r.text
        page = await client.get(r.headers["location"])
    assert "team Aces withdrawn (H9)" in page.text
    assert 'data-registered="Aces"' not in page.text
    assert await _team_writes(desk) == [
        ("team.settings", "director"), ("team.register", "desk"), ("team.withdraw", "desk"),
    ]  # fmt: skip
