"""The API keeps its own clock: a write body cannot carry a time of its own (422 naming
the field), so nothing is back- or post-dated through it; a training database marks every
response ``X-Reelgate-Training: 1``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.web.api.training import HEADER
from storage.database_mark import DatabaseKind, mark
from storage.db import make_sessionmaker
from tests.gateway.web.api.conftest import Desk


@pytest.mark.parametrize("field", ["now", "at", "purchased_at"])
async def test_a_write_cannot_carry_its_own_time(desk: Desk, field: str) -> None:
    r = await desk.client.post(
        "/api/v1/tournaments/Spring/entries",
        json={"player": "8001015009087", field: "2026-11-02T10:00:00+02:00"},
        headers=desk.auth("cashier"),
    )
    assert r.status_code == 422
    assert r.json()["error"].startswith(f"{field}: Extra inputs are not permitted")


async def test_a_production_database_has_no_training_header(desk: Desk) -> None:
    r = await desk.client.get("/api/v1/tournaments/Spring/standings", headers=desk.auth("dealer"))
    assert r.status_code == 200
    assert HEADER not in r.headers


async def test_every_response_of_a_training_database_says_so(
    desk: Desk, engine: AsyncEngine
) -> None:
    async with make_sessionmaker(engine)() as session, session.begin():
        await mark(session, DatabaseKind.TRAINING, at=datetime.now(UTC), by="tests")
    r = await desk.client.get("/api/v1/tournaments/Spring/standings", headers=desk.auth("dealer"))
    assert r.status_code == 200
    assert r.headers[HEADER] == "1"
    r = await desk.client.get("/api/v1/tournaments/Spring/standings")  # refused, still marked
    assert r.status_code == 401
    assert r.headers[HEADER] == "1"
