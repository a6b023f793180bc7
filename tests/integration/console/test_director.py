"""A director runs a heat from the console on emulated machines and watches the live
credits turn into official standings: the heat starts by the schedule, the seats'
credits move while players play, a pause is carried out (its outcome and every
machine's acknowledgement shown), the heat resumes and closes, and the result and the
tournament standings are official (rule 12 scores, stored)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta

from playwright.async_api import Page, expect

from gateway.app.context import GatewayContext
from gateway.floor.store import set_bank_enabled
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, register_for_heat, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from storage.journal import RunState

from .conftest import ConsoleGateway, Prepare, confirm, open_screen, sign_in, until

# Entries are sold on the wall clock moments before the heat: T5's 48 h entries, so a run at
# the venue's midnight still reaches its heat (a T7 same-day entry would not).
SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)

PLAYERS = ["Thandi Mokoena", "Pieter Botha", "Lerato Dlamini"]


async def _heat_soon(ctx: GatewayContext) -> None:
    """Heat 1 of "Winter Classic" on bank A in a few seconds, three players seated."""
    await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="technician")
    now = datetime.now(UTC)
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(s, "Winter Classic", SETTINGS, actor="director")
        heat = await schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=6),
            bank_name="A", duration_seconds=8, starting_credits=500, actor="director",
            now=now, number=1,
        )  # fmt: skip
        for i, name in enumerate(PLAYERS):
            p = await add_player(
                s, id_number=f"85020{i}5800087", name=name,
                date_of_birth=date(1985, 2, 1 + i), actor="desk", now=now,
            )  # fmt: skip
            await sell_entries(s, t.id, p.id, cashier="cashier", now=now)
        heat_id = heat.id
    for i in range(len(PLAYERS)):
        async with unit_of_work(ctx.sessions) as s:
            await register_for_heat(s, heat_id, f"85020{i}5800087", actor="desk", now=now)


async def test_director_watches_live_credits_become_official_standings(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(_heat_soon)
    gw.bank.start_players(seed=7, pace=0.8)
    await sign_in(page, gw.url, "director")
    await open_screen(page, "Live heat")
    await page.get_by_role("link", name="Open bank A").click()
    await expect(page.locator("#live-mark")).to_have_text("live")
    await expect(page.locator("[data-seat]")).to_have_count(3)

    # The heat starts by the schedule; the seats' credits move while the players play.
    await expect(page.locator("#heat-state")).to_have_text("running", timeout=20_000)
    credits = page.locator('[data-seat="A-001"] [data-f=credits]')
    await expect(credits).not_to_have_text("-")
    first = await credits.inner_text()
    await expect(credits).not_to_have_text(first, timeout=10_000)

    # A pause: the order's outcome and what each machine acknowledged.
    await page.get_by_role("button", name="Pause").click()
    await confirm(page)
    await expect(page.locator("#order [data-done]")).to_contain_text("sent to heat")
    await expect(page.locator("#heat-state")).to_have_text("paused")
    for machine in ("A-001", "A-002", "A-003"):
        await expect(page.locator(f'[data-ack="{machine}"]')).to_contain_text("locked")
    await page.get_by_role("button", name="Resume").click()
    await confirm(page)
    await expect(page.locator("#order [data-done]")).to_contain_text("sent to heat")
    await expect(page.locator("#heat-state")).to_have_text("running")

    # The heat closes: the result on the page is official, from the stored scores.
    await until(lambda: bool(gw.scheduler.finished), 40, "heat closed")
    assert gw.scheduler.finished[0].state is RunState.CLOSED
    scores = {m: s.score or 0 for m, s in gw.scheduler.finished[0].seats.items()}
    await expect(page.locator("#standings")).to_contain_text("Official result", timeout=10_000)
    for machine, score in scores.items():
        await expect(
            page.locator(f'#standings [data-seat="{machine}"] [data-f=credits]')
        ).to_have_text(str(score))

    await open_screen(page, "Standings")
    rows = page.locator("#standings-table tbody tr")
    await expect(rows).to_have_count(3)
    best = max(scores.values())
    await expect(rows.first.locator(".credits")).to_have_text(str(best))
