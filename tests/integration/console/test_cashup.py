"""The Cash-up screen in Chromium (issue 26): the director opens Cash-up from the menu,
keys in the day, reads a cash and a card sale by tender, and downloads the day's signed
cash-up, which ``reelgate export verify``'s function accepts with the venue's public
key.  The page throws nothing (the ``page`` fixture checks)."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Awaitable, Callable
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from playwright.async_api import Page, expect

from gateway.app.context import GatewayContext
from gateway.records.exporter import verify_export
from gateway.records.keys import SIGNING_KEY_ENV, load_public_key
from gateway.tournament import services as svc
from gateway.tournament.services import unit_of_work
from gateway.tournament.services.setup import create_tournament
from gateway.tournament.settings import TournamentSettings
from storage.enums import Tender

from .conftest import ConsoleGateway, Prepare, open_screen, sign_in

SOLD_AT = datetime(2026, 11, 20, 19, 30, tzinfo=ZoneInfo("Africa/Johannesburg"))


async def _sales(ctx: GatewayContext) -> None:
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(s, "Spring Classic", TournamentSettings(), actor="director")
        for idn, name, tender in (
            ("8001015009087", "Ann", Tender.CASH),
            ("8101015009086", "Ben", Tender.CARD),
        ):
            p = await svc.add_player(
                s, id_number=idn, name=name, date_of_birth=date(1980, 1, 1), actor="desk",
                now=SOLD_AT,
            )  # fmt: skip
            await svc.sell_entries(s, t.id, p.id, tender=tender, cashier="cashier", now=SOLD_AT)


async def test_director_reads_the_day_and_takes_its_signed_cashup(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]],
    page: Page,
    tmp_path: Path,
) -> None:
    gw = await start_gateway(_sales)
    await sign_in(page, gw.url, "director")
    await open_screen(page, "Cash-up")
    day = page.get_by_role("form", name="Day")
    await day.get_by_label("Day").fill("2026-11-20")
    await day.get_by_role("button", name="Show").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Cash-up Fri 20 Nov 2026")
    await expect(page.locator("#reconciliation")).to_contain_text("reconciled")
    await expect(page.locator('tr[data-tender="cash"]')).to_contain_text("R 50.00")
    await expect(page.locator('tr[data-tender="card"]')).to_contain_text("R 50.00")
    await expect(page.locator("#drawer")).to_have_text("R 50.00")
    await expect(page.locator("#by-cashier")).to_contain_text("cashier")

    async with page.expect_download() as info:
        await page.get_by_role("button", name="Download the signed cash-up of 2026-11-20").click()
    download = await info.value
    assert download.suggested_filename == "cashup-2026-11-20.zip"
    saved = tmp_path / "cashup.zip"
    await download.save_as(saved)
    with zipfile.ZipFile(saved) as bundle:
        bundle.extractall(tmp_path / "out")
    public = load_public_key(Path(os.environ[SIGNING_KEY_ENV]).with_suffix(".pub"))
    verdict = verify_export(tmp_path / "out" / "cashup-2026-11-20.json", public)
    assert verdict.ok, verdict.problem
    assert verdict.document is not None
    assert verdict.document["body"]["totals"]["drawer_cents"] == 5_000
