"""The cash desk and Guest Relations through the API, as ``reelgate players`` and
``reelgate entries list``: players found by a name, a card or an ID number (T1), an
exclusion register loaded from the rows of its file (T2, T3: a barred player holding
entries is disqualified), a director's disqualification (T2, T20, T23), a tournament's
entries.  Seeded desk (conftest): players p1 Thandi Mokoena, p2 Pieter Botha, p3 Lerato
Dlamini (disqualified, rule 23); p1 and p2 hold entries in "Spring"."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from storage.audit import AuditEntry
from storage.tournament import Disqualification, Entry, Exclusion, Player
from tests.gateway.web.api.conftest import Desk

ROW = {"kind": "self-exclusion", "id_number": "7505055123080", "valid_from": "2026-01-01"}


async def _get(desk: Desk, url: str, account: str = "cashier") -> Any:
    return await desk.client.get(f"/api/v1{url}", headers=desk.auth(account))


async def _post(desk: Desk, url: str, body: Any, account: str) -> Any:
    return await desk.client.post(f"/api/v1{url}", json=body, headers=desk.auth(account))


# -- players ------------------------------------------------------------------------


async def test_players_are_found_by_part_of_the_name_card_or_id(desk: Desk) -> None:
    async with desk.sessions.begin() as s:
        player = await s.get(Player, desk.ids["p2"])
        assert player is not None
        player.card_number = "R-55501"
    r = await _get(desk, "/players?q=BOTHA")
    assert r.status_code == 200, r.text
    assert [p["name"] for p in r.json()] == ["Pieter Botha"]
    assert r.json()[0]["card"] == "R-55501"
    r = await _get(desk, "/players?q=R-55501")
    assert [p["id"] for p in r.json()] == [desk.ids["p2"]]
    r = await _get(desk, "/players?q=8001015009087")
    assert [p["name"] for p in r.json()] == ["Thandi Mokoena"]
    # Never by the database id alone: a row number finds nobody.
    r = await _get(desk, f"/players?q={desk.ids['p2']:02d}")
    assert r.json() == []


async def test_players_listed_in_registration_order(desk: Desk) -> None:
    r = await _get(desk, "/players?limit=2", account="auditor")
    assert r.status_code == 200, r.text
    assert [p["id"] for p in r.json()] == [desk.ids["p1"], desk.ids["p2"]]


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("q=a", "search: type at least two letters of the name, or the card number"),
        ("q=%20%20", "search: type at least two letters of the name, or the card number"),
        ("q=" + "x" * 101, "q: "),
        ("limit=0", "limit: "),
        ("q=a%01b", "q: "),
    ],
)
async def test_player_search_refusals_name_the_field(desk: Desk, query: str, error: str) -> None:
    r = await _get(desk, f"/players?{query}")
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(error), r.json()


async def test_players_are_the_desks(desk: Desk) -> None:
    for account in ("technician", "dealer", "admin"):
        r = await _get(desk, "/players?q=Botha", account=account)
        assert r.status_code == 403
        assert r.json()["error"] == f"permission: role {account} may not player.read"


# -- exclusion registers ------------------------------------------------------------


async def test_a_register_bars_and_disqualifies_a_player_holding_entries(desk: Desk) -> None:
    """T2: a player on a register is disqualified in every tournament they hold entries in."""
    body = {"source": "national register 2026-11", "rows": [ROW, {**ROW, "id_number": "600101"}]}
    r = await _post(desk, "/exclusions/imports", body, "desk")
    assert r.status_code == 201, r.text
    assert r.json() == {
        "added": 2,
        "disqualified": [{"tournament": desk.ids["tournament"], "player": desk.ids["p2"]}],
    }
    async with desk.sessions() as s:
        rows = list(await s.scalars(select(Exclusion).order_by(Exclusion.id)))
        dq = await s.scalar(
            select(Disqualification).where(Disqualification.player_id == desk.ids["p2"])
        )
        audit = await s.scalar(select(AuditEntry).where(AuditEntry.action == "exclusion.import"))
    assert [(e.id_number, e.source, e.created_by) for e in rows] == [
        ("7505055123080", "national register 2026-11", "desk"),
        ("600101", "national register 2026-11", "desk"),
    ]
    assert dq is not None
    assert dq.rule == "2"
    assert audit is not None
    assert audit.actor == "desk"


@pytest.mark.parametrize(
    ("rows", "error"),
    [
        ([{**ROW, "kind": "grudge"}], "rule 2: rows[0]: kind 'grudge' is not one of"),
        (
            [ROW, {**ROW, "valid_from": "1 Jan"}],
            "rule 2: rows[1]: valid_from '1 Jan' is not a date",
        ),
        ([ROW, ROW], "rule 2: rows[1]: duplicate of line 2"),
        (
            [{**ROW, "valid_until": "2025-01-01"}, {**ROW, "id_number": "1", "kind": "x"}],
            "rule 2: 2 problems, nothing imported: rows[0]: valid_until is not after "
            "valid_from; rows[1]: kind 'x' is not one of",
        ),
    ],
)
async def test_one_bad_row_refuses_the_register(desk: Desk, rows: Any, error: str) -> None:
    r = await _post(desk, "/exclusions/imports", {"source": "list", "rows": rows}, "director")
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(error), r.json()
    assert r.json()["rule"] == 2
    async with desk.sessions() as s:
        assert list(await s.scalars(select(Exclusion))) == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"source": "list", "rows": []}, "rows"),
        ({"source": "list", "rows": [ROW], "zone": "Mars/Olympus"}, "zone"),
        ({"source": "", "rows": [ROW]}, "source"),
        ({"source": "list", "rows": [{**ROW, "id_number": "x" * 33}]}, "rows.0.id_number"),
        ({"source": "list", "rows": [{**ROW, "name": "a\nb"}]}, "rows.0.name"),
        ({"source": "list", "rows": [{**ROW, "colour": "red"}]}, "rows.0.colour"),
    ],
)
async def test_register_bad_fields_are_named(desk: Desk, body: Any, field: str) -> None:
    r = await _post(desk, "/exclusions/imports", body, "director")
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(f"{field}: "), r.json()


async def test_registers_are_loaded_by_the_desk_and_the_floors_managers(desk: Desk) -> None:
    for account in ("cashier", "technician", "auditor"):
        r = await _post(desk, "/exclusions/imports", {"source": "l", "rows": [ROW]}, account)
        assert r.status_code == 403
        assert r.json()["error"] == f"permission: role {account} may not player.import-exclusions"


# -- disqualification ---------------------------------------------------------------


async def test_a_director_disqualifies_and_unused_entries_are_forfeited(desk: Desk) -> None:
    """T20/T23: a disqualified player's unused entries are forfeited, never refunded."""
    body = {"player": "7505055123080", "rule": 23, "reason": "abusive to staff"}
    r = await _post(desk, "/tournaments/Spring/disqualifications", body, "director")
    assert r.status_code == 201, r.text
    assert r.json()["player"] == desk.ids["p2"]
    assert r.json()["rule"] == 23
    async with desk.sessions() as s:
        entry = await s.get(Entry, desk.ids["spare_entry"])
        dq = await s.get(Disqualification, r.json()["disqualification"])
    assert entry is not None
    assert entry.status.value == "disqualified"
    assert dq is not None
    assert dq.decided_by == "director"


