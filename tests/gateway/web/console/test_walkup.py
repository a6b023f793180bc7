"""The Walk-up screen (issue 30 item 2, W1-W9): the windows, an offer waiting, a refusal
with its clause, an attendant's confirm (``heat.roll-call``) audited under their account;
every role with ``heat.read`` reads it, the confirm is refused to the others."""

from __future__ import annotations

from gateway.tournament.services import unit_of_work
from gateway.tournament.services.walkup import walkup_at_card_in
from tests.gateway.web.api.conftest import NOW
from tests.gateway.web.api.walkup_samples import pieter_offered

from .conftest import Desk, csrf_of, signed_in


async def test_w5_w9_walkup_screen_and_the_attendants_confirm(desk: Desk) -> None:
    await pieter_offered(desk)
    async with unit_of_work(desk.sessions) as s:  # Lerato holds no entry: W4
        refused = await walkup_at_card_in(
            s, machine="A02", card="CARD-P3", player_id=desk.ids["p3"], at=NOW
        )
    assert refused is not None
    assert refused.verdict.clause == "W4"
    async with signed_in(desk, "technician") as client:
        page = await client.get("/console/walkup")
        assert page.status_code == 200, page.text
        assert "/console/walkup/confirm" not in page.text  # not the floor's roll call
        r = await client.post("/console/walkup/confirm",
                              data={"session": "1", "csrf": csrf_of(page.text)})  # fmt: skip
        assert r.status_code == 403
    async with signed_in(desk, "supervisor") as client:
        home = await client.get("/console/")
        assert 'href="/console/walkup"' in home.text
        page = await client.get("/console/walkup")
        assert 'data-bank="A"' in page.text
        assert "offered, waiting for the confirm" in page.text
        assert "Pieter Botha" in page.text
        assert ">W4<" in page.text
        assert "no unused entry valid now" in page.text
        bad = await client.post("/console/walkup/confirm",
                                data={"session": "x", "csrf": csrf_of(page.text)})  # fmt: skip
        assert bad.status_code == 422
        assert "session: pick the offer to confirm" in bad.text
        session = str(desk.ids["walkup"])
        r = await client.post("/console/walkup/confirm",
                              data={"session": session, "csrf": csrf_of(page.text)})  # fmt: skip
        assert r.status_code == 303, r.text
        after = await client.get(r.headers["location"])
        assert f"walk-up session {session} started" in after.text
        assert "scheduled</span> heat" in after.text
        form = {"session": session, "csrf": csrf_of(after.text)}
        again = await client.post("/console/walkup/confirm", data=form)
        assert again.status_code == 422
        assert "is started" in again.text
    audit = await desk.client.get("/api/v1/audit", params={"limit": 10},
                                  headers=desk.auth("auditor"))  # fmt: skip
    [start] = [e for e in audit.json() if e["action"] == "walkup.start"]
    assert start["actor"] == "supervisor"
