"""The heat formats over the API (house clauses F1–F3, F6): the format is a tournament
setting (``PATCH /tournaments/{ref}/settings``, dual control as every setting), a
sit-and-go heat is scheduled with ``sit_and_go_seats``; bad input is one line naming
the field and the clause, and changes nothing."""

from __future__ import annotations

from typing import Any

from gateway.tournament.services.common import find_tournament, load_settings
from storage.tournament import Heat, HeatStatus, SitAndGoHeat
from tests.gateway.web.api.conftest import Desk

SETTINGS = "/api/v1/tournaments/Spring/settings"


async def _ask(desk: Desk, changes: dict[str, Any]) -> Any:
    return await desk.client.patch(
        SETTINGS, json={"changes": changes, "reason": "F1: the house format"},
        headers=desk.auth("director"),
    )  # fmt: skip


async def test_f1_f2_the_format_is_set_over_the_api_under_dual_control(desk: Desk) -> None:
    # The fixture's qualifying stage is part played (a heat closed, one to run): F1.
    r = await _ask(desk, {"format": "games-limited", "games_per_seat": 25})
    assert r.status_code == 422, r.text
    assert "rule F1: the qualifying stage is part played" in r.json()["error"]
    async with desk.sessions.begin() as s:  # the heat still to run is cancelled (T10)
        heat = await s.get(Heat, desk.ids["heat"])
        assert heat is not None
        heat.status = HeatStatus.CANCELLED
    r = await _ask(desk, {"format": "games-limited", "games_per_seat": 25})
    assert r.status_code == 202, r.text
    pending = r.json()["pending"]
    r = await desk.client.post(f"/api/v1/pending/{pending}/approve", headers=desk.auth("director2"))
    assert r.status_code == 200, r.text
    assert r.json()["result"]["settings"]["format"] == "games-limited"
    assert r.json()["result"]["settings"]["games_per_seat"] == 25
    async with desk.sessions() as s:
        settings = await load_settings(s, await find_tournament(s, "Spring"))
    assert settings.heat_format.games == 25


async def test_f1_f3_a_bad_format_is_refused_in_one_line(desk: Desk) -> None:
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"format": "sprint"}, "rule F1: format must be one of"),
        ({"format": "credit-limited", "minimum_bet": 0}, "rule F3: minimum_bet must be 1 to"),
    ]
    for changes, words in refusals:
        r = await _ask(desk, changes)
        assert r.status_code == 422, r.text
        assert words in r.json()["error"], r.json()["error"]
    async with desk.sessions() as s:
        settings = await load_settings(s, await find_tournament(s, "Spring"))
    assert settings.heat_format.timed


async def test_f6_a_sit_and_go_heat_is_scheduled_over_the_api(desk: Desk) -> None:
    heats = "/api/v1/tournaments/Spring/heats"
    new = {"starts_at": "2026-11-22T18:00:00+02:00", "bank": "A", "duration_seconds": 600,
           "starting_credits": 1000}  # fmt: skip
    r = await desk.client.post(
        heats, json={**new, "sit_and_go_seats": 99}, headers=desk.auth("director")
    )
    assert r.status_code == 422, r.text
    assert "rule F6: sit_and_go_seats must be 1 to" in r.json()["error"]
    r = await desk.client.post(
        heats, json={**new, "sit_and_go_seats": 2}, headers=desk.auth("director")
    )
    assert r.status_code == 201, r.text
    async with desk.sessions() as s:
        row = await s.get(SitAndGoHeat, r.json()["heat_id"])
    assert row is not None
    assert row.seats == 2
