"""Render a screenshot of every console screen into ``docs/screens/console-*.png``.

    PYTHONPATH=. python docs/screens/render_console.py [--out docs/screens]

Runs what an operator would see: an emulated bank of six machines (one with its door
open) served by ``reelgate serve --http``, a tournament whose first heat starts by the
schedule while emulated players play, and a Super 9 history seeded through the desk.
Debian's chromium drives the console through Playwright (``--chromium PATH``; no browser
is downloaded).  Everything runs on loopback in a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from argon2 import PasswordHasher  # noqa: E402
from playwright.async_api import Page, async_playwright  # noqa: E402

import storage.accounts  # noqa: E402
from emulators.bank import Bank  # noqa: E402
from gateway.accounts import service  # noqa: E402
from gateway.accounts.roles import Role  # noqa: E402
from gateway.app.commands import serve as serve_command  # noqa: E402
from gateway.app.context import GatewayContext  # noqa: E402
from gateway.floor.store import set_bank_enabled  # noqa: E402
from gateway.super9.desk import Super9Desk  # noqa: E402
from gateway.super9.rules.verification import Verification  # noqa: E402
from gateway.tournament import services as svc  # noqa: E402
from gateway.tournament.rules.enums import EntryValidity, Stage  # noqa: E402
from gateway.tournament.services.prizes import apportion_surplus, set_schedule  # noqa: E402
from gateway.tournament.settings import TournamentSettings  # noqa: E402

PASSWORD = "console screens 1"
ZONE = ZoneInfo("Africa/Johannesburg")
NAMES = ["Thandi Mokoena", "Pieter Botha", "Lerato Dlamini", "Sipho Nkosi", "Anika Pretorius",
         "Johan van Wyk"]  # fmt: skip


def _floor(bank: Bank) -> str:
    rows = ",\n".join(
        f'  {{ id = "{b.machine.machine_id}", endpoint = "{b.endpoint}" }}' for b in bank.machines
    )
    return f'[[bank]]\nname = "A"\nmachines = [\n{rows},\n]\n'


def _id(i: int) -> str:
    return f"85020{i}5800087"


async def _tournament(ctx: GatewayContext) -> None:
    await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="technician")
    async with svc.unit_of_work(ctx.sessions) as s:
        for role in Role:
            await service.add_user(
                s, role.value, role.value, PASSWORD, actor="setup", now=datetime.now(UTC)
            )
        # A cashier who left: the Accounts screen shows a disabled account and its Enable.
        await service.add_user(
            s, "sipho", Role.CASHIER.value, PASSWORD, actor="admin", now=datetime.now(UTC)
        )
        await service.disable_user(s, "sipho", actor="admin", now=datetime.now(UTC))
    now = datetime.now(UTC)  # the first heat starts by the schedule, soon after
    async with svc.unit_of_work(ctx.sessions) as s:
        settings = TournamentSettings(validity=EntryValidity.HOURS_48)
        t = await svc.create_tournament(s, "Winter Classic", settings, actor="director")
        first = await svc.schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=30),
            bank_name="A", duration_seconds=25, starting_credits=500, actor="director",
            now=now, number=1,
        )  # fmt: skip
        await svc.schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(hours=3),
            bank_name="A", duration_seconds=600, starting_credits=1000, actor="director",
            now=now, number=2,
        )  # fmt: skip
        for i, name in enumerate(NAMES):
            await svc.add_player(
                s, id_number=_id(i), name=name, date_of_birth=date(1985, 2, 1 + i),
                actor="desk", now=now, card_number=f"7001002{i:02d}",
            )  # fmt: skip
            await svc.sell_entries(s, t.id, _id(i), quantity=2 if i < 2 else 1, cashier="cashier",
                                   now=now)  # fmt: skip
        heat_id = first.id
        await set_schedule(s, t.id, Stage.QUALIFYING, {1: 500000, 2: 250000, 3: 100000},
                           actor="director", now=now)  # fmt: skip
        await apportion_surplus(s, t.id, Stage.QUALIFYING, 60000, {1: 30000, 2: 18000, 3: 12000},
                                reason="larger field", actor="director", now=now)  # fmt: skip
    for i in range(len(NAMES) - 1):  # the sixth machine's seat stays free
        async with svc.unit_of_work(ctx.sessions) as s:
            await svc.register_for_heat(s, heat_id, _id(i), actor="desk", now=now)


def _day(day: int, hh: int, mm: int = 0) -> datetime:
    return datetime(2026, 11, day, hh, mm, tzinfo=ZONE)


async def _super9(ctx: GatewayContext) -> None:
    """A closed Sunday session with a prize to pay, and the Wednesday draw under way."""
    s9 = Super9Desk(ctx.sessions)
    nine = "1 2 3 4 5 6 7 8 9"
    section = Verification(NAMES[0], _id(0), "082 555 0100", True)
    await s9.sell("C1", _id(0), actor="cashier", now=_day(15, 9))
    await s9.hand_in("C1", nine, actor="desk", now=_day(15, 10), verification=section)
    closed = await s9.open_session(_day(15, 15), actor="promotion-director", now=_day(15, 14, 50))
    for n in range(1, 10):
        await s9.record_result(closed, n, n, now=_day(15, 15, n))
    await s9.claim(closed, "C1", nine, actor="dealer", now=_day(15, 15, 10))
    await s9.close_session(closed, actor="promotion-director", now=_day(15, 15, 30))
    await s9.sell("D1", _id(1), actor="cashier", now=_day(18, 10))
    await s9.hand_in(
        "D1", "10 11 12 13 14 15 16 17 18", actor="desk", now=_day(18, 11),
        verification=Verification(NAMES[1], _id(1), "082 555 0101", True),
    )  # fmt: skip
    drawing = await s9.open_session(_day(18, 19), actor="promotion-director", now=_day(18, 18, 50))
    for game, number in enumerate((10, 22, 11, 35, 12), start=1):
        await s9.record_result(drawing, game, number, now=_day(18, 19, game))
    await s9.void_spin(drawing, game_no=2, seq=None, actor="dealer", reason="ball left the wheel",
                       now=_day(18, 19, 3))  # fmt: skip


class Shooter:
    def __init__(self, page: Page, base: str, out: Path) -> None:
        self.page, self.base, self.out = page, base, out
        self.shots: list[str] = []

    async def as_(self, account: str) -> None:
        await self.page.context.clear_cookies()
        await self.page.goto(f"{self.base}/login")
        await self.page.get_by_label("Account").fill(account)
        await self.page.get_by_label("Password").fill(PASSWORD)
        await self.page.get_by_role("button", name="Sign in").click()
        await self.page.wait_for_url(f"{self.base}/")

    async def shot(self, name: str, path: str | None = None, *, full: bool = False) -> None:
        if path is not None:
            await self.page.goto(f"{self.base}{path}")
        await self.page.wait_for_timeout(400)  # the live stream's first frames
        target = self.out / f"console-{name}.png"
        await self.page.screenshot(path=str(target), full_page=full)
        self.shots.append(target.name)


async def _until(cond: Callable[[], bool], within: float) -> None:
    for _ in range(int(within / 0.1)):  # bounded
        if cond():
            return
        await asyncio.sleep(0.1)
    raise TimeoutError("the heat did not get there in time")


async def _shoot(s: Shooter, serving: serve_command.Serving) -> None:
    page = s.page
    await page.goto(f"{s.base}/login")
    await s.shot("login")
    await s.as_("director")  # the Tonight board: a director reads every part of it
    await s.shot("tonight", full=True)
    await s.as_("technician")
    await page.goto(f"{s.base}/floor/A")
    await page.get_by_role("button", name="Enable bank A").click()
    await s.shot("confirm-dialog")
    await page.keyboard.press("Escape")
    await page.get_by_role("button", name="Check bank A").click()
    await page.wait_for_selector("[data-check], .flash.error")
    await s.shot("bank-check", full=True)
    scheduler = serving.scheduler
    await _until(lambda: "A" in scheduler.live, 30)
    await asyncio.sleep(5)  # a few seconds of play
    await s.shot("floor", "/floor", full=True)
    await s.as_("director")
    await s.shot("heat-live", "/heat/A", full=True)
    await page.get_by_role("button", name="Pause").click()
    await page.locator("#confirm-ok").click()
    await page.wait_for_selector("#order [data-done]")
    await page.wait_for_timeout(800)
    await s.shot("heat-paused", full=True)
    await page.get_by_role("button", name="Resume").click()
    await page.locator("#confirm-ok").click()
    await page.wait_for_selector("#order [data-done]")
    await _until(lambda: bool(scheduler.finished), 60)
    await page.wait_for_selector("#standings .badge.ok", timeout=30_000)
    await s.shot("heat-official", full=True)
    # A manual score (T23) of a seat of the closed heat, from its row: the form, filled.
    await page.locator("#standings").get_by_role("link", name="Manual score for seat").first.click()
    await page.get_by_label("Credits", exact=True).fill("1500")
    await page.get_by_label("Reason (rule 23)").fill("link failed; meter read off the machine")
    await s.shot("manual-score", full=True)
    await s.shot("heats", "/heat")
    await s.shot("standings", "/standings", full=True)
    await page.goto(f"{s.base}/schedule")
    await page.locator("article[data-heat] summary").first.click()  # a heat's Change panel
    await s.shot("schedule", full=True)
    await s.shot("finals", "/finals", full=True)
    await s.shot("tournaments", "/tournaments?edit=1", full=True)
    await s.shot("prizes", "/prizes", full=True)
    await s.as_("cashier")
    await s.shot("desk-search", "/desk?q=bo", full=True)
    player = page.locator('[data-player="Pieter Botha"]')
    await player.get_by_label("Till slip").fill("T-0042")
    await player.get_by_role("button", name="Sell to Pieter Botha").click()
    await page.locator("#confirm-ok").click()
    await page.wait_for_selector("article.receipt")
    await s.shot("receipt")
    await s.shot("players", "/players?q=bo", full=True)
    await s.shot("forbidden", "/heat/A")
    await s.shot("roll-call", "/heats/2/roll-call")
    await s.shot("super9", "/super9", full=True)
    await s.shot("super9-receipt", "/super9/tickets/D1/receipt")  # a sale's receipt (S9-5)
    await page.goto(f"{s.base}/super9/sessions/1")
    prize = page.locator('[data-prize="C1"]').first
    await prize.get_by_label("Receipt signature").fill("receipt 0001")
    await prize.get_by_label("Winner's ID or card").fill(_id(0))
    await prize.get_by_role("button", name="Pay C1").click()
    await s.shot("super9-closed", full=True)
    await s.as_("dealer")
    await s.shot("super9-draw", "/super9/sessions/2", full=True)
    await s.as_("promotion-director")
    await _super9_keyed(s)
    await s.shot("approvals", "/pending")
    await s.shot("audit", "/audit")
    await s.as_("director")  # the day's cash-up, and the signed records to take away
    await s.shot("cashup", "/cashup", full=True)
    await s.as_("admin")
    await s.shot("accounts", "/accounts", full=True)


async def _super9_keyed(s: Shooter) -> None:
    """The promotion director keys a one-off session from the paper log (S9-4)."""
    await s.page.goto(f"{s.base}/super9")
    form = s.page.locator("#calendar-change")
    await form.get_by_label("Session at (venue time)").fill("2026-11-26T19:00")
    await form.get_by_label("Reason", exact=True).fill("festival encore")
    await form.locator("details.keyed summary").click()
    await form.get_by_label("Happened at (venue time)").fill("2026-11-20T08:30")
    await form.get_by_label("Why keyed late").fill("keyed from the paper log after a power cut")
    await form.scroll_into_view_if_needed()
    await s.shot("super9-keyed", full=True)


async def render(out: Path, chromium: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite+aiosqlite:///{Path(tmp) / 'screens.db'}"
        bank = Bank(6, name_prefix="A")
        await bank.start()
        bank.machines[3].machine.open_slot_door()
        floor = Path(tmp) / "floor.toml"
        floor.write_text(_floor(bank))
        spool = Path(tmp) / "spool"
        ctx = await GatewayContext.open(
            database=db, floor_path=str(floor), spool=spool, upgrade=True
        )
        try:
            await _tournament(ctx)
            await _super9(ctx)
        finally:
            await ctx.close()
        bank.start_players(seed=3, pace=0.8)
        parser = argparse.ArgumentParser()
        serve_command.register(parser.add_subparsers())
        args = parser.parse_args(
            ["serve", "--floor", str(floor), "--database", db, "--spool", str(spool),
             "--tick", "0.2", "--http", "127.0.0.1:0"]
        )  # fmt: skip
        stop = asyncio.Event()
        ready: list[serve_command.Serving] = []
        task = asyncio.create_task(serve_command.serve(args, stop, on_ready=ready.append))
        try:
            await _until(lambda: bool(ready) or task.done(), 30)
            serving = ready[0]
            assert serving.http_url is not None
            base = serving.http_url.removesuffix("/api/v1") + "/console"
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                context = await browser.new_context(viewport={"width": 1024, "height": 700})
                page = await context.new_page()
                page.set_default_timeout(20_000)
                shooter = Shooter(page, base, out)
                await _shoot(shooter, serving)
                await browser.close()
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)
            await bank.close()
        return shooter.shots


def main() -> int:
    # Screenshots need no strong password hashing: accounts are made and signed in fast.
    storage.accounts.HASHER = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in asyncio.run(render(args.out, args.chromium)):
        print(f"{args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
