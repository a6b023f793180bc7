"""Hot-seat draws and team rows on the boards in Debian's chromium (house clauses HS4,
HS5, H6, H10, H11, docs/rules.md): the hash committed before the heat, whole on the
screen; the winning seat and the revealed seed after the draw; a commitment alone does
not take over the floor board; a tournament board's team standings beside its
leaderboard, with the team cut and the team prizes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from gateway.web import FanoutFeed, SignageServer, SignageSettings, start_signage

from .test_page_browser import leaderboard, open_board, publish_bank

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

HASH = "9f2c" + "0123456789abcdef" * 3 + "a1b2c3d4e5f6"  # 64 hex digits
SEED = "5eed" + "fedcba9876543210" * 3 + "0a0b0c0d0e0f"
WHOLE_JS = """(id) => { const e = document.getElementById(id); const r = e.getBoundingClientRect();
  return {text: e.textContent, right: r.right, bottom: r.bottom, w: innerWidth, h: innerHeight,
          sw: e.scrollWidth, cw: e.clientWidth}; }"""


@pytest_asyncio.fixture(loop_scope="session")
async def signage() -> AsyncIterator[SignageServer]:
    server = await start_signage(FanoutFeed(), "127.0.0.1", 0, settings=SignageSettings())
    try:
        yield server
    finally:
        await server.close()


def committed(winners: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {
        "subject": "heat:17", "commitment": HASH, "draws": 2, "prize_cents": 10_000,
        "seed": SEED if winners else None, "winners": winners or [],
        "rule": "HS5" if winners else "HS4",
    }  # fmt: skip


async def test_hs4_hs5_hash_before_the_heat_then_winning_seat_and_seed(
    signage: SignageServer, page: Page
) -> None:
    feed = signage.feed
    starts = (datetime.now(UTC) + timedelta(minutes=20)).replace(microsecond=0)
    await feed.publish("bank/A/next", {"bank": "A", "heat": "17", "tournament": "3",
                                       "name": "Ridge Classic - heat 3", "stage": "Qualifying",
                                       "starts_at": starts.isoformat()}, retain=True)  # fmt: skip
    await feed.publish("heat/17/hotseat", committed(), retain=True)
    # The floor board: a commitment alone is no heat on show (the attract screen stays).
    await open_board(page, signage.url)
    await expect(page.locator("#attract")).to_be_visible()
    await expect(page.locator("#hotseat")).to_be_visible()  # the next heat's hash, HS4
    await open_board(page, f"{signage.url}bank/A")
    box = page.locator("#hotseat")
    await expect(box).to_be_visible()
    await expect(page.locator("#hs-terms")).to_have_text("2 draws during the heat · R100 each")
    await expect(page.locator("#hs-hash")).to_have_text(HASH)
    await expect(page.locator("#hs-seed-row")).to_be_hidden()
    assert SEED not in await page.content()  # HS5: never before the reveal
    whole = await page.evaluate(WHOLE_JS, "hs-hash")
    assert whole["right"] <= whole["w"], whole
    assert whole["bottom"] <= whole["h"], whole
    assert whole["sw"] <= whole["cw"] + 1, whole  # wrapped, not cut

    machines = await publish_bank(feed, seats=6, state="closed")
    winners: list[dict[str, object]] = [
        {"index": 0, "winner": "002", "prize_cents": 10_000, "machine": machines[1],
         "player": "Johannes van der Merwe"},
        {"index": 1, "winner": None, "prize_cents": 0},
    ]  # fmt: skip
    await feed.publish("heat/17/hotseat", committed(winners), retain=True)
    items = page.locator("#hs-winners li")
    await expect(items).to_have_count(2)
    await expect(items.nth(0)).to_have_text(
        f"Draw 1: seat 002 ({machines[1]} · Johannes van der Merwe) — R100"
    )
    await expect(items.nth(1)).to_have_text("Draw 2: void, no eligible seat (rule HS3)")
    await expect(page.locator("#hs-seed")).to_have_text(SEED)
    await expect(page.locator("#hs-hash")).to_have_text(HASH)  # to check the seed against
    for item in await items.all():  # the winner's line whole, inside the screen
        assert await item.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        rect = await item.bounding_box()
        assert rect is not None
        assert rect["y"] + rect["height"] <= 1080


def teams_board() -> dict[str, object]:
    names = ["Aces", "Kings of the Northern Cape", "Jacks", "Queens"]
    return {
        "tournament": 3, "name": "Ridge Classic", "stage": "qualifying",
        "stage_title": "Qualifying", "scoring": "sum of members", "advance": 2,
        "official": False,
        "rows": [{"place": i + 1, "team": 10 + i, "name": n, "total": 9000 - 1000 * i,
                  "tie": False, "out": False, "goes_on": i < 2, "members": ["A", "B"]}
                 for i, n in enumerate(names)],
        "cuts": [{"after": 2, "label": "Top 2 teams go on (rule H10)"}],
        "prizes": [{"place": 1, "cents": 40_000, "paid": False},
                   {"place": 2, "cents": 20_000, "paid": True}],
    }  # fmt: skip


async def test_h6_h10_h11_team_rows_beside_the_leaderboard(
    signage: SignageServer, page: Page
) -> None:
    feed = signage.feed
    await feed.publish("tournament/3/leaderboard", leaderboard(), retain=True)
    await feed.publish("tournament/3/teams", teams_board(), retain=True)
    await open_board(page, f"{signage.url}tournament/3")
    teams = page.locator("#teams")
    await expect(teams).to_be_visible()
    await expect(teams.locator(".row:not(.cut)")).to_have_count(4)
    await expect(teams.locator(".row.cut")).to_have_text("Top 2 teams go on (rule H10)")
    first = teams.locator(".row").first
    await expect(first.locator(".player")).to_have_text("Aces")
    await expect(first.locator(".credits")).to_have_text("9,000")
    await expect(first.locator(".prize")).to_have_text("R400")
    await expect(teams.locator(".row").nth(1).locator(".flag")).to_have_text("paid")
    await expect(page.locator("#teams-note")).to_contain_text("countback (rule H7)")
    board_box = await page.locator("#board").bounding_box()
    teams_box = await teams.bounding_box()
    assert board_box is not None
    assert teams_box is not None
    assert teams_box["x"] >= board_box["x"] + board_box["width"]  # beside, not over
    long_name = teams.locator(".row .player").nth(1)
    assert await long_name.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
