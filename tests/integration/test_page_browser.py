"""The signage boards in Debian's chromium, driven by Playwright: what the floor sees.

Each test starts the boards on 127.0.0.1:0, publishes through the :class:`FanoutFeed`
the way heats and the Super 9 desk do, opens a board at a real screen size and reads
the rendered page: nothing cut (an element's scrollWidth against its clientWidth, and
its box inside the screen), every seat of a long bank over its pages, the waiting
screen, the reconnecting mark, the footer of each board.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, expect

from gateway.web import FanoutFeed, SignageServer, SignageSettings, start_signage

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

VENUE = ZoneInfo("Africa/Johannesburg")
SCREENS = {  # layout -> the screens it is for
    "landscape": [(1920, 1080), (3840, 2160)],
    "portrait": [(1080, 1920)],
    "topper": [(1920, 360), (3840, 540)],
}
NAMES = [
    "Thandiwe Mokoena", "Johannes van der Merwe", "Nomvula Dlamini-Zulu", "Pieter Botha",
    "Lindiwe Ndlovu", "Sipho Nkosi", "Anneke Steenkamp", "Mohammed Patel", "Zanele Khumalo",
    "Francois du Plessis", "Ayanda Mthembu", "Chantelle Jacobs", "Bongani Sithole",
    "Riana Venter", "Kagiso Molefe", "Precious Mahlangu", "Willem Pretorius",
    "Naledi Mokgadi", "Themba Zwane", "Elizabeth Fourie",
]  # fmt: skip
FAULTED = "A06"

# Every visible piece of text that must never be cut: its widths and its box.
MEASURE_JS = """() => [...document.querySelectorAll(
    '#countdown, #heat-title, #next-time, #clock-now, .row:not([hidden]) .player,'
    + ' .row:not([hidden]) .machine, .row:not([hidden]) .credits, #jackpot')]
  .filter(e => e.offsetParent !== null && e.textContent.trim() !== '')
  .map(e => { const r = e.getBoundingClientRect(); const t = document.createRange();
    t.selectNodeContents(e);
    return {what: e.id || e.className, text: e.textContent, sw: e.scrollWidth, cw: e.clientWidth,
            tw: t.getBoundingClientRect().width, bw: r.width,
            right: r.right, bottom: r.bottom}; })"""
VISIBLE_SEATS_JS = """() => [...document.querySelectorAll('#seats .row')]
  .filter(r => !r.hidden).map(r => r.dataset.machine)"""


@pytest_asyncio.fixture(loop_scope="session")
async def signage() -> AsyncIterator[SignageServer]:
    server = await start_signage(FanoutFeed(), "127.0.0.1", 0, settings=SignageSettings())
    try:
        yield server
    finally:
        await server.close()


async def publish_bank(
    feed: FanoutFeed, seats: int = 20, *, state: str = "running", seconds: float = 299.0
) -> list[str]:
    """A heat on bank A of tournament 3, ``seats`` seats with their players' full names,
    one of them struck out (rule 20), and the tournament's leaderboard beside it."""
    machines = [f"A{i:02d}" for i in range(1, seats + 1)]
    label = {"name": "Ridge Classic - heat 3", "stage": "Qualifying", "bank": "A",
             "tournament": "3"}  # fmt: skip
    ends = datetime.now(UTC) + timedelta(seconds=seconds)
    await feed.publish("current", {"heat": "17", **label}, retain=True)
    await feed.publish(
        "heat/17/state",
        {"heat": "17", "state": state, "ends_at": ends.isoformat(), "seconds_left": seconds,
         "machines": machines, **label},
        retain=True,
    )  # fmt: skip
    for i, machine in enumerate(machines):
        await feed.publish(
            f"heat/17/seat/{machine}",
            {"machine": machine, "credits": 1000 + 37 * i, "player": NAMES[i % len(NAMES)],
             "final": False, "malfunction": "door opened" if machine == FAULTED else None},
            retain=True,
        )  # fmt: skip
    await feed.publish("tournament/3/leaderboard", leaderboard(), retain=True)
    return machines


def leaderboard(official: bool = False) -> dict[str, Any]:
    return {
        "tournament": 3, "name": "Ridge Classic", "stage": "qualifying",
        "stage_title": "Qualifying", "official": official,
        "rows": [{"place": i + 1, "entry": 100 + i, "player": NAMES[i % len(NAMES)],
                  "credits": 5000 - 50 * i, "tie": False} for i in range(30)],
        "cuts": [{"after": 1, "label": "Top entry: straight to the Final (rule 13)"},
                 {"after": 12, "label": "Qualifying cut: to place 12, semi-final (rule 14)"}],
        "prizes": [{"place": 1, "cents": 500_000}, {"place": 2, "cents": 250_050}],
    }  # fmt: skip


