"""Hot-seat draws taken live by the running gateway (house clause HS3) on emulated
machines: a heat with two committed draws starts by the schedule, each draw is taken as
its moment falls while the heat plays (under the gateway's account, the seed still
secret) and announced on the boards' feed; the close reveals the seed and draws
nothing again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import select

from gateway.app.context import GatewayContext
from gateway.floor.store import set_bank_enabled
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, register_for_heat, sell_entries, unit_of_work
from gateway.tournament.services import hotseat as hs
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from storage.hotseat import HotseatCommitment, HotseatDraw
from storage.journal import RunState
from storage.tournament import Heat

from .conftest import ConsoleGateway, Prepare, until

SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)
HEAT: dict[str, int] = {}


async def _heat_with_draws(ctx: GatewayContext) -> None:
    """A 12-second heat on bank A in a few seconds, three players, two draws committed."""
    await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="technician")
    now = datetime.now(UTC)
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(s, "Hot Seat Night", SETTINGS, actor="director")
        heat = await schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=6),
            bank_name="A", duration_seconds=12, starting_credits=500, actor="director",
            now=now, number=1,
        )  # fmt: skip
        for i in range(3):
            p = await add_player(
                s, id_number=f"86030{i}5800087", name=f"Player {i}",
                date_of_birth=date(1986, 3, 1 + i), actor="desk", now=now,
            )  # fmt: skip
            await sell_entries(s, t.id, p.id, cashier="cashier", now=now)
        await hs.commit_heat(s, heat.id, draws=2, prize_cents=10_000, actor="director", now=now)
        HEAT["id"] = heat.id
    for i in range(3):
        async with unit_of_work(ctx.sessions) as s:
            await register_for_heat(s, HEAT["id"], f"86030{i}5800087", actor="desk", now=now)


async def test_hs3_each_draw_is_taken_while_the_heat_plays(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]],
) -> None:
    gw = await start_gateway(_heat_with_draws)
    gw.bank.start_players(seed=11, pace=0.8)
    heat_id = HEAT["id"]
    topic = f"heat/{heat_id}/hotseat"

    def announced() -> list[Any]:
        assert gw.feed is not None
        shown = gw.feed.retained().get(topic) or {}
        winners: list[Any] = shown.get("winners") or []
        return winners

    await until(lambda: len(announced()) == 2, 40, "both draws announced")
    assert gw.feed is not None
    assert gw.feed.retained()[topic]["seed"] is None  # HS5: not before the close
    await until(lambda: bool(gw.scheduler.finished), 40, "heat closed")
    assert gw.scheduler.finished[0].state is RunState.CLOSED

    ctx = await gw.ctx()
    try:
        async with ctx.sessions() as s:
            heat = await s.get(Heat, heat_id)
            assert heat is not None
            assert heat.started_at is not None
            end = heat.started_at + timedelta(seconds=heat.duration_seconds)
            draws = list((await s.execute(select(HotseatDraw))).scalars())
        assert len(draws) == 2
        for d in draws:  # taken by the running gateway, in play, just after its moment
            assert d.taken_by == "gateway"
            assert d.moment is not None
            assert d.moment <= d.taken_at < end
            assert (d.taken_at - d.moment).total_seconds() < 3
        async with unit_of_work(ctx.sessions) as s:
            revealed = await hs.take_heat_draws(s, heat_id, actor="director", now=datetime.now(UTC))
        assert sorted(d.id for d in revealed) == sorted(d.id for d in draws)  # none again
        async with ctx.sessions() as s:
            row = (await s.execute(select(HotseatCommitment))).scalar_one()
            assert row.seed_hex is not None
    finally:
        await ctx.close()
