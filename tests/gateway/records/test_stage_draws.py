"""Stage exports with draws: a tie for 1st in the qualifying broken by digital cards
(T19, seed and algorithm kept) and the semi-final seats drawn from a recorded seed
(T14), which the export shows and says still recomputes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.records.document import ExportContext
from gateway.records.exporter import build_export
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from storage.db import make_sessionmaker

from ..tournament.conftest import Desk
from .conftest import SAST, at

NOW = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


async def _export(desk: Desk, ident: str) -> dict[str, Any]:
    async def work(session: AsyncSession) -> dict[str, Any]:
        return await build_export(session, "stage", ident, ExportContext("Ridge", SAST, NOW))

    found: dict[str, Any] = await desk.run(work)
    return found


async def test_t19_card_draw_and_t14_seat_draw_in_stage_exports(engine: AsyncEngine) -> None:
    desk = Desk(make_sessionmaker(engine))
    await desk.floor("A", 6)
    tid = await desk.tournament()
    heat = await desk.heat(at(18))
    semi = await desk.heat(at(21), stage=Stage.SEMI_FINAL)
    for id_number, name in (("8001015009087", "Ann"), ("8101015009086", "Ben"),
                            ("8201015009085", "Cat")):  # fmt: skip
        player = await desk.player(id_number, name)
        await desk.sell(player, at(10))
        await desk.register(heat, player, at(17))
    await desk.play(heat, {1: 1500, 2: 1500, 3: 900}, at(18))

    tied = (await _export(desk, f"{tid}:qualifying"))["body"]
    assert [t["credits"] for t in tied["ties_to_draw"]] == [1500]
    assert tied["outcome"]["complete"] is False
    await desk.run(svc.digital_draw, tid, Stage.QUALIFYING, 1500, actor="director",
                   at=at(19), seed=bytes(32))  # fmt: skip
    await desk.run(svc.seat_stage, tid, Stage.SEMI_FINAL, actor="director", at=at(19, 30),
                   seed=bytes(range(32)))  # fmt: skip

    drawn = (await _export(desk, f"{tid}:qualifying"))["body"]
    assert drawn["ties_to_draw"] == []
    assert drawn["outcome"]["complete"] is True
    cards = drawn["card_draws"]
    assert {c["method"] for c in cards} == {"digital"}
    assert {c["seed"] for c in cards} == {bytes(32).hex()}
    assert {c["tie_credits"] for c in cards} == {1500}
    winner = drawn["outcome"]["direct_finalists"]
    assert [x["goes_on_to"] for x in drawn["standings"] if x["entry_id"] in winner] == [
        "final (T13)"
    ]
    assert [x["place"] for x in drawn["standings"]] == [1, 2, 3]

    semis = (await _export(desk, f"{tid}:semi-final"))["body"]
    (draw,) = semis["seat_draws"]
    assert draw["action"] == "seat.draw"
    assert draw["details"]["seed"] == bytes(range(32)).hex()
    assert draw["details"]["algorithm"] == "hmac-sha256-fisher-yates/v1"
    assert len(draw["details"]["seats"]) == 2  # the two semi-finalists (T14)
    assert semis["seat_draws_recompute"] is True
    assert [h["id"] for h in semis["heats"]] == [semi]
    assert semis["result"] == "provisional"
