"""The Prizes screen in Chromium (issue 26, item 5; T15): with the qualifying over and
Thandi holding place 1, the director sets the qualifying's schedule and pays her prize
with her signature; the payout waits for its witness, a supervisor approves it on
Approvals, and the paid place shows who paid, who witnessed and the payout slip.  The
page throws nothing (the ``page`` fixture checks)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta

from playwright.async_api import Page, expect

from gateway.app.context import GatewayContext
from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import EntryValidity, HeatStatus, SeatStatus, Stage
from gateway.tournament.settings import TournamentSettings
from storage.tournament import Heat, Seat

from .conftest import ConsoleGateway, Prepare, confirm, open_screen, sign_in

THANDI = "8001015009087"


async def _qualifying_over(ctx: GatewayContext) -> None:
    """One qualifying heat, played and closed, Thandi's score in: she holds place 1."""
    now = datetime.now(UTC)
    async with svc.unit_of_work(ctx.sessions) as s:
        settings = TournamentSettings(validity=EntryValidity.HOURS_48)
        t = await svc.create_tournament(s, "Spring Classic", settings, actor="director")
        await svc.add_player(s, id_number=THANDI, name="Thandi Mokoena",
                             date_of_birth=date(1980, 1, 1), actor="desk", now=now)  # fmt: skip
        heat = await svc.schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now - timedelta(hours=2), bank_name="A",
            duration_seconds=600, starting_credits=1000, actor="director",
            now=now - timedelta(days=1),
        )  # fmt: skip
        sold = await svc.sell_entries(s, t.id, THANDI, cashier="cashier",
                                      now=now - timedelta(hours=3))  # fmt: skip
        seat = await svc.register_for_heat(s, heat.id, THANDI, actor="desk",
                                           now=now - timedelta(hours=3),
                                           entry_id=sold.entry_ids[0])  # fmt: skip
        played = await s.get(Heat, heat.id)
        row = await s.get(Seat, seat.id)
        assert played is not None
        assert row is not None
        played.status, row.status = HeatStatus.CLOSED, SeatStatus.PRESENT
        await s.flush()
        score = HeatScore(1500, TournamentMeters(50, 10, 250, 200))
        await svc.enter_manual_score(s, seat.id, score, reason="read off the machine",
                                     actor="director", at=now)  # fmt: skip


async def test_director_sets_a_schedule_and_pays_a_prize_a_supervisor_witnesses(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(_qualifying_over)
    await sign_in(page, gw.url, "director")
    await open_screen(page, "Prizes")
    await expect(page.get_by_role("heading", name="Prizes · Spring Classic")).to_be_visible()

    schedule = page.locator('form[action="/console/prizes/schedule"]')
    await schedule.get_by_label("Advertised minimum per place").fill("1=500000\n2=250000")
    await schedule.get_by_role("button", name="Set schedule").click()
    await expect(page.locator(".flash.ok")).to_have_text(
        "qualifying schedule set: 2 prize places (rule 15)"
    )
    await expect(page.locator('[data-place="1"]')).to_contain_text("R 5 000.00")

    won = page.locator('[data-unpaid="qualifying:1"]')
    await expect(won).to_contain_text("Thandi Mokoena")
    await won.get_by_label("Winner's ID or card number").fill(THANDI)
    await won.get_by_label("Signature of receipt (slip reference)").fill("RCPT-0042")
    await won.get_by_role("button", name="Pay place 1 (qualifying)").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("waits for its witness")
    await expect(won).to_contain_text("waiting for the witness")

    await page.get_by_role("button", name="Sign out").click()
    await sign_in(page, gw.url, "supervisor")
    await open_screen(page, "Approvals")
    waiting = page.locator("[data-pending]", has_text="tournament.prize-receipt")
    await expect(waiting).to_contain_text("director")
    await waiting.get_by_role("button", name="Approve").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("approved by supervisor")

    await open_screen(page, "Prizes")
    paid = page.locator('[data-place="1"]')
    await expect(paid).to_contain_text("paid by director · witness supervisor")
    await expect(page.locator('[data-unpaid="qualifying:1"]')).to_have_count(0)
    await paid.get_by_role("link", name="payout slip").click()
    slip = page.get_by_role("article", name="payout slip")
    await expect(slip).to_contain_text("Witness: supervisor")
    await expect(slip).to_contain_text("R 5 000.00")
