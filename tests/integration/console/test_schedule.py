"""The Schedule screen in Chromium (issue 26, item 2): the director schedules a heat on
bank A two days ahead, sees it on the week with the next heat's countdown running,
moves it (T10, announced ahead) and cancels it (T10), each from the keyboard-reachable
forms of the heat's "Change" panel.  The countdown is only checked to show a value (it
runs on the browser's clock).  The page throws nothing (the ``page`` fixture checks)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from playwright.async_api import Page, expect
from sqlalchemy import select

from gateway.app.context import GatewayContext
from gateway.tournament.services import unit_of_work
from gateway.tournament.services.setup import create_tournament
from gateway.tournament.settings import TournamentSettings
from gateway.web.console.render import DEFAULT_ZONE
from storage.audit import AuditEntry
from storage.tournament import Heat, HeatStatus

from .conftest import ConsoleGateway, Prepare, confirm, open_screen, sign_in


async def _tournament(ctx: GatewayContext) -> None:
    async with unit_of_work(ctx.sessions) as s:
        await create_tournament(s, "Spring Classic", TournamentSettings(), actor="director")


async def test_director_schedules_moves_and_cancels_a_heat(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(_tournament)
    day = (datetime.now(ZoneInfo(DEFAULT_ZONE)) + timedelta(days=2)).date()  # on this week
    await sign_in(page, gw.url, "director")
    await open_screen(page, "Schedule")
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Schedule")

    new = page.locator("#new-heat")
    await new.get_by_label("Bank").select_option("A")
    await new.get_by_label("Starts (venue time)").fill(f"{day.isoformat()}T18:00")
    await new.get_by_label("Minutes").fill("15")
    await new.get_by_role("button", name="Schedule heat").click()
    await expect(page.locator(".flash.ok")).to_contain_text("qualifying heat 1 scheduled")
    heat = page.locator(f'[data-day="{day.isoformat()}"] article[data-heat]')
    await expect(heat).to_contain_text("18:00–18:15")
    await expect(heat).to_contain_text("Spring Classic · qualifying heat 1")
    await expect(heat).to_contain_text("0 / 3 seats")
    await expect(page.locator("#countdown")).to_have_text(re.compile(r"\d"))

    change = heat.get_by_text("Change", exact=False)
    await change.focus()
    await page.keyboard.press("Enter")  # the panel opens from the keyboard
    move = heat.locator('form[data-form="reschedule"]')
    await move.get_by_label("New start").fill(f"{day.isoformat()}T19:30")
    await move.get_by_label("Announced via").fill("MC")
    await move.get_by_label("Reason").fill("bank service")
    await move.get_by_role("button", name="Move heat").click()
    await expect(page.locator(".flash.ok")).to_contain_text("qualifying heat 1 moved to")
    await expect(heat).to_contain_text("19:30–19:45")

    await heat.get_by_text("Change", exact=False).click()
    drop = heat.locator('form[data-form="cancel"]')
    await drop.get_by_label("Announced via").fill("marketing")
    await drop.get_by_label("Reason").fill("flooded")
    await drop.get_by_role("button", name="Cancel heat").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("qualifying heat 1 cancelled")
    await expect(heat.locator('[data-f="status"]')).to_have_text("cancelled")
    await expect(page.locator("#next-heat")).to_have_text("No heat is scheduled to start.")

    ctx = await gw.ctx()
    try:
        async with ctx.sessions() as s:
            (found,) = (await s.scalars(select(Heat))).all()
            audited = (
                await s.scalars(select(AuditEntry.actor).where(AuditEntry.action.like("heat.%")))
            ).all()
    finally:
        await ctx.close()
    assert found.status is HeatStatus.CANCELLED
    assert list(audited) == ["director", "director", "director"]
