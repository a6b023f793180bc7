"""The walk-up endpoints (house format W1-W9): the director's window with bad input refused
naming the field, the windows read back, an offer confirmed by a supervisor at the machine
(audited under their account), and the sessions listed active and finished."""

from __future__ import annotations

from tests.gateway.web.api.conftest import Desk
from tests.gateway.web.api.walkup_samples import MORNING, pieter_offered

WINDOW = "/api/v1/tournaments/Spring/walkup/A"


async def test_w1_window_refusals_name_the_field_and_change_nothing(desk: Desk) -> None:
    c = desk.client
    for field, value in (("opens", "9am"), ("seconds", 0), ("credits", 0), ("reason", "")):
        r = await c.put(WINDOW, json={**MORNING, field: value}, headers=desk.auth("director"))
        assert r.status_code == 422, r.text
        assert r.json()["error"].startswith(field), r.json()
    r = await c.put(WINDOW, json={**MORNING, "opens": "12:00"}, headers=desk.auth("director"))
    assert (r.status_code, r.json()["error"]) == (
        422, "closes: a walk-up window must close at another time",
    )  # fmt: skip
    r = await c.put("/api/v1/tournaments/Spring/walkup/Z", json=MORNING,
                    headers=desk.auth("director"))  # fmt: skip
    assert (r.status_code, r.json()["error"]) == (422, "bank: 'Z' is not on the floor")
    r = await c.get("/api/v1/walkup/windows", headers=desk.auth("technician"))
    assert r.json() == {"windows": []}
    r = await c.put(WINDOW, json=MORNING, headers=desk.auth("director"))
    assert r.status_code == 200, r.text
    assert (r.json()["opens"], r.json()["open_now"]) == ("09:00", True)


async def test_w5_w8_supervisor_confirms_an_offer_and_sessions_are_listed(desk: Desk) -> None:
    c = desk.client
    await pieter_offered(desk)
    r = await c.get("/api/v1/walkup/sessions", headers=desk.auth("auditor"))
    [offer] = r.json()["active"]
    assert (offer["machine"], offer["status"], offer["player_id"]) == (
        "A03", "offered", desk.ids["p2"]
    )
    url = f"/api/v1/walkup/sessions/{offer['id']}/confirm"
    r = await c.post(url, json={}, headers=desk.auth("supervisor"))
    assert r.status_code == 201, r.text
    heat = r.json()["heat"]
    r = await c.post(url, json={}, headers=desk.auth("supervisor"))
    assert (r.status_code, r.json()["error"]) == (
        422, f"session: walk-up session {offer['id']} is started",
    )  # fmt: skip
    audit = await c.get("/api/v1/audit", params={"limit": 5}, headers=desk.auth("auditor"))
    [last] = [e for e in audit.json() if e["action"] == "walkup.start"]
    assert (last["action"], last["actor"], last["subject"]) == (
        "walkup.start", "supervisor", f"heat:{heat}"
    )
    r = await c.get("/api/v1/walkup/sessions", params={"tournament": "Spring"},
                    headers=desk.auth("auditor"))  # fmt: skip
    [started] = r.json()["active"]
    assert (started["heat_id"], started["heat_status"], started["confirmed_by"]) == (
        heat, "scheduled", "supervisor"
    )
    assert r.json()["finished"] == []
