"""The console's Players screen (issue 26, item 3): find and add a player (T1–T4), load
an exclusion register (T2–T3), disqualify (T23, a director's decision, at once as over
the API) and ask for a reinstatement (T23, dual control: a second account approves it on
Approvals).  Every action is the API's service, audited under the signed-in account; a
refusal is one line naming the field (422) that changes nothing; the other roles are
refused."""

from __future__ import annotations

import re
from collections.abc import Mapping

import httpx
import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from gateway.tournament import services as svc
from storage.accounts import PendingAction
from storage.audit import AuditEntry
from storage.tournament import Disqualification, Exclusion, Player
from tests.gateway.web.api.conftest import NOW

from .conftest import Desk, csrf_of, signed_in

HEADER = "kind,id_number,name,valid_from,valid_until,note"
WRITES = {
    "/console/players/add": P.PLAYER_ADD,
    "/console/players/exclusions": P.PLAYER_EXCLUSIONS,
    "/console/players/disqualify": P.PLAYER_DISQUALIFY,
    "/console/players/reinstate": P.PLAYER_REINSTATE,
}
NEW = {"name": "Naledi Khumalo", "id_number": "9106060123085", "date_of_birth": "1991-06-06",
       "card_number": "RW-7781"}  # fmt: skip


async def _form(client: httpx.AsyncClient, path: str, data: Mapping[str, str]) -> httpx.Response:
    """A form of the Players page, posted with the page's CSRF token."""
    page = await client.get("/console/players")
    assert page.status_code == 200, page.text
    return await client.post(path, data={**data, "csrf": csrf_of(page.text)})


async def _count(desk: Desk, model: type[object]) -> int:
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(model)) or 0


async def _audit(desk: Desk, action: str) -> list[AuditEntry]:
    async with desk.sessions() as s:
        query = select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id)
        return list((await s.scalars(query)).all())


async def _writes(desk: Desk) -> int:
    """Audit rows of player, register and dual-control writes (sign-ins have their own)."""
    writes = (
        AuditEntry.action.startswith("player.")
        | AuditEntry.action.startswith("exclusion.")
        | AuditEntry.action.startswith("dual.")
    )
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(AuditEntry).where(writes)) or 0


async def _dq(desk: Desk, key: int) -> Disqualification:
    async with desk.sessions() as s:
        found = await s.get(Disqualification, key)
        assert found is not None
        return found


async def test_a_desk_finds_a_player_with_the_id_number_masked(desk: Desk) -> None:
    """Issue 26, item 3: found by name, card or ID number; the ID shown by its last 4
    digits; a disqualification in force (T23) shown with its reason."""
    async with signed_in(desk, "desk") as client:
        home = await client.get("/console/")
        assert 'href="/console/players"' in home.text
        r = await client.get("/console/players", params={"q": "lerato"})
        by_id = await client.get("/console/players", params={"q": "9202020456081"})
        short = await client.get("/console/players", params={"q": "x"})
    assert r.status_code == 200
    assert 'data-player="Lerato Dlamini"' in r.text
    assert "…6081" in r.text
    assert "9202020456081" not in r.text  # the desk may not disqualify: no form holds it
    assert "rule 23: abusive" in r.text
    assert 'data-player="Lerato Dlamini"' in by_id.text
    assert "search: type at least two letters" in short.text


async def test_adding_a_player_is_audited_under_the_account(desk: Desk) -> None:
    """Issue 26, item 3: the API's PlayerIn and add_player (T1–T4), post-redirect-get."""
    async with signed_in(desk, "cashier") as client:
        r = await _form(client, "/console/players/add", NEW)
        assert r.status_code == 303
        assert r.headers["location"].startswith("/console/players?q=Naledi+Khumalo&ok=")
        page = await client.get(r.headers["location"])
    assert "player Naledi Khumalo added (ID …3085)" in page.text
    assert 'data-player="Naledi Khumalo"' in page.text
    async with desk.sessions() as s:
        p = (await s.scalars(select(Player).where(Player.id_number == NEW["id_number"]))).one()
    assert p.card_number == "RW-7781"
    (row,) = [a for a in await _audit(desk, "player.add") if a.subject == f"player:{p.id}"]
    assert row.actor == "cashier"


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"date_of_birth": "2012-03-03"}, "date_of_birth: rule 1: participant is 14, under 18"),
        ({"date_of_birth": "someday"}, "date_of_birth: Input should be a valid date"),
        ({"id_number": "1" * 21}, "id_number: String should have at most 20 characters"),
        ({"id_number": ""}, "id_number: String should have at least 1 character"),
        ({"id_number": "800101 5009 087"}, "id_number: a player with 8001015009087 already"),
        ({"name": ""}, "name: String should have at least 1 character"),
        ({"card_number": "x" * 33}, "card_number: String should have at most 32 characters"),
    ],
)
async def test_a_refused_player_changes_nothing(
    desk: Desk, fields: dict[str, str], line: str
) -> None:
    """Issue 26, item 3 (T1, T4): bad input is one line naming the field (422)."""
    before, players = await _writes(desk), await _count(desk, Player)
    async with signed_in(desk, "desk") as client:
        r = await _form(client, "/console/players/add", {**NEW, **fields})
    assert r.status_code == 422
    assert line in r.text
    assert len(re.findall(r'class="flash error"', r.text)) == 1
    assert await _writes(desk) == before
    assert await _count(desk, Player) == players


