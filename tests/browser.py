"""The Playwright fixtures every browser test shares: Debian's chromium (never a
downloaded browser) and a fresh context and page per test.

A conftest makes its own pair with the factories, choosing what differs between suites:

    browser = browser_fixture()                                  # per test, its own loop
    page = page_fixture(TABLET)

    browser = browser_fixture(scope="session", loop_scope="session")   # one per session
    page = page_fixture(SCREEN, loop_scope="session", bypass_csp=True)

Playwright objects belong to the event loop that made them: a page fixture's loop scope
must be its browser's, and so must its tests' (``pytest.mark.asyncio(loop_scope=...)``).
Every page fails its test on an uncaught exception in the page's scripts, and has a 15 s
default timeout.  Both skip, saying why, when the chromium binary is absent
(``REELGATE_CHROMIUM`` names another one).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, ViewportSize, async_playwright

CHROMIUM = os.environ.get("REELGATE_CHROMIUM", "/usr/bin/chromium")
SCREEN: ViewportSize = {"width": 1920, "height": 1080}  # a sign
TABLET: ViewportSize = {"width": 1180, "height": 820}  # a console on a desk or the floor

Scope = Literal["function", "module", "session"]


def browser_fixture(
    *, scope: Scope = "function", loop_scope: Scope | None = None
) -> Callable[..., Any]:
    """A ``browser`` fixture: chromium launched once per ``scope``, in ``loop_scope``'s loop
    (default: the scope's own)."""

    @pytest_asyncio.fixture(name="browser", scope=scope, loop_scope=loop_scope or scope)
    async def browser() -> AsyncIterator[Browser]:
        if not os.access(CHROMIUM, os.X_OK):
            pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
        async with async_playwright() as p:
            found = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                yield found
            finally:
                await found.close()

    return browser


def page_fixture(
    viewport: ViewportSize, *, loop_scope: Scope = "function", bypass_csp: bool = False
) -> Callable[..., Any]:
    """A ``page`` fixture of ``viewport`` on the ``browser`` fixture, per test.

    ``bypass_csp``: Playwright's polling (``wait_for_function``) evaluates strings, which a
    strict Content-Security-Policy forbids; a suite polling so sets it (and checks the
    policy itself over HTTP)."""

    @pytest_asyncio.fixture(name="page", loop_scope=loop_scope)
    async def page(browser: Browser) -> AsyncIterator[Page]:
        context = await browser.new_context(viewport=viewport, bypass_csp=bypass_csp)
        found = await context.new_page()
        found.set_default_timeout(15_000)
        errors: list[str] = []
        found.on("pageerror", lambda exc: errors.append(str(exc)))
        try:
            yield found
        finally:
            await context.close()
        assert errors == [], f"the page threw: {errors}"

    return page
