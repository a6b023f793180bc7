"""Enterprise benchmark: one heat across several venue gateways on one central PostgreSQL.

    python bench/enterprise.py                          # 4 gateways x 250 machines, 60 s cut
    python bench/enterprise.py --machines-per-gateway 50 --cut-seconds 20 --runs 3

Each gateway is a ``reelgate serve --venue vN --start-lead S`` process of its own, and its
bank of emulated machines another process (``bench/bank_host.py``, SAS/TCP on loopback,
players pressing spin).  One tournament, one heat row per venue's bank, all scheduled at
the same instant: the gateways pick the heat up ``--start-lead`` ahead, measure their
clocks against the database's, arm, and fire at that instant.  Venue 1 reaches the
database through a loopback proxy (``bench/link_proxy.py``) that is cut a second into the
heat for ``--cut-seconds`` (its heat runs to its end on the spool meanwhile) and restored.

* start spread -- across every gateway's machines, the spread of the times at which the
  machines enabled play (each emulated EGM stamps its own PLAY_ENABLED on the system's
  monotonic clock, so stamps from the four emulator processes compare).  Goal < 10 ms.
* end -> standings -- for the venues that kept their link: from the latest heat clock end
  (journaled ``ends_at``) to the last of their scores applied to the central standings
  (the SCORES effects' ``applied_at``).  Goal < 1 s.
* restore -> standings -- for the venue cut off: from the link's return to its last score
  applied to the central standings.
* lost / doubled / wrong -- every seat of every venue: a score in the standings exactly
  once, equal to the machine's journaled heat result; one closed run per heat (no replay);
  the audit chain verified.  Goal 0 / 0 / 0.

``--database`` (else ``$REELGATE_DATABASE_URL``) names the PostgreSQL server; every run
gets a database of its own there, dropped afterwards.  Prints a table of medians (worst
in brackets) and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bank_host import BankProcess  # noqa: E402
from failover import fresh_database  # noqa: E402
from link_proxy import LinkProxy  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from sqlalchemy import func, select  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from gateway.app.context import GatewayContext  # noqa: E402
from gateway.floor.store import set_bank_enabled  # noqa: E402
from gateway.records.keys import KeyPaths, create_keys  # noqa: E402
from gateway.tournament.rules.enums import Stage  # noqa: E402
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
from gateway.tournament.settings import TournamentSettings, Validity  # noqa: E402
from storage import audit_verify, effects  # noqa: E402
from storage.effects import EffectKind, HeatEffect  # noqa: E402
from storage.journal import HeatResult, HeatRun, RunState  # noqa: E402
from storage.tournament import Score, Seat  # noqa: E402

CREDITS = 1000
BATCH = 50  # registrations per transaction


@dataclass
class Venue:
    number: int
    bank: BankProcess
    folder: Path
    heat_id: int = 0
    gateway: subprocess.Popen[str] | None = None
    log: deque[str] = field(default_factory=lambda: deque(maxlen=400))

    @property
    def name(self) -> str:
        return f"v{self.number}"

    @property
    def bank_name(self) -> str:
        return f"V{self.number}"

    @property
    def floor(self) -> Path:
        return self.folder / f"{self.name}.toml"

    @property
    def spool(self) -> Path:
        return self.folder / f"{self.name}.spool"


@dataclass
class Trial:
    spread_ms: float
    worst_gateway_skew_ms: float
    end_to_standings_ms: float
    restore_to_standings_ms: float | None
    lost: int
    doubled: int
    wrong: int
    replayed: int
    audit_ok: bool
    problems: list[str]


def _drain(stream: IO[str], into: deque[str]) -> None:
    for line in stream:
        into.append(line.rstrip())


def _serve(v: Venue, database: str, lead: float) -> None:
    cmd = [sys.executable, "-m", "gateway", "serve", "--venue", v.name, "--floor", str(v.floor),
           "--database", database, "--spool", str(v.spool), "--tick", "0.2", "--mqtt", "",
           "--start-lead", str(lead), "--log-level", "INFO"]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)  # fmt: skip
    assert proc.stderr is not None
    threading.Thread(target=_drain, args=(proc.stderr, v.log), daemon=True).start()
    v.gateway = proc


def _stop(v: Venue) -> None:
    proc = v.gateway
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _until(what: str, within: float, probe: Any, venues: list[Venue]) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:  # bounded
        got = probe()
        if got:
            return got
        for v in venues:
            if v.gateway is not None and v.gateway.poll() is not None:
                tail = "\n".join(list(v.log)[-15:])
                raise RuntimeError(f"gateway {v.name} ended ({v.gateway.returncode}):\n{tail}")
        time.sleep(0.05)
    raise RuntimeError(f"{what}: not within {within} s")


async def _seed(database: str, venues: list[Venue]) -> None:
    """Each venue's floor under its venue, its bank enabled."""
    for v in venues:
        ctx = await GatewayContext.open(
            database=database, floor_path=str(v.floor), spool=v.spool, venue=v.name
        )
        try:
            await set_bank_enabled(ctx.sessions, v.bank_name, enabled=True, actor="bench")
        finally:
            await ctx.close()


