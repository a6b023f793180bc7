"""``PATCH /tournaments/{ref}/settings`` takes ``top_player_excluded`` (T14a) as
``reelgate tournament set`` does: asked by one director, run when a second approves."""

from __future__ import annotations

from gateway.tournament.services.common import find_tournament, load_settings
from tests.gateway.web.api.conftest import Desk


async def test_t14a_reading_is_changed_over_the_api(desk: Desk) -> None:
    """T14a: only the top entry left out (false) instead of the participant (true)."""
    r = await desk.client.patch(
        "/api/v1/tournaments/Spring/settings",
        json={"changes": {"top_player_excluded": False}, "reason": "the venue's reading"},
        headers=desk.auth("director"),
    )
    assert r.status_code == 202, r.text
    pending = r.json()["pending"]
    r = await desk.client.post(f"/api/v1/pending/{pending}/approve", headers=desk.auth("director2"))
    assert r.status_code == 200, r.text
    assert r.json()["result"]["settings"]["top_player_excluded"] is False
    async with desk.sessions() as s:
        settings = await load_settings(s, await find_tournament(s, "Spring"))
    assert settings.top_player_excluded is False


async def test_a_non_boolean_t14a_reading_is_refused(desk: Desk) -> None:
    """T14a: the API's model refuses anything but true or false (422)."""
    r = await desk.client.patch(
        "/api/v1/tournaments/Spring/settings",
        json={"changes": {"top_player_excluded": "sometimes"}, "reason": "x"},
        headers=desk.auth("director"),
    )
    assert r.status_code == 422
    assert "top_player_excluded" in r.text