async def open_board(page: Page, url: str, rows: int | None = None) -> None:
    await page.goto(url)
    await page.wait_for_function("document.body.dataset.connection === 'live'")
    if rows is not None:
        await page.wait_for_function(f"document.querySelectorAll('#seats .row').length === {rows}")
    await page.wait_for_timeout(100)  # the render after the replay


@pytest.mark.parametrize(
    ("layout", "width", "height"),
    [(layout, w, h) for layout, sizes in SCREENS.items() for w, h in sizes],
)
async def test_each_layout_shows_names_and_timer_whole(
    signage: SignageServer, page: Page, layout: str, width: int, height: int
) -> None:
    await publish_bank(signage.feed)
    await page.set_viewport_size({"width": width, "height": height})
    await open_board(page, f"{signage.url}bank/A?layout={layout}", rows=20)
    measured: list[dict[str, Any]] = await page.evaluate(MEASURE_JS)
    assert {m["what"] for m in measured} >= {"countdown", "heat-title", "player fit"}
    for m in measured:
        assert m["sw"] <= m["cw"], f"{layout} {width}x{height}: {m['what']} {m['text']!r} is cut"
        # scrollWidth is whole pixels: the text's own width catches a sub-pixel ellipsis
        assert m["tw"] <= m["bw"] + 0.01, f"{width}x{height}: {m['text']!r} ends in an ellipsis"
        assert m["right"] <= width + 0.5, f"{m['what']} {m['text']!r} runs off the screen"
        assert m["bottom"] <= height + 0.5, f"{m['what']} {m['text']!r} runs off the screen"
    countdown = await page.locator("#countdown").text_content()
    assert countdown is not None
    assert re.fullmatch(r"[45]:\d\d", countdown)
    names = await page.locator(".row:not([hidden]) .player").all_text_contents()
    assert names
    assert all(name in NAMES for name in names)  # whole names, never "A…"


async def test_paging_shows_every_seat_of_a_twenty_seat_bank(
    signage: SignageServer, page: Page
) -> None:
    machines = await publish_bank(signage.feed)
    await open_board(page, f"{signage.url}bank/A?page=2", rows=20)
    pages = int(await page.locator("#seats").get_attribute("data-pages") or 0)
    assert pages >= 2  # 20 seats do not fit one 1080p screen beside the leaderboard
    seen: set[str] = set()
    for _ in range(pages):  # one turn of every page (2 s each)
        shown = await page.locator("#seats").get_attribute("data-page")
        seen |= set(await page.evaluate(VISIBLE_SEATS_JS))
        await page.wait_for_function(
            f"document.querySelector('#seats').dataset.page !== '{shown}'", timeout=6_000
        )
    assert seen == set(machines)
    # Rule 20: the malfunctioned seat is listed, last, struck out, with its reason.
    faulted = page.locator(f'#seats .row[data-machine="{FAULTED}"]')
    assert "fault" in (await faulted.get_attribute("class") or "")
    assert await page.locator("#seats .row").last.get_attribute("data-machine") == FAULTED


async def test_leaderboard_with_cut_and_prizes_stands_beside_the_heat(
    signage: SignageServer, page: Page
) -> None:
    await publish_bank(signage.feed)
    await open_board(page, f"{signage.url}bank/A", rows=20)
    board = page.locator("#board")
    await expect(board).to_be_visible()
    await expect(board.locator(".row.cut").first).to_contain_text("straight to the Final")
    await expect(page.locator("#lb-word")).to_have_text("provisional")
    first = board.locator(".row").first
    await expect(first.locator(".prize")).to_have_text("R5,000")
    await expect(board.locator(".row .prize").nth(1)).to_have_text("R2,500.50")
    heat_box = await page.locator("#heat").bounding_box()
    board_box = await board.bounding_box()
    assert heat_box is not None
    assert board_box is not None
    assert board_box["x"] >= heat_box["x"] + heat_box["width"]  # beside, not over


