"""A running gateway with its console, on emulated machines, and a browser to drive it.

``console_gateway`` starts an emulated bank (SAS over loopback TCP), writes its floor
file, seeds one account per role (password :data:`PASSWORD`), and runs ``reelgate serve
--http 127.0.0.1:0`` in the test's event loop; the console is at ``gateway.url``.
``page`` is a fresh tablet-sized Playwright page in Debian's chromium (never a
downloaded browser; :mod:`tests.browser`, shared with the signage suite)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from playwright.async_api import Page

import storage.accounts
from emulators.bank import Bank
from gateway.accounts import service
from gateway.accounts.roles import Role
from gateway.app.commands import serve as serve_command
from gateway.app.context import GatewayContext
from gateway.heats.scheduler import Scheduler
from gateway.tournament.services import unit_of_work
from gateway.web.fanout import FanoutFeed
from tests.browser import TABLET, browser_fixture, page_fixture

PASSWORD = "correct horse battery"
ACCOUNTS = [r.value for r in Role] + ["supervisor2"]

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(autouse=True)
def cheap_argon2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    )


async def until(cond: Callable[[], bool], within: float, what: str) -> None:
    for _ in range(int(within / 0.05)):  # bounded
        if cond():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: not reached in {within} s")


@dataclass
class ConsoleGateway:
    url: str  # the console's root, ending in /console
    database: str
    spool: Path
    bank: Bank
    scheduler: Scheduler
    floor: Path
    feed: FanoutFeed | None = None

    async def ctx(self) -> GatewayContext:
        return await GatewayContext.open(database=self.database, floor_path=None, spool=self.spool)


def _floor(bank: Bank) -> str:
    rows = ",\n".join(
        f'  {{ id = "{b.machine.machine_id}", endpoint = "{b.endpoint}" }}' for b in bank.machines
    )
    return f'[[bank]]\nname = "A"\nmachines = [\n{rows},\n]\n'


Prepare = Callable[[GatewayContext], Awaitable[None]]


async def seed_accounts(ctx: GatewayContext) -> None:
    now = datetime.now(UTC)
    async with unit_of_work(ctx.sessions) as s:
        for name in ACCOUNTS:
            await service.add_user(s, name, name.rstrip("2"), PASSWORD, actor="setup", now=now)


@pytest.fixture
async def start_gateway(
    tmp_path: Path, database: str
) -> AsyncIterator[Callable[[Prepare | None], Awaitable[ConsoleGateway]]]:
    """Call with a preparation (tournament, heats) run before the gateway starts."""
    bank = Bank(3, name_prefix="A")
    stop = asyncio.Event()
    task: asyncio.Task[int] | None = None

    async def start(prepare: Prepare | None = None) -> ConsoleGateway:
        nonlocal task
        await bank.start()
        floor = tmp_path / "floor.toml"
        floor.write_text(_floor(bank))
        spool = tmp_path / "spool"
        ctx = await GatewayContext.open(database=database, floor_path=str(floor), spool=spool)
        try:
            await seed_accounts(ctx)
            if prepare is not None:
                await prepare(ctx)
        finally:
            await ctx.close()
        parser = argparse.ArgumentParser()
        serve_command.register(parser.add_subparsers())
        args = parser.parse_args(
            ["serve", "--floor", str(floor), "--database", database, "--spool", str(spool),
             "--tick", "0.2", "--http", "127.0.0.1:0"]
        )  # fmt: skip
        serve_command.check_arguments(args)
        ready: list[serve_command.Serving] = []
        task = asyncio.create_task(serve_command.serve(args, stop, on_ready=ready.append))
        await until(lambda: bool(ready) or task.done(), 30, "gateway ready")
        if task.done():
            task.result()
        serving = ready[0]
        assert serving.http_url is not None
        url = serving.http_url.removesuffix("/api/v1") + "/console"
        return ConsoleGateway(url, database, spool, bank, serving.scheduler, floor, serving.feed)

    try:
        yield start
    finally:
        stop.set()
        if task is not None:
            await asyncio.wait_for(task, 30)
        await bank.close()


# A chromium per test, in the test's own loop (the gateway runs there too), and a
# tablet-sized page (tests.browser).
browser = browser_fixture()
page = page_fixture(TABLET)


async def sign_in(page: Page, base: str, account: str) -> None:
    await page.goto(f"{base}/login")
    await page.get_by_label("Account").fill(account)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{base}/")


async def confirm(page: Page) -> None:
    """Accept the console's confirmation dialog."""
    await page.locator("#confirm-ok").click()


async def open_screen(page: Page, name: str) -> None:
    """Open a screen from the menu."""
    await page.get_by_role("navigation", name="Screens").get_by_role("link", name=name).click()
