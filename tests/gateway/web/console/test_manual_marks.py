"""T23 at the console (issue 24): a score a director keyed in is marked on the standings
page and on the heat's seats; the standings page follows its tournament's changes."""

from __future__ import annotations

from datetime import timedelta

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import HeatStatus
from gateway.tournament.services.scoring import enter_manual_score, simple_score
from gateway.web import console
from gateway.web.console.live import _wanted
from gateway.web.fanout import FanoutFeed, Frame

from ..api.conftest import NOW
from .conftest import Desk, playing_pair, signed_in


async def _scores(desk: Desk) -> str:
    """Two seats of the desk's heat: one scored by its machine, one keyed in (T23)."""
    async with svc.unit_of_work(desk.sessions) as s:
        heat, pair = await playing_pair(s, desk)
        seats = [seat.id for seat in pair]
        at = NOW + timedelta(minutes=1)
        await svc.record_machine_score(s, seats[0], simple_score(1500), at=at)
        await enter_manual_score(
            s, seats[1], simple_score(1700), reason="link lost", actor="director:dana", at=at
        )
        heat.status = HeatStatus.CLOSED
        return heat.bank_name


async def test_a_manual_score_is_marked_on_the_standings_and_the_heat(desk: Desk) -> None:
    bank = await _scores(desk)
    async with signed_in(desk, "director") as client:
        page = await client.get("/console/standings")
        assert page.status_code == 200
        assert page.text.count("data-manual") == 1
        assert "data-reload-topics" not in page.text  # no feed in this process: nothing live
        seats = await client.get(f"/console/heat/{bank}/standings?heat={desk.ids['heat']}")
        assert seats.status_code == 200
        assert seats.text.count("data-manual") == 1
        assert "1700" in seats.text


async def test_with_a_feed_the_standings_page_follows_its_tournament(desk: Desk) -> None:
    app = desk.client._transport.app  # type: ignore[attr-defined]
    console.attach(app, feed=FanoutFeed())
    tid = desk.ids["tournament"]
    async with signed_in(desk, "director") as client:
        page = await client.get(f"/console/standings?t={tid}")
    assert f'data-reload-topics="tournament/{tid}/"' in page.text
    assert f"/console/live?prefix=tournament/{tid}/" in page.text
    # The console's stream now carries the tournament's topics when a page asks for them.
    frame = Frame(1, f"tournament/{tid}/leaderboard", True, "{}").event()
    assert _wanted(frame, (f"tournament/{tid}/",))


async def test_the_api_marks_a_manual_score_too(desk: Desk) -> None:
    """T23: the API's standings lines and seats carry the mark the console shows."""
    await _scores(desk)
    auth = desk.auth("director")
    r = await desk.client.get(f"/api/v1/tournaments/{desk.ids['tournament']}/standings",
                              headers=auth)  # fmt: skip
    assert r.status_code == 200, r.text
    assert [(x["credits"], x["manual"]) for x in r.json()["lines"]] == [(1700, True), (1500, False)]
    r = await desk.client.get(f"/api/v1/heats/{desk.ids['heat']}/seats", headers=auth)
    assert r.status_code == 200, r.text
    assert sorted((s["credits"], s["source"]) for s in r.json()) == [
        (1500, "machine"),
        (1700, "manual"),
    ]
