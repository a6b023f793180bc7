"""Hot-seat draws and wild cards over the API (house clauses HS1–HS7, docs/rules.md):
the commitment shown before the heat and the seed after it, bad input refused naming the
field and changing nothing, refusals in the clause's words, the prize paid under dual
control with the approving account as witness, every write audited under its account."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select

from gateway.tournament.rules.hotseat import commitment
from storage.audit import AuditEntry
from storage.hotseat import HotseatCommitment, HotseatDraw
from tests.gateway.web.api import director_scenes as scene
from tests.gateway.web.api import hotseat_samples as sample
from tests.gateway.web.api.conftest import Desk

V1 = "/api/v1"


async def _call(desk: Desk, method: str, url: str, body: Any = None, who: str = "director") -> Any:
    return await desk.client.request(method.upper(), url, json=body, headers=desk.auth(who))


async def _count(desk: Desk) -> tuple[int, int, int]:
    async with desk.sessions() as s:
        return (
            int(await s.scalar(select(func.count()).select_from(HotseatCommitment)) or 0),
            int(await s.scalar(select(func.count()).select_from(HotseatDraw)) or 0),
            int(await s.scalar(select(func.count()).select_from(AuditEntry)) or 0),
        )


async def test_hs2_hs4_bad_input_names_the_field_and_changes_nothing(desk: Desk) -> None:
    url = f"{V1}/heats/{desk.ids['heat']}/hotseat"
    before = await _count(desk)
    for body, field in (
        ({"draws": 0, "prize_cents": 100}, "draws"),
        ({"draws": 21, "prize_cents": 100}, "draws"),
        ({"draws": 1, "prize_cents": -1}, "prize_cents"),
        ({"draws": 1}, "prize_cents"),
        ({"draws": 1, "prize_cents": 1, "seed": "00"}, "seed"),  # the seed is never chosen
    ):
        r = await _call(desk, "post", url, body)
        assert r.status_code == 422, r.text
        assert r.json()["error"].startswith(f"{field}: "), r.json()
    done = f"{V1}/heats/{desk.ids['done_heat']}/hotseat"
    r = await _call(desk, "post", done, {"draws": 1, "prize_cents": 100})
    assert r.status_code == 422
    assert r.json()["error"].startswith("HS4: heat ")
    assert "commit before it starts" in r.json()["error"]
    r = await _call(desk, "post", f"{done}/draw")
    assert (r.status_code, r.json()["error"]) == (
        422,
        f"HS4: heat:{desk.ids['done_heat']} has no commitment: no draw without one",
    )
    r = await _call(desk, "get", done)
    assert r.status_code == 404
    assert await _count(desk) == before


async def test_hs4_hs5_commitment_before_seed_after(desk: Desk) -> None:
    url = f"{V1}/heats/{desk.ids['heat']}/hotseat"
    r = await _call(desk, "post", url, {"draws": 2, "prize_cents": 50000})
    assert r.status_code == 201, r.text
    shown = r.json()
    assert (shown["draws"], shown["prize_cents"], shown["seed"]) == (2, 50000, None)
    r = await _call(desk, "get", url, who="dealer")  # every role reads the boards' facts
    assert r.json() == shown
    audit = (await _call(desk, "get", f"{V1}/audit", who="auditor")).json()
    (commit,) = [a for a in audit if a["action"] == "hotseat.commit"]
    assert commit["actor"] == "director"
    r = await _call(desk, "post", f"{url}/draw")
    assert r.status_code == 422
    assert r.json()["error"].startswith("HS5: ")
    await sample.committed_and_closed_only(desk)
    r = await _call(desk, "post", f"{url}/draw")
    assert r.status_code == 200, r.text
    drawn = r.json()
    seed = bytes.fromhex(drawn["seed"])
    assert commitment(seed, f"heat:{desk.ids['heat']}") == shown["commitment"]
    assert [d["index"] for d in drawn["draws"]] == [0, 1]
    after = (await _call(desk, "get", url, who="dealer")).json()
    assert after["seed"] == drawn["seed"]
    assert [w["winner"] for w in after["winners"]] == [d["winner"] for d in drawn["draws"]]


async def test_hs7_prize_paid_under_dual_control_witnessed_by_the_approver(desk: Desk) -> None:
    await sample.won_draw(desk)
    url = f"{V1}/hotseat-draws/{desk.ids['hs_draw']}/receipt"
    r = await _call(
        desk, "post", url, {"signer": "8001015009087", "signature": "slip 7"}, "cashier"
    )
    assert r.status_code == 422
    assert "prizes are not transferable" in r.json()["error"]
    r = await _call(desk, "post", url, {"signer": sample.PIETER, "signature": "slip 7"}, "cashier")
    assert r.status_code == 202, r.text
    approve = f"{V1}/pending/{r.json()['pending']}/approve"
    own = await desk.client.post(approve, headers=desk.auth("cashier"))
    assert own.status_code == 422
    assert "second person" in own.json()["error"]
    r = await desk.client.post(approve, headers=desk.auth("supervisor"))
    assert r.status_code == 200, r.text
    assert r.json()["result"]["amount_cents"] == 25000
    async with desk.sessions() as s:
        draw = await s.get(HotseatDraw, desk.ids["hs_draw"])
        assert draw is not None
        assert (draw.paid_by, draw.witness, draw.signer) == ("cashier", "supervisor", sample.PIETER)
        paid = (
            await s.execute(select(AuditEntry).where(AuditEntry.action == "hotseat.paid"))
        ).scalar_one()
    assert paid.actor == "cashier"
    assert json.loads(paid.details)["witness"] == "supervisor"


async def test_hs6_wild_card_committed_then_drawn(desk: Desk) -> None:
    url = f"{V1}/tournaments/Spring/wildcards/qualifying"
    r = await _call(desk, "post", f"{V1}/tournaments/Spring/wildcards/final")
    assert r.status_code == 422
    assert r.json()["error"] == "HS6: stage: the final has no next stage to go through to"
    r = await _call(desk, "post", url)
    assert r.status_code == 201, r.text
    await scene.qualifying_over(desk)
    r = await _call(desk, "post", f"{url}/draw")
    assert r.status_code == 200, r.text
    (draw,) = r.json()["draws"]
    # Thandi, the only entry scored, goes straight to the final: nobody is left to draw,
    # so the wild card is void (HS3) and the seed is revealed all the same (HS5).
    assert (draw["moment"], draw["candidates"], draw["winner"]) == (None, [], None)
    shown = (await _call(desk, "get", url, who="dealer")).json()
    assert shown["seed"] == r.json()["seed"]


async def test_p2_p4_p6_hs7_prize_to_the_machine_under_dual_control(desk: Desk) -> None:
    """P2: the same receipt with ``machine``: refused while the venue does not allow it
    (P1), journaled on the witness's approval (P4), the draw unpaid until the machine
    took it, and no cash payout meanwhile; once done it is paid, tender machine (AFT)."""
    from gateway.tournament.rules.machine_prizes import Verdict
    from gateway.tournament.services import machine_prizes as mp
    from gateway.tournament.services.common import unit_of_work
    from storage.machine_prizes import MachinePrizeTransfer
    from tests.gateway.web.api.conftest import NOW

    await sample.won_draw(desk)
    url = f"{V1}/hotseat-draws/{desk.ids['hs_draw']}/receipt"
    body = {"signer": sample.PIETER, "signature": "slip 7", "machine": "A02"}
    r = await _call(desk, "post", url, {**body, "machine": "no such!"}, "cashier")
    assert r.status_code == 422
    assert "machine" in r.text
    refused = await _call(desk, "post", url, body, "cashier")
    assert refused.status_code == 422
    assert refused.json()["error"].startswith("rule P1: prizes to the machine are not allowed")
    async with unit_of_work(desk.sessions) as s:
        await mp.set_setting(s, allowed=True, reason="board letter", actor="director", now=NOW)
    r = await _call(desk, "post", url, body, "cashier")
    assert r.status_code == 202, r.text
    r = await desk.client.post(
        f"{V1}/pending/{r.json()['pending']}/approve", headers=desk.auth("supervisor")
    )
    assert r.status_code == 200, r.text
    transfer = r.json()["result"]["transfer"]
    assert (transfer["status"], transfer["machine"], transfer["amount_cents"]) == (
        "journaled",
        "A02",
        25000,
    )
    cash = await _call(
        desk, "post", url, {"signer": sample.PIETER, "signature": "slip 7"}, "cashier"
    )
    assert cash.status_code == 422
    assert cash.json()["error"].startswith("rule P4: hotseat-draw:")
    async with unit_of_work(desk.sessions) as s:
        row = (await s.execute(select(MachinePrizeTransfer))).scalar_one()
        assert (row.witness, row.requested_by) == ("supervisor", "cashier")
        await mp.settle(
            s, row.id, Verdict.PAID, detail="done", egm_status=0, actor="gateway", now=NOW
        )
    async with desk.sessions() as s:
        draw = await s.get(HotseatDraw, desk.ids["hs_draw"])
        assert draw is not None
        assert (draw.paid_by, draw.witness) == ("cashier", "supervisor")
        done = (await s.execute(select(MachinePrizeTransfer))).scalar_one()
        assert (done.status, done.payout_id) == ("done", draw.id)
        paid = (
            await s.execute(select(AuditEntry).where(AuditEntry.action == "hotseat.paid"))
        ).scalar_one()
    assert json.loads(paid.details)["tender"] == "machine (AFT)"
