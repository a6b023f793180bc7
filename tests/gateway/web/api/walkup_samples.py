"""One valid request per walk-up endpoint (house format W1-W9) and the scene each needs,
for the generated permission tests (:mod:`.test_permissions`).  On the seeded desk Pieter
(p2) holds an unplayed entry and bank A is idle at the desk's clock (10:00)."""

from __future__ import annotations

from typing import Any

from gateway.tournament import services as svc
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.walkup import list_sessions, set_window, walkup_at_card_in
from tests.gateway.web.api.conftest import NOW, Desk

MORNING = {
    "opens": "09:00", "closes": "12:00", "seconds": 300, "credits": 500,
    "confirm_seconds": 60, "reason": "morning walk-up",
}  # fmt: skip


async def window_open(d: Desk) -> None:
    """W1: Spring runs walk-up on bank A from 09:00 to 12:00."""
    async with svc.unit_of_work(d.sessions) as s:
        t = await find_tournament(s, "Spring")
        await set_window(
            s, t.id, "A", opens="09:00", closes="12:00", seconds=300, credits=500,
            confirm_seconds=60, enabled=True, actor="director", reason="walk-up", at=NOW,
        )  # fmt: skip


async def pieter_offered(d: Desk) -> None:
    """W5: Pieter's card in A03 at 10:00: an offer waiting for its confirm."""
    await window_open(d)
    async with svc.unit_of_work(d.sessions) as s:
        decision = await walkup_at_card_in(
            s, machine="A03", card="CARD-P2", player_id=d.ids["p2"], at=NOW
        )
        assert decision is not None
        assert decision.verdict.kind == "offer", decision.line
    async with d.sessions() as s:
        (offer,) = await list_sessions(s)
        d.ids["walkup"] = offer.id


SAMPLES: dict[tuple[str, str], Any] = {
    ("put", "/api/v1/tournaments/{ref}/walkup/{bank}"): lambda d: (
        "/api/v1/tournaments/Spring/walkup/A",
        MORNING,
    ),
    ("get", "/api/v1/walkup/windows"): lambda d: ("/api/v1/walkup/windows", None),
    ("get", "/api/v1/walkup/sessions"): lambda d: ("/api/v1/walkup/sessions", None),
    ("post", "/api/v1/walkup/sessions/{session}/confirm"): lambda d: (
        f"/api/v1/walkup/sessions/{d.ids['walkup']}/confirm",
        {},
    ),
}
PREPARE = {
    ("post", "/api/v1/walkup/sessions/{session}/confirm"): pieter_offered,
}
