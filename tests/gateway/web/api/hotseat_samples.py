"""One valid request per hot-seat endpoint (house clauses HS1–HS7, docs/rules.md) and
the scene each needs first, for the generated permission tests (:mod:`.test_permissions`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import HeatStatus, SeatStatus, Stage
from gateway.tournament.services import hotseat as hs
from storage.tournament import Heat, Seat
from tests.gateway.web.api import director_scenes as scene
from tests.gateway.web.api.conftest import NOW, Desk
from tests.gateway.web.api.director_samples import PREPARE as DIRECTOR_PREPARE
from tests.gateway.web.api.director_samples import Scene

V1 = "/api/v1"
HEAT = f"{V1}/heats/{{key}}/hotseat"
WILD = f"{V1}/tournaments/{{ref}}/wildcards/{{stage}}"
SPRING_WILD = f"{V1}/tournaments/Spring/wildcards/qualifying"
PIETER = "7505055123080"


async def committed(d: Desk) -> None:
    """HS4: the scheduled heat's two draws committed, R500 each."""
    async with svc.unit_of_work(d.sessions) as s:
        await hs.commit_heat(
            s, d.ids["heat"], draws=2, prize_cents=50000, actor="director", now=NOW
        )


async def committed_and_closed(d: Desk) -> None:
    """HS5: as :func:`committed`, the heat then played and closed (its seats as stored)."""
    await committed(d)
    await committed_and_closed_only(d)


async def committed_and_closed_only(d: Desk) -> None:
    """The scheduled heat played and closed (its seats as stored)."""
    async with svc.unit_of_work(d.sessions) as s:
        heat = await s.get(Heat, d.ids["heat"])
        assert heat is not None
        heat.status, heat.started_at = HeatStatus.CLOSED, NOW
        heat.ended_at = NOW + timedelta(seconds=heat.duration_seconds)


async def won_draw(d: Desk) -> None:
    """HS7: Pieter alone in a committed heat that closed: he won its one R250 draw."""
    await scene.due_heat(d)
    async with svc.unit_of_work(d.sessions) as s:
        await hs.commit_heat(
            s, d.ids["due_heat"], draws=1, prize_cents=25000, actor="director",
            now=NOW - timedelta(minutes=5),
        )  # fmt: skip
        await svc.begin_heat(s, d.ids["due_heat"], present_seats=[1], at=NOW, actor="director")
        heat = await s.get(Heat, d.ids["due_heat"])
        seat = await s.get(Seat, d.ids["due_seat"])
        assert heat is not None
        assert seat is not None
        heat.status, seat.status = HeatStatus.CLOSED, SeatStatus.PLAYED
        (draw,) = await hs.take_heat_draws(s, heat.id, actor="director", now=NOW)
        d.ids["hs_draw"] = draw.id


async def wildcard_committed(d: Desk) -> None:
    async with svc.unit_of_work(d.sessions) as s:
        await hs.commit_wildcard(
            s, d.ids["tournament"], Stage.QUALIFYING, actor="director", now=NOW
        )


async def wildcard_due(d: Desk) -> None:
    """HS6: committed while the qualifying ran; the qualifying now over."""
    await wildcard_committed(d)
    await scene.qualifying_over(d)


SAMPLES: dict[tuple[str, str], Any] = {
    ("get", HEAT): lambda d: (f"{V1}/heats/{d.ids['heat']}/hotseat", None),
    ("post", HEAT): lambda d: (
        f"{V1}/heats/{d.ids['heat']}/hotseat",
        {"draws": 2, "prize_cents": 50000},
    ),
    ("post", f"{HEAT}/draw"): lambda d: (f"{V1}/heats/{d.ids['heat']}/hotseat/draw", None),
    ("get", WILD): lambda d: (SPRING_WILD, None),
    ("post", WILD): lambda d: (SPRING_WILD, None),
    ("post", f"{WILD}/draw"): lambda d: (f"{SPRING_WILD}/draw", None),
    ("post", f"{V1}/hotseat-draws/{{key}}/receipt"): lambda d: (
        f"{V1}/hotseat-draws/{d.ids['hs_draw']}/receipt",
        {"signer": PIETER, "signature": "slip 7"},
    ),
}
PREPARE: dict[tuple[str, str], Scene] = {
    ("get", HEAT): committed,
    ("post", f"{HEAT}/draw"): committed_and_closed,
    ("get", WILD): wildcard_committed,
    ("post", f"{WILD}/draw"): wildcard_due,
    ("post", f"{V1}/hotseat-draws/{{key}}/receipt"): won_draw,
}
assert not set(PREPARE) & set(DIRECTOR_PREPARE)
