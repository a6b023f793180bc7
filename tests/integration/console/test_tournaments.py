"""The Tournaments screen in Chromium (issue 26, item 1): the director creates a
tournament, asks for a change of one setting (T23, dual control), a second director
approves it on Approvals, and the first copies the tournament as next week's template.
The page throws nothing (the ``page`` fixture checks)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from playwright.async_api import Page, expect

from gateway.accounts import service
from gateway.app.context import GatewayContext
from gateway.tournament.services import unit_of_work

from .conftest import PASSWORD, ConsoleGateway, Prepare, confirm, open_screen, sign_in


async def _second_director(ctx: GatewayContext) -> None:
    async with unit_of_work(ctx.sessions) as s:
        await service.add_user(
            s, "director2", "director", PASSWORD, actor="setup", now=datetime.now(UTC)
        )


async def test_director_creates_changes_and_copies_a_tournament(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(_second_director)
    await sign_in(page, gw.url, "director")
    await open_screen(page, "Tournaments")
    await expect(page.get_by_role("heading", name="Tournaments", exact=True)).to_be_visible()

    new = page.locator('form[action="/console/tournaments/create"]')
    await new.get_by_label("Name", exact=True).fill("Week 49")
    await new.get_by_label("Entry validity").select_option("48h")  # T5
    await new.get_by_label("Prize places").fill("5")  # T19
    await new.get_by_role("button", name="Create tournament").click()
    await expect(page.locator(".flash.ok")).to_contain_text("tournament Week 49 created")
    row = page.locator('[data-tournament="Week 49"]')
    await expect(row).to_contain_text("48h")
    await expect(row).to_contain_text("1 · 49 · 8")

    change = page.locator('form[action$="/settings"]')
    await change.get_by_label("Semi-final places").fill("40")  # T14a
    await change.get_by_label("Reason").fill("a smaller semi-final room")
    await change.get_by_role("button", name="Ask for this change").click()
    await expect(page.locator(".flash.ok")).to_contain_text("change of semi_final_qualifiers")
    await expect(row).to_contain_text("change waiting")
    await expect(row).to_contain_text("1 · 49 · 8")  # not before a second director

    await page.get_by_role("button", name="Sign out").click()
    await sign_in(page, gw.url, "director2")
    await open_screen(page, "Approvals")
    waiting = page.locator("[data-pending]", has_text="tournament.settings")
    await waiting.get_by_role("button", name="Approve").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("approved by director2")
    await open_screen(page, "Tournaments")
    await expect(row).to_contain_text("1 · 40 · 8")

    await row.get_by_role("link", name="Copy Week 49 as template").click()
    copy = page.locator('form[action="/console/tournaments/create"]')
    await expect(copy.get_by_role("heading")).to_have_text("New tournament, copied from Week 49")
    await expect(copy.get_by_label("Semi-final places")).to_have_value("40")
    await copy.get_by_label("Name", exact=True).fill("Week 50")
    await copy.get_by_role("button", name="Create tournament").click()
    await expect(page.locator(".flash.ok")).to_contain_text("tournament Week 50 created")
    copied = page.locator('[data-tournament="Week 50"]')
    await expect(copied).to_contain_text("48h")
    await expect(copied).to_contain_text("1 · 40 · 8")
    settings = page.locator('[data-settings="Week 50"]')
    await expect(settings.get_by_label("Prize places")).to_have_value("5")
