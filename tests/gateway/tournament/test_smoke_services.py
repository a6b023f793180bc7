"""A first end-to-end pass through the services on each backend."""

from __future__ import annotations

from datetime import date

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage

from .conftest import Desk, at


async def test_qualifying_heat_rules_11_12_13(desk: Desk) -> None:
    """T11: seats in sequential order; T12: one score per entry; T13 top entry."""
    await desk.tournament()
    day = date(2026, 11, 2)
    heat = await desk.heat(at(day, 18))
    players = [await desk.player(f"80010150{i:02d}083", f"Player {i}") for i in range(3)]
    for p in players:
        await desk.sell(p, at(day, 12))
        await desk.register(heat, p, at(day, 13))
    seats = await desk.run(svc.heat_seats, heat)
    assert [(s.seat_number, s.holder_player_id) for s in seats] == list(
        zip([1, 2, 3], players, strict=True)
    )
    await desk.play(heat, {1: 1200, 2: 3400, 3: 800}, at(day, 18))
    table = await desk.run(svc.stage_standings, desk.tournament_id, Stage.QUALIFYING)
    assert [(line.place, line.player_id, line.credits) for line in table.lines] == [
        (1, players[1], 3400),
        (2, players[0], 1200),
        (3, players[2], 800),
    ]
