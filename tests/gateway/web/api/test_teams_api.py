"""The team endpoints (house format H1-H9): the director's settings, a desk's
registration audited under its account, refusals that name the clause and change
nothing, and the team standings from the individual standings."""

from __future__ import annotations

from tests.gateway.web.api.conftest import Desk

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
