"""A Super 9 session from sale to payout on the console, with the emulated wheel: the
cash desk sells a ticket (rule 5), Guest Relations keys the hand-in (rules 6–11), the
Promotion Director opens the draw, the wheel's results arrive live (the wheel follower
over the emulated wheel's line feed), the dealer voids one spin (a "No spin", rule 18)
and checks the claim, the Promotion Director closes the session, the cashier pays the
prize and a second account witnesses the receipt (rule 26, dual control).

The desk's time rules (sales close 30 minutes before, the draw opens after the hand-in
cut-off) need a clock the test moves, so the console runs here on an application of its
own with that clock, as ``reelgate api --http`` would serve it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
import uvicorn
from playwright.async_api import Page, expect

from emulators.wheel import WheelModel, WheelServer
from gateway.app.commands.api import _server_class
from gateway.app.database import open_engine
from gateway.super9.desk import Super9Desk
from gateway.super9.desk.wheel import follow_wheel
from gateway.tournament import services as svc
from gateway.web import console
from gateway.web.api import create_app
from gateway.web.fanout import FanoutFeed
from storage.db import make_sessionmaker

from .conftest import ACCOUNTS, PASSWORD, confirm, sign_in

ZONE = ZoneInfo("Africa/Johannesburg")
SESSION_AT = datetime(2026, 11, 20, 19, 0, tzinfo=ZONE)  # a Friday: an extra session
GAMES = 20
VOIDED = 2  # the spin the dealer voids
PLAYER_ID = "8001015009087"


def _wheel(seed: int) -> WheelModel:
    return WheelModel(seed=seed, garbage_rate=0.0, restart_rate=0.0, misspin_rate=0.0)


def _ticket(seed: int) -> tuple[str, int]:
    """Nine numbers the wheel calls on valid spins (the voided one does not count), and
    the game whose number completes them (the claim is made right after it, S9-13)."""
    model = _wheel(seed)
    for _ in range(GAMES):
        model.next_game()
    distinct: list[int] = []
    for game, result in enumerate(model.truth, start=1):
        if game != VOIDED and result.number not in distinct:
            distinct.append(result.number)
            if len(distinct) == 9:
                return " ".join(str(n) for n in distinct), game
    raise AssertionError("pick another seed")


@dataclass
class Desk:
    url: str
    clock: list[datetime]
    desk: Super9Desk
    feed: FanoutFeed


@pytest.fixture
async def super9_console(database: str) -> AsyncIterator[Desk]:
    _, engine = await open_engine(database)
    sessions = make_sessionmaker(engine)
    clock = [datetime(2026, 11, 20, 10, 0, tzinfo=ZONE)]
    app = create_app(sessions, clock=lambda: clock[0])
    feed = FanoutFeed()
    console.attach(app, feed=feed)
    async with svc.unit_of_work(sessions) as s:
        from gateway.accounts import service

        for name in ACCOUNTS:
            await service.add_user(s, name, name.rstrip("2"), PASSWORD, actor="setup", now=clock[0])
        await svc.add_player(
            s, id_number=PLAYER_ID, name="Thandi Mokoena",
            date_of_birth=datetime(1980, 1, 1).date(), actor="desk", now=clock[0],
        )  # fmt: skip
    desk = Super9Desk(sessions, feed=feed)
    await desk.change_calendar(
        SESSION_AT, cancel=False, actor="promotion-director", reason="festival", now=clock[0]
    )
    server = _server_class()(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    for _ in range(400):  # bounded: uvicorn reports readiness as a flag
        if server.started or task.done():
            break
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Desk(f"http://127.0.0.1:{port}/console", clock, desk, feed)
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await engine.dispose()


async def _as(page: Page, base: str, account: str) -> None:
    await page.context.clear_cookies()
    await sign_in(page, base, account)


async def test_super9_session_from_sale_to_payout_with_a_voided_spin(
    super9_console: Desk, page: Page
) -> None:
    d, base, seed = super9_console, super9_console.url, 11
    numbers, games = _ticket(seed)

    await _as(page, base, "cashier")  # rule 5: the cash desk sells
    await page.goto(f"{base}/super9")
    await page.get_by_label("Ticket serial").fill("T100")
    await page.get_by_label("Player: ID or Rewards card number").fill(PLAYER_ID)
    await page.get_by_role("button", name="Sell ticket").click()
    await expect(page.locator(".flash.ok")).to_contain_text("ticket T100 sold for the session of")

    await _as(page, base, "desk")  # rules 6-11: Guest Relations keys the top copy
    await page.goto(f"{base}/super9")
    await page.get_by_label("Ticket serial").fill("T100")
    await page.get_by_label("Nine numbers").fill(numbers)
    await page.get_by_label("Name on the verification section").fill("Thandi Mokoena")
    await page.get_by_label("ID number").fill(PLAYER_ID)
    await page.get_by_label("Contact").fill("082 555 0100")
    await page.get_by_label("signed by the player").check()
    await page.get_by_role("button", name="Take hand-in").click()
    await expect(page.locator(".flash.ok")).to_contain_text("ticket T100 handed in")

    d.clock[0] = datetime(2026, 11, 20, 18, 50, tzinfo=ZONE)  # past the hand-in cut-off
    await _as(page, base, "promotion-director")
    await page.goto(f"{base}/super9")
    await page.get_by_role("button", name="Open for the draw").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("open for the draw")
    await page.get_by_role("link", name="Open session").first.click()
    session_id = int(page.url.rsplit("/", 1)[1].split("?")[0])
    await expect(page.locator("#live-mark")).to_have_text("live")

    # The wheel plays; its results arrive on the open page as they are recorded.
    wheel = WheelServer(_wheel(seed), line_interval=0.002, games=games)
    await wheel.start()
    try:
        run = await follow_wheel(
            d.desk, session_id, f"wheel+tcp://127.0.0.1:{wheel.port}",
            clock=lambda: d.clock[0], max_results=games,
        )  # fmt: skip
    finally:
        await wheel.close()
    assert len(run.results) == games
    assert run.results[-1].completed == ("T100",)  # S9-13: its ninth number
    await expect(page.locator("[data-spin]")).to_have_count(games)

    await _as(page, base, "dealer")  # rule 18: a No spin
    await page.goto(f"{base}/super9/sessions/{session_id}")
    await page.get_by_label("Spin sequence number").fill(str(VOIDED))
    await page.get_by_label("Reason").fill("ball left the wheel")
    await page.get_by_role("button", name="Void spin").click()
    await confirm(page)
    await expect(page.locator(f'[data-spin="{VOIDED}"]')).to_contain_text("No spin")
    await expect(page.locator("#valid-spins")).to_have_text(str(games - 1))
    await page.get_by_label("Ticket serial").fill("T100")
    await page.get_by_label("Numbers on the duplicate").fill(numbers)
    await page.get_by_role("button", name="Check claim").click()
    await expect(page.locator(".flash.ok")).to_contain_text("claim of T100: valid")

    await _as(page, base, "promotion-director")
    await page.goto(f"{base}/super9/sessions/{session_id}")
    await page.get_by_role("button", name="Close session").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("closed; prizes fixed")

    await _as(page, base, "cashier")  # rule 26: the winner signs, a second person witnesses
    await page.goto(f"{base}/super9/sessions/{session_id}")
    prize = page.locator('[data-prize="T100"]').first
    await prize.get_by_label("Receipt signature").fill("receipt 0001")
    await prize.get_by_label("Winner's ID or card").fill(PLAYER_ID)
    await prize.get_by_role("button", name="Pay T100").click()
    await expect(page.locator(".flash.ok")).to_contain_text("waits for the witness")
    await expect(page.locator('[data-prize="T100"]').first).to_contain_text(
        "receipt waits for its witness"
    )

    await _as(page, base, "promotion-director")
    await page.goto(f"{base}/pending")
    await page.get_by_role("button", name="Approve").first.click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("approved by promotion-director")
    await page.goto(f"{base}/super9/sessions/{session_id}")
    await expect(page.locator('[data-prize="T100"]').first).to_contain_text(
        "signed “receipt 0001”, witnessed by promotion-director"
    )
    await page.goto(f"{base}/super9")
    await expect(page.locator("main")).to_contain_text("History")


async def test_s9_4_s9_6_keyed_from_paper_and_the_403s_of_each_role(
    super9_console: Desk, page: Page
) -> None:
    """Issue 26: the Super 9 desk by keyboard, keyed from paper.  The promotion director
    adds a one-off session (S9-4) back-dated with a reason; the cashier's back-dated
    sale is refused in one line (a back-dated write is a promotion director's, S9-6b)
    and a live one is sold by card, the price and tender said (S9-5).  Each role sees
    only its own forms, and a form posted by a role without its permission is 403."""
    base = super9_console.url
    await _as(page, base, "promotion-director")
    await page.goto(f"{base}/super9")
    form = page.locator("#calendar-change")
    await form.get_by_label("Session at (venue time)").fill("2026-11-26T19:00")
    await form.get_by_label("Reason", exact=True).fill("festival encore")
    await form.locator("details.keyed summary").click()
    await form.get_by_label("Happened at (venue time)").fill("2026-11-20T08:30")
    await form.get_by_label("Why keyed late").focus()
    await page.keyboard.type("keyed from the paper log")
    await page.keyboard.press("Enter")  # the keyboard submits the form
    await expect(page.locator(".flash.ok")).to_have_text(
        "session of Thu 26 Nov 2026 19:00 added (rule 4)"
    )

    await _as(page, base, "cashier")
    await page.goto(f"{base}/super9")
    assert await page.locator("#calendar-change").count() == 0  # not the cashier's
    sale = page.locator('form[action="/console/super9/sell"]')
    await sale.get_by_label("Ticket serial").fill("T200")
    await sale.get_by_label("Player: ID or Rewards card number").fill(PLAYER_ID)
    await sale.get_by_label("Tender").select_option("card")
    await sale.locator("details.keyed summary").click()
    await sale.get_by_label("Happened at (venue time)").fill("2026-11-20T08:30")
    await sale.get_by_role("button", name="Sell ticket").click()
    await expect(page.locator(".flash.error")).to_contain_text(
        "a back-dated write is keyed by a promotion director's account (role cashier may not)"
    )
    sale = page.locator('form[action="/console/super9/sell"]')
    await sale.get_by_label("Ticket serial").fill("T200")
    await sale.get_by_label("Player: ID or Rewards card number").fill(PLAYER_ID)
    await sale.get_by_label("Tender").select_option("card")
    await sale.get_by_role("button", name="Sell ticket").click()
    await expect(page.locator(".flash.ok")).to_have_text(
        "ticket T200 sold for the session of Fri 20 Nov 2026 19:00: R 50.00 card (rule 5)"
    )
    receipt = page.get_by_role("article", name="receipt")  # S9-5: printable
    await expect(receipt).to_contain_text("Session: Fri 20 Nov 2026 19:00")
    await expect(receipt).to_contain_text("tender card · R 50.00")
    await expect(receipt).to_contain_text("Cashier: cashier")
    await page.get_by_role("link", name="← Super 9").click()

    forms = {"/super9/calendar": "promotion-director", "/super9/open": "supervisor",
             "/super9/sell": "cashier", "/super9/hand-in": "desk"}  # fmt: skip
    for role in ("dealer", "auditor"):
        await _as(page, base, role)
        await page.goto(f"{base}/super9")
        assert await page.locator('form[action^="/console/super9/"]').count() == 0, role
        for path in forms:
            posted = await page.request.post(f"{base}{path}", form={"ticket": "T9"})
            assert posted.status == 403, (role, path, posted.status)
