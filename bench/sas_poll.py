"""SAS polling benchmark: one host process general-polling N emulated machines.

    python bench/sas_poll.py                 # N = 100, 500, 1000; 10 s each
    python bench/sas_poll.py --machines 1000 --seconds 20

The emulated bank runs in a SEPARATE process (``reelgate emulate sas``), started here.
This process holds one :class:`SasClient` per machine, each general-polling at the SAS
cadence (the client enforces at most one poll per 200 ms per machine, sas.md §1), for a
bounded time after a short warm-up.  Reported per N:

* polls/s achieved vs the target N x 5;
* host CPU = this process's CPU time / wall time (1.00 = one core), and the emulator's;
* p50 / p99 of the interval between successive polls to the same machine (all machines
  pooled), and the worst machine's p99;
* failed polls (timeouts, faults).

Goal (issue 2): 1000 machines held at cadence -- 5000 polls/s -- within one host core.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from emulators.bank import raise_open_file_limit  # noqa: E402
from protocols.sas.client import SAS_MIN_SPACING, SasClient, SasClientError  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Result:
    machines: int
    seconds: float
    polls: int
    failures: int
    host_cpu: float
    emulator_cpu: float
    p50_ms: float
    p99_ms: float
    worst_p99_ms: float

    @property
    def polls_per_s(self) -> float:
        return self.polls / self.seconds


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of another process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[i]


async def start_emulator(n: int) -> tuple[asyncio.subprocess.Process, list[str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "emulate", "sas", "--machines", str(n),
        "--base-port", "0",
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )  # fmt: skip
    assert proc.stdout is not None
    endpoints: list[str] = []
    async with asyncio.timeout(60):
        while True:
            line = await proc.stdout.readline()
            if not line:
                raise RuntimeError("emulator exited before it was ready")
            row = json.loads(line)
            if row.get("ready"):
                break
            endpoints.append(row["endpoint"])
    return proc, endpoints


async def poll_machine(client: SasClient, stamps: list[float], fails: list[int]) -> None:
    """General-poll forever at the client's cadence, noting when each poll was sent."""
    while True:
        try:
            await client.general_poll()
        except SasClientError:
            fails[0] += 1
        stamps.append(client.last_poll_at)


async def run_one(n: int, seconds: float, warmup: float) -> Result:
    proc, endpoints = await start_emulator(n)
    clients: list[SasClient] = []
    try:
        for ep in endpoints:
            clients.append(await SasClient.connect(ep, min_spacing=SAS_MIN_SPACING))
        loop = asyncio.get_running_loop()
        # stagger the first polls over one period, as a real poller spreads its load
        t0 = loop.time() + 0.2
        start_at, stop_at = t0 + warmup, t0 + warmup + seconds
        stamps: list[list[float]] = [[] for _ in clients]
        fails = [[0] for _ in clients]

        async def staggered(i: int, c: SasClient) -> None:
            await asyncio.sleep(max(0.0, t0 - loop.time()) + SAS_MIN_SPACING * i / n)
            await poll_machine(c, stamps[i], fails[i])

        tasks = [asyncio.create_task(staggered(i, c)) for i, c in enumerate(clients)]
        await asyncio.sleep(max(0.0, start_at - loop.time()))
        cpu0, wall0, emu0 = time.process_time(), loop.time(), proc_cpu_seconds(proc.pid)
        fails0 = sum(f[0] for f in fails)
        await asyncio.sleep(max(0.0, stop_at - loop.time()))
        cpu1, wall1, emu1 = time.process_time(), loop.time(), proc_cpu_seconds(proc.pid)
        failures = sum(f[0] for f in fails) - fails0
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for c in clients:
            await c.close()
        proc.terminate()
        await proc.wait()
    wall = wall1 - wall0
    intervals: list[float] = []
    worst = 0.0
    polls = 0
    for s in stamps:
        s = [t for t in s if wall0 <= t < wall1]
        polls += len(s)
        mine = sorted(b - a for a, b in itertools.pairwise(s))
        intervals.extend(mine)
        worst = max(worst, percentile(mine, 0.99))
    intervals.sort()
    return Result(
        machines=n,
        seconds=wall,
        polls=polls,
        failures=failures,
        host_cpu=(cpu1 - cpu0) / wall,
        emulator_cpu=(emu1 - emu0) / wall,
        p50_ms=1000 * percentile(intervals, 0.50),
        p99_ms=1000 * percentile(intervals, 0.99),
        worst_p99_ms=1000 * worst,
    )


def print_table(results: list[Result]) -> None:
    head = (
        f"{'N':>5} {'polls/s':>9} {'target':>7} {'host CPU':>9} {'emu CPU':>8} "
        f"{'p50 ms':>8} {'p99 ms':>8} {'worst p99':>10} {'failed':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        print(
            f"{r.machines:>5} {r.polls_per_s:>9.0f} {r.machines * 5:>7} {r.host_cpu:>9.2f} "
            f"{r.emulator_cpu:>8.2f} {r.p50_ms:>8.1f} {r.p99_ms:>8.1f} {r.worst_p99_ms:>10.1f} "
            f"{r.failures:>7}"
        )


async def main_async(sizes: list[int], seconds: float, warmup: float, repeats: int) -> None:
    raise_open_file_limit(4 * max(sizes) + 256)
    results: list[Result] = []
    for n in sizes:
        runs = [await run_one(n, seconds, warmup) for _ in range(repeats)]
        # report the median run (by polls/s) when repeated
        runs.sort(key=lambda r: r.polls_per_s)
        results.append(runs[len(runs) // 2])
        print(f"N={n}: done ({repeats} run(s))", file=sys.stderr)
    print_table(results)
    if repeats > 1:
        print(f"(median of {repeats} runs per N)")
    print(f"host CPU median over sizes: {statistics.median(r.host_cpu for r in results):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machines", type=int, nargs="*", default=[100, 500, 1000])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    if any(n < 1 or n > 5000 for n in args.machines) or args.seconds <= 0 or args.repeats < 1:
        parser.error("machines 1..5000, seconds > 0, repeats >= 1")
    asyncio.run(main_async(args.machines, args.seconds, args.warmup, args.repeats))


if __name__ == "__main__":
    main()
