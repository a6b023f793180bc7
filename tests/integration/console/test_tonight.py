"""The "Tonight" board in Chromium (issue 26, item 6): a seat registered at the desk
through the service (T11, in another process's transaction) shows on the board without
a reload: the change feed's row, the gateway's change reader, the console's stream and
the board's fragment swapped in by ``static/console.js``.  The countdown to the next
heat counts.  The page throws nothing (the ``page`` fixture checks)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta

from playwright.async_api import Page, expect

from gateway.app.context import GatewayContext
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services import unit_of_work
from gateway.tournament.settings import TournamentSettings

from .conftest import ConsoleGateway, Prepare, sign_in

ID_NUMBER = "8001015009087"
CUP = "Tonight Cup"


async def _heat_ahead(ctx: GatewayContext) -> None:
    """A heat 40 minutes ahead on bank A (the next to start, tonight or, near the
    venue's 06:00, the next night: the board counts it down either way) and a player."""
    now = datetime.now(UTC)
    async with unit_of_work(ctx.sessions) as s:
        t = await svc.create_tournament(s, CUP, TournamentSettings(), actor="director")
        await svc.schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(minutes=40),
            bank_name="A", duration_seconds=600, starting_credits=1000, actor="director", now=now,
        )  # fmt: skip
        await svc.add_player(
            s, id_number=ID_NUMBER, name="Thandi Mokoena", date_of_birth=date(1980, 1, 1),
            actor="desk", now=now,
        )  # fmt: skip


async def test_a_seat_registered_at_the_desk_shows_on_the_board_without_a_reload(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(_heat_ahead)
    await sign_in(page, gw.url, "director")
    await expect(page.get_by_role("heading", name="Heats tonight")).to_be_visible()
    seats = page.locator("#next-heat [data-f=seats]")
    await expect(seats).to_have_text("0 / 3")
    await expect(page.locator("#live-mark")).to_have_text("live")
    countdown = page.locator("#countdown")
    shown = await countdown.text_content()
    await expect(countdown).not_to_have_text(shown or "")  # the script counts down
    await page.evaluate("window.boardKept = true")  # gone if the page reloads

    ctx = await gw.ctx()
    try:
        async with unit_of_work(ctx.sessions) as s:
            now = datetime.now(UTC)
            heat = (await svc.list_heats(s, CUP))[0]
            sale = await svc.sell_entries(s, CUP, ID_NUMBER, cashier="cashier", now=now)
            await svc.register_for_heat(
                s, heat.heat_id, ID_NUMBER, actor="desk", now=now, entry_id=sale.entry_ids[0]
            )
    finally:
        await ctx.close()

    await expect(seats).to_have_text("1 / 3")
    assert await page.evaluate("window.boardKept === true")