async def _players(database: str, spool: Path, count: int) -> tuple[int, list[str]]:
    """One tournament and ``count`` players with an entry each: (tournament, id numbers)."""
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=spool)
    try:
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            t = await create_tournament(
                s, "Statewide", TournamentSettings(validity=Validity.HOURS_48), actor="bench"
            )
            tournament = t.id
        ids = [f"{7000000000000 + i:013d}" for i in range(count)]
        for start in range(0, count, BATCH):
            async with unit_of_work(ctx.sessions) as s:
                for i in range(start, min(start + BATCH, count)):
                    p = await add_player(
                        s, id_number=ids[i], name=f"P{i}", date_of_birth=date(1980, 1, 1),
                        actor="bench", now=now,
                    )  # fmt: skip
                    await sell_entries(s, tournament, p.id, cashier="bench", now=now)
        return tournament, ids
    finally:
        await ctx.close()


async def _heats(database: str, venues: list[Venue], tournament: int, ids: list[str],
                 seconds: int) -> None:  # fmt: skip
    """A heat per venue's bank, hours ahead (no gateway picks it up yet); every seat
    taken."""
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=venues[0].spool)
    try:
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            for v in venues:
                heat = await schedule_heat(
                    s, tournament, stage=Stage.QUALIFYING, starts_at=now + timedelta(hours=6),
                    bank_name=v.bank_name, duration_seconds=seconds, starting_credits=CREDITS,
                    actor="bench", now=now, number=v.number,
                )  # fmt: skip
                v.heat_id = heat.id
        per = len(ids) // len(venues)
        for start in range(0, len(ids), BATCH):
            async with unit_of_work(ctx.sessions) as s:
                for i in range(start, min(start + BATCH, len(ids))):
                    heat_id = venues[i // per].heat_id
                    await register_for_heat(s, heat_id, ids[i], actor="bench", now=now)
    finally:
        await ctx.close()


async def _move_to(database: str, venues: list[Venue], starts_at: datetime) -> None:
    """Every venue's heat moved to ``starts_at`` (T10, announced the day before), so the
    gateways pick them up only once every seat is taken (seating 1,000 takes minutes)."""
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=venues[0].spool)
    try:
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            for v in venues:
                await reschedule_heat(
                    s, v.heat_id, new_start=starts_at, announced_via="bench",
                    announced_at=now - timedelta(days=1), reason="the benchmark starts now",
                    actor="bench", now=now,
                )  # fmt: skip
    finally:
        await ctx.close()


async def _states(database: str, spool: Path, heat_ids: list[int]) -> dict[int, list[RunState]]:
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=spool)
    try:
        async with ctx.sessions() as s:
            rows = await s.execute(
                select(HeatRun.heat_id, HeatRun.state).where(HeatRun.heat_id.in_(heat_ids))
            )
            out: dict[int, list[RunState]] = {h: [] for h in heat_ids}
            for heat_id, state in rows:
                if heat_id is not None:
                    out[heat_id].append(state)
            return out
    finally:
        await ctx.close()