async def test_results_are_provisional_then_official_and_final_is_only_a_stage(
    signage: SignageServer, page: Page
) -> None:
    feed = signage.feed
    await publish_bank(feed, 4)
    await open_board(page, f"{signage.url}bank/A", rows=4)
    await expect(page.locator("#seats-word")).to_have_text("provisional")
    rows = [{"rank": 1, "machine": "A04", "credits": 1111, "tie": False},
            {"rank": 2, "machine": "A03", "credits": 1074, "tie": False}]  # fmt: skip
    state = {"heat": "17", "state": "collecting", "bank": "A", "tournament": "3"}
    await feed.publish("heat/17/state", state, retain=True)
    await feed.publish("heat/17/standings", {"rows": rows, "official": False}, retain=True)
    await expect(page.locator("#seats-title")).to_have_text("Result")
    await expect(page.locator("#seats-word")).to_have_text("provisional")
    await feed.publish("heat/17/state", {**state, "state": "closed"}, retain=True)
    await feed.publish("heat/17/standings", {"rows": rows, "official": True}, retain=True)
    await feed.publish("tournament/3/leaderboard", leaderboard(official=True), retain=True)
    await expect(page.locator("#seats-word")).to_have_text("official")
    await expect(page.locator("#heat-state")).to_have_text("Official result")
    await expect(page.locator("#lb-word")).to_have_text("official")
    text = await page.locator("main").inner_text()
    # "Final" names the Final stage (the cut line says who goes there), never a result.
    final = re.compile(r"(?<!semi-)\bfinal\b", re.IGNORECASE)
    assert [line for line in text.splitlines() if final.search(line)] == [
        "Top entry: straight to the Final (rule 13)".upper()
    ]


async def test_waiting_screen_shows_the_next_heat_time_and_the_attract_screen(
    signage: SignageServer, page: Page
) -> None:
    starts = datetime.now(VENUE).replace(second=0, microsecond=0) + timedelta(minutes=90)
    await signage.feed.publish(
        "bank/B/next",
        {"bank": "B", "heat": "21", "name": "Ridge Classic - heat 4", "stage": "Qualifying",
         "starts_at": starts.astimezone(UTC).isoformat()},
        retain=True,
    )  # fmt: skip
    await open_board(page, f"{signage.url}bank/B")
    await expect(page.locator("#attract")).to_be_visible()
    await expect(page.locator("#seats-block")).to_be_hidden()
    await expect(page.locator("#clock-box")).to_be_hidden()  # no "--:--" on a waiting screen
    hhmm = starts.strftime("%H:%M")  # the venue's time, whatever the screen's zone
    await expect(page.locator("#attract-next")).to_contain_text(hhmm)
    await expect(page.locator("#attract-next")).to_contain_text("Ridge Classic - heat 4")
    await expect(page.locator("#attract-in")).to_have_text(re.compile(r"^in 1:[23]\d:\d\d$"))
    # Said once, on the attract screen: the head keeps the whole width for its title.
    await expect(page.locator("#next-box")).to_be_hidden()
    assert "--" not in await page.locator("body").inner_text()


async def test_the_clock_is_the_venues_not_the_screens(
    signage: SignageServer, browser: Browser
) -> None:
    context = await browser.new_context(timezone_id="America/New_York", bypass_csp=True)
    try:
        page = await context.new_page()
        await open_board(page, f"{signage.url}bank/A")
        await page.wait_for_timeout(300)  # a tick
        shown = await page.locator("#clock-now").text_content()
        now = datetime.now(VENUE)
        expected = {(now + timedelta(minutes=d)).strftime("%H:%M") for d in (-1, 0, 1)}
        assert shown in expected
        assert await page.evaluate("new Date().getTimezoneOffset()") != -120  # not Joburg
    finally:
        await context.close()


async def test_reconnecting_mark_while_the_server_is_away(page: Page) -> None:
    feed = FanoutFeed()
    server = await start_signage(feed, "127.0.0.1", 0)
    port = server.port
    try:
        await publish_bank(feed, 6)
        await open_board(page, f"{server.url}bank/A", rows=6)
        await expect(page.locator("#banner")).to_be_hidden()
        await server.close()  # the gateway (or the standalone sign's server) restarts
        await page.wait_for_function("document.body.dataset.connection === 'reconnecting'")
        await expect(page.locator("#banner")).to_be_visible()
        await expect(page.locator("#banner")).to_contain_text("Reconnecting")
        # The last snapshot stays on the screen under the mark.
        assert len(await page.evaluate(VISIBLE_SEATS_JS)) == 6
        server = await start_signage(feed, "127.0.0.1", port)
        await page.wait_for_function("document.body.dataset.connection === 'live'", timeout=15_000)
        await expect(page.locator("#banner")).to_be_hidden()
        feed.set_upstream("disconnected")  # the standalone sign's source is away
        await expect(page.locator("#banner")).to_contain_text("Reconnecting to the gateway feed")
        feed.set_upstream("connected")
        await expect(page.locator("#banner")).to_be_hidden()
    finally:
        await server.close()


