"""Sales over the API carry their tender; ``Idempotency-Key`` (or the till slip) makes a
retry answer 200 with the first sale; a key reused for another sale is 409 naming it
(issue 24 no. 5).  The cash-up then counts only cash in the drawer."""

from __future__ import annotations

from typing import Any

from tests.gateway.web.api.conftest import Desk

SALE = "/api/v1/tournaments/Spring/entries"
PIETER = "7505055123080"


async def _post(desk: Desk, body: dict[str, Any], account: str = "cashier", **headers: str) -> Any:
    return await desk.client.post(SALE, json=body, headers={**desk.auth(account), **headers})


async def test_a_retry_with_the_same_key_answers_the_first_sale(desk: Desk) -> None:
    body = {"player": PIETER, "tender": "card"}
    first = await _post(desk, body, **{"Idempotency-Key": "till2-0001"})
    assert first.status_code == 201, first.text
    assert first.json()["tender"] == "card"
    assert first.json()["kind"] == "card"
    again = await _post(desk, body, **{"Idempotency-Key": "till2-0001"})
    assert again.status_code == 200, again.text
    assert again.json() == first.json()
    # The same key for a different sale: 409, naming the key; nothing saved.
    other = await _post(
        desk, {"player": PIETER, "tender": "cash"}, **{"Idempotency-Key": "till2-0001"}
    )
    assert other.status_code == 409
    assert "Idempotency-Key 'till2-0001' was used for purchase" in other.json()["error"]
    # Another cashier's key of the same name is another sale.
    theirs = await _post(desk, body, account="supervisor", **{"Idempotency-Key": "till2-0001"})
    assert theirs.status_code == 201
    assert theirs.json()["purchase"] != first.json()["purchase"]
    listed = await desk.client.get(SALE, params={"player": PIETER}, headers=desk.auth("cashier"))
    purchases = {e["purchase"] for e in listed.json()}
    assert first.json()["purchase"] in purchases
    assert len(purchases) == 3  # the fixture's spare entry, this sale, the supervisor's


async def test_the_till_slip_makes_a_retry_without_a_header_safe(desk: Desk) -> None:
    body = {"player": PIETER, "reference": "SLIP 88"}
    first = await _post(desk, body)
    again = await _post(desk, body)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["purchase"] == first.json()["purchase"]
    refused = await _post(desk, {**body, "quantity": 2})
    assert refused.status_code == 409
    assert "till slip 'SLIP 88'" in refused.json()["error"]


async def test_bad_tenders_and_keys_name_the_field(desk: Desk) -> None:
    r = await _post(desk, {"player": PIETER, "tender": "voucher"})
    assert r.status_code == 422
    assert r.json()["error"].startswith("tender:")
    r = await _post(desk, {"player": PIETER, "tender": "cash", "complimentary": True})
    assert r.status_code == 422
    assert "tender: cash contradicts the older field (comp)" in r.json()["error"]
    r = await _post(desk, {"player": PIETER}, **{"Idempotency-Key": "k" * 101})
    assert r.status_code == 422
    assert "idempotency-key" in r.json()["error"].lower()
    # A role that may not sell cannot use a key to read another's sale either.
    r = await _post(desk, {"player": PIETER}, account="auditor", **{"Idempotency-Key": "x"})
    assert r.status_code == 403


async def test_a_comp_and_a_card_ticket_are_not_in_the_drawer(desk: Desk) -> None:
    before = await desk.client.get(
        "/api/v1/cashup", params={"date": "2026-11-20"}, headers=desk.auth("auditor")
    )
    cash = before.json()["totals"]["cash_in_cents"]
    comp = await _post(desk, {"player": PIETER, "tender": "comp"})
    assert comp.status_code == 201, comp.text
    assert (comp.json()["kind"], comp.json()["tender"]) == ("complimentary", "comp")
    card = await _post(desk, {"player": PIETER, "tender": "card"})
    assert card.status_code == 201
    ticket = await desk.client.post(
        "/api/v1/super9/tickets",
        json={"ticket": "S9", "player": PIETER, "tender": "card"},
        headers=desk.auth("cashier"),
    )
    assert ticket.status_code == 201, ticket.text
    after = await desk.client.get(
        "/api/v1/cashup", params={"date": "2026-11-20"}, headers=desk.auth("auditor")
    )
    body = after.json()
    assert body["reconciliation"]["ok"], body["reconciliation"]
    assert body["totals"]["cash_in_cents"] == cash
    assert body["totals"]["card_in_cents"] == card.json()["amount_cents"] + 5_000
    mine = {x["cashier"]: x for x in body["by_cashier"]}["cashier"]
    tenders = {t["tender"]: t for t in mine["by_tender"]}
    assert tenders["comp"]["movements"] == 1
    assert tenders["comp"]["in_cents"] == 0
