"""Every console screen behind its role (docs/roles.md): the permission table decides,
a page a role may not open answers 403 with a page saying why, a request without a
session goes to the sign-in page, and a form without the session's CSRF token changes
nothing."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from gateway.tournament import services as svc
from storage.audit import AuditEntry
from storage.tournament import Entry
from tests.gateway.web.api.conftest import NOW

from .conftest import Desk, csrf_of, sign_in_form, signed_in

SCREENS = {
    "/console/floor": P.BANK_READ,
    "/console/floor/A": P.BANK_READ,
    "/console/heat": P.HEAT_DIRECT,
    "/console/heat/A": P.HEAT_DIRECT,
    "/console/heats/1/score": P.HEAT_MANUAL_SCORE,  # issue 26: a manual score (T23)
    "/console/tournaments": P.TOURNAMENT_READ,  # issue 26, item 1
    "/console/schedule": P.HEAT_READ,  # issue 26, item 2
    "/console/desk": P.PLAYER_READ,
    "/console/cashup": P.CASHUP_READ,  # issue 26: the day's cash-up
    "/console/players": P.PLAYER_READ,  # issue 26, item 3
    "/console/standings": P.HEAT_READ,
    "/console/finals": P.HEAT_READ,
    "/console/prizes": P.TOURNAMENT_READ,  # issue 26, item 5
    "/console/teams": P.TOURNAMENT_READ,  # issue 30, item 3 (H1-H9)
    "/console/walkup": P.HEAT_READ,  # issue 30, item 2 (W1-W9)
    "/console/super9": P.SUPER9_READ,
    "/console/audit": P.AUDIT_READ,
    "/console/pending": None,
    "/console/accounts": P.ACCOUNTS_MANAGE,  # issue 26, item 4
    "/console/tonight/fragment": None,  # the home page's board, issue 26, item 6
}


@pytest.mark.parametrize("role", list(Role))
async def test_each_screen_opens_only_for_its_roles(desk: Desk, role: Role) -> None:
    async with signed_in(desk, role.value) as client:
        for path, permission in SCREENS.items():
            r = await client.get(path)
            may = permission is None or allowed(role, permission)
            assert r.status_code == (200 if may else 403), (path, r.status_code)
            if permission is not None and not may:
                assert f"role {role.value} may not {permission.value}" in r.text
        home = await client.get("/console/")
        for path, permission in SCREENS.items():
            if path.count("/") == 2:  # menu entries only
                shown = f'href="{path}"' in home.text
                assert shown == (permission is None or allowed(role, permission)), path


async def test_without_a_session_the_console_asks_to_sign_in(desk: Desk) -> None:
    r = await desk.client.get("/console/floor")
    assert r.status_code == 303
    assert r.headers["location"] == "/console/login?next=/console/floor"
    bad = await sign_in_form(desk.client, {"name": "cashier", "password": "wrong password!"})
    assert bad.status_code == 401
    assert "unknown account or wrong password" in bad.text


async def test_sign_in_never_redirects_off_the_console(desk: Desk) -> None:
    r = await sign_in_form(
        desk.client,
        {"name": "cashier", "password": "correct horse battery", "next": "//evil.test/"},
    )
    assert r.headers["location"] == "/console/"


async def test_a_form_without_the_csrf_token_changes_nothing(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        form = {"tournament": str(desk.ids["tournament"]), "subject": "seat 3",
                "decision": "stands", "reason": "camera footage"}  # fmt: skip
        async with desk.sessions() as s:
            before = await s.scalar(select(func.count()).select_from(AuditEntry)) or 0
        r = await client.post("/console/decisions", data=form)
        assert r.status_code == 403
        assert "CSRF" in r.text
        async with desk.sessions() as s:
            assert await s.scalar(select(func.count()).select_from(AuditEntry)) == before
        page = await client.get("/console/audit")
        r = await client.post("/console/decisions", data={**form, "csrf": csrf_of(page.text)})
        assert r.status_code == 303
        async with desk.sessions() as s:
            assert await s.scalar(select(func.count()).select_from(AuditEntry)) == before + 1


async def test_a_desk_finds_players_by_name_or_card_never_by_id(desk: Desk) -> None:
    async with signed_in(desk, "desk") as client:
        by_name = await client.get("/console/desk", params={"q": "botha"})
        assert 'data-player="Pieter Botha"' in by_name.text
        by_id = await client.get("/console/desk", params={"q": str(desk.ids["p2"])})
        assert 'data-player="Pieter Botha"' not in by_id.text
        short = await client.get("/console/desk", params={"q": "b"})
        assert "at least two letters" in short.text


async def test_a_refused_sale_shows_the_rule_and_sells_nothing(desk: Desk) -> None:
    """The disqualified player (rule 23) is refused at the desk in the rules' words."""
    async with signed_in(desk, "cashier") as client:
        page = await client.get("/console/desk", params={"q": "dlamini"})
        r = await client.post(
            "/console/desk/sell",
            data={"csrf": csrf_of(page.text), "tournament": str(desk.ids["tournament"]),
                  "player": "9202020456081", "quantity": "1", "payment": "cash"},
        )  # fmt: skip
        assert r.status_code == 422
        assert "rule" in r.text
        assert "disqualified" in r.text