async def test_super9_board_carries_its_own_footer(signage: SignageServer, page: Page) -> None:
    await signage.feed.publish(
        "super9/42/draw",
        {"session": 42, "status": "drawing", "called": [7, 17, 0], "last": {"number": 0},
         "spins": 3, "counted_spins": 3, "jackpot_spins": 18, "jackpot_live": True,
         "jackpot_cents": 1_234_550},
        retain=True,
    )  # fmt: skip
    await open_board(page, f"{signage.url}super9")
    await expect(page.locator("#jackpot")).to_have_text("R12,345.50")
    await expect(page.locator('.cell.called[data-number="17"]')).to_be_visible()
    foot = page.locator("footer")
    await expect(foot).to_contain_text("Super 9")
    assert "rule 12" not in await foot.inner_text()  # not the tournament's footer
    # The floor board showing only the Super 9 draw carries only its footer too.
    await open_board(page, signage.url)
    await expect(page.locator("#super9")).to_be_visible()
    await expect(page.locator('[data-footer="tournament"]')).to_be_hidden()
    await expect(page.locator('[data-footer="super9"]')).to_be_visible()


async def test_a_rank_change_glides_unless_the_screen_asks_for_less_motion(
    signage: SignageServer, browser: Browser
) -> None:
    feed = signage.feed
    await publish_bank(feed, 3)
    for motion, moves in (("no-preference", True), ("reduce", False)):
        context = await browser.new_context(reduced_motion=motion, bypass_csp=True)  # type: ignore[arg-type]
        try:
            page = await context.new_page()
            await open_board(page, f"{signage.url}bank/A", rows=3)
            await page.evaluate("""() => { window.ups = 0; new MutationObserver(ms => {
                for (const m of ms) if (m.target.classList.contains('up')) window.ups += 1;
              }).observe(document.querySelector('#seats'),
                         {attributes: true, subtree: true, attributeFilter: ['class']}); }""")
            credits = 5000 if motion == "reduce" else 4000
            await feed.publish(
                "heat/17/seat/A01",
                {"machine": "A01", "credits": credits, "player": NAMES[0]},
                retain=True,
            )
            top = page.locator("#seats .row").first
            await expect(top).to_have_attribute("data-machine", "A01")
            await page.wait_for_timeout(200)
            assert (await page.evaluate("window.ups") > 0) is moves
            duration = await top.evaluate("r => getComputedStyle(r).transitionDuration")
            assert (duration != "0s") is moves
        finally:
            await context.close()


async def test_payload_text_is_shown_as_text_never_as_markup(
    signage: SignageServer, page: Page
) -> None:
    hostile = '<img src=x onerror="document.title=1">Eve'
    await publish_bank(signage.feed, 2)
    await signage.feed.publish(
        "heat/17/seat/A01", {"machine": "A01", "credits": 5, "player": hostile}, retain=True
    )
    await open_board(page, f"{signage.url}bank/A", rows=2)
    await expect(page.locator('#seats .row[data-machine="A01"] .player')).to_have_text(hostile)
    assert await page.locator("#seats img").count() == 0


async def test_a_manual_score_is_marked_and_stands_over_the_machine_reading(
    signage: SignageServer, page: Page
) -> None:
    """T23, issue 24: a score a director keyed in after the heat closed comes from the
    database (``gateway.web.change_reader``): the seat shows the stored credits, not its
    last machine reading, marked manual; so does the leaderboard's row."""
    feed = signage.feed
    await publish_bank(feed, 4)
    await open_board(page, f"{signage.url}bank/A", rows=4)
    rows = [
        {"rank": 1, "machine": "A02", "credits": 2000, "tie": False, "manual": True},
        {"rank": 2, "machine": "A04", "credits": 1111, "tie": False, "manual": False},
    ]
    await feed.publish("heat/17/state", {"heat": "17", "state": "closed", "bank": "A"}, retain=True)
    await feed.publish("heat/17/standings", {"rows": rows, "official": True}, retain=True)
    board = leaderboard(official=True)
    board["rows"][0] = {**board["rows"][0], "manual": True}
    await feed.publish("tournament/3/leaderboard", board, retain=True)
    seat = page.locator('#seats .row[data-machine="A02"]')
    await expect(seat.locator(".credits")).to_have_text(re.compile(r"2,?000"))
    await expect(seat.locator(".flag")).to_have_text("manual")
    await expect(page.locator('#seats .row[data-machine="A04"] .flag')).not_to_have_text("manual")
    await expect(page.locator("#board .row").first.locator(".flag")).to_have_text("manual")
