"""Cards at the machines on the console (issue 30 item 1): each machine's last card,
the player and the gateway's decision at card-in (T1-T3, and a disqualification in
force, T23), read from the audit chain; the Players permission, 403 for every other
role."""

from __future__ import annotations

import pytest

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from gateway.tournament.services.cards import ACCEPTED, REFUSED, card_at_machine
from storage.tournament import Player
from tests.gateway.web.api.conftest import NOW

from .conftest import Desk, signed_in


async def _cards(desk: Desk) -> None:
    async with desk.sessions() as s, s.begin():
        for key, card in (("p1", "6009000000000001"), ("p3", "6009000000000003")):
            player = await s.get(Player, desk.ids[key])
            assert player is not None
            player.card_number = card
        await s.flush()
        ok = await card_at_machine(
            s,
            machine="A-01",
            card="6009000000000001",
            action="card-in",
            at=NOW,
            venue_zone="Africa/Johannesburg",
        )
        dq = await card_at_machine(
            s,
            machine="A-02",
            card="6009000000000003",
            action="card-in",
            at=NOW,
            venue_zone="Africa/Johannesburg",
        )
        await card_at_machine(s, machine="A-03", card="424242", action="card-in", at=NOW,
                              venue_zone="Africa/Johannesburg")  # fmt: skip
    assert ok.outcome == ACCEPTED
    assert (dq.outcome, dq.rule) == (REFUSED, "23")


async def test_the_cards_at_the_machines(desk: Desk) -> None:
    await _cards(desk)
    async with signed_in(desk, "desk") as client:
        home = await client.get("/console/")
        assert 'href="/console/cards"' in home.text
        r = await client.get("/console/cards")
    assert r.status_code == 200, r.text
    assert 'data-machine="A-01"' in r.text
    assert "Thandi Mokoena" in r.text
    assert "playing" in r.text
    assert "refused · rule T23" in r.text
    assert "abusive" in r.text
    assert "not registered" in r.text
    assert "6009000000000001" not in r.text  # card numbers masked, as on every screen


@pytest.mark.parametrize("role", list(Role))
async def test_the_page_needs_the_players_permission(desk: Desk, role: Role) -> None:
    await _cards(desk)
    async with signed_in(desk, role.value) as client:
        r = await client.get("/console/cards")
        home = await client.get("/console/")
    assert r.status_code == (200 if allowed(role, P.PLAYER_READ) else 403)
    assert ('href="/console/cards"' in home.text) == allowed(role, P.PLAYER_READ)
    if r.status_code == 403:
        assert "Thandi Mokoena" not in r.text


async def test_the_api_lists_the_same_cards(desk: Desk) -> None:
    """The page's service over the API: ``GET /api/v1/cards`` (the Players permission)."""
    await _cards(desk)
    r = await desk.client.get("/api/v1/cards", headers=desk.auth("supervisor"))
    assert r.status_code == 200, r.text
    rows = {row["machine"]: row for row in r.json()}
    assert rows["A-01"]["in_machine"] is True
    assert rows["A-01"]["player_name"] == "Thandi Mokoena"
    assert (rows["A-02"]["outcome"], rows["A-02"]["rule"]) == ("refused", "23")
    assert rows["A-03"]["outcome"] == "not-registered"
    r = await desk.client.get("/api/v1/cards", headers=desk.auth("technician"))
    assert r.status_code == 403
