"""T14a at the console (issue 24, problem 4): the top qualifier's other entry is marked
"not seated (rule 14)" and the semi-final cut moves past it, as seating reads it."""

from __future__ import annotations

from datetime import timedelta

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import HeatStatus, SeatStatus
from gateway.tournament.services.scoring import simple_score
from storage.tournament import Heat, Seat

from ..api.conftest import NOW
from .conftest import Desk, signed_in


async def _top_player_twice(desk: Desk) -> None:
    """p1 tops qualifying in the played heat and holds second place in the running one."""
    async with svc.unit_of_work(desk.sessions) as s:
        await svc.enter_manual_score(
            s, desk.ids["scored_seat"], simple_score(1800), reason="meter read by hand",
            actor="director", approved_by="supervisor", at=NOW,
        )  # fmt: skip
        heat_id, seats = desk.ids["heat"], []
        for key in ("p1", "p2"):
            sale = await svc.sell_entries(s, desk.ids["tournament"], desk.ids[key], cashier="c",
                                          now=NOW)  # fmt: skip
            seat = await svc.register_for_heat(
                s, heat_id, desk.ids[key], actor="desk", now=NOW, entry_id=sale.entry_ids[0]
            )
            seats.append(seat.id)
        heat = await s.get(Heat, heat_id)
        assert heat is not None
        heat.status = HeatStatus.RUNNING
        for seat_id in seats:
            row = await s.get(Seat, seat_id)
            assert row is not None
            row.status = SeatStatus.PRESENT
        await s.flush()
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
