"""The signage page in a real headless Chromium (Debian ``chromium``): what the floor sees.

Each test starts the server on 127.0.0.1:0, publishes through the :class:`FanoutFeed`
the way heats and the Super 9 desk do, opens the page and reads the rendered DOM.
"""

from __future__ import annotations

import json
import struct
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gateway.web import FanoutFeed, SignageServer, start_signage

from .browser import CHROMIUM, Chromium, available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not available(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
    ),
]

ROWS_JS = """JSON.stringify([...document.querySelectorAll('#%s tbody tr')].map(tr => ({
  machine: tr.dataset.machine,
  rank: tr.querySelector('.rank').textContent,
  player: tr.querySelector('.player').textContent,
  credits: tr.querySelector('.credits').textContent,
  flag: tr.querySelector('.flag').textContent,
  cls: tr.className})))"""


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Chromium]:
    chromium = await Chromium.launch(tmp_path / "profile")
    try:
        yield chromium
    finally:
        await chromium.close()


@pytest.fixture
async def signage() -> AsyncIterator[SignageServer]:
    server = await start_signage(FanoutFeed(), "127.0.0.1", 0)
    try:
        yield server
    finally:
        await server.close()


async def rows(browser: Chromium, table: str) -> list[dict[str, str]]:
    data = await browser.evaluate(ROWS_JS % table)
    assert isinstance(data, str)
    out: list[dict[str, str]] = json.loads(data)
    return out


async def text(browser: Chromium, selector: str) -> str:
    value = await browser.evaluate(f"document.querySelector({json.dumps(selector)}).textContent")
    assert isinstance(value, str)
    return value


async def banner_display(browser: Chromium) -> str:
    value = await browser.evaluate("getComputedStyle(document.querySelector('#banner')).display")
    assert isinstance(value, str)
    return value


SEATS = {  # machine -> credits, published in this (unsorted) order
    "B03": 1_250,
    "B01": 4_800,
    "B07": 3_100,
    "B02": 4_800,  # equal credits share a rank (T19: a card draw decides later)
    "B05": 990,
}


async def publish_heat(feed: FanoutFeed, *, state: dict[str, Any]) -> None:
    await feed.publish("current", {"heat": "17"}, retain=True)
    await feed.publish("heat/17/state", {"heat": "17", **state}, retain=True)
    for machine, credits in SEATS.items():
        await feed.publish(
            f"heat/17/seat/{machine}",
            {"heat": "17", "machine": machine, "credits": credits, "final": False,
             "malfunction": None, "at": datetime.now(UTC)},
            retain=True,
        )  # fmt: skip
    await feed.publish(
        "heat/17/seat/B04",
        {"heat": "17", "machine": "B04", "credits": 5_000, "final": False,
         "malfunction": "unlock failed: LinkTimeout", "at": datetime.now(UTC)},
        retain=True,
    )  # fmt: skip


DRAW = {
    "session": 42,
    "status": "drawing",
    "called": [17, 0, 32, 5, 36, 11, 8],
    "spins": 8,
    "counted_spins": 7,
    "jackpot_spins": 18,
    "jackpot_live": True,
    "jackpot_cents": 1_234_550,
    "last": {"number": 8, "game": 9},
    "voided_games": [3],
    "completed_count": 0,
    "completed": [],
    "near_complete": [{"ticket": "S9-0012", "to_go": 2}],
}


