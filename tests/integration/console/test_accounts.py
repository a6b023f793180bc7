"""The admin's Accounts screen in Chromium (issue 26, item 4): the admin signs in, adds a
director's account, creates an API token (its secret shown once) and revokes it; the
page throws nothing (the ``page`` fixture checks) and the revoked token no longer opens
the API.  A second test disables an account and enables it again (Enable pressed from
the keyboard); the admin's own row shows a last sign-in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
from playwright.async_api import Page, expect

from .conftest import ConsoleGateway, Prepare, confirm, open_screen, sign_in

NEW_PASSWORD = "violet tram seventeen kettles"


async def test_admin_adds_a_director_and_creates_and_revokes_a_token(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(None)
    await sign_in(page, gw.url, "admin")
    await open_screen(page, "Accounts")
    await expect(page.get_by_role("heading", name="Accounts", exact=True)).to_be_visible()

    add = page.locator('form[action="/console/accounts/add"]')
    await add.get_by_label("Name").fill("Naledi")
    await add.get_by_label("Role").select_option("director")
    await add.get_by_label("Password", exact=True).fill(NEW_PASSWORD)
    await add.get_by_label("Password (again)").fill(NEW_PASSWORD)
    await add.get_by_role("button", name="Add account").click()
    await expect(page.locator(".flash.ok")).to_have_text("account naledi added (director)")
    await expect(page.locator('[data-account="naledi"]')).to_contain_text("director")

    token = page.locator('form[action="/console/accounts/tokens"]')
    await token.locator("select[name=account]").select_option("naledi")
    await token.get_by_label("Days until expiry").fill("7")
    await token.get_by_label("Label (what it is for)").fill("results screen")
    await token.get_by_role("button", name="Create token").click()
    await expect(page.get_by_role("alert")).to_contain_text("will not be shown again")
    secret = await page.locator("#token-secret").input_value()
    assert secret
    api = gw.url.removesuffix("/console") + "/api/v1/me"
    bearer = {"Authorization": f"Bearer {secret}"}
    async with httpx.AsyncClient() as client:
        assert (await client.get(api, headers=bearer)).json()["name"] == "naledi"

        await page.get_by_role("link", name="Back to Accounts").click()
        assert secret not in await page.content()
        row = page.locator("[data-token]", has_text="results screen")
        await row.get_by_role("button", name="Revoke").click()
        await confirm(page)
        await expect(page.locator(".flash.ok")).to_contain_text("revoked")
        await expect(row).to_contain_text("revoked")
        assert (await client.get(api, headers=bearer)).status_code == 401


async def test_admin_disables_and_enables_an_account(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(None)
    await sign_in(page, gw.url, "admin")
    await open_screen(page, "Accounts")
    row = page.locator('[data-account="cashier"]')
    await expect(row.get_by_role("button", name="Enable")).to_have_count(0)
    await expect(page.locator('[data-account="admin"]')).not_to_contain_text("never")

    await row.get_by_role("button", name="Disable").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("account cashier disabled")
    await expect(row.locator(".badge.bad")).to_have_text("disabled")
    await expect(row.get_by_role("button", name="Disable")).to_have_count(0)

    await row.get_by_role("button", name="Enable").focus()  # a keyboard user's way
    await page.keyboard.press("Enter")
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("account cashier enabled")
    await expect(row.locator(".badge.ok")).to_have_text("enabled")
    await expect(row.get_by_role("button", name="Disable")).to_be_visible()
