"""A manual score after the cut through the API's dual control (T23, issue 24): the
amendment names both accounts — the requester and the approver, who cannot be the
same — and a role that may not ask for it changes nothing."""

from __future__ import annotations

import json

from sqlalchemy import select

from gateway.tournament import services as svc
from gateway.tournament.services.amendments import AMEND_ACTION
from gateway.tournament.services.stage_close import close_stage_if_over
from storage.audit import AuditEntry
from storage.tournament import Heat
from tests.gateway.web.api.conftest import NOW, Desk

BODY = {
    "credits": 1500, "games_played": 80, "games_won": 20, "credits_wagered": 400,
    "credits_won": 900, "reason": "meter read by hand",
}  # fmt: skip


async def _seal_qualifying(desk: Desk) -> None:
    """Cancel the heat still to run and close the stage: the qualifying cut is sealed."""
    async with svc.unit_of_work(desk.sessions) as s:
        await svc.cancel_heat(
            s, desk.ids["heat"], announced_via="MC", reason="bank closed", actor="director",
            now=NOW,
        )  # fmt: skip
        heat = await s.get(Heat, desk.ids["done_heat"])
        assert heat is not None
        assert await close_stage_if_over(s, heat, actor="gateway", at=NOW)


async def _amendments(desk: Desk) -> list[dict[str, object]]:
    async with desk.sessions() as s:
        rows = await s.scalars(select(AuditEntry).where(AuditEntry.action == AMEND_ACTION))
        return [json.loads(r.details) | {"actor": r.actor} for r in rows]


async def test_t23_amendment_names_requester_and_approver(desk: Desk) -> None:
    await _seal_qualifying(desk)
    url = f"/api/v1/seats/{desk.ids['scored_seat']}/manual-score"
    refused = await desk.client.post(url, json=BODY, headers=desk.auth("cashier"))
    assert refused.status_code == 403
    r = await desk.client.post(url, json=BODY | {"approved_by": "director"},
                               headers=desk.auth("director"))  # fmt: skip
    assert r.status_code == 422  # the requester cannot name the approver
    r = await desk.client.post(url, json=BODY, headers=desk.auth("director"))
    assert r.status_code == 202, r.text
    assert await _amendments(desk) == []  # the trial run was rolled back
    pending = r.json()["pending"]
    approve = f"/api/v1/pending/{pending}/approve"
    same = await desk.client.post(approve, headers=desk.auth("director"))
    assert same.status_code == 422
    ok = await desk.client.post(approve, headers=desk.auth("supervisor"))
    assert ok.status_code == 200, ok.text
    (amendment,) = await _amendments(desk)
    assert amendment["kind"] == "score.manual"
    assert (amendment["requested_by"], amendment["approved_by"]) == ("director", "supervisor")
    assert amendment["change"]["new_credits"] == 1500  # type: ignore[index]