async def test_the_desk_sells_to_the_player_on_screen_by_typed_id_number(desk: Desk) -> None:
    """Audit 25.6: the page's sale names the player it lists by ``idnum:``, so another
    player's card equal to this ID number cannot take the sale (nor make it ambiguous)."""
    async with desk.sessions() as s, s.begin():
        other = await svc.add_player(
            s, id_number="9909095800088", name="Card Holder", date_of_birth=date(1990, 9, 9),
            actor="desk", now=NOW, card_number="7505055123080",
        )  # fmt: skip
    async with signed_in(desk, "cashier") as client:
        page = await client.get("/console/desk", params={"q": "botha"})
        assert 'name="player" value="idnum:7505055123080"' in page.text
        r = await client.post(
            "/console/desk/sell",
            data={"csrf": csrf_of(page.text), "tournament": str(desk.ids["tournament"]),
                  "player": "idnum:7505055123080", "quantity": "1", "payment": "cash"},
        )  # fmt: skip
        assert r.status_code == 303, r.text
    async with desk.sessions() as s:
        owners = set((await s.scalars(select(Entry.player_id))).all())
    assert other.id not in owners
    assert desk.ids["p2"] in owners


async def test_bank_actions_need_the_gateway_holding_the_bank(desk: Desk) -> None:
    """A console with no gateway in its process (``reelgate api``) says where to go."""
    async with signed_in(desk, "technician") as client:
        page = await client.get("/console/floor/A")
        assert "does not drive bank A" in page.text
        r = await client.post("/console/floor/A/check", data={"csrf": csrf_of(page.text)})
        assert r.status_code == 422
        assert "not driven by this process" in r.text


async def test_a_technician_clears_a_trap_mark_with_a_reason(desk: Desk) -> None:
    async with signed_in(desk, "technician") as client:
        page = await client.get("/console/floor")
        assert "marked: door-opened" in page.text
        csrf = csrf_of(page.text)
        refused = await client.post(
            "/console/machines/A02/clear-marks", data={"csrf": csrf, "bank": "A", "reason": ""}
        )
        assert refused.status_code == 422
        r = await client.post(
            "/console/machines/A02/clear-marks",
            data={"csrf": csrf, "bank": "A", "reason": "door switch checked"},
        )
        assert r.status_code == 303
        assert "marked: door-opened" not in (await client.get("/console/floor")).text


async def test_final_seating_and_proxies_refuse_in_the_rules_words(desk: Desk) -> None:
    """T14: no seat draw before qualifying is over; T12/T16: no proxy in qualifying."""
    async with signed_in(desk, "director") as client:
        page = await client.get("/console/finals")
        assert 'data-stage="final"' in page.text
        csrf, tid = csrf_of(page.text), str(desk.ids["tournament"])
        r = await client.post(
            "/console/finals/seat", data={"csrf": csrf, "tournament": tid, "stage": "final"}
        )
        assert r.status_code == 303
        assert "refused" in r.headers["location"]
        r = await client.post(
            "/console/finals/proxy",
            data={"csrf": csrf, "tournament": tid, "seat": str(desk.ids["scored_seat"]),
                  "name": "Sipho Nkosi", "id_number": "9001015009086",
                  "date_of_birth": "1990-01-01"},
        )  # fmt: skip
        location = r.headers["location"].replace("+", " ")
        assert "proxies are for final stages" in location
