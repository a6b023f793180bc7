"""The chaos suite's harness: heats killed at chosen floor steps, recovered, then checked.

A :class:`Chaos` owns an emulated bank of four SAS machines with players on, in its own
process (``bench/bank_host.py``), a database (a SQLite file; a fresh PostgreSQL database
when ``REELGATE_DATABASE_URL`` names a server) and a tournament.  :meth:`Chaos.run` plays
one :class:`Scenario`:

1. a gateway child process drives ONE heat — a technician's test heat (``reelgate heat
   run --trace``: kills are timed on its journal steps) or a scheduled tournament heat
   with four registered players (``bench/chaos_worker.py``: kills are timed on the floor
   command lines it prints just before each command leaves);
2. the parent SIGKILLs it at the scenario's floor step, right after the step's line or a
   random sub-millisecond-to-tens-of-ms later (mid-frame), while a fault may be under way
   on one machine (a link cut, a machine silent for 3 s, corrupted CRCs, bit flips);
3. ``reelgate heat recover`` brings the bank back (sometimes killed itself, then run
   again); a bank lease still held by the dead process (exit 2) is waited out, bounded;
4. once the fault has cleared, anything left unsettled is recovered again and a tournament
   heat restarted under T20 is driven again (both bounded);
5. the invariants are checked on the database as it is (:mod:`bench.chaos_checks`).

Every wait is bounded; only loopback addresses are used.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a fresh clone


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


bank_host = _load("bank_host")
chaos_checks = _load("chaos_checks")

KILL_POINTS = ("arm", "unlock", "mid_play", "end_lock", "meters", "exit", "release")
FAULTS = ("none", "drop", "silent", "corrupt", "flip")
KINDS = ("test", "tournament")
BANK = "A"
HEAT_S = 2
CREDITS = 500
SILENT_S = 3.0  # a machine silent for this long, then back
FLIP_RATE = 0.02  # of reply bytes, while line noise lasts
LINE_WAIT_S = 45.0  # the longest a child may go without reaching its kill step
CHILD_TIMEOUT_S = 120.0
LEASE_TRIES = 20  # a SIGKILLed holder's bank lease runs out after ~3 s
SETTLE_ROUNDS = 4


@dataclass(frozen=True, slots=True)
class Scenario:
    kind: str  # test | tournament
    kill: str  # one of KILL_POINTS
    mid_frame_s: float  # extra delay after the step's line (0: at once)
    fault: str = "none"  # one of FAULTS
    fault_machine: str = "EMU-002"
    fault_after_s: float = 1.0  # after the child starts
    kill_recovery: bool = False
    seed: int = 0

    def label(self) -> str:
        extra = [f"+{self.mid_frame_s * 1000:.1f}ms"] if self.mid_frame_s else []
        if self.fault != "none":
            extra.append(f"{self.fault} {self.fault_machine}@{self.fault_after_s:.1f}s")
        if self.kill_recovery:
            extra.append("recovery killed")
        return f"{self.kind}/{self.kill}" + (f" ({', '.join(extra)})" if extra else "")


def scenarios(count: int, seed: int) -> list[Scenario]:
    """``count`` scenarios cycling through every kind × kill point, faults drawn at random
    (every fault appears once the count allows), a third of the recoveries killed."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind = KINDS[i % 2]
        kill = KILL_POINTS[(i // 2) % len(KILL_POINTS)]
        fault = FAULTS[i % len(FAULTS)] if i < 2 * len(FAULTS) else rng.choice(FAULTS)
        out.append(
            Scenario(
                kind,
                kill,
                mid_frame_s=rng.choice([0.0, rng.uniform(0.0001, 0.001), rng.uniform(0.001, 0.04)]),
                fault=fault,
                fault_machine=f"EMU-00{rng.randint(1, 4)}",
                fault_after_s=rng.uniform(0.3, 3.5),
                kill_recovery=rng.random() < 0.3,
                seed=rng.randrange(1 << 30),
            )
        )
    return out


@dataclass(slots=True)
class HeatReport:
    scenario: Scenario
    killed: bool = False
    recoveries: int = 0
    in_control_s: list[float] = field(default_factory=list)
    findings: Any = None  # chaos_checks.Findings
    seconds: float = 0.0
    log: list[str] = field(default_factory=list)


class Lines:
    """A child's stderr lines through a reader thread, so every wait has a deadline."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.q: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def next(self, deadline: float) -> str | None:
        """The next line, or None once the child's stderr ends or the deadline passes."""
        try:
            line = self.q.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if line is not None:
            self.seen.append(line)
        return line


class Trigger:
    """When to kill: the first line of the step (after the lines that must come first),
    plus a delay.  Worker lines: ``state X`` / ``floor OP MACHINE``; ``heat run --trace``
    lines: ``run N state X`` (no floor lines, so steps are timed from the journal's)."""

    # kill point -> (line that must come first, the step's line, extra delay)
    WORKER: ClassVar[dict[str, tuple[str, str, float]]] = {
        "arm": ("", "floor enter_tournament", 0.0),
        "unlock": ("state running", "floor unlock", 0.0),
        "mid_play": ("", "state running", HEAT_S * 0.5),
        "end_lock": ("state ending", "floor lock", 0.0),
        "meters": ("state collecting", "floor tournament_meters", 0.0),
        "exit": ("", "floor exit_tournament", 0.0),
        "release": ("state closed", "floor unlock", 0.0),
    }
    CLI: ClassVar[dict[str, tuple[str, str, float]]] = {
        "arm": ("", "state armed", 0.0),
        "unlock": ("", "state running", 0.0),
        "mid_play": ("", "state running", HEAT_S * 0.5),
        "end_lock": ("", "state ending", 0.04),  # the ENDING step is 40 ms ahead of the lock
        "meters": ("", "state collecting", 0.0),
        "exit": ("", "state closed", 0.0),
        "release": ("", "state closed", 0.03),
    }

    def __init__(self, scenario: Scenario) -> None:
        table = self.WORKER if scenario.kind == "tournament" else self.CLI
        self.after, self.step, extra = table[scenario.kill]
        self.delay = extra + scenario.mid_frame_s
        self.armed = not self.after

    def hit(self, line: str) -> bool:
        if not self.armed:
            self.armed = self.after in line
            return False
        return self.step in line


class BankFaults:
    """Faults on the emulated bank from a timer thread, one bank command at a time."""

    def __init__(self, bank: Any) -> None:
        self.bank = bank
        self.lock = threading.Lock()
        self.timers: list[threading.Timer] = []

    def ask(self, command: str) -> dict[str, Any]:
        with self.lock:
            reply: dict[str, Any] = self.bank.ask(command)
            return reply

    def later(self, delay: float, *commands: str) -> None:
        timer = threading.Timer(delay, lambda: [self.ask(c) for c in commands])
        timer.daemon = True
        timer.start()
        self.timers.append(timer)

    def schedule(self, s: Scenario) -> None:
        m, at = s.fault_machine, s.fault_after_s
        if s.fault == "drop":
            self.later(at, f"fault {m} drop")
        elif s.fault == "silent":
            self.later(at, f"fault {m} no_reply")
            self.later(at + SILENT_S, f"fault {m} clear")
        elif s.fault == "corrupt":
            self.later(at, f"corrupt {m} 3")
        elif s.fault == "flip":
            self.later(at, f"flip {m} {FLIP_RATE} {s.seed}")
            self.later(at + 2.0, f"fault {m} clear")

    def finish(self) -> None:
        """Let every scheduled fault (and its clearing) happen, then clear them all."""
        for timer in self.timers:
            timer.join(timeout=SILENT_S + 10)
        self.timers.clear()
        for m in self.bank.machines:
            self.ask(f"fault {m['machine']} clear")


class Chaos:
    """The bank, the database and the tournament; :meth:`run` plays one scenario."""

    def __init__(self, workdir: Path, *, database: str | None = None) -> None:
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.bank = bank_host.BankProcess(4, players=True, pace=0.2, prefix="EMU")
        self.faults = BankFaults(self.bank)
        self.floor = self.dir / "floor.toml"
        self.floor.write_text(self.bank.floor_toml(BANK))
        self.spool = self.dir / "spool"
        self.pg_admin, self.url = _database(database, self.dir)
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
        self.tournament_id = asyncio.run(self._setup())
        self.heats = 0

    # -- database ------------------------------------------------------------------------
    async def _open(self, *, upgrade: bool = False) -> Any:
        from gateway.app.context import GatewayContext

        return await GatewayContext.open(
            database=self.url, floor_path=str(self.floor), spool=self.spool, upgrade=upgrade
        )

    async def _setup(self) -> int:
        from gateway.floor.store import set_bank_enabled
        from gateway.tournament import services as svc
        from gateway.tournament.rules.enums import EntryValidity
        from gateway.tournament.settings import TournamentSettings

        ctx = await self._open(upgrade=True)
        try:
            await set_bank_enabled(ctx.sessions, BANK, enabled=True, actor="chaos")
            async with svc.unit_of_work(ctx.sessions) as s:
                t = await svc.create_tournament(
                    s, "Chaos", TournamentSettings(validity=EntryValidity.HOURS_48), actor="chaos"
                )
                return int(t.id)
        finally:
            await ctx.close()

    async def _schedule(self, number: int) -> int:
        """A heat due now on bank A with a new player registered on each machine (T11)."""
        from gateway.tournament import services as svc
        from gateway.tournament.rules.enums import Stage

        now = datetime.now(UTC)
        booked = now - timedelta(minutes=5)
        ctx = await self._open()
        try:
            async with svc.unit_of_work(ctx.sessions) as s:
                heat = await svc.schedule_heat(
                    s, self.tournament_id, stage=Stage.QUALIFYING,
                    starts_at=now - timedelta(seconds=1), bank_name=BANK,
                    duration_seconds=HEAT_S, starting_credits=CREDITS, actor="chaos",
                    now=booked - timedelta(hours=1),
                    # Once a heat has closed the cut is sealed: each further heat is an
                    # added one, announced (T10), and an amendment of the cut.
                    announced_via="chaos run (PA)",
                )  # fmt: skip
                for seat in range(4):
                    p = await svc.add_player(
                        s, id_number=f"CH{uuid.uuid4().hex[:10]}{number:04d}{seat}",
                        name=f"Chaos {number}.{seat}", date_of_birth=date(1980, 1, 1 + seat),
                        actor="desk", now=booked,
                    )  # fmt: skip
                    await svc.sell_entries(s, self.tournament_id, p.id, cashier="desk", now=booked)
                    await svc.register_for_heat(s, heat.id, p.id, actor="desk", now=booked)
                return int(heat.id)
        finally:
            await ctx.close()

    async def _db(self, job: Any) -> Any:
        ctx = await self._open()
        try:
            return await job(ctx.sessions)
        finally:
            await ctx.close()

    # -- processes -----------------------------------------------------------------------
    def _common(self) -> list[str]:
        return ["--floor", str(self.floor), "--database", self.url, "--spool", str(self.spool)]

    def _child(self, s: Scenario, heat_id: int | None) -> subprocess.Popen[str]:
        if heat_id is None:
            cmd = [sys.executable, "-m", "gateway", "heat", "run", *self._common(),
                   "--bank", BANK, "--seconds", str(HEAT_S), "--credits", str(CREDITS),
                   "--trace"]  # fmt: skip
        else:
            cmd = [sys.executable, str(ROOT / "bench" / "chaos_worker.py"), *self._common(),
                   "--heat", str(heat_id)]  # fmt: skip
        return subprocess.Popen(
            cmd, cwd=ROOT, env=self.env, text=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip

    def _kill_at(self, proc: subprocess.Popen[str], trigger: Trigger, report: HeatReport) -> None:
        lines = Lines(proc)
        deadline = time.monotonic() + LINE_WAIT_S
        while (line := lines.next(deadline)) is not None:
            if trigger.hit(line):
                if trigger.delay:
                    time.sleep(trigger.delay)
                if proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)
                    report.killed = True
                break
        if proc.poll() is None and not report.killed:  # no step line in time: kill anyway
            os.kill(proc.pid, signal.SIGKILL)
            report.killed = True
            report.log.append(f"step line not seen; killed at {lines.seen[-1:]}")
        proc.wait(timeout=CHILD_TIMEOUT_S)
        report.log.extend(lines.seen[-3:])

    def _recover_killed(self, rng: random.Random, report: HeatReport) -> None:
        """A recovery killed part way: at one of its first step lines, or at a moment."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", "heat", "recover", *self._common(), "--bank", BANK,
             "--trace"], cwd=ROOT, env=self.env, text=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        lines = Lines(proc)
        deadline = time.monotonic() + rng.uniform(0.8, 3.0)
        wanted = rng.randint(1, 3)
        while (line := lines.next(deadline)) is not None:
            wanted -= " state " in line
            if wanted <= 0:
                time.sleep(rng.uniform(0.0, 0.02))
                break
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            report.log.append(f"recovery killed after {lines.seen[-1:]}")
        proc.wait(timeout=CHILD_TIMEOUT_S)
        report.recoveries += 1

    def _recover(self, report: HeatReport) -> None:
        """``reelgate heat recover``; a lease still held by a dead process is waited out."""
        for _ in range(LEASE_TRIES):
            done = subprocess.run(
                [sys.executable, "-m", "gateway", "heat", "recover", *self._common(),
                 "--bank", BANK, "--json"],
                cwd=ROOT, env=self.env, text=True, capture_output=True, timeout=CHILD_TIMEOUT_S,
            )  # fmt: skip
            if done.returncode == 2 and "held by" in done.stderr:
                time.sleep(0.5)
                continue
            report.recoveries += 1
            if done.returncode != 0:
                report.log.append(f"recover exit {done.returncode}: {done.stderr.strip()[-300:]}")
                return
            for r in json.loads(done.stdout)["recovered"]:
                if r["in_control_s"] is not None:
                    report.in_control_s.append(float(r["in_control_s"]))
            return
        report.log.append("recover: bank lease never freed")

    def _drive_again(self, heat_id: int, report: HeatReport) -> None:
        """A tournament heat restarted under T20 is due again: the gateway plays it anew."""
        proc = self._child(Scenario("tournament", "none", 0.0), heat_id)
        lines = Lines(proc)
        deadline = time.monotonic() + CHILD_TIMEOUT_S
        while lines.next(deadline) is not None:
            pass
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=CHILD_TIMEOUT_S)
        report.log.append(f"heat {heat_id} driven again: {lines.seen[-1:]}")

    # -- one heat ------------------------------------------------------------------------
    def run(self, s: Scenario) -> HeatReport:
        report = HeatReport(s)
        t0 = time.monotonic()
        rng = random.Random(s.seed)
        self.heats += 1
        self.faults.ask("exits")  # forget earlier heats' exits
        heat_id = asyncio.run(self._schedule(self.heats)) if s.kind == "tournament" else None
        first_run = asyncio.run(self._db(chaos_checks.next_run_id))
        proc = self._child(s, heat_id)
        self.faults.schedule(s)
        self._kill_at(proc, Trigger(s), report)
        if s.kill_recovery:
            self._recover_killed(rng, report)
        self._recover(report)
        self.faults.finish()  # the link is back: what the invariants are checked against
        self._settle(heat_id, first_run, report)
        exits = self.faults.ask("exits")["exits"]
        state = self.faults.ask("state")["machines"]
        report.findings = asyncio.run(
            self._db(lambda db: chaos_checks.check(db, heat_id, first_run, exits, state))
        )
        report.seconds = time.monotonic() - t0
        return report

    def _settle(self, heat_id: int | None, first_run: int, report: HeatReport) -> None:
        """Bounded: recover what is unsettled; drive again a heat restarted under T20."""
        for _ in range(SETTLE_ROUNDS):
            todo = asyncio.run(
                self._db(lambda sessions: chaos_checks.open_work(sessions, heat_id, first_run))
            )
            if todo == "unsettled":
                self._recover(report)
            elif todo == "due":
                assert heat_id is not None
                self._drive_again(heat_id, report)
            else:
                return

    def close(self) -> None:
        self.bank.close()
        if self.pg_admin is not None:
            asyncio.run(_drop_database(*self.pg_admin))

    def __enter__(self) -> Chaos:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _database(given: str | None, workdir: Path) -> tuple[tuple[str, str] | None, str]:
    """A fresh database: a SQLite file, or a new PostgreSQL database on the server that
    ``given`` / ``REELGATE_DATABASE_URL`` names (dropped by :meth:`Chaos.close`)."""
    url = given if given is not None else os.environ.get("REELGATE_DATABASE_URL", "")
    if not url.startswith("postgres"):
        path = workdir / "chaos.db"
        path.unlink(missing_ok=True)
        path.touch()
        return None, f"sqlite+aiosqlite:///{path}"
    from sqlalchemy.engine import make_url

    name = f"chaos_{uuid.uuid4().hex[:12]}"
    asyncio.run(_create_database(url, name))
    fresh = make_url(url).set(database=name).render_as_string(hide_password=False)
    return (url, name), fresh


async def _create_database(url: str, name: str) -> None:
    from sqlalchemy import text

    from storage.db import make_engine

    admin = make_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        await admin.dispose()


async def _drop_database(url: str, name: str) -> None:
    from sqlalchemy import text

    from storage.db import make_engine

    admin = make_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()
