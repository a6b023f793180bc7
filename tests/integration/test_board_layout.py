"""Boards a casino hangs up (issue 24, problem 8): a short list fills its sign, and the
topper reads row-first.

Before: a bank of three players left about 70 % of the seats' box empty (rows kept the
size that fits twenty), and the topper filled its cards column-first (1 and 2 stacked,
3 and 4 beside them)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from gateway.web import FanoutFeed, SignageServer, SignageSettings, start_signage

from .test_page_browser import open_board, publish_bank

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

BOXES_JS = """() => {
  const list = document.querySelector('#seats').getBoundingClientRect();
  const rows = [...document.querySelectorAll('#seats .row')].filter(r => !r.hidden)
    .map(r => { const b = r.getBoundingClientRect();
                return {machine: r.dataset.machine, top: b.top, left: b.left, bottom: b.bottom}; });
  return {top: list.top, height: list.height, rows};
}"""


@pytest_asyncio.fixture(loop_scope="session")
async def signage() -> AsyncIterator[SignageServer]:
    server = await start_signage(FanoutFeed(), "127.0.0.1", 0, settings=SignageSettings())
    try:
        yield server
    finally:
        await server.close()


async def test_three_players_fill_the_seats_box(signage: SignageServer, page: Page) -> None:
    await publish_bank(signage.feed, seats=3)
    await open_board(page, f"{signage.url}bank/A", rows=3)
    await page.wait_for_timeout(300)
    boxes: dict[str, Any] = await page.evaluate(BOXES_JS)
    used = boxes["rows"][-1]["bottom"] - boxes["top"]
    assert used >= 0.6 * boxes["height"], boxes  # it was about 30 %
    assert boxes["rows"][-1]["bottom"] <= boxes["top"] + boxes["height"] + 1  # and no more
    names = await page.evaluate(
        "() => [...document.querySelectorAll('#seats .row .player')]"
        ".map(e => [e.textContent, e.scrollWidth <= e.clientWidth])"
    )
    assert names
    assert all(whole for _, whole in names), names  # grown, and every name still whole


async def test_the_topper_reads_row_first(signage: SignageServer, page: Page) -> None:
    await publish_bank(signage.feed, seats=8)
    await page.set_viewport_size({"width": 1920, "height": 360})
    await open_board(page, f"{signage.url}bank/A?layout=topper", rows=8)
    boxes: dict[str, Any] = await page.evaluate(BOXES_JS)
    rows = boxes["rows"]  # in rank order, as the list holds them
    assert len(rows) >= 4
    first, second = rows[0], rows[1]
    assert abs(first["top"] - second["top"]) < 1  # 2nd beside the 1st, not below it
    assert second["left"] > first["left"]


async def test_super9_between_draws_shows_jackpot_next_session_and_last_numbers(
    signage: SignageServer, page: Page
) -> None:
    """Before: a grey table and "No draw in progress", no jackpot, no next session."""
    from datetime import UTC, datetime, timedelta

    nxt = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)
    pot = {"jackpot_cents": 1_234_500, "session": 4, "next_session": nxt.isoformat()}
    await signage.feed.publish("super9/jackpot", pot, retain=True)
    draw = {"session": 4, "status": "closed", "jackpot_cents": 1_234_500,
            "called": [7, 19, 32], "last": {"number": 32}}  # fmt: skip
    await signage.feed.publish("super9/4/draw", draw, retain=True)
    await page.goto(f"{signage.url}super9")
    await page.wait_for_function("document.body.dataset.connection === 'live'")
    await page.wait_for_timeout(400)
    assert await page.locator("#s9-next").is_visible()
    assert (await page.locator("#s9-next-time").text_content() or "").strip()
    left = await page.locator("#s9-next-in").text_content() or ""
    assert left.startswith(("in 1:59:", "in 2:00:")), left
    assert "12,345" in (await page.locator("#jackpot").text_content() or "")
    called = await page.locator("#grid .cell.called").all_text_contents()
    assert sorted(map(int, called)) == [7, 19, 32]  # the last session's numbers


async def test_waiting_bank_counts_down_to_its_next_heat(
    signage: SignageServer, page: Page
) -> None:
    """Between heats the attract screen says how long until the next heat, not only its
    time."""
    from datetime import UTC, datetime, timedelta

    starts = (datetime.now(UTC) + timedelta(minutes=45)).replace(microsecond=0)
    await signage.feed.publish(
        "bank/D/next",
        {"bank": "D", "heat": "31", "name": "Ridge Classic - heat 9", "stage": "Qualifying",
         "starts_at": starts.isoformat()},
        retain=True,
    )  # fmt: skip
    await open_board(page, f"{signage.url}bank/D")
    assert await page.locator("#attract").is_visible()
    shown = await page.locator("#attract-in").text_content() or ""
    assert shown.startswith(("in 44:", "in 45:")), shown
    first = shown
    await page.wait_for_timeout(1300)  # tick() moves it on the screen's own clock
    assert (await page.locator("#attract-in").text_content() or "") != first