@pytest.mark.parametrize(
    ("ref", "body", "error"),
    [
        ("Spring", {"player": "9202020456081", "rule": 23, "reason": "again"},
         "rule 23: player {p3} is already disqualified"),
        ("Spring", {"player": "0000000000000", "rule": 23, "reason": "who"},
         "player '0000000000000' does not exist"),
        ("Autumn", {"player": "7505055123080", "rule": 23, "reason": "x"},
         "tournament 'Autumn'"),
        ("Spring", {"player": "7505055123080", "rule": 23, "reason": "x", "entry": 999},
         "entry 999 is not player"),
    ],
)  # fmt: skip
async def test_disqualify_refusals(desk: Desk, ref: str, body: Any, error: str) -> None:
    r = await _post(desk, f"/tournaments/{ref}/disqualifications", body, "director")
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(error.format(p3=desk.ids["p3"])), r.json()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"player": "7505055123080", "rule": 5, "reason": "x"}, "rule"),
        ({"player": "7505055123080", "rule": 23}, "reason"),
        ({"player": "", "rule": 23, "reason": "x"}, "player"),
    ],
)
async def test_disqualify_bad_fields_are_named(desk: Desk, body: Any, field: str) -> None:
    r = await _post(desk, "/tournaments/Spring/disqualifications", body, "director")
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(f"{field}: "), r.json()


async def test_disqualifying_is_the_directors(desk: Desk) -> None:
    body = {"player": "7505055123080", "rule": 23, "reason": "abusive"}
    for account in ("cashier", "desk", "supervisor"):
        r = await _post(desk, "/tournaments/Spring/disqualifications", body, account)
        assert r.status_code == 403
        assert r.json()["error"] == f"permission: role {account} may not player.disqualify"


# -- entries ------------------------------------------------------------------------


async def test_a_tournaments_entries_and_one_players(desk: Desk) -> None:
    r = await _get(desk, "/tournaments/Spring/entries")
    assert r.status_code == 200, r.text
    assert [(e["player_name"], e["kind"]) for e in r.json()] == [
        ("Thandi Mokoena", "cash"),
        ("Pieter Botha", "cash"),
    ]
    r = await _get(desk, "/tournaments/Spring/entries?player=7505055123080")
    assert [e["entry"] for e in r.json()] == [desk.ids["spare_entry"]]
    assert r.json()[0]["status"] == "available"


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("/tournaments/Autumn/entries", "tournament 'Autumn'"),
        ("/tournaments/Spring/entries?player=0000000000000", "player '0000000000000' does not"),
        # Digits to str.isdigit, not to int: a name, never a 500.
        ("/tournaments/\u00b2/entries", "tournament '\u00b2' does not exist"),
        ("/tournaments/Spring/entries?player=\u00b2\u00b3", "player '\u00b2\u00b3' does not exist"),
        ("/tournaments/1234567890123456789012/entries", "tournament '1234567890123456789012'"),
    ],
)
async def test_entries_refusals(desk: Desk, url: str, error: str) -> None:
    r = await _get(desk, url)
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(error), r.json()


async def test_entries_are_the_desks(desk: Desk) -> None:
    r = await _get(desk, "/tournaments/Spring/entries", account="dealer")
    assert r.status_code == 403
    assert r.json()["error"] == "permission: role dealer may not player.read"
