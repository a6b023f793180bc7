"""Shared SAS loops: a heat's start and stop on one multi-drop line, against the line time.

    python bench/loop.py                      # loops of 8, 32 and 127 machines, 5 heats each
    python bench/loop.py --sizes 8,127 --heats 9 --poll-seconds 3

Each loop is an emulated multi-drop line in its own process (``reelgate emulate sas
--loop-size N``: N EGMs at addresses 1..N behind one loopback TCP port, as an interface
board fronting a serial loop) and one gateway-side line from a
:class:`~protocols.sas.lines.LinePool`, which accounts line time at 19 200 baud with
11-bit characters.  A heat's start fires LP 02 framed ahead to every machine in one
tight loop; on one line they can only go back to back, so the floor is one LP 02 frame
and its ACK per machine (4 + 1 characters, 2.86 ms).  The spread is the time from the
first send to the last ACK, against N of those; the stop (LP 01) likewise.  Then every
machine general-polls in its own task for ``--poll-seconds``: the shortest gap between
two polls sent to one EGM must never be under the SAS 200 ms, and the table shows how
often each machine was polled.  Goal: spread within 1.5x of the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocols.sas.client import SAS_MIN_SPACING, SasClient  # noqa: E402
from protocols.sas.line_schedule import SAS_CHAR_TIME  # noqa: E402
from protocols.sas.lines import LinePool  # noqa: E402
from protocols.sas.messages import Ack, Shutdown, Startup  # noqa: E402

GOAL_RATIO = 1.5
EXCHANGE_CHARS = 4 + 1  # LP 02 / 01: address, command, CRC (2); the ACK: the address


async def fire_all(cs: list[SasClient], start: bool) -> float:
    """One start (LP 02) or stop (LP 01) of the whole loop, fired in one tight loop:
    seconds from the first send to the last ACK."""
    await asyncio.sleep(SAS_MIN_SPACING + 0.01)  # every machine out of its spacing
    loop = asyncio.get_running_loop()
    prepared = [c.prepare(Startup(c.address) if start else Shutdown(c.address)) for c in cs]
    t0 = loop.time()
    replies = await asyncio.gather(*(p.fire() for p in prepared))
    t1 = loop.time()
    if not all(isinstance(r, Ack) for r in replies):
        raise RuntimeError(f"not every machine acknowledged: {replies}")
    return t1 - t0


async def poll_round(cs: list[SasClient], seconds: float) -> tuple[float, float]:
    """Every machine general-polls in its own task for ``seconds``: the shortest gap
    between two sends to one EGM, and the median polls per second of a machine."""
    before = [c.stats.polls for c in cs]
    deadline = time.monotonic() + seconds

    async def keep_polling(c: SasClient) -> None:
        while time.monotonic() < deadline:  # bounded by the deadline
            await c.general_poll()

    await asyncio.gather(*(keep_polling(c) for c in cs))
    gaps = cs[0].line.schedule.stats.per_address_min_gap
    rate = statistics.median(c.stats.polls - b for c, b in zip(cs, before, strict=True))
    return min(gaps.values()), rate / seconds


async def emulated_loop(size: int) -> tuple[asyncio.subprocess.Process, list[str]]:
    """``size`` emulated EGMs on one loop, in their own process (as the EGMs are)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "emulate", "sas", "--machines", str(size),
        "--loop-size", str(size), "--seed", str(size), "--duration", "600",
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    endpoints: list[str] = []
    for _ in range(size + 1):
        line = json.loads(await asyncio.wait_for(proc.stdout.readline(), 30))
        if line.get("ready"):
            return proc, endpoints
        endpoints.append(line["endpoint"])
    raise RuntimeError("the emulated loop did not say it was ready")


async def run_loop(size: int, heats: int, poll_seconds: float) -> list[str]:
    pool = LinePool()
    proc, endpoints = await emulated_loop(size)
    try:
        cs = [await pool.client(e) for e in endpoints]
        starts = []
        stops = []
        for _ in range(heats):
            stops.append(await fire_all(cs, start=False))
            starts.append(await fire_all(cs, start=True))
        min_gap, rate = await poll_round(cs, poll_seconds)
        for c in cs:
            await c.close()
    finally:
        await pool.close()
        proc.terminate()
        await proc.wait()
    floor = size * EXCHANGE_CHARS * SAS_CHAR_TIME
    start, stop = statistics.median(starts), statistics.median(stops)
    ratio = max(start, stop) / floor
    return [
        str(size),
        f"{floor * 1000:.1f}",
        f"{start * 1000:.1f}",
        f"{stop * 1000:.1f}",
        f"{ratio:.2f}",
        f"{min_gap * 1000:.0f}",
        f"{rate:.2f}",
        "ok" if ratio <= GOAL_RATIO and min_gap >= SAS_MIN_SPACING else "MISSED",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,32,127", help="machines per loop, comma-separated")
    parser.add_argument("--heats", type=int, default=5)
    parser.add_argument("--poll-seconds", type=float, default=2.0)
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        raise SystemExit(f"--sizes: not a list of numbers: {args.sizes!r}") from None
    if not all(2 <= s <= 127 for s in sizes):
        raise SystemExit("--sizes: a shared loop holds 2..127 machines")
    if not 1 <= args.heats <= 50 or not 0.5 <= args.poll_seconds <= 60:
        raise SystemExit("--heats 1-50, --poll-seconds 0.5-60")
    rows = [await run_loop(size, args.heats, args.poll_seconds) for size in sizes]
    print(
        f"shared SAS loops at 19 200 baud; {args.heats} heats each (medians); "
        f"goal spread <= {GOAL_RATIO}x the line-time floor, poll spacing >= 200 ms"
    )
    head = [
        "machines",
        "floor ms",
        "start spread ms",
        "stop spread ms",
        "ratio",
        "min poll gap ms",
        "polls/s each",
        "goal",
    ]
    print(" | ".join(head))
    for row in rows:
        print(" | ".join(row))


if __name__ == "__main__":
    asyncio.run(main())
