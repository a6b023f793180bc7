"""The Super 9 desk over the API: the same desk as ``reelgate super9``, in the request's
transaction.  The rules' second person is a second account: the confirmer of a manual
spin (S9-29), the Promotion Director signing off a number change (S9-23) and the
witness of a prize receipt (S9-26)."""

from __future__ import annotations

from typing import Any

from tests.gateway.web.api.conftest import Desk

S9 = "/api/v1/super9"


async def _report(desk: Desk, session: int) -> dict[str, Any]:
    r = await desk.client.get(f"{S9}/sessions/{session}", headers=desk.auth("auditor"))
    assert r.status_code == 200, r.text
    report: dict[str, Any] = r.json()
    return report


async def _approve(desk: Desk, pending: int, approver: str) -> dict[str, Any]:
    r = await desk.client.post(f"/api/v1/pending/{pending}/approve", headers=desk.auth(approver))
    assert r.status_code == 200, r.text
    decision: dict[str, Any] = r.json()
    return decision


async def test_a_manual_spin_is_confirmed_by_the_approver(desk: Desk) -> None:
    """S9-29: keyed by the dealer, confirmed by a second account; nothing before that."""
    drawing = desk.ids["s9_drawing"]
    r = await desk.client.post(
        f"{S9}/sessions/{drawing}/manual-spins",
        json={"number": 10, "confirm": 10, "reason": "wheel feed down"},
        headers=desk.auth("dealer"),
    )
    assert r.status_code == 202, r.text
    assert (await _report(desk, drawing))["spins"] == []  # the trial left nothing
    decision = await _approve(desk, r.json()["pending"], "supervisor")
    assert decision["result"]["number"] == 10
    (spin,) = (await _report(desk, drawing))["spins"]
    assert (spin["number"], spin["source"]) == (10, "manual")
    assert (spin["keyed_by"], spin["confirmed_by"]) == ("dealer", "supervisor")


async def test_a_manual_spin_keyed_twice_differently_is_refused_at_once(desk: Desk) -> None:
    r = await desk.client.post(
        f"{S9}/sessions/{desk.ids['s9_drawing']}/manual-spins",
        json={"number": 10, "confirm": 19, "reason": "wheel feed down"},
        headers=desk.auth("dealer"),
    )
    assert r.status_code == 422
    assert "rule 29" in r.json()["error"]
    assert (await desk.client.get("/api/v1/pending", headers=desk.auth("dealer"))).json() == []


async def test_numbers_change_before_the_game_signed_off_by_the_promotion_director(
    desk: Desk,
) -> None:
    """S9-23: valid numbers, before the game; the sign-off is the approving account."""
    r = await desk.client.post(
        f"{S9}/tickets/S2/numbers",
        json={"numbers": "2 3 4 5 6 7 8 9 10", "reason": "player asked"},
        headers=desk.auth("desk"),
    )
    assert r.status_code == 202, r.text
    await _approve(desk, r.json()["pending"], "promotion-director")
    audit = await desk.client.get(
        "/api/v1/audit", params={"subject": "super9/ticket/S2"}, headers=desk.auth("auditor")
    )
    change = audit.json()[-1]
    assert (change["action"], change["actor"]) == ("super9.ticket.change-numbers", "desk")
    assert change["details"]["approved_by"] == "promotion-director"
    assert change["details"]["after"] == "2,3,4,5,6,7,8,9,10"


async def test_numbers_are_final_once_the_game_started_and_must_be_valid(desk: Desk) -> None:
    started = await desk.client.post(
        f"{S9}/tickets/D1/numbers",
        json={"numbers": "2 3 4 5 6 7 8 9 10", "reason": "too late"},
        headers=desk.auth("desk"),
    )
    assert started.status_code == 422
    assert "rule 23" in started.json()["error"]
    invalid = await desk.client.post(
        f"{S9}/tickets/S2/numbers",
        json={"numbers": "2 3 4 5 6 7 8 9 37", "reason": "typo"},
        headers=desk.auth("desk"),
    )
    assert invalid.status_code == 422
    assert invalid.json()["error"].startswith("ticket S2: rule 8")
    assert (await desk.client.get("/api/v1/pending", headers=desk.auth("desk"))).json() == []


