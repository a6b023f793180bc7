"""T14a at the console (issue 24, problem 4): the top qualifier's other entry is marked
"not seated (rule 14)" and the semi-final cut moves past it, as seating reads it."""

from __future__ import annotations

from datetime import timedelta

from gateway.tournament import services as svc
from gateway.tournament.services.scoring import simple_score

from ..api.conftest import NOW
from .conftest import Desk, playing_pair, signed_in


async def _top_player_twice(desk: Desk) -> None:
    """p1 tops qualifying in the played heat and holds second place in the running one."""
    async with svc.unit_of_work(desk.sessions) as s:
        await svc.enter_manual_score(
            s, desk.ids["scored_seat"], simple_score(1800), reason="meter read by hand",
            actor="director", approved_by="supervisor", at=NOW,
        )  # fmt: skip
        _, pair = await playing_pair(s, desk)
        seats = [seat.id for seat in pair]
        for seat_id, credits in zip(seats, (1500, 1200), strict=True):
            await svc.record_machine_score(
                s, seat_id, simple_score(credits), at=NOW + timedelta(minutes=1)
            )


async def test_t14a_the_console_marks_the_top_player_s_other_entry(desk: Desk) -> None:
    await _top_player_twice(desk)
    async with signed_in(desk, "director") as client:
        page = await client.get("/console/standings")
    assert page.status_code == 200
    assert page.text.count("not seated (rule 14)") == 1
    assert "Cuts after place 1, 51." in page.text  # 1 + 49, widened past p1's other entry
