"""Every console screen and every signage board under its own Content-Security-Policy,
in Chromium, with no violation and no console error (issue 24, problem 8).

Before: every console page logged CSP violations from the templates' own inline styles
(the policy allows styles from the stylesheet only), and every page asked for a
``/favicon.ico`` that was not there."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from playwright.async_api import Browser, ConsoleMessage, Page

from gateway.web import FanoutFeed, SignageSettings, start_signage
from tests.browser import SCREEN

from ..test_page_browser import publish_bank
from .conftest import ConsoleGateway, Prepare, sign_in
from .test_manual_score import closed_heat

SCREENS = ["/", "/floor", "/floor/A", "/heat", "/heat/A", "/schedule", "/desk", "/players",
           "/finals", "/prizes", "/standings", "/pending", "/audit", "/super9",
           "/accounts", "/tournaments", "/cashup",
           "/heat/A?heat=1", "/heats/1/score", "/heats/1/score?seat=1"]  # fmt: skip
BOARDS = ["/signage/", "/signage/bank/A", "/signage/tournament/3", "/signage/super9",
          "/signage/?layout=topper"]  # fmt: skip


def _watch(page: Page) -> list[str]:
    """Console errors and CSP violations (Chromium reports both on the console)."""
    seen: list[str] = []

    def on(message: ConsoleMessage) -> None:
        forbidden = "status of 403" in message.text  # a screen of another role, skipped
        if message.type in ("error", "warning") and not forbidden:
            seen.append(f"{page.url}: {message.text}")

    page.on("console", on)
    return seen


async def test_console_screens_keep_their_csp(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], browser: Browser
) -> None:
    gw = await start_gateway(closed_heat)  # a closed heat: its manual score screen (T23)
    shown: set[str] = set()
    for account in ("director", "technician", "promotion-director", "desk", "admin"):
        context = await browser.new_context(viewport=SCREEN)  # the policy enforced
        page = await context.new_page()
        seen = _watch(page)
        try:
            await sign_in(page, gw.url, account)
            for screen in SCREENS:
                response = await page.goto(gw.url + screen)
                assert response is not None
                if response.status == 403:
                    continue  # not this role's screen; another role opens it
                assert response.status == 200, screen
                csp = response.headers.get("content-security-policy") or ""
                assert "default-src 'self'" in csp
                await page.wait_for_load_state("load")
                icon = await page.evaluate("document.querySelector('link[rel=icon]')?.href")
                assert str(icon).endswith("/console/static/favicon.svg"), screen
                shown.add(screen)
        finally:
            await context.close()
        assert seen == [], account
    assert shown == set(SCREENS)


async def test_signage_boards_keep_their_csp_and_show_no_links(browser: Browser) -> None:
    feed = FanoutFeed()
    server = await start_signage(feed, "127.0.0.1", 0, settings=SignageSettings())
    context = await browser.new_context(viewport=SCREEN)  # the policy enforced
    try:
        await publish_bank(feed, seats=8)
        page = await context.new_page()
        seen = _watch(page)
        base = server.base
        for board in BOARDS:
            response = await page.goto(base + board)
            assert response is not None
            assert response.status == 200, board
            await page.wait_for_timeout(300)  # the stream's replay rendered
            assert await page.locator("a[href]").count() == 0, f"{board}: a link on a sign"
            icon = await page.evaluate("document.querySelector('link[rel=icon]')?.href")
            assert str(icon).endswith("/signage/static/favicon.svg"), board
        assert seen == []
    finally:
        await context.close()
        await server.close()
