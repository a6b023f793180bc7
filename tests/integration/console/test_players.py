"""The Players screen in Chromium (issue 26, item 3): the director adds a player, finds
them (the ID number shown by its last 4 digits), disqualifies them (T23, at once) and
asks for their reinstatement, which waits for a second person; the supervisor approves
it on Approvals.  The page throws nothing (the ``page`` fixture checks)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from playwright.async_api import Page, expect

from gateway.app.context import GatewayContext
from gateway.tournament.services import unit_of_work
from gateway.tournament.services.setup import create_tournament
from gateway.tournament.settings import TournamentSettings

from .conftest import ConsoleGateway, Prepare, confirm, open_screen, sign_in


async def _tournament(ctx: GatewayContext) -> None:
    async with unit_of_work(ctx.sessions) as s:
        await create_tournament(s, "Spring Classic", TournamentSettings(), actor="director")


async def test_director_adds_disqualifies_and_a_second_person_reinstates(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(_tournament)
    await sign_in(page, gw.url, "director")
    await open_screen(page, "Players")
    await expect(page.get_by_role("heading", name="Players", exact=True)).to_be_visible()

    add = page.locator('form[action="/console/players/add"]')
    await add.get_by_label("Name", exact=True).fill("Naledi Khumalo")
    await add.get_by_label("ID or passport number").fill("9106060123085")
    await add.get_by_label("Date of birth").fill("1991-06-06")
    await add.get_by_label("Rewards card number (optional)").fill("700100300")
    await add.get_by_role("button", name="Add player").click()
    await expect(page.locator(".flash.ok")).to_have_text("player Naledi Khumalo added (ID …3085)")

    await page.get_by_label("Player: name, Rewards card or ID number").fill("700100300")
    await page.get_by_role("button", name="Find player").click()
    row = page.locator('[data-player="Naledi Khumalo"]')
    await expect(row).to_contain_text("…3085")
    await expect(row).to_contain_text("eligible")

    actions = page.locator('[data-actions="Naledi Khumalo"]')
    dq = actions.locator('form[action="/console/players/disqualify"]')
    await dq.get_by_label("Rule").select_option("20")
    await dq.get_by_label("Reason").fill("played another's seat")
    await dq.get_by_role("button", name="Disqualify Naledi Khumalo").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_have_text("Naledi Khumalo disqualified (rule 20)")
    await expect(row).to_contain_text("rule 20: played another's seat")

    ask = actions.locator('form[action="/console/players/reinstate"]')
    await ask.get_by_label("Reason").fill("the seat was hers after all")
    await ask.get_by_role("button", name="Ask for reinstatement").click()
    await expect(page.locator(".flash.ok")).to_contain_text("waits for a second person")
    await expect(row).to_contain_text("reinstatement waiting for a second person")

    await page.get_by_role("button", name="Sign out").click()
    await sign_in(page, gw.url, "supervisor")
    await open_screen(page, "Approvals")
    waiting = page.locator("[data-pending]", has_text="player.reinstate")
    await expect(waiting).to_contain_text("director")
    await waiting.get_by_role("button", name="Approve").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("approved by supervisor")

    await open_screen(page, "Players")
    await page.get_by_label("Player: name, Rewards card or ID number").fill("naledi")
    await page.get_by_role("button", name="Find player").click()
    await expect(row).to_contain_text("eligible")
