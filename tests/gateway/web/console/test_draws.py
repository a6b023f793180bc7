"""Rule 19 at the console: two entries tied on top straddle the cut for the final
(direct_final_places = 1); the standings show the tie pending, the director keys the
cards drawn at the table, and the tie is broken by them (the higher card ranks first)."""

from __future__ import annotations

from datetime import timedelta

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.scoring import simple_score

from ..api.conftest import NOW
from .conftest import Desk, csrf_of, playing_pair, signed_in


async def _tie(desk: Desk) -> tuple[int, int]:
    async with svc.unit_of_work(desk.sessions) as s:
        _, pair = await playing_pair(s, desk)
        seats = [seat.id for seat in pair]
        entries = [seat.entry_id for seat in pair]
        for seat_id in seats:
            await svc.record_machine_score(
                s, seat_id, simple_score(1500), at=NOW + timedelta(minutes=1)
            )
    return entries[0], entries[1]


async def test_the_director_keys_the_cards_of_a_tie_at_the_cut(desk: Desk) -> None:
    first, second = await _tie(desk)
    async with signed_in(desk, "director") as client:
        page = await client.get("/console/standings")
        assert "Ties to draw (rule 19)" in page.text
        assert 'data-tie="1500"' in page.text
        form = {"csrf": csrf_of(page.text), "tournament": str(desk.ids["tournament"]),
                "stage": "qualifying", "credits": "1500",
                f"card:{first}": "2D", f"by:{first}": "player",
                f"card:{second}": "QH", f"by:{second}": "public",
                f"name:{second}": "Sipho (public)"}  # fmt: skip
        same = await client.post("/console/draws", data={**form, f"card:{first}": "QH"})
        assert "two entries cannot draw the same card" in same.headers["location"].replace("+", " ")
        r = await client.post("/console/draws", data=form)
        assert r.status_code == 303
        assert "cards recorded" in r.headers["location"].replace("+", " ")
        after = await client.get("/console/standings")
        assert "Ties to draw" not in after.text
    async with desk.sessions() as s:
        table = await svc.stage_standings(s, desk.ids["tournament"], Stage.QUALIFYING)
    assert [line.entry_id for line in table.lines[:2]] == [second, first]


async def test_a_cashier_cannot_draw_cards(desk: Desk) -> None:
    async with signed_in(desk, "cashier") as client:
        page = await client.get("/console/desk")
        r = await client.post("/console/draws", data={"csrf": csrf_of(page.text)})
        assert r.status_code == 403
