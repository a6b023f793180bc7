"""A manual score in Chromium, from the keyboard (T23, dual control; issue 26): Thandi's
machine lost its link in a closed heat on bank A; the director opens the bank's page,
picks the played heat, follows her seat's "Manual score", keys the credits read off the
machine and the reason, and submits with Enter; it waits for a second person; the
supervisor approves it on Approvals (Enter on the button, Enter on the confirmation);
the score stands in the standings, marked manual on the heat's page.  The page throws
nothing (the ``page`` fixture checks)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta

from playwright.async_api import Page, expect
from sqlalchemy import select

from gateway.app.context import GatewayContext
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import EntryValidity, HeatStatus, SeatStatus, Stage
from gateway.tournament.settings import TournamentSettings
from storage.audit import AuditEntry
from storage.tournament import Heat, Seat

from .conftest import ConsoleGateway, Prepare, open_screen, sign_in

THANDI = "8001015009087"


async def closed_heat(ctx: GatewayContext) -> None:
    """Qualifying heat 1 on bank A, played and closed; Thandi's seat has no score (her
    machine's link failed)."""
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


async def _enter(page: Page) -> None:
    await page.keyboard.press("Enter")


async def test_t23_director_keys_a_manual_score_a_supervisor_approves_from_the_keyboard(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(closed_heat)
    await sign_in(page, gw.url, "director")
    await open_screen(page, "Live heat")
    await page.get_by_role("link", name="Open bank A").focus()
    await _enter(page)
    played = page.get_by_role("navigation", name="Heats played on bank A")
    await played.get_by_role("link", name="qualifying heat 1 (closed)").focus()
    await _enter(page)
    seats = page.locator("#standings")
    await seats.get_by_role("link", name="Manual score for seat 1 (Thandi Mokoena)").focus()
    await _enter(page)

    await expect(page.get_by_role("heading", level=1)).to_contain_text(
        "Manual score · Spring Classic qualifying heat 1"
    )
    credits = page.get_by_label("Credits", exact=True)
    await expect(credits).to_be_focused()  # the form opens on the credits
    await page.keyboard.type("1500")
    await page.keyboard.press("Tab")
    await expect(page.get_by_label("Reason (rule 23)")).to_be_focused()
    await page.keyboard.type("link failed; meter read off the machine")
    await _enter(page)  # submits the form
    await expect(page.locator(".flash.ok")).to_contain_text(
        "manual score of seat 1 (Thandi Mokoena) asked"
    )
    await expect(page.locator("[data-waiting]")).to_contain_text("1500 asked by director")

    await page.get_by_role("button", name="Sign out").click()
    await sign_in(page, gw.url, "supervisor")
    await open_screen(page, "Approvals")
    waiting = page.locator("[data-pending]", has_text="heat.manual-score")
    await expect(waiting).to_contain_text("director")
    await expect(waiting).to_contain_text("credits: 1500")
    await waiting.get_by_role("button", name="Approve").focus()
    await _enter(page)
    await page.locator("#confirm-ok").focus()
    await _enter(page)
    await expect(page.locator(".flash.ok")).to_contain_text("approved by supervisor")

    await open_screen(page, "Standings")
    line = page.locator("#standings-table tbody tr[data-entry]")
    await expect(line).to_contain_text("Thandi Mokoena")
    await expect(line.locator(".credits")).to_have_text("1500")

    ctx = await gw.ctx()
    try:
        async with ctx.sessions() as s:
            audited = (
                await s.execute(
                    select(AuditEntry.action, AuditEntry.actor)
                    .where(AuditEntry.action.in_(["dual.request", "dual.approve", "score.manual"]))
                    .order_by(AuditEntry.id)
                )
            ).all()
    finally:
        await ctx.close()
    assert [tuple(a) for a in audited] == [
        ("dual.request", "director"), ("dual.approve", "supervisor"), ("score.manual", "director"),
    ]  # fmt: skip
