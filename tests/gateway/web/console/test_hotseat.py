"""Hot-seat draws on the console's heat page (house clauses HS4, HS5, docs/rules.md): the
director commits the draws of a scheduled heat (only the hash is shown), a bad form is
refused in one line naming the field, and after the close the draws are taken and the
seed and winning seat shown; a technician sees the page but has no forms and is refused."""

from __future__ import annotations

from urllib.parse import unquote_plus

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import HeatStatus, SeatStatus
from storage.tournament import Heat, Seat

from ..api.conftest import NOW
from .conftest import Desk, csrf_of, signed_in


def _said(location: str) -> str:
    return unquote_plus(location.split("ok=", 1)[1])


async def test_hs4_hs5_the_director_commits_then_takes_the_draws(desk: Desk) -> None:
    heat_id = desk.ids["heat"]
    page_url = f"/console/heat/A?heat={heat_id}"
    async with signed_in(desk, "director") as client:
        page = await client.get(page_url)
        assert "Commit (HS4)" in page.text
        form = {"csrf": csrf_of(page.text), "draws": "0", "prize_cents": "5000"}
        bad = await client.post(f"/console/heats/{heat_id}/hotseat", data=form)
        assert _said(bad.headers["location"]) == "refused: draws: a whole number from 1 to 20"
        r = await client.post(f"/console/heats/{heat_id}/hotseat", data={**form, "draws": "2"})
        assert r.status_code == 303
        assert _said(r.headers["location"]).startswith("HS4: 2 draws committed, commitment ")
        page = await client.get(page_url)
        assert "commitment <code>" in page.text
        assert "Seed <code>" not in page.text  # HS5: not before the close
        early = await client.post(
            f"/console/heats/{heat_id}/hotseat/draw", data={"csrf": csrf_of(page.text)}
        )
        assert _said(early.headers["location"]).startswith("refused: HS5: heat ")

    async with svc.unit_of_work(desk.sessions) as s:  # the heat played and closed
        sale = await svc.sell_entries(
            s, desk.ids["tournament"], desk.ids["p1"], cashier="c", now=NOW
        )
        seat = await svc.register_for_heat(
            s, heat_id, desk.ids["p1"], actor="desk", now=NOW, entry_id=sale.entry_ids[0]
        )
        heat = await s.get(Heat, heat_id)
        row = await s.get(Seat, seat.id)
        assert heat is not None
        assert row is not None
        heat.status, heat.started_at, row.status = HeatStatus.CLOSED, NOW, SeatStatus.PLAYED

    async with signed_in(desk, "technician") as tech:
        page = await tech.get(page_url)
        assert "Take the draws" not in page.text
        refused = await tech.post(
            f"/console/heats/{heat_id}/hotseat/draw", data={"csrf": csrf_of(page.text)}
        )
        assert refused.status_code == 403
    async with signed_in(desk, "director") as client:
        page = await client.get(page_url)
        assert "Take the draws (HS5)" in page.text
        r = await client.post(
            f"/console/heats/{heat_id}/hotseat/draw", data={"csrf": csrf_of(page.text)}
        )
        assert (
            _said(r.headers["location"]) == "HS5: seed revealed; draw 1: seat 001, draw 2: seat 001"
        )
        page = await client.get(page_url)
        assert "Seed <code>" in page.text
        assert "Draw 1: seat 001" in page.text
