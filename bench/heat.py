"""Heat benchmark: start skew, end-to-stored time and crash recovery, for banks of N machines.

    python bench/heat.py                 # banks of 10, 50 and 200 machines, 3 runs each
    python bench/heat.py --sizes 10 --runs 5
    python bench/heat.py --sizes 1000    # four emulator processes of 250 machines
    python bench/heat.py --sizes 1000 --recoveries 1 --no-players

The emulated machines run in processes of their own (``bench/bank_host.py``, at most
``--per-process`` machines each, 250 by default) and are reached over SAS/TCP on loopback,
with the SAS client's per-machine poll spacing (200 ms) in force; the gateway runs one heat
over all of them as one bank.  With two CPUs or more the emulator processes share a CPU
of their own and the gateway the others (``--no-pin``: leave it to the scheduler), as
machines on a floor have their own.

* start skew -- the spread of the times at which the *machines* enabled play for the heat
  (each emulated EGM stamps its own PLAY_ENABLED event when it processes LP 02), i.e.
  what the players see.  The gateway frames every LP 02 ahead and sends them in one
  tight loop.  Goal: < 5 ms at 200 machines, < 10 ms at 1,000.
* end -> stored -- from the heat clock's end (the journaled ``ends_at``) to the commit of
  the last machine's score.  A native machine needs two polls after the end: LP 01 (the
  lock, acknowledged first, so a game in progress is in the meters) and LP 99 (the four
  tournament meters: score = starting credits - wagered + won, T12); its LP 1A credit
  meter is read a poll later, after the commit, as a cross-check.  With 200 ms spacing
  per machine about 200 ms is the protocol's floor.  Goal: 200 scores within 400 ms,
  1,000 within 500 ms.
* min poll gap -- the shortest time between two polls to one machine over a whole heat,
  as the gateway sent them (the SAS client's own record) and as the machines received
  them (arrival times, so the emulator's and loopback's jitter shows on that side).
* recovery -- a ``reelgate heat run`` process is SIGKILLed in the running state (right
  after journaling the start, before unlocking: the worst moment); the time from launching
  ``reelgate heat recover`` to that process having the floor back in hand (the unlocks
  re-sent).  It includes the interpreter's start and the CLI's imports.  Goal: < 2 s.

Prints a table of medians (and the worst run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bank_host import BankGroup  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from gateway.app.context import GatewayContext, bank_links, close_links  # noqa: E402
from gateway.heats.runner import HeatRunner  # noqa: E402
from storage.journal import RunState  # noqa: E402


async def one_heat(
    bank: BankGroup, folder: Path, seconds: int
) -> tuple[float, float, int, float, float]:
    """Run one heat in this process; returns (skew ms, end->stored ms, machines scored,
    shortest gap in ms between two polls to one machine, as the gateway sent them and as
    the machines received them)."""
    ctx = await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{folder / 'bench.db'}",
        floor_path=str(folder / "floor.toml"),
        spool=folder / "spool",
        upgrade=True,
    )
    try:
        spec = ctx.bank("A")
        links, failed = await bank_links(spec)
        if failed:
            first = next(iter(failed.items()))
            raise RuntimeError(f"could not open {len(failed)} links, e.g. {first[0]}: {first[1]}")
        try:
            await asyncio.to_thread(bank.ask, "unlocks")  # clear earlier stamps
            await asyncio.to_thread(bank.ask, "spacing")  # and start a new spacing window
            out = await HeatRunner(ctx.writer, links).run_new(
                "A", [m.id for m in spec.active], credits=1000, seconds=seconds
            )
            # the gateway's own record of its poll spacing (between request sends)
            sent = [getattr(x.driver, "stats", None) for x in links.values()]
            host_gap = min(st.min_gap for st in sent if st is not None and st.min_gap is not None)
        finally:
            await close_links(links)
        if out.state is not RunState.CLOSED or out.committed_at is None or out.ends_at is None:
            raise RuntimeError(f"heat ended {out.state.value}: {out.notes}")
        gaps = (await asyncio.to_thread(bank.ask, "spacing"))["spacing"]
        stamps = (await asyncio.to_thread(bank.ask, "unlocks"))["unlocks"]
        firsts = [times[0] for times in stamps.values() if times]
        if len(firsts) != len(stamps):
            raise RuntimeError("a machine never enabled play")
        skew_ms = (max(firsts) - min(firsts)) * 1000
        stored_ms = (out.committed_at - out.ends_at).total_seconds() * 1000
        scored = len(await ctx.journal.results(out.run_id))
        if out.notes:
            print(f"  notes: {out.notes[:3]}")  # e.g. a cross-check mismatch: never hidden
        return skew_ms, stored_ms, scored, host_gap * 1000, min(gaps.values()) * 1000
    finally:
        await ctx.close()


def one_recovery(folder: Path) -> float:
    """SIGKILL a gateway in the running state; seconds from restart to back in control."""
    common = [
        "--floor", str(folder / "floor.toml"),
        "--database", f"sqlite+aiosqlite:///{folder / 'bench.db'}",
        "--spool", str(folder / "spool"),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    subprocess.run(
        [sys.executable, "-m", "gateway", "db", "upgrade", "--database", common[3]],
        cwd=ROOT, check=True, capture_output=True, env=env, timeout=60,
    )  # fmt: skip
    gw = subprocess.Popen(
        [sys.executable, "-m", "gateway", "heat", "run", *common, "--bank", "A",
         "--seconds", "3", "--credits", "1000", "--hold-in", "running"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert gw.stderr is not None
    for _ in range(10_000):  # bounded: one line per state at most, then the hold line
        line = gw.stderr.readline()
        if not line:
            raise RuntimeError("gateway ended before reaching the running state")
        if line.strip() == "holding in running":
            break
    os.kill(gw.pid, signal.SIGKILL)
    gw.wait(timeout=10)
    t0 = time.perf_counter()
    rec = subprocess.Popen(
        [sys.executable, "-m", "gateway", "heat", "recover", *common, "--bank", "A", "--trace"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert rec.stderr is not None
    in_control: float | None = None
    for line in rec.stderr:
        if " in control: " in line and in_control is None:
            in_control = time.perf_counter() - t0
    rec.wait(timeout=60)
    if in_control is None or rec.returncode != 0:
        raise RuntimeError(f"recovery failed (exit {rec.returncode})")
    return in_control


def pin(bank: BankGroup, enabled: bool) -> str:
    """Give the bank processes a CPU of their own and this process (and the gateways it
    starts) the others; returns a description for the table."""
    cpus = sorted(os.sched_getaffinity(0))
    if not enabled or len(cpus) < 2:
        return "not pinned"
    for pid in bank.pids:
        os.sched_setaffinity(pid, {cpus[-1]})
    os.sched_setaffinity(0, set(cpus[:-1]))
    return (
        f"{len(bank.pids)} bank process(es) on CPU {cpus[-1]}, "
        f"gateway on {','.join(map(str, cpus[:-1]))}"
    )


def bench_size(
    n: int,
    runs: int,
    seconds: int,
    console: Console,
    *,
    pinned: bool,
    batch: bool,
    per_process: int,
    players: bool = True,
    kills: int | None = None,
) -> dict[str, Any]:
    skews: list[float] = []
    stored: list[float] = []
    spacing: list[float] = []
    received: list[float] = []
    recoveries: list[float] = []
    everywhere = os.sched_getaffinity(0)
    bank = BankGroup(n, per_process=per_process, players=players, batch_replies=batch)
    try:
        where = pin(bank, pinned)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "floor.toml").write_text(bank.floor_toml())
            for i in range(runs):
                skew, ms, scored, gap, arrived = asyncio.run(one_heat(bank, folder, seconds))
                if scored != n:
                    raise RuntimeError(f"only {scored} of {n} scores stored")
                skews.append(skew)
                stored.append(ms)
                spacing.append(gap)
                received.append(arrived)
                console.print(
                    f"  {n} machines, heat {i + 1}: skew {skew:.2f} ms, stored {ms:.0f} ms, "
                    f"min poll gap {gap:.1f} ms sent / {arrived:.1f} ms received ({where}; "
                    f"load {os.getloadavg()[0]:.1f})"
                )
            for i in range(runs if kills is None else kills):
                r = one_recovery(folder)
                recoveries.append(r)
                console.print(f"  {n} machines, recovery {i + 1}: in control after {r:.2f} s")
    finally:
        bank.close()
        os.sched_setaffinity(0, everywhere)
    return {
        "n": n,
        "skew": skews,
        "stored": stored,
        "gap": spacing,
        "received": received,
        "recovery": recoveries,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="heat start skew, scoring and recovery")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--runs", type=int, default=3, help="heats and kills per size")
    parser.add_argument("--seconds", type=int, default=3, help="heat length")
    parser.add_argument(
        "--recoveries", type=int, default=None, help="SIGKILL recoveries per size (default: --runs)"
    )
    parser.add_argument(
        "--no-players",
        action="store_true",
        help="nobody presses spin: the end is one events poll and one meter read per machine",
    )
    parser.add_argument(
        "--per-process", type=int, default=250, help="emulated machines per bank process"
    )
    parser.add_argument(
        "--no-pin", action="store_true", help="no CPU of its own for the bank process"
    )
    parser.add_argument(
        "--emulator-writes-at-once",
        action="store_true",
        help="the emulated machines write each reply at once (no reply outbox)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or any(not 1 <= n <= 1000 for n in args.sizes):
        parser.error("--runs >= 1 and sizes 1..1000")
    if args.per_process < 1:
        parser.error("--per-process >= 1")
    if args.recoveries is not None and args.recoveries < 0:
        parser.error("--recoveries >= 0")
    console = Console()
    rows = [
        bench_size(
            n,
            args.runs,
            args.seconds,
            console,
            pinned=not args.no_pin,
            batch=not args.emulator_writes_at_once,
            per_process=args.per_process,
            players=not args.no_players,
            kills=args.recoveries,
        )
        for n in args.sizes
    ]
    table = Table(
        title=f"heat benchmark (median of {args.runs}; worst in brackets; players "
        f"{'off' if args.no_players else 'on'})",
        caption="goals: start skew < 5 ms at 200 machines, < 10 ms at 1,000; end -> stored "
        "< 400 ms at 200, < 500 ms at 1,000, with the 200 ms poll spacing kept; recovery < 2 s; "
        f"load average at the end {os.getloadavg()[0]:.1f}",
    )
    columns = (
        "machines",
        "start skew ms",
        "end -> stored ms",
        "min poll gap ms sent",
        "received",
        "recovery s",
    )
    for col in columns:
        table.add_column(col, justify="right")

    def cell(values: list[float], fmt: str, worst: Any = max) -> str:
        if not values:
            return "-"
        return f"{format(statistics.median(values), fmt)} ({format(worst(values), fmt)})"

    for r in rows:
        table.add_row(
            str(r["n"]),
            cell(r["skew"], ".2f"),
            cell(r["stored"], ".0f"),
            cell(r["gap"], ".1f", min),
            cell(r["received"], ".1f", min),
            cell(r["recovery"], ".2f"),
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
