"""The team endpoints (house format H1-H12): the director's settings, a desk's
registration audited under its account, refusals that name the clause and change
nothing, and the team standings from the individual standings."""

from __future__ import annotations

from tests.gateway.web.api.conftest import Desk
from tests.gateway.web.api.team_samples import team_place_due

SPRING = "/api/v1/tournaments/Spring"


async def test_h1_to_h9_teams_over_the_api(desk: Desk) -> None:
    c, ids = desk.client, desk.ids
    thandi, pieter, lerato = (f"id:{ids[k]}" for k in ("p1", "p2", "p3"))
    aces = {"name": "Aces", "members": [pieter], "captain": pieter}
    r = await c.post(f"{SPRING}/teams", json=aces, headers=desk.auth("cashier"))
    assert (r.status_code, r.json()["error"]) == (
        422, "rule H1: teams: the director has not set this tournament up for teams",
    )  # fmt: skip
    bad = {"scoring": "best-n", "min_size": 1, "max_size": 3, "reason": "teams"}
    r = await c.put(f"{SPRING}/team-settings", json=bad, headers=desk.auth("director"))
    assert (r.status_code, r.json()["error"]) == (422, "rule H6: best-n: give n, at least 1")
    r = await c.put(f"{SPRING}/team-settings", json={**bad, "best_n": 1, "max_size": 9000},
                    headers=desk.auth("director"))  # fmt: skip
    assert r.status_code == 422
    assert r.json()["error"].startswith("max_size")  # the field named
    ok = {**bad, "best_n": 1}
    r = await c.put(f"{SPRING}/team-settings", json=ok, headers=desk.auth("director"))
    assert r.status_code == 200, r.text
    # Lerato holds no entry (H2), Thandi has played already (H9): refused, nothing kept.
    for members, clause in (([pieter, lerato], "H2"), ([pieter, thandi], "H9")):
        body = {"name": "Kings", "members": members, "captain": pieter}
        r = await c.post(f"{SPRING}/teams", json=body, headers=desk.auth("cashier"))
        assert (r.status_code, r.json()["error"].split(":")[0]) == (422, f"rule {clause}")
    assert (await c.get(f"{SPRING}/teams", headers=desk.auth("auditor"))).json()["teams"] == []
    r = await c.post(f"{SPRING}/teams", json=aces, headers=desk.auth("cashier"))
    assert r.status_code == 201, r.text
    assert (r.json()["registered_by"], r.json()["captain"]) == ("cashier", ids["p2"])
    audit = await c.get("/api/v1/audit", params={"limit": 3}, headers=desk.auth("auditor"))
    last = audit.json()[-1]
    assert (last["action"], last["actor"]) == ("team.register", "cashier")
    table = await c.get(f"{SPRING}/team-standings/qualifying", headers=desk.auth("technician"))
    assert table.status_code == 200, table.text
    [line] = table.json()["lines"]
    assert (line["name"], line["place"], line["total"]) == ("Aces", None, 0)  # not played yet
    assert line["members"] == [
        {"player_id": ids["p2"], "name": "Pieter Botha", "score": None, "counts": False}
    ]


async def test_h10_to_h12_team_cut_schedule_and_a_captain_paid_under_dual_control(
    desk: Desk,
) -> None:
    """H10: the cut is a team setting; H11: a bad schedule is refused naming the field and
    changes nothing; H12: a cashier asks, a supervisor approves and is the witness."""
    c = desk.client
    await team_place_due(desk)
    prizes = f"{SPRING}/team-prizes/qualifying"
    r = await c.put(prizes, json={"prizes": [{"place": 0, "cents": 5}]},
                    headers=desk.auth("director"))  # fmt: skip
    assert r.status_code == 422
    assert r.json()["error"].startswith("prizes.0.place")
    before = (await c.get(prizes, headers=desk.auth("auditor"))).json()["prizes"]
    assert [(x["place"], x["cents"], x["team_name"], x["paid_cents"]) for x in before] == [
        (1, 30000, "Lions", None)
    ]
    table = (await c.get(f"{SPRING}/team-standings/qualifying", headers=desk.auth("desk"))).json()
    assert (table["advance"], table["lines"][0]["goes_on"]) == (None, None)  # no cut set
    body = {"signer": "8001015009087", "signature": "slip 31"}
    r = await c.post(f"{prizes}/places/1/receipt", json=body, headers=desk.auth("cashier"))
    assert r.status_code == 202, r.text
    pending = r.json()["pending"]
    r = await c.post(f"/api/v1/pending/{pending}/approve", headers=desk.auth("supervisor"))
    assert r.json()["status"] == "approved", r.text
    [paid] = (await c.get(prizes, headers=desk.auth("auditor"))).json()["prizes"]
    assert (paid["paid_cents"], paid["paid_by"], paid["witness"]) == (
        30000,
        "cashier",
        "supervisor",
    )
