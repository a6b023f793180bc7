"""A cashier finds a player by name (never by an id), sells entries with a printable
receipt, registers the player for a heat and is told the machine allocated; a
director's page answers 403 with a page saying why (docs/roles.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta

from playwright.async_api import Page, expect
from sqlalchemy import select

from gateway.app.context import GatewayContext
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, unit_of_work
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from storage.tournament import EntryPurchase, Seat

from .conftest import ConsoleGateway, Prepare, confirm, open_screen, sign_in


async def _tournament(ctx: GatewayContext) -> None:
    now = datetime.now(UTC)
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(
            s,
            "Spring Classic",
            TournamentSettings(validity=EntryValidity.HOURS_48),
            actor="director",
        )
        await schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(days=1),
            bank_name="A", duration_seconds=600, starting_credits=1000, actor="director",
            now=now, number=1,
        )  # fmt: skip
        await add_player(
            s, id_number="8001015009087", name="Thandi Mokoena", date_of_birth=date(1980, 1, 1),
            actor="desk", now=now, card_number="700100200",
        )  # fmt: skip


async def test_cashier_sells_registers_and_cannot_direct(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(_tournament)
    await sign_in(page, gw.url, "cashier")
    nav = page.get_by_role("navigation", name="Screens")
    await expect(nav.get_by_role("link", name="Live heat")).to_have_count(0)
    await open_screen(page, "Registration desk")
    await page.get_by_label("Player: name, Rewards card or ID number").fill("mokoena")
    await page.get_by_role("button", name="Find player").click()
    player = page.locator('[data-player="Thandi Mokoena"]')
    await expect(player).to_contain_text("Card 700100200")

    await player.get_by_label("Till slip").fill("T-0042")
    await player.get_by_role("button", name="Sell to Thandi Mokoena").click()
    await confirm(page)
    receipt = page.get_by_role("article", name="receipt")
    await expect(receipt).to_contain_text("Spring Classic")
    await expect(receipt).to_contain_text("Thandi Mokoena")
    await expect(receipt).to_contain_text("Till slip T-0042")
    await expect(receipt).to_contain_text("Cashier: cashier")
    await expect(page.get_by_role("button", name="Print receipt")).to_be_visible()

    # Found by the Rewards card this time, and registered: the machine is allocated.
    await open_screen(page, "Registration desk")
    await page.get_by_label("Player: name, Rewards card or ID number").fill("700100200")
    await page.get_by_role("button", name="Find player").click()
    await (
        page.locator('[data-player="Thandi Mokoena"]')
        .get_by_role("button", name="Register Thandi Mokoena")
        .click()
    )
    await expect(page.locator(".flash.ok")).to_contain_text("seat 1, machine A-001")

    ctx = await gw.ctx()
    try:
        async with ctx.sessions() as s:
            (sale,) = (await s.scalars(select(EntryPurchase))).all()
            (seat,) = (await s.scalars(select(Seat))).all()
    finally:
        await ctx.close()
    assert (sale.cashier, sale.reference) == ("cashier", "T-0042")
    assert seat.machine_id == "A-001"

    # A director's page: 403, with a page that says so.
    response = await page.goto(f"{gw.url}/heat/A")
    assert response is not None
    assert response.status == 403
    await expect(page.get_by_role("alert")).to_contain_text("role cashier may not heat.direct")
    response = await page.goto(f"{gw.url}/floor")
    assert response is not None
    assert response.status == 403
