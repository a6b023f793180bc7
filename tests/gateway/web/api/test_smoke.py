"""The API end to end: a sale, a registration and the standings read."""

from __future__ import annotations

import gc

from gateway.web.api import create_app
from tests.gateway.web.api.conftest import Desk


async def test_sell_register_and_read(desk: Desk) -> None:
    r = await desk.client.post(
        "/api/v1/tournaments/Spring/entries",
        json={"player": "8001015009087"},
        headers=desk.auth("cashier"),
    )
    assert r.status_code == 201, r.text
    entry = r.json()["entries"][0]
    r = await desk.client.post(
        f"/api/v1/heats/{desk.ids['heat']}/seats",
        json={"player": f"id:{desk.ids['p1']}", "entry": entry},
        headers=desk.auth("desk"),
    )
    assert r.status_code == 201, r.text
    r = await desk.client.get("/api/v1/tournaments/Spring/standings", headers=desk.auth("dealer"))
    assert r.status_code == 200, r.text


async def test_the_app_freezes_the_start_up_heap(desk: Desk) -> None:
    """The objects that exist once the app does are frozen (the collector's full passes
    no longer walk them), once per process."""
    frozen = gc.get_freeze_count()
    assert frozen > 0
    create_app(desk.sessions)
    assert gc.get_freeze_count() == frozen  # not collected and frozen again
