"""A heat export with incidents (T20): a machine failure re-seats one player in a later
heat (the seat shows ``moved`` and where to), a failure by negligence disqualifies
another (the seat shows ``disqualified`` with the rule, reason and director); both
decisions are listed with the audit rows that recorded them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.records.document import ExportContext
from gateway.records.exporter import build_export
from gateway.tournament import services as svc
from storage.db import make_sessionmaker

from ..tournament.conftest import Desk, score
from .conftest import SAST, at

NOW = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


async def _export(desk: Desk, heat: int) -> dict[str, Any]:
    async def work(session: AsyncSession) -> dict[str, Any]:
        return await build_export(session, "heat", str(heat), ExportContext("Ridge", SAST, NOW))

    found: dict[str, Any] = await desk.run(work)
    return found


async def test_t20_moved_and_disqualified_seats_in_the_heat_export(engine: AsyncEngine) -> None:
    desk = Desk(make_sessionmaker(engine))
    await desk.floor("A", 6)
    await desk.tournament()
    heat = await desk.heat(at(18))
    later = await desk.heat(at(20))
    for id_number, name in (("8001015009087", "Ann"), ("8101015009086", "Ben"),
                            ("8201015009085", "Cat")):  # fmt: skip
        player = await desk.player(id_number, name)
        await desk.sell(player, at(10))
        await desk.register(heat, player, at(17))
    seats = {s.seat_number: s for s in await desk.run(svc.heat_seats, heat)}
    await desk.run(svc.begin_heat, heat, present_seats=[1, 2, 3], at=at(18), actor="director")
    during = at(18, 4)
    await desk.run(svc.mark_seat_malfunctioned, seats[2].seat_id, at=during,
                   actor="technician", reason="reel motor failed")  # fmt: skip
    await desk.run(svc.mark_seat_malfunctioned, seats[3].seat_id, at=during,
                   actor="director", reason="player forced the door", negligence=True)  # fmt: skip
    await desk.run(svc.record_machine_score, seats[1].seat_id, score(1500),
                   at=at(18, 10))  # fmt: skip
    await desk.run(svc.finish_heat, heat, at=at(18, 11), actor="gateway")

    body = (await _export(desk, heat))["body"]
    assert body["heat"]["result"] == "official"
    by_seat = {s["seat_number"]: s for s in body["seats"]}
    assert by_seat[1]["score"]["meters"] == {
        "games_played": 50, "games_won": 15, "credits_wagered": 500, "credits_won": 1500,
    }  # fmt: skip
    assert by_seat[1]["score"]["source"] == "machine"
    moved = by_seat[2]
    assert moved["status"] == "moved"
    assert moved["score"] is None
    assert moved["moved_to_seat_id"] is not None
    dq = by_seat[3]
    assert dq["status"] == "disqualified"
    assert [(d["rule"], d["decided_by"], d["whole_player"]) for d in dq["disqualifications"]] == [
        ("20", "director", True)
    ]
    assert "player forced the door" in dq["disqualifications"][0]["reason"]
    malfunctions = [d for d in body["decisions"] if d["action"] == "seat.malfunction"]
    assert [(d["actor"], d["reason"]) for d in malfunctions] == [
        ("technician", "reel motor failed"),
        ("director", "player forced the door"),
    ]
    # The re-seated entry is in the later heat's export, on its new seat.
    again = (await _export(desk, later))["body"]
    assert [s["seat_id"] for s in again["seats"]] == [moved["moved_to_seat_id"]]
    assert again["heat"]["result"] == "provisional"
    assert again["heat"]["scheduled_start"] == at(20).isoformat()