async def _forwarded(database: str, spool: Path, seats: int) -> bool:
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=spool)
    try:
        async with ctx.sessions() as s:
            scored = await s.scalar(select(func.count()).select_from(Score))
            unsettled = await s.scalar(
                select(func.count()).select_from(HeatRun).where(~HeatRun.settled)
            )
            return scored == seats and unsettled == 0 and not await effects.pending(s)
    finally:
        await ctx.close()


async def _check(database: str, venues: list[Venue], cut: Venue | None,
                 restored: datetime | None) -> tuple[float, float | None, int, int, int, int, bool,
                                                     list[str]]:  # fmt: skip
    """(end->standings ms of the linked venues, restore->standings ms of the cut one,
    lost, doubled, wrong, replayed, audit ok, problems)."""
    ctx = await GatewayContext.open(database=database, floor_path=None, spool=venues[0].spool)
    problems: list[str] = []
    try:
        async with ctx.sessions() as s:
            runs = list(await s.scalars(select(HeatRun)))
            closed = {r.heat_id: r for r in runs if r.state is RunState.CLOSED}
            replayed = sum(1 for r in runs if r.state is not RunState.CLOSED) + max(
                0, len([r for r in runs if r.state is RunState.CLOSED]) - len(venues)
            )
            applied = list(
                await s.execute(
                    select(HeatEffect.heat_id, HeatEffect.applied_at, HeatEffect.created_at).where(
                        HeatEffect.kind == EffectKind.SCORES
                    )
                )
            )
            seats = list(await s.scalars(select(Seat)))
            scores = list(await s.scalars(select(Score)))
            results = list(await s.scalars(select(HeatResult)))
            verified = await audit_verify.verify(s)
        by_seat: dict[int, list[Score]] = {}
        for sc in scores:
            by_seat.setdefault(sc.seat_id, []).append(sc)
        result_of = {(r.run_id, r.machine_id): r for r in results}
        doubled = sum(len(v) - 1 for v in by_seat.values()) + len(results) - len(result_of)
        lost = wrong = 0
        for seat in seats:
            got = by_seat.get(seat.id, [])
            if not got:
                lost += 1
                continue
            run = closed.get(seat.heat_id)
            r = None if run is None else result_of.get((run.id, seat.machine_id))
            if r is None or r.score != got[0].final_credits:
                wrong += 1
        heat_of = {v.heat_id: v for v in venues}
        linked = [v.heat_id for v in venues if v is not cut]
        ends = [e for h in linked if h in closed and (e := closed[h].ends_at) is not None]
        # When each score reached the standings: its SCORES effect applied (a score keeps
        # the time it was read, so its own row cannot say when it arrived).
        reached = [at for h, at, _ in applied if h in linked and at is not None]
        end_ms = (max(reached) - max(ends)).total_seconds() * 1000 if ends and reached else -1
        if ends and reached:
            problems.append(_where_end_goes(closed, linked, results, applied))
        restore_ms = None
        if cut is not None and restored is not None:
            late = [at for h, at, _ in applied if heat_of[h] is cut and at is not None]
            restore_ms = (max(late) - restored).total_seconds() * 1000 if late else -1
        if not verified.ok:
            problems.append(f"audit: {verified.problem}")
        if replayed:
            problems.append(f"runs: {[(r.heat_id, r.state.value) for r in runs]}")
        return (end_ms, restore_ms, lost, doubled, wrong, replayed, verified.ok, problems)
    finally:
        await ctx.close()


def _where_end_goes(closed: dict[int | None, HeatRun], linked: list[int],
                    results: list[HeatResult], applied: list[Any]) -> str:  # fmt: skip
    """Where end -> standings went for the linked venues: each heat's clock end to its
    last machine read, to its last SCORES effect written (the results' commit), to that
    effect applied, in ms (worst heat of each)."""
    read = written = drained = 0.0
    for h in linked:
        run, ends = closed.get(h), None
        ends = run.ends_at if run is not None else None
        mine = [r.collected_at for r in results if run is not None and r.run_id == run.id]
        effects_of = [(at, made) for heat, at, made in applied if heat == h and at is not None]
        if ends is None or not mine or not effects_of:
            continue
        last_read, last_made = max(mine), max(made for _, made in effects_of)
        read = max(read, (last_read - ends).total_seconds() * 1000)
        written = max(written, (last_made - last_read).total_seconds() * 1000)
        drained = max(drained, (max(at for at, _ in effects_of) - last_made).total_seconds() * 1000)
    return (f"end -> standings, worst heat: end -> last read {read:.0f} ms, -> effect written "
            f"{written:.0f} ms, -> applied {drained:.0f} ms")  # fmt: skip


