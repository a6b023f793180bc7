"""GET /api/v1/cashup: the day's cash-up over the API; a cashier sees their own only."""

from __future__ import annotations

from tests.gateway.web.api.conftest import Desk


async def test_auditor_reads_every_cashier_reconciled(desk: Desk) -> None:
    r = await desk.client.get(
        "/api/v1/cashup", params={"date": "2026-11-20"}, headers=desk.auth("auditor")
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["training"] is False
    assert body["reconciliation"]["ok"] is True
    by = {x["cashier"]: x for x in body["by_cashier"]}
    assert by["c"]["entries_sold"] == {"purchases": 2, "seats": 2, "amount_cents": 10_000}
    assert by["cashier"]["super9_buy_ins"] == {"tickets": 2, "amount_cents": 10_000}
    assert body["totals"]["cash_in_cents"] == 20_000


async def test_a_cashier_reads_their_own_only(desk: Desk) -> None:
    own = await desk.client.get(
        "/api/v1/cashup",
        params={"date": "2026-11-20", "desk": "till 2"},
        headers=desk.auth("cashier"),
    )
    assert own.status_code == 200, own.text
    assert [x["cashier"] for x in own.json()["by_cashier"]] == ["cashier"]
    assert own.json()["desk"]["name"] == "till 2"
    other = await desk.client.get(
        "/api/v1/cashup", params={"date": "2026-11-20", "cashier": "c"},
        headers=desk.auth("cashier"),
    )  # fmt: skip
    assert other.status_code == 403
    assert "own cash-up only" in other.text


async def test_a_bad_date_names_the_field(desk: Desk) -> None:
    r = await desk.client.get(
        "/api/v1/cashup", params={"date": "2026-13-01"}, headers=desk.auth("director")
    )
    assert r.status_code == 422
    assert "date" in r.text


async def test_a_day_out_of_the_databases_range_is_a_422(desk: Desk) -> None:
    """Found by schemathesis: ``date=0001-01-01`` overflowed the day's bounds (a 500)."""
    for day in ("0001-01-01", "9999-12-31"):
        r = await desk.client.get(
            "/api/v1/cashup", params={"date": day}, headers=desk.auth("director")
        )
        assert r.status_code == 422, r.text
        assert r.json()["error"].startswith("date: ")
