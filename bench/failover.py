"""Hot standby failover: the serving gateway is SIGKILLed mid-heat, the standby takes over.

Each trial: an emulated bank of 3 machines with players in its own process (SAS/TCP on
loopback), a fresh database, a tournament heat scheduled on bank A; two ``reelgate
serve`` processes on that database, the primary and a ``--standby``.  Once the heat is
running the primary is SIGKILLed.  Measured from the kill:

* ``lease taken``: the standby holds the bank (its log line): the dead primary's lease
  ran out and the standby's next poll took it;
* ``in control``: the standby's recovery reports the bank back in hand (its log line):
  for a running heat that is its first floor command, the unlock of every seat,
  acknowledged by the machines;

and, once the heat has closed: scores lost, doubled or wrong (T12: the end credits,
``credits - wagered + won``, the same in the journal and the tournament) — all must be 0
— and machines left in tournament mode.  The lease expiry is part of the time: the
standby may take the bank only when the dead primary's lease has run out.

    python bench/failover.py [--runs 5] [--lease-period 3] [--database URL]

Without ``--database`` each trial uses a new SQLite file; with a PostgreSQL URL each
trial gets a database of its own on that server (created and dropped).  Bounded: every
wait has a deadline.  Goal: kill to in control under 5 s, lease expiry included.
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
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a fresh clone
sys.path.insert(0, str(ROOT / "bench"))

from bank_host import BankProcess  # noqa: E402
from sqlalchemy import select, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from gateway.app.cli import main as reelgate  # noqa: E402
from gateway.app.context import GatewayContext  # noqa: E402
from gateway.floor.store import set_bank_enabled  # noqa: E402
from gateway.tournament.rules.enums import EntryValidity, Stage  # noqa: E402
from gateway.tournament.services import (  # noqa: E402
    add_player,
    register_for_heat,
    sell_entries,
    unit_of_work,
)
from gateway.tournament.services.setup import (  # noqa: E402
    create_tournament,
    reschedule_heat,
    schedule_heat,
)
from gateway.tournament.settings import TournamentSettings  # noqa: E402
from storage.db import make_engine  # noqa: E402
from storage.journal import HeatResult, HeatRun, RunState  # noqa: E402
from storage.tournament import Heat, HeatStatus, Score, Seat  # noqa: E402

SEATS = 3
CREDITS = 300


@dataclass
class Trial:
    kill_to_lease_s: float
    kill_to_control_s: float
    lost: int
    doubled: int
    wrong: int
    in_tournament: list[str]
    run_states: list[str]
    heat_status: str
    standby_log: list[str]


class Lines:
    """A child's stderr, each line with the monotonic time it arrived."""

    def __init__(self, stream: IO[str] | None) -> None:
        self.lines: list[tuple[float, str]] = []
        if stream is not None:
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append((time.monotonic(), line.rstrip()))

    def first(self, needle: str, after: float) -> float | None:
        return next((t for t, line in list(self.lines) if t >= after and needle in line), None)


async def _prepare(database: str, floor: Path, spool: Path, *, heat_s: int) -> int:
    ctx = await GatewayContext.open(database=database, floor_path=str(floor), spool=spool)
    try:
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            # No notice to give (T10): the heat is brought forward once both gateways run.
            settings = TournamentSettings(
                validity=EntryValidity.HOURS_48, reschedule_notice=timedelta(0)
            )
            t = await create_tournament(s, "Failover", settings, actor="bench")
            heat = await schedule_heat(
                s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(hours=1),
                bank_name="A", duration_seconds=heat_s, starting_credits=CREDITS,
                actor="bench", now=now,
            )  # fmt: skip
            for i in range(SEATS):
                p = await add_player(
                    s, id_number=f"70010{i}5800089", name=f"P{i}",
                    date_of_birth=date(1975, 2, 1 + i), actor="bench", now=now,
                )  # fmt: skip
                await sell_entries(s, t.id, p.id, cashier="bench", now=now)
            heat_id = heat.id
        for i in range(SEATS):
            async with unit_of_work(ctx.sessions) as s:
                await register_for_heat(s, heat_id, f"70010{i}5800089", actor="bench", now=now)
        return heat_id
    finally:
        await ctx.close()