async def test_an_excluded_person_is_refused_naming_the_id_number(desk: Desk) -> None:
    """Issue 26, item 3 (T2): a person on the register is not added."""
    async with desk.sessions() as s, s.begin():
        await svc.import_exclusions(
            s, f"{HEADER}\nself-exclusion,{NEW['id_number']},,2026-01-01,,NRGP 12\n",
            source="nrgp", actor="setup", now=NOW,
        )  # fmt: skip
    players = await _count(desk, Player)
    async with signed_in(desk, "desk") as client:
        r = await _form(client, "/console/players/add", NEW)
    assert r.status_code == 422
    assert "id_number: rule 2: 9106060123085 is on the self-exclusion register (NRGP 12)" in r.text
    assert await _count(desk, Player) == players


async def test_a_register_import_disqualifies_who_it_bars(desk: Desk) -> None:
    """Issue 26, item 3 (T2, T3): the CLI's CSV pasted; the result names the players the
    register disqualified; audited under the account."""
    text = f"{HEADER}\nself-exclusion,7505055123080,Pieter Botha,2026-01-01,,\n" \
           "staff,6601015009081,,2026-01-01,2027-01-01,payroll\n"  # fmt: skip
    async with signed_in(desk, "desk") as client:
        r = await _form(
            client, "/console/players/exclusions", {"source": "NRGP November", "register": text}
        )
        assert r.status_code == 303
        page = await client.get(r.headers["location"])
        found = await client.get("/console/players", params={"q": "pieter"})
    assert (
        "2 register lines imported; disqualified under rule 2: Pieter Botha (Spring)" in page.text
    )
    assert "excluded: self-exclusion" in found.text
    assert "disqualified no." in found.text
    assert await _count(desk, Exclusion) == 2
    (row,) = await _audit(desk, "exclusion.import")
    assert row.actor == "desk"
    assert row.subject == "exclusions:NRGP November"
    async with desk.sessions() as s:
        dq = (
            await s.scalars(
                select(Disqualification).where(Disqualification.player_id == desk.ids["p2"])
            )
        ).one()
    assert dq.rule == "2"


async def test_a_register_with_bad_lines_lists_them_all_and_imports_nothing(desk: Desk) -> None:
    """Issue 26, item 3 (T2, T3): every bad line at once with its number; nothing kept."""
    text = f"{HEADER}\nself-exclusion,7505055123080,,2026-01-01,,\n" \
           "holiday,123,,2026-01-01,,\nstaff,456,,yesterday,,\n"  # fmt: skip
    before = await _writes(desk)
    async with signed_in(desk, "supervisor") as client:
        r = await _form(client, "/console/players/exclusions", {"source": "x", "register": text})
        empty = await _form(client, "/console/players/exclusions", {"source": "x", "register": ""})
        nameless = await _form(
            client, "/console/players/exclusions", {"source": "", "register": text}
        )
    assert r.status_code == 422
    assert "register: rule 2: exclusion CSV: 2 problems, nothing imported" in r.text
    assert "<li>line 3: " in r.text
    assert "<li>line 4: " in r.text
    assert "holiday,123" in r.text  # the paste is kept to be corrected
    assert empty.status_code == nameless.status_code == 422
    assert "register: paste the register" in empty.text
    assert "source: where the register came from" in nameless.text
    assert await _count(desk, Exclusion) == 0
    assert await _writes(desk) == before


