"""Console benchmark: a machine's credit change → the director's live heat page.

    python bench/console.py                  # 200 seats, a 40 s heat
    python bench/console.py --seats 50 --seconds 30

An emulated bank (its own process, ``bench/bank_host.py``, SAS over loopback TCP with
the 200 ms poll spacing) with a player at every machine; ``reelgate serve --http`` in this
process runs a tournament heat on it; Debian's chromium shows the console's live heat
page (Playwright).  Each credit change is stamped by the machine as it happens (wall
clock) and by the page when the seat's credits cell shows that value (a
MutationObserver), so the figure is the whole path: the SAS poll that reads the meter,
the heat runner's note, the live feed, the Server-Sent Event and the page's update.
Changes the page never shows (overwritten before the next poll read them) are counted
apart.  Goal: p99 under 300 ms including the 200 ms SAS poll.  Prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import gc
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from argon2 import PasswordHasher  # noqa: E402
from bank_host import BankProcess  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import storage.accounts  # noqa: E402
from gateway.accounts import service  # noqa: E402
from gateway.app.commands import serve as serve_command  # noqa: E402
from gateway.app.context import GatewayContext  # noqa: E402
from gateway.floor.store import set_bank_enabled  # noqa: E402
from gateway.tournament import services as svc  # noqa: E402
from gateway.tournament.rules.enums import EntryValidity, Stage  # noqa: E402
from gateway.tournament.settings import TournamentSettings  # noqa: E402

GOAL_P99_MS = 300.0
# Every seat message the gateway publishes: (monotonic s, machine, credits).  The
# gateway runs in this process, so its feed is stamped here (see _stamp_publishes).
PUBLISHED: list[tuple[float, str, int]] = []
CPU: dict[str, float] = {}  # share of one core during the heat, per process
LAG: list[float] = []  # the gateway's event loop: how late a 20 ms sleep woke (ms)
GC_MS: list[float] = []  # the collector's full passes in this process during the heat
RAW: dict[str, Any] = {}  # the raw stamps of the heat, for --dump FILE


def _time_collections() -> None:
    started: list[float] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            started[:] = [time.perf_counter()]
        elif started:
            GC_MS.append((time.perf_counter() - started[0]) * 1000)

    gc.callbacks.append(note)


async def _sample_lag(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():  # bounded by the heat: stopped when it is over
        t = loop.time()
        await asyncio.sleep(0.02)
        LAG.append((loop.time() - t - 0.02) * 1000)


def _stamp_publishes() -> None:
    """Stamp the live feed's seat messages as the gateway publishes them (a bench-only
    wrapper around FanoutFeed.publish_nowait): the split between the gateway's part and
    the stream's and page's."""
    from gateway.web.fanout import FanoutFeed

    original = FanoutFeed.publish_nowait

    def publish_nowait(
        self: FanoutFeed, topic: str, payload: dict[str, Any], *, retain: bool = False
    ) -> None:
        original(self, topic, payload, retain=retain)
        credits = payload.get("credits")
        if "/seat/" in topic and isinstance(credits, int):
            PUBLISHED.append((time.monotonic(), str(payload.get("machine")), credits))

    FanoutFeed.publish_nowait = publish_nowait  # type: ignore[method-assign]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


PASSWORD = "bench console 1"
WATCH = """() => {
  window.__seen = [];
  const obs = new MutationObserver((records) => {
    const t = Date.now();
    for (const r of records) {
      const cell = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      const row = cell && cell.closest("[data-seat]");
      if (row && cell.dataset.f === "credits")
        window.__seen.push([row.dataset.seat, cell.textContent, t]);
    }
  });
  obs.observe(document.getElementById("standings"),
              { subtree: true, childList: true, characterData: true });
}"""


async def _prepare(ctx: GatewayContext, seats: int, seconds: int, machines: list[str]) -> None:
    storage.accounts.HASHER = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="bench")
    now = datetime.now(UTC)
    async with svc.unit_of_work(ctx.sessions) as s:
        await service.add_user(s, "director", "director", PASSWORD, actor="bench", now=now)
        settings = TournamentSettings(validity=EntryValidity.HOURS_48)
        t = await svc.create_tournament(s, "Bench", settings, actor="bench")
        heat = await svc.schedule_heat(
            s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=40),
            bank_name="A", duration_seconds=seconds, starting_credits=10_000, actor="bench",
            now=now, number=1,
        )  # fmt: skip
        for i in range(seats):
            idn = f"{8000000000000 + i * 10:013d}"
            await svc.add_player(
                s, id_number=idn, name=f"Player {i + 1}", date_of_birth=date(1980, 1, 1),
                actor="bench", now=now,
            )  # fmt: skip
            await svc.sell_entries(s, t.id, idn, cashier="bench", now=now)
            await svc.register_for_heat(s, heat.id, idn, actor="bench", now=now)


def _latencies(
    log: list[list[Any]], seen: list[list[Any]], offset: float, before: float = float("inf")
) -> tuple[list[float], int]:
    """Per credit change the page showed, the time from the change (machine clock,
    monotonic s) to its first showing (page clock, epoch ms; ``offset`` = epoch -
    monotonic).  A cell written again with the value it already shows is a re-render,
    not a change: only the first showing of each change counts.  ``before``: time only
    the changes made before this machine-clock time."""
    changes: dict[tuple[str, int], list[float]] = {}
    for machine, credits, at in log:
        changes.setdefault((machine, int(credits)), []).append(float(at))
    out: list[float] = []
    shown: set[tuple[str, int, int]] = set()
    for machine, text, t_ms in seen:
        if not str(text).isdigit():
            continue
        at = t_ms / 1000 - offset
        times = changes.get((machine, int(text)), [])
        i = bisect.bisect_right(times, at) - 1
        if i >= 0 and (machine, int(text), i) not in shown:
            shown.add((machine, int(text), i))
            if times[i] < before:
                out.append((at - times[i]) * 1000)
    return out, len(log)


def _gateway_part(log: list[list[Any]]) -> list[float]:
    """Per change, the time to the first seat message the gateway published with its
    value (the SAS poll that learnt it, the watcher, the feed).  A change overtaken by a
    later one (a later value of the machine published first) is left out."""
    by_machine: dict[str, list[tuple[float, int]]] = {}
    for t, machine, credits in PUBLISHED:
        by_machine.setdefault(machine, []).append((t, credits))
    changes: dict[str, list[tuple[float, int]]] = {}
    for machine, credits, at in log:
        changes.setdefault(machine, []).append((float(at), int(credits)))
    out: list[float] = []
    for machine, seq in changes.items():
        pubs = by_machine.get(machine, [])
        times = [p[0] for p in pubs]
        for i, (at, credits) in enumerate(seq):
            later = {v for _, v in seq[i + 1 : i + 20]} - {credits}
            for t, value in pubs[bisect.bisect_left(times, at) :]:
                if value == credits:
                    out.append((t - at) * 1000)
                    break
                if value in later:
                    break  # overtaken
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(seats: int, seconds: int, chromium: str) -> dict[str, float]:
    bank = BankProcess(seats, players=False, prefix="A")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "floor.toml").write_text(bank.floor_toml())
            db = f"sqlite+aiosqlite:///{folder / 'bench.db'}"
            ctx = await GatewayContext.open(
                database=db, floor_path=str(folder / "floor.toml"), spool=folder / "spool",
                upgrade=True,
            )  # fmt: skip
            try:
                await _prepare(ctx, seats, seconds, [m["machine"] for m in bank.machines])
            finally:
                await ctx.close()
            parser = argparse.ArgumentParser()
            serve_command.register(parser.add_subparsers())
            args = parser.parse_args(
                ["serve", "--floor", str(folder / "floor.toml"), "--database", db,
                 "--spool", str(folder / "spool"), "--tick", "0.2", "--http", "127.0.0.1:0",
                 "--log-level", "WARNING"]
            )  # fmt: skip
            stop = asyncio.Event()
            ready: list[serve_command.Serving] = []
            task = asyncio.create_task(serve_command.serve(args, stop, on_ready=ready.append))
            try:
                for _ in range(600):  # bounded
                    if ready or task.done():
                        break
                    await asyncio.sleep(0.1)
                serving = ready[0]
                assert serving.http_url is not None
                base = serving.http_url.removesuffix("/api/v1") + "/console"
                return await _measure(bank, serving, base, chromium)
            finally:
                stop.set()
                await asyncio.wait_for(task, 60)
    finally:
        bank.close()


async def _measure(
    bank: BankProcess, serving: serve_command.Serving, base: str, chromium: str
) -> dict[str, float]:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = await browser.new_page()
        await page.goto(f"{base}/login")
        await page.get_by_label("Account").fill("director")
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{base}/")
        await page.goto(f"{base}/heat/A")
        await page.wait_for_selector("#live-mark:text('live')")
        await page.evaluate(WATCH)
        scheduler = serving.scheduler
        for _ in range(1200):  # bounded: the heat starts by the schedule
            if "A" in scheduler.live:
                break
            await asyncio.sleep(0.1)
        cpu0 = (time.process_time(), _cpu_seconds(bank.proc.pid), time.monotonic())
        lag_stop = asyncio.Event()
        lag_task = asyncio.create_task(_sample_lag(lag_stop))
        GC_MS.clear()
        await asyncio.to_thread(bank.ask, "players on")
        await asyncio.to_thread(bank.ask, "credit-log")  # from here on
        offset = time.time() - time.monotonic()  # the page's epoch ms onto the machines' clock
        for _ in range(3000):  # bounded: until the heat is over
            if scheduler.finished:
                break
            await asyncio.sleep(0.1)
        log = (await asyncio.to_thread(bank.ask, "credit-log"))["credit_log"]
        lag_stop.set()
        await lag_task
        wall = time.monotonic() - cpu0[2]
        CPU["gateway"] = (time.process_time() - cpu0[0]) / wall
        CPU["bank"] = (_cpu_seconds(bank.proc.pid) - cpu0[1]) / wall
        seen = await page.evaluate("() => window.__seen")
        await browser.close()
    RAW.update(log=log, seen=seen, offset=offset, published=PUBLISHED)
    # The watchers go quiet a poll spacing before the end (the lock must find idle
    # links): a change in the heat's last second is shown with the scores.  Timed apart.
    cutoff = max((float(at) for _, _, at in log), default=0.0) - 1.0
    values, changes = _latencies(log, seen, offset)
    play, _ = _latencies(log, seen, offset, before=cutoff)
    gateway = _gateway_part(log)
    return {
        "changes": changes,
        "shown": len(values),
        "p50": statistics.median(values) if values else float("nan"),
        "p99": _pct(values, 0.99) if values else float("nan"),
        "play99": _pct(play, 0.99) if play else float("nan"),
        "max": max(values) if values else float("nan"),
        "gw50": statistics.median(gateway) if gateway else float("nan"),
        "gw99": _pct(gateway, 0.99) if gateway else float("nan"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=40)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument(
        "--profile", metavar="HTML", help="profile this process (pyinstrument, if installed)"
    )
    parser.add_argument("--dump", metavar="JSON", help="write the raw stamps to this file")
    args = parser.parse_args()
    _stamp_publishes()
    _time_collections()
    if args.profile:
        try:  # an optional tool, not a dependency of the project
            profiling: Any = importlib.import_module("pyinstrument")
        except ModuleNotFoundError:
            parser.error("--profile needs pyinstrument (pip install pyinstrument)")
        with profiling.Profiler(async_mode="disabled") as profiler:
            r = asyncio.run(run(args.seats, args.seconds, args.chromium))
        Path(args.profile).write_text(profiler.output_html())
        print(profiler.output_text(unicode=False, show_all=False)[:6000])
    else:
        r = asyncio.run(run(args.seats, args.seconds, args.chromium))
    if args.dump:  # for a closer look: every change, showing and publication, stamped
        Path(args.dump).write_text(json.dumps(RAW))
    table = Table(title="machine credit change → console live heat page")
    cols = ("seats", "credit changes", "shown on the page", "p50", "p99",
            "p99 but the last second", "max",
            "change → published p50 / p99", "CPU gateway / bank",
            "loop lag p50 / p99")  # fmt: skip
    for col in cols:
        table.add_column(col)
    table.add_row(
        str(args.seats), str(int(r["changes"])), str(int(r["shown"])),
        f"{r['p50']:.0f} ms", f"{r['p99']:.0f} ms", f"{r['play99']:.0f} ms",
        f"{r['max']:.0f} ms", f"{r['gw50']:.0f} / {r['gw99']:.0f} ms",
        f"{CPU.get('gateway', 0):.0%} / {CPU.get('bank', 0):.0%}",
        f"{_pct(LAG, 0.5):.0f} / {_pct(LAG, 0.99):.0f} ms" if LAG else "-",
    )  # fmt: skip
    Console().print(table)
    if GC_MS:
        print(f"full collections in the heat: {len(GC_MS)}, longest {max(GC_MS):.0f} ms")
    print(f"goal: p99 <= {GOAL_P99_MS:.0f} ms including the 200 ms SAS poll")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