def _spread(venues: list[Venue]) -> tuple[float, float]:
    """(spread across every machine, worst one gateway's own skew), ms."""
    firsts: list[float] = []
    worst = 0.0
    for v in venues:
        stamps = v.bank.ask("unlocks")["unlocks"]
        mine = [times[0] for times in stamps.values() if times]
        if len(mine) != len(stamps) or not mine:
            raise RuntimeError(f"venue {v.name}: a machine never enabled play")
        worst = max(worst, (max(mine) - min(mine)) * 1000)
        firsts += mine
    return (max(firsts) - min(firsts)) * 1000, worst


def _show_logs(venues: list[Venue], lines: int, console: Console) -> None:
    for v in venues if lines else []:
        console.print(f"  --- {v.name}'s log, the last lines", markup=False)
        events = [x for x in v.log if x.startswith("time=")]
        for line in events[-lines:]:
            console.print(f"    {line[:240]}", markup=False, highlight=False)


def trial(server: str, folder: Path, args: argparse.Namespace, console: Console) -> Trial:
    per, n = args.machines_per_gateway, args.gateways
    venues = [
        Venue(i, BankProcess(per, players=True, prefix=f"V{i}"), folder) for i in range(1, n + 1)
    ]
    proxy: LinkProxy | None = None
    try:
        for v in venues:
            v.floor.write_text(v.bank.floor_toml(v.bank_name, aft=False))
        with fresh_database(server, folder) as database:
            asyncio.run(_seed(database, venues))
            cut = venues[0] if args.cut_seconds > 0 else None
            proxy = LinkProxy(make_url(database).port or 5432)
            via_link = make_url(database).set(port=proxy.port).render_as_string(hide_password=False)
            for v in venues:
                _serve(v, via_link if v is cut else database, args.start_lead)
            for v in venues:
                _until(f"{v.name} serving", 120, lambda v=v: any(
                    "serving 1 bank" in line for line in v.log), venues)  # fmt: skip
            t0 = time.perf_counter()
            tournament, ids = asyncio.run(_players(database, venues[0].spool, per * n))
            t1 = time.perf_counter()
            asyncio.run(_heats(database, venues, tournament, ids, args.seconds))
            console.print(f"  {per * n} players sold an entry in {t1 - t0:.1f} s, seated in "
                          f"{time.perf_counter() - t1:.1f} s (load {os.getloadavg()[0]:.1f})")
            starts_at = datetime.now(UTC) + timedelta(seconds=args.start_lead + 2)
            asyncio.run(_move_to(database, venues, starts_at))
            heat_ids = [v.heat_id for v in venues]

            def running() -> bool:
                states = asyncio.run(_states(database, venues[-1].spool, heat_ids))
                return all(RunState.RUNNING in s or RunState.ENDING in s or
                           RunState.CLOSED in s for s in states.values())  # fmt: skip

            _until("every heat running", 120 + per / 10, running, venues)
            restored: datetime | None = None
            if cut is not None:
                time.sleep(1.0)
                proxy.cut()
                console.print(f"  venue {cut.name} cut off for {args.cut_seconds:g} s")
                time.sleep(args.cut_seconds)
                proxy.restore()
                restored = datetime.now(UTC)
            seats = per * n
            _until("every score in the central standings", 120 + per / 5,
                   lambda: asyncio.run(_forwarded(database, venues[-1].spool, seats)),
                   venues)  # fmt: skip
            spread, worst = _spread(venues)
            end_ms, restore_ms, lost, doubled, wrong, replayed, ok, problems = asyncio.run(
                _check(database, venues, cut, restored)
            )
            _show_logs(venues, args.verbose, console)
            for v in venues:
                _stop(v)
    finally:
        for v in venues:
            _stop(v)
            v.bank.close()
        if proxy is not None:
            proxy.close()
    return Trial(spread, worst, end_ms, restore_ms, lost, doubled, wrong, replayed, ok, problems)