async def test_page_shows_heat_scores_countdown_and_super9_draw(
    browser: Chromium, signage: SignageServer, tmp_path: Path
) -> None:
    feed = signage.feed
    # Paused: the clock is frozen, so the countdown text is exact.
    await publish_heat(feed, state={"state": "paused", "seconds_left": 754.0})
    await feed.publish("super9/42/draw", DRAW, retain=True)
    await feed.publish("super9/jackpot", {"jackpot_cents": 1_234_550, "session": 42}, retain=True)

    await browser.goto(signage.url)
    await browser.wait_for("document.querySelectorAll('#scores tbody tr').length === 6")

    seats = await rows(browser, "scores")
    # Highest credits first; equal credits share rank 1; the faulted seat goes last with
    # its credits struck out (T20: a future seat, not a score).
    assert [r["machine"] for r in seats] == ["B01", "B02", "B07", "B03", "B05", "B04"]
    assert [r["rank"] for r in seats] == ["1", "1", "3", "4", "5", ""]
    assert [r["credits"] for r in seats] == ["4,800", "4,800", "3,100", "1,250", "990", "5,000"]
    assert "fault" in seats[-1]["cls"]
    assert "rule 20" in seats[-1]["flag"]

    assert await text(browser, "#countdown") == "12:34"
    assert await text(browser, "#heat-title") == "Heat 17"
    assert await text(browser, "#heat-state") == "Paused"

    called = await browser.evaluate(
        "[...document.querySelectorAll('#grid .cell.called')].map(c => +c.dataset.number)"
    )
    assert sorted(called) == sorted([17, 0, 32, 5, 36, 11, 8])  # DRAW["called"]
    cells = await browser.evaluate("document.querySelectorAll('#grid .cell').length")
    assert cells == 37  # 0 to 36
    last = await browser.evaluate("document.querySelector('#grid .cell.last').dataset.number")
    assert last == "8"
    assert await text(browser, "#s9-last") == "8"
    assert await text(browser, "#s9-counted") == "7 / 18"
    assert await text(browser, "#jackpot") == "R12,345.50"  # integer cents, shown in rand
    extra = await text(browser, "#s9-extra")
    assert "rule 19" in extra
    assert "game 3" in extra  # one repeat not counted; a no spin
    assert "S9-0012" in await text(browser, "#s9-near")
    assert await browser.evaluate("document.body.dataset.connection") == "live"

    # The same DOM a --dump-dom would print, and a screenshot for a person to look at.
    dom = await browser.dom()
    assert 'data-machine="B01"' in dom
    assert "12:34" in dom
    png = await browser.screenshot(tmp_path / "signage.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1920, 1080)


async def test_live_updates_reorder_scores_and_run_the_clock(
    browser: Chromium, signage: SignageServer
) -> None:
    feed = signage.feed
    await publish_heat(feed, state={"state": "armed", "seconds_left": 300.0})
    await browser.goto(signage.url)
    await browser.wait_for("document.querySelectorAll('#scores tbody tr').length === 6")
    assert await text(browser, "#countdown") == "5:00"

    # The heat starts (the runner's payload: ends_at), and B05 takes the lead.
    ends = datetime.now(UTC) + timedelta(seconds=300)
    await feed.publish(
        "heat/17/state", {"state": "running", "ends_at": ends.isoformat()}, retain=True
    )
    await feed.publish(
        "heat/17/seat/B05",
        {"heat": "17", "machine": "B05", "credits": 9_990, "final": False, "malfunction": None},
        retain=True,
    )
    await browser.wait_for("document.querySelector('#scores tbody tr').dataset.machine === 'B05'")
    assert await text(browser, "#heat-state") == "Playing"
    # A running clock counts down from the end time: below 5:00, far above zero.
    seconds = int(await browser.wait_for("+document.querySelector('#countdown').dataset.seconds"))
    assert 200 < seconds <= 300

    # After the heat: standings replace the live scores; ties are flagged (T19).
    standings = {
        "heat": "17",
        "void": False,
        "rows": [
            {"rank": 1, "machine": "B05", "credits": 9_990, "tie": False},
            {"rank": 2, "machine": "B01", "credits": 4_800, "tie": True},
            {"rank": 2, "machine": "B02", "credits": 4_800, "tie": True},
            {"rank": 4, "machine": "B07", "credits": 3_100, "tie": False},
        ],
    }
    await feed.publish("heat/17/state", {"state": "closed", "seconds_left": None}, retain=True)
    await feed.publish("heat/17/standings", standings, retain=True)
    await browser.wait_for("!document.querySelector('#standings-block').hidden")
    table = await rows(browser, "standings")
    assert [r["machine"] for r in table] == ["B05", "B01", "B02", "B07"]
    assert [r["rank"] for r in table] == ["1", "2", "2", "4"]
    assert [bool(r["flag"]) for r in table] == [False, True, True, False]
    assert await browser.evaluate("document.querySelector('#scores-block').hidden") is True
    assert "rule 19" in await text(browser, "#standings-note")
    assert await text(browser, "#countdown") == "0:00"


async def test_payload_text_is_shown_as_text_never_as_markup(
    browser: Chromium, signage: SignageServer
) -> None:
    hostile = (
        '<img src=x onerror="document.title=\'owned\'">'
        '<script>document.title="owned"</script>'
    )
    await signage.feed.publish("current", {"heat": "9", "name": hostile}, retain=True)
    await signage.feed.publish(
        "heat/9/seat/C01",
        {"machine": "C01", "credits": 10, "player": hostile, "final": False},
        retain=True,
    )
    await browser.goto(signage.url)
    await browser.wait_for("document.querySelectorAll('#scores tbody tr').length === 1")
    assert await text(browser, "#heat-title") == hostile
    assert await text(browser, "#scores .player") == hostile
    assert await browser.evaluate("document.querySelectorAll('img, main script').length") == 0
    assert await browser.evaluate("document.title") != "owned"


async def test_page_shows_reconnecting_and_recovers_when_the_stream_drops(
    browser: Chromium, signage: SignageServer
) -> None:
    await publish_heat(signage.feed, state={"state": "paused", "seconds_left": 60.0})
    await browser.goto(signage.url)
    await browser.wait_for("document.body.dataset.connection === 'live'")
    await browser.wait_for("document.querySelectorAll('#scores tbody tr').length === 6")

    port = signage.port
    await signage.close()  # the gateway restarts: the stream drops
    await browser.wait_for("document.body.dataset.connection === 'reconnecting'")
    banner = await text(browser, "#banner")
    assert "Reconnecting" in banner
    assert await banner_display(browser) == "block"
    # The last known values stay on screen (dimmed) while it reconnects.
    assert len(await rows(browser, "scores")) == 6

    # Back on the same port with a new state: the page reconnects by itself and replays.
    feed = FanoutFeed()
    await feed.publish("current", {"heat": "18"}, retain=True)
    await feed.publish("heat/18/state", {"state": "paused", "seconds_left": 125.0}, retain=True)
    await feed.publish("heat/18/seat/D01", {"machine": "D01", "credits": 77}, retain=True)
    again = await start_signage(feed, "127.0.0.1", port)
    try:
        await browser.wait_for("document.body.dataset.connection === 'live'", within=20)
        await browser.wait_for("document.querySelector('#countdown').textContent === '2:05'")
        assert [r["machine"] for r in await rows(browser, "scores")] == ["D01"]  # old heat gone
        assert await banner_display(browser) == "none"
    finally:
        await again.close()


async def test_page_says_when_the_mqtt_source_is_away(
    browser: Chromium, signage: SignageServer
) -> None:
    signage.feed.set_upstream("connected")
    await browser.goto(signage.url)
    await browser.wait_for("document.body.dataset.connection === 'live'")
    signage.feed.set_upstream("disconnected")
    await browser.wait_for("document.body.classList.contains('upstream-down')")
    assert "Waiting for the gateway feed" in await text(browser, "#banner")
    signage.feed.set_upstream("connected")
    await browser.wait_for("!document.body.classList.contains('upstream-down')")


async def test_seats_named_at_the_start_and_a_void_heat(
    browser: Chromium, signage: SignageServer
) -> None:
    feed = signage.feed
    ends = datetime.now(UTC) + timedelta(seconds=600)
    # The heat runner's own start message names the playing seats (T22).
    await feed.publish(
        "heat/30/state",
        {"state": "running", "ends_at": ends.isoformat(), "machines": ["E01", "E02", "E03"]},
        retain=True,
    )
    await feed.publish("heat/30/seat/E02", {"machine": "E02", "credits": 40}, retain=True)
    await browser.goto(signage.url)
    await browser.wait_for("document.querySelectorAll('#scores tbody tr').length === 3")
    seats = await rows(browser, "scores")
    assert [(r["machine"], r["credits"]) for r in seats] == [
        ("E02", "40"), ("E01", "—"), ("E03", "—"),
    ]  # fmt: skip
    assert await text(browser, "#heat-title") == "Heat 30"  # no "current": latest heat

    # T20: a tournament-system failure voids the heat; it will be restarted.
    await feed.publish("heat/30/state", {"state": "restarted"}, retain=True)
    await feed.publish("heat/30/standings", {"heat": "30", "void": True, "rows": []}, retain=True)
    await browser.wait_for("!document.querySelector('#standings-block').hidden")
    assert "rule 20" in await text(browser, "#heat-state")
    assert "rule 20" in await text(browser, "#standings-note")
    assert await rows(browser, "standings") == []
    assert await text(browser, "#countdown") == "--:--"
