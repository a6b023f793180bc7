"""Typed player references over the API (audit 25.6): a card number of nine digits or
fewer was read as a player number (a sale went to another player), and a card number
equal to another player's ID number made the Super 9 sale and prize receipt answer 500."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select

from gateway.tournament import services as svc
from storage.tournament import Entry
from tests.gateway.web.api.conftest import NOW, Desk

P1_ID_NUMBER = "8001015009087"  # Thandi Mokoena (p1)
P2_ID_NUMBER = "7505055123080"  # Pieter Botha (p2)


async def _player_with_card(desk: Desk, card: str) -> int:
    async with svc.unit_of_work(desk.sessions) as s:
        p = await svc.add_player(
            s, id_number="9909095800088", name="Card Holder", date_of_birth=date(1990, 9, 9),
            actor="desk", now=NOW, card_number=card,
        )  # fmt: skip
        return p.id


async def _owners(desk: Desk, entries: list[int]) -> set[int]:
    async with svc.unit_of_work(desk.sessions) as s:
        rows = await s.scalars(select(Entry.player_id).where(Entry.id.in_(entries)))
        return set(rows.all())


async def test_a_short_card_number_is_never_a_player_number(desk: Desk) -> None:
    card = f"{desk.ids['p2']:09d}"  # nine digits, and p2's player number
    holder = await _player_with_card(desk, card)
    r = await desk.client.post(
        "/api/v1/tournaments/Spring/entries", json={"player": card}, headers=desk.auth("cashier")
    )
    assert r.status_code == 201, r.text
    assert await _owners(desk, r.json()["entries"]) == {holder}
    found = await desk.client.get(f"/api/v1/players/{card}", headers=desk.auth("cashier"))
    assert found.json()["id"] == holder
    by_id = await desk.client.get(
        f"/api/v1/players/id:{desk.ids['p2']}", headers=desk.auth("cashier")
    )
    assert by_id.json()["id_number"] == P2_ID_NUMBER


async def test_a_bare_number_is_not_a_player_number(desk: Desk) -> None:
    r = await desk.client.get(f"/api/v1/players/{desk.ids['p1']}", headers=desk.auth("cashier"))
    assert r.status_code == 422
    assert r.json()["error"] == f"player '{desk.ids['p1']}' does not exist"


async def test_a_card_equal_to_another_players_id_number_is_refused_naming_both(
    desk: Desk,
) -> None:
    holder = await _player_with_card(desk, P1_ID_NUMBER)
    r = await desk.client.post(
        "/api/v1/tournaments/Spring/entries",
        json={"player": P1_ID_NUMBER},
        headers=desk.auth("cashier"),
    )
    assert r.status_code == 422
    error = r.json()["error"]
    assert f"card of player {holder}" in error
    assert f"ID number of player {desk.ids['p1']}" in error
    assert f"card:{P1_ID_NUMBER} or idnum:{P1_ID_NUMBER}" in error
    for ref, owner in ((f"card:{P1_ID_NUMBER}", holder), (f"idnum:{P1_ID_NUMBER}", desk.ids["p1"])):
        ok = await desk.client.post(
            "/api/v1/tournaments/Spring/entries", json={"player": ref}, headers=desk.auth("cashier")
        )
        assert ok.status_code == 201, ok.text
        assert await _owners(desk, ok.json()["entries"]) == {owner}


async def test_super9_sale_with_a_card_equal_to_another_id_number_is_no_500(desk: Desk) -> None:
    await _player_with_card(desk, P2_ID_NUMBER)
    sale = {"ticket": "S3", "player": P2_ID_NUMBER}
    r = await desk.client.post("/api/v1/super9/tickets", json=sale, headers=desk.auth("cashier"))
    assert r.status_code == 422, r.text
    assert "say card:" in r.json()["error"]
    sale["player"] = f"idnum:{P2_ID_NUMBER}"
    r = await desk.client.post("/api/v1/super9/tickets", json=sale, headers=desk.auth("cashier"))
    assert r.status_code == 201, r.text


async def test_super9_receipt_signer_equal_to_another_card_is_no_500(desk: Desk) -> None:
    """S9-26: the signer must be the winner; an ambiguous signer is refused, not a 500."""
    await _player_with_card(desk, P1_ID_NUMBER)
    url = f"/api/v1/super9/sessions/{desk.ids['s9_closed']}/prizes/C1/receipt"
    body = {"kind": desk.texts["s9_prize"], "signature": "receipt 0001", "signer": P1_ID_NUMBER}
    r = await desk.client.post(url, json=body, headers=desk.auth("cashier"))
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith("signer: ")
    body["signer"] = f"idnum:{P1_ID_NUMBER}"
    r = await desk.client.post(url, json=body, headers=desk.auth("cashier"))
    assert r.status_code == 202, r.text


async def test_the_schema_names_the_forms(desk: Desk) -> None:
    schema = (await desk.client.get("/api/openapi.json")).json()
    fields = [
        (name, field)
        for name, model in schema["components"]["schemas"].items()
        for key, field in model.get("properties", {}).items()
        if key in ("player", "signer") and field.get("type") == "string"  # the inputs
    ]
    # two sales, registration, disqualification, and the receipts: the team prize's
    # (PayIn) and the T15 and HS7 ones, in cash or to the machine (MachinePayIn, P2)
    assert len(fields) == 7
    for name, field in fields:
        assert "id:N" in field["description"], name
        assert field["pattern"].startswith("^(?:id:"), name
