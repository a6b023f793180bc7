"""A director's order reaches the floor only through the gateway holding the bank (issue
24, item 7): for a bank nobody holds, the API, the console and the CLI all refuse it in
one line and queue nothing (before, the API and the console queued it for whichever
gateway took the bank next)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from storage.journal import DirectorCommand
from storage.lease import Owner, acquire, release
from tests.gateway.web.api.conftest import NOW, Desk
from tests.gateway.web.console.conftest import csrf_of, signed_in


async def _queued(desk: Desk) -> int:
    async with desk.sessions() as s:
        return int(await s.scalar(select(func.count()).select_from(DirectorCommand)) or 0)


async def test_the_api_refuses_an_order_for_a_bank_nobody_holds(desk: Desk) -> None:
    r = await desk.client.post(
        "/api/v1/banks/A/orders", json={"order": "pause"}, headers=desk.auth("director")
    )
    assert r.status_code == 422, r.text
    assert r.json()["error"] == (
        "bank A: no gateway holds it (start `reelgate serve`); the pause was not queued"
    )
    assert await _queued(desk) == 0


async def test_a_released_or_expired_lease_holds_nothing(desk: Desk) -> None:
    lease = await acquire(desk.sessions, "A", Owner("serve", "g1", 7), now=NOW - timedelta(hours=2),
                          period=timedelta(minutes=1))  # fmt: skip
    r = await desk.client.post(
        "/api/v1/banks/A/orders", json={"order": "pause"}, headers=desk.auth("director")
    )
    assert r.status_code == 422, r.text  # expired two hours ago
    lease = await acquire(desk.sessions, "A", Owner("serve", "g1", 8), now=NOW,
                          period=timedelta(hours=1))  # fmt: skip
    r = await desk.client.post(
        "/api/v1/banks/A/orders", json={"order": "pause"}, headers=desk.auth("director")
    )
    assert r.status_code == 201, r.text
    assert await _queued(desk) == 1
    await release(desk.sessions, lease, now=NOW)
    r = await desk.client.post(
        "/api/v1/banks/A/orders", json={"order": "resume"}, headers=desk.auth("director")
    )
    assert r.status_code == 422, r.text
    assert await _queued(desk) == 1


async def test_the_console_refuses_it_on_the_heat_page(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        page = (await client.get("/console/heat/A")).text
        r = await client.post(
            "/console/heat/A/orders",
            data={"order": "pause", "reason": "", "heat": "", "csrf": csrf_of(page)},
        )
    assert r.status_code == 422, r.text
    assert "bank A: no gateway holds it" in r.text
    assert await _queued(desk) == 0


async def test_the_heat_page_says_so_before_the_director_orders(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        before = (await client.get("/console/heat/A")).text
        await acquire(desk.sessions, "A", Owner("serve", "g1", 9), now=NOW,
                      period=timedelta(hours=1))  # fmt: skip
        after = (await client.get("/console/heat/A")).text
    assert "No gateway holds bank A" in before
    assert "No gateway holds bank A" not in after
