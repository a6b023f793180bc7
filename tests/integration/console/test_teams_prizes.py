"""The Teams screen in Chromium (house clauses H10–H12): the director reads who goes on
through the team cut, sees the cut kept in the settings form, advertises the stage's
team prizes, and asks for a team place to be paid to its captain, which waits for a
second account as the witness (dual control).  The page throws nothing (the ``page``
fixture checks)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from playwright.async_api import Page, expect

from gateway.app.context import GatewayContext
from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services import unit_of_work
from gateway.tournament.services.setup import create_tournament
from gateway.tournament.services.teams import register_team, set_team_scoring
from gateway.tournament.settings import TournamentSettings

from .conftest import ConsoleGateway, Prepare, open_screen, sign_in

SOLD_AT = datetime(2026, 11, 20, 17, 0, tzinfo=ZoneInfo("Africa/Johannesburg"))
START = SOLD_AT + timedelta(hours=1)
ANN, BEN = "8001015009087", "8101015009086"


async def _teams_night(ctx: GatewayContext) -> None:
    """Aces (Ann, 1500) and Kings (Ben, 900) in a played qualifying; the top team goes on."""
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(s, "Spring Classic", TournamentSettings(), actor="director")
        ids = []
        for idn, name in ((ANN, "Ann"), (BEN, "Ben")):
            p = await svc.add_player(
                s, id_number=idn, name=name, date_of_birth=date(1980, 1, 1), actor="desk",
                now=SOLD_AT,
            )  # fmt: skip
            await svc.sell_entries(s, t.id, p.id, cashier="cashier", now=SOLD_AT)
            ids.append(p.id)
        await set_team_scoring(s, t.id, TeamScoring("sum", None, 1, 2, advance=1),
                               actor="director", now=SOLD_AT, reason="teams tonight")  # fmt: skip
        for team, pid in (("Aces", ids[0]), ("Kings", ids[1])):
            await register_team(s, t.id, team, [pid], pid, actor="desk", now=SOLD_AT)
        heat = await svc.schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=START, bank_name="A",
            duration_seconds=600, starting_credits=1000, actor="director", now=SOLD_AT,
        )  # fmt: skip
        for pid in ids:
            await svc.register_for_heat(s, heat.id, pid, actor="desk", now=SOLD_AT)
        seats = await svc.heat_seats(s, heat.id)
        await svc.begin_heat(s, heat.id, present_seats=[x.seat_number for x in seats],
                             at=START, actor="director")  # fmt: skip
        for seat, credits in zip(seats, (1500, 900), strict=True):
            await svc.record_machine_score(
                s, seat.seat_id, HeatScore(credits, TournamentMeters(50, 10, 250, 200)),
                at=START + timedelta(minutes=10),
            )  # fmt: skip
        await svc.finish_heat(s, heat.id, at=START + timedelta(minutes=11), actor="gateway")


async def test_h10_h11_h12_cut_prizes_and_a_captain_s_payout_waiting_for_its_witness(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]],
    page: Page,
) -> None:
    gw = await start_gateway(_teams_night)
    await sign_in(page, gw.url, "director")
    await open_screen(page, "Teams")
    aces = page.locator('tr[data-team="Aces"]')
    await expect(aces).to_contain_text("goes on")  # H10: the top team
    await expect(page.locator('tr[data-team="Kings"]')).not_to_contain_text("goes on")
    await expect(page.get_by_label("Teams that go on from the qualifying")).to_have_value("1")
    await expect(page.locator("#team-prizes")).to_contain_text("No team prize advertised")

    await page.get_by_label("Prize per team place").fill("1=0")
    await page.get_by_role("button", name="Advertise team prizes").click()
    await expect(page.locator(".flash.error")).to_contain_text("place 1")  # refused, named
    await expect(page.locator("#team-prizes")).to_contain_text("No team prize advertised")
    await page.get_by_label("Prize per team place").fill("1=40000")
    await page.get_by_role("button", name="Advertise team prizes").click()
    await expect(page.locator(".flash.ok")).to_contain_text("1 place(s) advertised (H11)")
    place = page.locator('tr[data-team-place="1"]')
    await expect(place).to_contain_text("Aces")
    await expect(place).to_contain_text("not paid")

    await page.get_by_label("Captain signing (ID or card)").fill(ANN)
    await page.get_by_label("Signature / receipt reference").fill("slip 12")
    await page.get_by_role("button", name="Ask for the witness").click()
    await expect(page.locator(".flash.ok")).to_contain_text("waits for its witness")
    await expect(place).to_contain_text("not paid")  # until a second account approves