async def _start_soon(database: str, spool: Path, heat_id: int) -> None:
    """Bring the heat forward to a second from now (T10, announced), once both gateways
    are up: on a loaded host their start-up may take longer than a heat scheduled ahead."""
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=spool)
    try:
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            await reschedule_heat(
                s, heat_id, new_start=now + timedelta(seconds=1), announced_via="MC",
                announced_at=now, reason="both gateways are up", actor="bench", now=now,
            )  # fmt: skip
    finally:
        await ctx.close()


async def _heat(database: str, spool: Path, heat_id: int) -> tuple[list[Any], Any, list[Any]]:
    """The heat's runs, its status, and its tournament scores with their machines."""
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=spool)
    try:
        async with ctx.sessions() as s:
            runs = list(await s.scalars(select(HeatRun).where(HeatRun.heat_id == heat_id)))
            heat = await s.get(Heat, heat_id)
            scores = list(
                await s.execute(
                    select(Score.final_credits, Seat.machine_id)
                    .join(Seat, Seat.id == Score.seat_id)
                    .where(Score.heat_id == heat_id)
                )
            )
        return runs, heat.status if heat else None, scores
    finally:
        await ctx.close()


async def _results(database: str, spool: Path, run_ids: list[int]) -> list[Any]:
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=spool)
    try:
        async with ctx.sessions() as s:
            return list(await s.scalars(select(HeatResult).where(HeatResult.run_id.in_(run_ids))))
    finally:
        await ctx.close()


def _until(what: str, within: float, probe: Any) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        got = probe()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {within} s")


def _serve(database: str, floor: Path, spool: Path, *extra: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "gateway", "serve", "--floor", str(floor), "--database",
           database, "--spool", str(spool), "--tick", "0.2", *extra]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)  # fmt: skip


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _score_faults(runs: list[Any], scores: list[Any], results: list[Any]) -> tuple[int, int, int]:
    """(lost, doubled, wrong) for a heat of SEATS seats."""
    closed = [r for r in runs if r.state is RunState.CLOSED]
    seen: dict[str, int] = {}
    for _credits, machine_id in scores:
        seen[machine_id] = seen.get(machine_id, 0) + 1
    doubled = sum(n - 1 for n in seen.values()) + max(0, len(closed) - 1)
    lost = SEATS - len(seen)
    final = {r.machine_id: r for r in results if closed and r.run_id == closed[-1].id}
    wrong = 0
    for credits, machine_id in scores:
        r = final.get(machine_id)
        if r is None or r.score != credits:
            wrong += 1  # the tournament's score is not the machine's
        elif r.score != closed[-1].credits - r.credits_wagered + r.credits_won:
            wrong += 1  # T12: the end credit meter
    return lost, doubled, wrong


def failover_once(
    database: str, folder: Path, *, lease_period: float = 3.0, heat_s: int = 8
) -> Trial:
    """One trial on a fresh, migrated ``database`` (see the module docstring)."""
    spool = folder / "spool"
    with BankProcess(SEATS, players=True) as bank:
        floor = folder / "floor.toml"
        floor.write_text(bank.floor_toml())
        heat_id = asyncio.run(_prepare(database, floor, spool, heat_s=heat_s))
        period = ["--lease-period", str(lease_period)]
        primary = _serve(database, floor, folder / "spool-1", *period, "--expect-standby")
        assert primary.stderr is not None
        serving = Lines(primary.stderr)
        standby: subprocess.Popen[str] | None = None
        log = Lines(None)
        try:
            _until("primary serving", 30, lambda: serving.first("serving 1 bank", 0.0))
            standby = _serve(database, floor, folder / "spool-2", *period, "--standby")
            assert standby.stderr is not None
            log = Lines(standby.stderr)
            _until("standing by", 30, lambda: log.first("standing by", 0.0))
            asyncio.run(_start_soon(database, spool, heat_id))

            def running() -> bool:
                runs, _status, _scores = asyncio.run(_heat(database, spool, heat_id))
                return any(r.state is RunState.RUNNING for r in runs)

            _until("heat running", 30, running)
            time.sleep(1.0)
            killed_at = time.monotonic()
            os.kill(primary.pid, signal.SIGKILL)
            primary.wait(timeout=10)
            control = _until("in control", 30, lambda: log.first("in control", killed_at))

            def closed() -> tuple[Any, ...] | None:
                runs, status, scores = asyncio.run(_heat(database, spool, heat_id))
                done = status is HeatStatus.CLOSED and all(r.settled for r in runs)
                return (runs, status, scores) if done else None

            runs, status, scores = _until("heat closed", 60, closed)
        except AssertionError as exc:
            said = "\n".join(line for _t, line in log.lines)
            raise AssertionError(f"{exc}; the standby said:\n{said}") from None
        finally:
            _stop(primary)
            if standby is not None:
                _stop(standby)
        taken = log.first("taken over", killed_at)
        results = asyncio.run(_results(database, spool, [r.id for r in runs]))
        lost, doubled, wrong = _score_faults(runs, scores, results)
        left = [m["id"] for m in bank.ask("state")["machines"] if m["in_tournament"]]
    return Trial(
        kill_to_lease_s=(taken or control) - killed_at,
        kill_to_control_s=control - killed_at,
        lost=lost,
        doubled=doubled,
        wrong=wrong,
        in_tournament=left,
        run_states=[r.state.value for r in runs],
        heat_status=status.value,
        standby_log=[line for _t, line in log.lines],
    )


