"""One qualifier rule (issue 24, problem 4): the signs' qualifying cut line, the
console's and ``tournament standings``' cuts and the semi-final seating all read
``qualify_from_qualifying`` (T13 top entry to the final, T14a ``top_player_excluded``),
so no board shows a player above the cut who will not be seated."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.signage import leaderboard
from gateway.tournament.settings import TournamentSettings

from .conftest import Desk, at

DAY = date(2026, 11, 20)
Q = Stage.QUALIFYING


async def _night(desk: Desk, excluded: bool) -> dict[str, int]:
    """Anna tops qualifying and holds third place with a second entry (another heat, T16)."""
    await desk.tournament(TournamentSettings(semi_final_qualifiers=2, top_player_excluded=excluded))
    names = ["Anna", "Bongi", "Cara", "Dan", "Eve"]
    ids = {n: await desk.player(f"80010150090{i}7", n) for i, n in enumerate(names)}
    first, second = await desk.heat(at(DAY, 18)), await desk.heat(at(DAY, 19))
    await desk.heat(at(DAY + timedelta(days=7), 18), stage=Stage.SEMI_FINAL)
    sale = at(DAY, 9)
    entries: dict[str, int] = {}
    anna_1, anna_2 = await desk.sell(ids["Anna"], sale, quantity=2)
    for name, heat, entry in (
        ("Anna", first, anna_1), ("Bongi", first, None), ("Cara", first, None),
        ("Anna 2", second, anna_2), ("Dan", second, None), ("Eve", second, None),
    ):  # fmt: skip
        player = ids[name.split()[0]]
        if entry is None:
            (entry,) = await desk.sell(player, sale)
        await desk.register(heat, player, sale, entry=entry)
        entries[name] = entry
    await desk.play(first, {1: 1500, 2: 1300, 3: 1000}, at(DAY, 18))
    await desk.play(second, {1: 1200, 2: 1100, 3: 900}, at(DAY, 19))
    return entries


@pytest.mark.parametrize("excluded", [True, False], ids=["participant", "entry"])
async def test_t14a_board_cut_line_and_seated_list_agree(desk: Desk, excluded: bool) -> None:
    entries = await _night(desk, excluded)
    board = await desk.run(leaderboard, desk.tournament_id, Q, now=at(DAY, 21))
    direct_cut, semi_cut = (c["after"] for c in board["cuts"])
    above = [
        r["entry"]
        for r in board["rows"]
        if direct_cut < r["place"] <= semi_cut and r["goes_on"] != "excluded"
    ]
    drawn = await desk.run(
        svc.seat_stage, desk.tournament_id, Stage.SEMI_FINAL, actor="director", at=at(DAY, 21)
    )
    assert sorted(above) == sorted(drawn.seats)
    q = await desk.run(svc.qualifiers, desk.tournament_id)
    assert sorted(q.qualifying.semi_finalists) == sorted(drawn.seats)
    table = await desk.run(svc.stage_standings, desk.tournament_id, Q)
    assert table.cuts == (direct_cut, semi_cut)  # the console and the CLI draw these
    by_entry = {r["entry"]: r["goes_on"] for r in board["rows"]}
    assert by_entry[entries["Anna"]] == "final"
    if excluded:  # T14a, the participant: Anna's other entry out, the cut widens to place 4
        assert semi_cut == 4
        assert by_entry[entries["Anna 2"]] == "excluded"
        assert sorted(drawn.seats) == sorted([entries["Bongi"], entries["Dan"]])
    else:  # only the top entry is left out
        assert semi_cut == 3
        assert by_entry[entries["Anna 2"]] == "semi-final"
        assert sorted(drawn.seats) == sorted([entries["Bongi"], entries["Anna 2"]])
    assert table.goes_on(entries["Cara"]) is None
