"""Render a screenshot of every signage board in every layout into ``docs/screens/``.

    python docs/screens/render_signage.py            # all of them, signage-*.png
    python docs/screens/render_signage.py --out /tmp # somewhere else

Starts the boards on a free loopback port, publishes a realistic floor through the
feed (a 20-seat qualifying heat on bank A with one struck-out seat, the tournament's
leaderboard with its cuts and prizes, a bank waiting for its next heat, a three-player
heat on bank C, a Super 9 draw; then a Super 9 sign between draws on a feed of its own)
and photographs each board with Debian's chromium (Playwright; ``REELGATE_CHROMIUM``
names another binary, nothing is downloaded).  Run it after changing a board and
commit the pictures with the change.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playwright.async_api import async_playwright  # noqa: E402

from gateway.web import FanoutFeed, SignageSettings, start_signage  # noqa: E402

CHROMIUM = os.environ.get("REELGATE_CHROMIUM", "/usr/bin/chromium")
VENUE = ZoneInfo("Africa/Johannesburg")
NAMES = [
    "Thandiwe Mokoena", "Johannes van der Merwe", "Nomvula Dlamini-Zulu", "Pieter Botha",
    "Lindiwe Ndlovu", "Sipho Nkosi", "Anneke Steenkamp", "Mohammed Patel", "Zanele Khumalo",
    "Francois du Plessis", "Ayanda Mthembu", "Chantelle Jacobs", "Bongani Sithole",
    "Riana Venter", "Kagiso Molefe", "Precious Mahlangu", "Willem Pretorius",
    "Naledi Mokgadi", "Themba Zwane", "Elizabeth Fourie",
]  # fmt: skip
LAYOUTS = {
    "landscape": (1920, 1080),
    "portrait": (1080, 1920),
    "topper": (1920, 360),
    "topper-wide": (3840, 540),
}
BOARDS = {  # file stem -> path under /signage/
    "bank": "bank/A",
    "bank-waiting": "bank/B",
    "bank-short": "bank/C",
    "tournament": "tournament/3",
    "super9": "super9",
    "floor": "",
}


async def publish_floor(feed: FanoutFeed) -> None:
    label = {"name": "Ridge Classic - heat 12", "stage": "Qualifying", "bank": "A",
             "tournament": "3"}  # fmt: skip
    machines = [f"A{i:02d}" for i in range(1, 21)]
    ends = datetime.now(UTC) + timedelta(minutes=7, seconds=42)
    await feed.publish("current", {"heat": "41", **label}, retain=True)
    await feed.publish(
        "heat/41/state",
        {"heat": "41", "state": "running", "ends_at": ends.isoformat(), "machines": machines,
         **label},
        retain=True,
    )  # fmt: skip
    for i, machine in enumerate(machines):
        credits = 1000 + ((i * 7919) % 1900) - 400
        await feed.publish(
            f"heat/41/seat/{machine}",
            {"machine": machine, "credits": credits, "player": NAMES[i], "final": False,
             "malfunction": "slot door opened" if machine == "A07" else None},
            retain=True,
        )  # fmt: skip
    rows = [{"place": i + 1, "entry": 500 + i, "player": NAMES[(i * 3) % 20],
             "credits": 2875 - 37 * i, "tie": i in (5, 6), "heat": 1 + i % 11}
            for i in range(60)]  # fmt: skip
    rows[6]["place"], rows[6]["credits"] = 6, rows[5]["credits"]  # a tie (rule 19)
    await feed.publish(
        "tournament/3/leaderboard",
        {"tournament": 3, "name": "Ridge Classic", "stage": "qualifying",
         "stage_title": "Qualifying", "official": False, "rows": rows,
         "cuts": [{"after": 1, "label": "Top entry: straight to the Final (rule 13)"},
                  {"after": 50, "label": "Qualifying cut: to place 50, semi-final (rule 14)"}],
         "prizes": [{"place": 1, "cents": 2_000_000}, {"place": 2, "cents": 1_000_000},
                    {"place": 3, "cents": 500_000}]},
        retain=True,
    )  # fmt: skip
    starts = (datetime.now(VENUE) + timedelta(hours=2)).replace(minute=30, second=0)
    await feed.publish(
        "bank/B/next",
        {"bank": "B", "heat": "42", "name": "Ridge Classic - heat 13", "stage": "Qualifying",
         "starts_at": starts.astimezone(UTC).isoformat()},
        retain=True,
    )  # fmt: skip
    short = {"name": "Ridge Classic - heat 14", "stage": "Qualifying", "bank": "C",
             "tournament": "3"}  # fmt: skip
    await feed.publish(
        "heat/43/state",
        {"heat": "43", "state": "running", "ends_at": ends.isoformat(),
         "machines": ["C01", "C02", "C03"], **short},
        retain=True,
    )  # fmt: skip
    for i, machine in enumerate(["C01", "C02", "C03"]):
        await feed.publish(
            f"heat/43/seat/{machine}",
            {"machine": machine, "credits": 1180 - 95 * i, "player": NAMES[10 + i],
             "final": False, "malfunction": None},
            retain=True,
        )  # fmt: skip
    await feed.publish(
        "super9/88/draw",
        {"session": 88, "status": "drawing", "called": [32, 15, 19, 4, 21, 2, 25, 0, 17, 34],
         "last": {"number": 17}, "spins": 11, "counted_spins": 10, "jackpot_spins": 18,
         "jackpot_live": True, "jackpot_cents": 1_874_250, "voided_games": [6],
         "completed": [], "completed_count": 0,
         "near_complete": [{"ticket": "A1093", "to_go": 1}, {"ticket": "B0217", "to_go": 2}]},
        retain=True,
    )  # fmt: skip


async def publish_between_draws(feed: FanoutFeed) -> None:
    """Session 88 closed; the jackpot rolled over; the next session tonight at 21:00."""
    starts = (datetime.now(VENUE) + timedelta(hours=2)).replace(minute=0, second=0)
    await feed.publish(
        "super9/jackpot",
        {"jackpot_cents": 1_989_000, "session": 88,
         "next_session": starts.astimezone(UTC).isoformat()},
        retain=True,
    )  # fmt: skip
    await feed.publish(
        "super9/88/draw",
        {"session": 88, "status": "closed", "called": [32, 15, 19, 4, 21, 2, 25, 0, 17, 34,
                                                       8, 11, 30, 23, 5, 14, 27, 36, 9, 12],
         "last": {"number": 12}, "spins": 22, "counted_spins": 20, "jackpot_spins": 18,
         "jackpot_live": False, "jackpot_cents": 1_989_000, "voided_games": [],
         "completed": [{"ticket": "A1093", "spin": 21, "counted": 20}], "completed_count": 1,
         "near_complete": []},
        retain=True,
    )  # fmt: skip


async def render(out: Path) -> list[Path]:
    written: list[Path] = []
    feed = FanoutFeed()
    await publish_floor(feed)
    written += await _photograph(feed, out, BOARDS)
    idle = FanoutFeed()
    await publish_between_draws(idle)
    written += await _photograph(idle, out, {"super9-between": "super9"})
    return written


async def _photograph(feed: FanoutFeed, out: Path, boards: dict[str, str]) -> list[Path]:
    venue = SignageSettings(title="Ridge Casino")
    server = await start_signage(feed, "127.0.0.1", 0, settings=venue)
    written: list[Path] = []
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM)
            for stem, path in boards.items():
                for layout, (width, height) in LAYOUTS.items():
                    if stem == "floor" and layout != "landscape":
                        continue  # the floor board is the desk's overview, not a wall screen
                    page = await browser.new_page(
                        viewport={"width": width, "height": height}, reduced_motion="reduce"
                    )
                    name = layout.split("-")[0]
                    await page.goto(f"{server.url}{path}?layout={name}")
                    # A selector, not a script: the boards' CSP forbids eval.
                    await page.locator("body[data-connection='live']").wait_for(state="attached")
                    await page.wait_for_timeout(400)  # the render after the replay
                    target = out / f"signage-{stem}-{layout}.png"
                    await page.screenshot(path=str(target))
                    written.append(target)
                    await page.close()
            await browser.close()
    finally:
        await server.close()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for path in asyncio.run(render(args.out)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