async def _admin(url: str, sql: str) -> None:
    engine = make_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(sql))
    finally:
        await engine.dispose()


@contextmanager
def fresh_database(server: str | None, folder: Path) -> Iterator[str]:
    """A new migrated database: a SQLite file, or a database of its own on ``server``."""
    if not server:
        url = f"sqlite+aiosqlite:///{folder / 'gw.db'}"
        assert reelgate(["db", "upgrade", "--database", url]) == 0
        yield url
        return
    name = f"rg_failover_{uuid.uuid4().hex[:10]}"
    asyncio.run(_admin(server, f'CREATE DATABASE "{name}"'))
    url = make_url(server).set(database=name).render_as_string(hide_password=False)
    try:
        assert reelgate(["db", "upgrade", "--database", url]) == 0
        yield url
    finally:
        asyncio.run(_admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _fmt(values: list[float]) -> tuple[str, str]:
    return f"{statistics.median(values):.2f} s", f"{max(values):.2f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lease-period", type=float, default=3.0)
    parser.add_argument("--database", default=None, help="a PostgreSQL server URL (else SQLite)")
    args = parser.parse_args(argv)
    from gateway.records.chain import throwaway_keys  # the repo root is on the path now

    throwaway_keys()  # no key configured: this run's own, for its workers too
    trials: list[Trial] = []
    for i in range(max(1, min(args.runs, 50))):  # bounded
        with tempfile.TemporaryDirectory() as tmp, fresh_database(args.database, Path(tmp)) as db:
            trial = failover_once(db, Path(tmp), lease_period=args.lease_period)
        trials.append(trial)
        print(f"run {i + 1}: lease taken {trial.kill_to_lease_s:.2f} s, in control "
              f"{trial.kill_to_control_s:.2f} s, runs {trial.run_states}", flush=True)  # fmt: skip
    control = [t.kill_to_control_s for t in trials]
    taken = [t.kill_to_lease_s for t in trials]
    backend = "PostgreSQL" if args.database else "SQLite"
    print(f"\nfailover, {len(trials)} runs, {backend}, lease period {args.lease_period:g} s")
    print(f"{'measure':<36}{'median':>10}{'max':>10}")
    for name, values in (("kill -> standby has the lease", taken),
                         ("kill -> in control (seats unlocked)", control)):  # fmt: skip
        median, worst = _fmt(values)
        print(f"{name:<36}{median:>10}{worst:>10}")
    for name in ("lost", "doubled", "wrong"):
        print(f"{'scores ' + name:<36}{sum(getattr(t, name) for t in trials):>10}")
    left = sum(len(t.in_tournament) for t in trials)
    print(f"{'machines left in tournament mode':<36}{left:>10}")
    ok = bool(control) and max(control) < 5.0 and left == 0
    ok = ok and all(t.lost == t.doubled == t.wrong == 0 for t in trials)
    print(f"goal (in control < 5 s, no score lost/doubled/wrong): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
