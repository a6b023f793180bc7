"""One transaction per request: authentication runs inside the action's own transaction
(one BEGIN for a sale, a registration or a read), and on SQLite a read begins deferred
(no write lock)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.gateway.web.api.conftest import Desk


@contextmanager
def begins(engine: AsyncEngine) -> Iterator[list[bool]]:
    """Each transaction begun meanwhile: True when it was read-only."""
    seen: list[bool] = []

    def on_begin(connection: Any) -> None:
        seen.append(bool(connection.get_execution_options().get("reelgate_read_only")))

    event.listen(engine.sync_engine, "begin", on_begin)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "begin", on_begin)


async def test_one_transaction_per_request(desk: Desk, engine: AsyncEngine) -> None:
    with begins(engine) as seen:
        r = await desk.client.post(
            "/api/v1/tournaments/Spring/entries",
            json={"player": "8001015009087"},
            headers=desk.auth("cashier"),
        )
        assert r.status_code == 201, r.text
    assert seen == [False]
    with begins(engine) as seen:
        r = await desk.client.get(
            "/api/v1/tournaments/Spring/standings", headers=desk.auth("dealer")
        )
        assert r.status_code == 200, r.text
    assert seen == [True]
    with begins(engine) as seen:
        r = await desk.client.post(
            f"/api/v1/entries/{desk.ids['spare_entry']}/refund",
            json={"rule": 23, "reason": "goodwill"},
            headers=desk.auth("cashier"),
        )
        assert r.status_code == 202, r.text  # tried in a savepoint, then queued
    assert seen == [False]


async def _audit_count(desk: Desk) -> int:
    audit = await desk.client.get(
        "/api/v1/audit", params={"limit": 1000}, headers=desk.auth("auditor")
    )
    return len(audit.json())


async def test_a_refused_write_leaves_nothing(desk: Desk) -> None:
    before = await _audit_count(desk)
    r = await desk.client.post(
        "/api/v1/tournaments/Spring/entries",
        json={"player": "8001015009087", "package": "nosuch"},
        headers=desk.auth("cashier"),
    )
    assert r.status_code == 422, r.text
    assert await _audit_count(desk) == before