def _cell(values: list[float], fmt: str = ".1f") -> str:
    if not values:
        return "-"
    return f"{format(statistics.median(values), fmt)} ({format(max(values), fmt)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one heat across venue gateways, one centre")
    parser.add_argument("--gateways", type=int, default=4)
    parser.add_argument("--machines-per-gateway", type=int, default=250)
    parser.add_argument("--seconds", type=int, default=10, help="heat length (s)")
    parser.add_argument(
        "--cut-seconds", type=float, default=60.0, help="venue 1's link cut (s; 0: no cut)"
    )
    parser.add_argument("--start-lead", type=float, default=5.0, help="serve --start-lead (s)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--database", default=None, help="PostgreSQL server URL")
    parser.add_argument(
        "--verbose", type=int, default=0, metavar="N", help="print each gateway's last N log lines"
    )
    args = parser.parse_args(argv)
    server = args.database or os.environ.get("REELGATE_DATABASE_URL", "")
    if not server.startswith("postgresql"):
        parser.error("--database (or $REELGATE_DATABASE_URL): a PostgreSQL server URL")
    if not 1 <= args.gateways <= 8 or not 1 <= args.machines_per_gateway <= 250:
        parser.error("--gateways 1..8, --machines-per-gateway 1..250")
    if args.runs < 1 or args.seconds < 2 or args.cut_seconds < 0 or args.start_lead <= 0:
        parser.error("--runs >= 1, --seconds >= 2, --cut-seconds >= 0, --start-lead > 0")
    console = Console()
    trials: list[Trial] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        keys = KeyPaths.in_directory(folder / "keys")
        keys.audit_key.parent.mkdir()
        create_keys(keys)
        os.environ["REELGATE_AUDIT_KEY_FILE"] = str(keys.audit_key)  # this process and its gateways
        for i in range(args.runs):
            run_folder = folder / f"run{i}"
            run_folder.mkdir()
            t = trial(server, run_folder, args, console)
            trials.append(t)
            console.print(
                f"  run {i + 1}: spread {t.spread_ms:.2f} ms (one gateway at worst "
                f"{t.worst_gateway_skew_ms:.2f}), end -> standings {t.end_to_standings_ms:.0f} ms, "
                f"restore -> standings {t.restore_to_standings_ms or 0:.0f} ms, lost {t.lost}, "
                f"doubled {t.doubled}, wrong {t.wrong}, replayed {t.replayed}, audit "
                f"{'ok' if t.audit_ok else 'BROKEN'} (load {os.getloadavg()[0]:.1f})"
            )
            for p in t.problems:
                console.print(f"    {p}")
    table = Table(
        title=f"enterprise benchmark: {args.gateways} gateways x {args.machines_per_gateway} "
        f"machines, one central PostgreSQL (median of {args.runs}; worst in brackets)",
        caption="goals: start spread < 10 ms; end -> standings < 1 s; 0 lost / doubled after "
        f"a {args.cut_seconds:g} s cut; load average at the end {os.getloadavg()[0]:.1f}",
    )
    for col in ("seats", "start spread ms", "one gateway's skew ms", "end -> standings ms",
                "restore -> standings ms", "lost", "doubled", "wrong", "audit"):  # fmt: skip
        table.add_column(col, justify="right")
    restores = [t.restore_to_standings_ms for t in trials if t.restore_to_standings_ms is not None]
    table.add_row(
        str(args.gateways * args.machines_per_gateway),
        _cell([t.spread_ms for t in trials], ".2f"),
        _cell([t.worst_gateway_skew_ms for t in trials], ".2f"),
        _cell([t.end_to_standings_ms for t in trials], ".0f"),
        _cell(restores, ".0f"),
        str(sum(t.lost for t in trials)),
        str(sum(t.doubled for t in trials)),
        str(sum(t.wrong for t in trials) + sum(t.replayed for t in trials)),
        "ok" if all(t.audit_ok for t in trials) else "BROKEN",
    )
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