async def test_disqualify_then_reinstate_under_dual_control(desk: Desk) -> None:
    """Issue 26, item 3 (T23): the director disqualifies (at once, as over the API); the
    reinstatement waits for a second person, who approves it on Approvals; the requester
    cannot approve their own."""
    q = "thandi"
    async with signed_in(desk, "director") as director:
        r = await _form(
            director, "/console/players/disqualify",
            {"player": "idnum:8001015009087", "tournament": str(desk.ids["tournament"]),
             "rule": "20", "reason": "played another's seat", "q": q},
        )  # fmt: skip
        assert r.status_code == 303
        assert r.headers["location"].startswith("/console/players?q=thandi&ok=")
        page = await director.get(r.headers["location"])
        assert "Thandi Mokoena disqualified (rule 20)" in page.text
        assert "rule 20: played another&#39;s seat" in page.text
        async with desk.sessions() as s:
            dq = (
                await s.scalars(
                    select(Disqualification).where(Disqualification.player_id == desk.ids["p1"])
                )
            ).one()
        assert dq.decided_by == "director"
        subject = f"player:{desk.ids['p1']}"
        (row,) = [a for a in await _audit(desk, "player.disqualify") if a.subject == subject]
        assert row.actor == "director"

        r = await _form(
            director, "/console/players/reinstate",
            {"disqualification": str(dq.id), "reason": "the seat was his", "q": q},
        )  # fmt: skip
        assert r.status_code == 303
        page = await director.get(r.headers["location"])
        assert "it waits for a second person" in page.text
        assert "reinstatement waiting for a second person" in page.text
        assert (await _dq(desk, dq.id)).revoked_at is None
        async with desk.sessions() as s:
            pending = (await s.scalars(select(PendingAction))).one()
        assert pending.kind == "player.reinstate"
        queue = await director.get("/console/pending")
        assert f'data-pending="{pending.id}"' in queue.text
        own = await director.post(
            f"/console/pending/{pending.id}/approve", data={"csrf": csrf_of(queue.text)}
        )
        assert own.status_code == 422
        assert "the requester cannot approve" in own.text
        assert (await _dq(desk, dq.id)).revoked_at is None
    async with signed_in(desk, "supervisor") as second:
        queue = await second.get("/console/pending")
        r = await second.post(
            f"/console/pending/{pending.id}/approve", data={"csrf": csrf_of(queue.text)}
        )
        assert r.status_code == 303
    done = await _dq(desk, dq.id)
    assert done.revoked_at is not None
    assert done.revoked_by == "director"  # the write runs under the requester's name
    (approval,) = await _audit(desk, "dual.approve")
    assert approval.actor == "supervisor"
    (revoked,) = await _audit(desk, "player.reinstate")
    assert revoked.actor == "director"


@pytest.mark.parametrize(
    ("path", "fields", "line"),
    [
        ("/console/players/disqualify", {"rule": "7"}, "rule: one of 1, 2, 3, 12, 20, 23"),
        ("/console/players/disqualify", {"reason": ""}, "reason: say why"),
        ("/console/players/disqualify", {"player": "idnum:0000000000"}, "does not exist"),
        ("/console/players/disqualify", {"player": "idnum:9202020456081"},
         "rule 23: player"),  # already disqualified
        ("/console/players/reinstate", {"disqualification": "x"}, "disqualification: pick"),
        ("/console/players/reinstate", {"disqualification": "999"}, "disqualification 999"),
        ("/console/players/reinstate", {"reason": ""}, "reason: say why"),
    ],
)  # fmt: skip
async def test_a_refused_decision_changes_nothing(
    desk: Desk, path: str, fields: dict[str, str], line: str
) -> None:
    """Issue 26, item 3 (T23): one line (422); no disqualification, no pending request."""
    data = {"player": "idnum:8001015009087", "tournament": str(desk.ids["tournament"]),
            "rule": "23", "reason": "why", "disqualification": str(desk.ids["disqualification"]),
            **fields}  # fmt: skip
    before = await _writes(desk), await _count(desk, Disqualification)
    async with signed_in(desk, "director") as client:
        r = await _form(client, path, data)
    assert r.status_code == 422, r.text
    assert line in r.text
    assert (await _writes(desk), await _count(desk, Disqualification)) == before
    assert await _count(desk, PendingAction) == 0


@pytest.mark.parametrize("role", list(Role))
async def test_each_action_needs_its_permission(desk: Desk, role: Role) -> None:
    """Issue 26, item 3: the API's permissions, on the GET and on every POST."""
    before = await _writes(desk), await _count(desk, Player)
    async with signed_in(desk, role.value) as client:
        r = await client.get("/console/players")
        assert r.status_code == (200 if allowed(role, P.PLAYER_READ) else 403)
        home = await client.get("/console/")
        assert ('href="/console/players"' in home.text) == allowed(role, P.PLAYER_READ)
        csrf = csrf_of(home.text)
        for path, permission in WRITES.items():
            if allowed(role, permission):
                continue
            r = await client.post(path, data={**NEW, "csrf": csrf, "source": "x",
                                               "register": f"{HEADER}\n"})  # fmt: skip
            assert r.status_code == 403, path
            assert f"role {role.value} may not {permission.value}" in r.text
    assert (await _writes(desk), await _count(desk, Player)) == before


async def test_without_a_session_or_csrf_token_nothing_changes(desk: Desk) -> None:
    """Issue 26, item 3: anonymous requests go to sign in; a form without the session's
    CSRF token is refused."""
    before = await _writes(desk), await _count(desk, Player)
    r = await desk.client.get("/console/players")
    assert r.status_code == 303
    assert r.headers["location"] == "/console/login?next=/console/players"
    data = {**NEW, "source": "x", "register": f"{HEADER}\n", "rule": "23", "reason": "x",
            "player": "idnum:8001015009087", "disqualification": "1"}  # fmt: skip
    for path in WRITES:
        r = await desk.client.post(path, data=data)
        assert r.status_code == 303, path
        assert r.headers["location"].startswith("/console/login")
    async with signed_in(desk, "director") as client:
        for path in WRITES:
            for csrf in ("", "forged"):
                r = await client.post(path, data={**data, "csrf": csrf})
                assert r.status_code == 403, path
                assert "CSRF" in r.text
    assert (await _writes(desk), await _count(desk, Player)) == before
    assert await _count(desk, PendingAction) == 0