async def test_a_prize_receipt_is_witnessed_by_the_approver(desk: Desk) -> None:
    """S9-26: the winner signs; the second account is the witness on the record."""
    closed = desk.ids["s9_closed"]
    r = await desk.client.post(
        f"{S9}/sessions/{closed}/prizes/C1/receipt",
        json={"kind": desk.texts["s9_prize"], "signature": "receipt 0001", "signer": "C1X"},
        headers=desk.auth("cashier"),
    )
    assert r.status_code == 422  # the signer must be the winner, refused at once
    r = await desk.client.post(
        f"{S9}/sessions/{closed}/prizes/C1/receipt",
        json={
            "kind": desk.texts["s9_prize"],
            "signature": "receipt 0001",
            "signer": "8001015009087",
        },
        headers=desk.auth("cashier"),
    )
    assert r.status_code == 202, r.text
    assert "witness" not in r.json()["payload"]  # the requester cannot name the witness
    await _approve(desk, r.json()["pending"], "promotion-director")
    prizes = (await _report(desk, closed))["prizes"]
    (prize,) = [p for p in prizes if p["kind"] == desk.texts["s9_prize"]]
    assert prize["signed_by"] == "receipt 0001"
    assert prize["witnessed_by"] == "promotion-director"


async def test_hand_in_checks_the_verification_section(desk: Desk) -> None:
    """S9-7: the section in full; a refusal leaves the ticket awaiting hand-in."""
    r = await desk.client.post(
        f"{S9}/tickets/S1/hand-in",
        json={"numbers": "0 5 9 14 20 22 27 31 36", "name": "Pieter Botha"},
        headers=desk.auth("desk"),
    )
    assert r.status_code == 422
    assert "rule 7" in r.json()["error"]
    r = await desk.client.post(
        f"{S9}/tickets/S1/hand-in",
        json={
            "numbers": "0 5 9 14 20 22 27 31 36",
            "name": "Pieter Botha",
            "id": "7505055123080",
            "contact": "082 555 0101",
            "signed": True,
        },
        headers=desk.auth("desk"),
    )
    assert r.status_code == 201, r.text


async def test_a_rule_9_top_copy_disqualifies_and_that_is_kept(desk: Desk) -> None:
    """S9-9: a number written twice disqualifies the ticket; refused, but committed."""
    r = await desk.client.post(
        f"{S9}/tickets/S1/hand-in",
        json={"numbers": "1 1 2 3 4 5 6 7 8", "signed": True},
        headers=desk.auth("desk"),
    )
    assert r.status_code == 422
    assert r.json()["rule"] == 9
    again = await desk.client.post(
        f"{S9}/tickets/S1/hand-in",
        json={"numbers": "1 2 3 4 5 6 7 8 9", "signed": True},
        headers=desk.auth("desk"),
    )
    assert again.status_code == 422
    assert "disqualified" in again.json()["error"]


async def test_wheel_results_claims_and_close(desk: Desk) -> None:
    drawing = desk.ids["s9_drawing"]
    for game, number in enumerate(range(10, 19), start=1):
        r = await desk.client.post(
            f"{S9}/sessions/{drawing}/spins",
            json={"game": game, "number": number},
            headers=desk.auth("dealer"),
        )
        assert r.status_code == 201, r.text
    assert r.json()["completed"] == ["D1"]  # S9-13: the ninth number completes D1
    repeat = await desk.client.post(
        f"{S9}/sessions/{drawing}/spins",
        json={"game": 9, "number": 18},
        headers=desk.auth("dealer"),
    )
    assert repeat.json() is None  # the wheel repeated a posted game
    claim = await desk.client.post(
        f"{S9}/sessions/{drawing}/claims",
        json={"ticket": "D1", "duplicate": "10 11 12 13 14 15 16 17 18"},
        headers=desk.auth("dealer"),
    )
    assert claim.json() == {"ticket": "D1", "valid": True, "complete": True, "reason": None}
    closed = await desk.client.post(
        f"{S9}/sessions/{drawing}/close", headers=desk.auth("promotion-director")
    )
    assert closed.status_code == 200, closed.text
    assert closed.json()["status"] == "closed"
    assert {p["ticket"] for p in closed.json()["result"]["payouts"]} == {"D1"}
    jackpot = await desk.client.get(f"{S9}/jackpot", headers=desk.auth("cashier"))
    assert jackpot.json()["jackpot_cents"] == closed.json()["result"]["jackpot_out_cents"]
