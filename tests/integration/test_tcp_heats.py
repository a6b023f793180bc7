"""Heats against an emulated bank in another process, over real SAS/TCP sockets.

The bank (``bench/bank_host.py``) lives in its own process, as machines on a floor do:
the gateway under test can fail, be killed and come back while the machines carry on.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app.context import GatewayContext, bank_links, close_links
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.runner import HeatRunner
from storage.journal import MachineState, RunState

from ..gateway.emulated import ROOT, BankProcess

HEAT_S = 2


class Banks:
    """Starts emulated banks in child processes; closes them after the test."""

    def __init__(self) -> None:
        self.started: list[Any] = []

    def __call__(
        self, machines: int, *, host_timed: int = 0, real_time_silent_idle: bool = False
    ) -> Any:
        b = BankProcess(
            machines,
            host_timed=host_timed,
            players=True,
            real_time_silent_idle=real_time_silent_idle,
        )
        self.started.append(b)
        return b


@pytest.fixture
def banks() -> Iterator[Banks]:
    made = Banks()
    yield made
    for b in made.started:
        b.close()


def _floor(bank: Any, tmp_path: Path) -> Path:
    path = tmp_path / "floor.toml"
    path.write_text(bank.floor_toml())
    return path


def _all_back_in_normal_play(bank: Any) -> None:
    for m in bank.ask("state")["machines"]:
        assert not m["in_tournament"], m
        assert not m["play_locked"], m
        assert m["play_enabled"], m
        assert m["restricted"] == 0, m  # no tournament credits left behind (T12, T18)


async def _open(tmp_path: Path, bank: Any) -> GatewayContext:
    return await GatewayContext.open(
        database=f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}",
        floor_path=str(_floor(bank, tmp_path)),
        spool=tmp_path / "spool",
        upgrade=True,
    )


pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


async def test_full_heat_over_tcp_with_host_timed_fallback(banks: Banks, tmp_path: Path) -> None:
    bank = banks(4, host_timed=1)
    ctx = await _open(tmp_path, bank)
    try:
        spec = ctx.bank("A")
        links, failed = await bank_links(spec)
        assert failed == {}
        try:
            out = await HeatRunner(ctx.writer, links).run_new(
                "A", [m.id for m in spec.active], credits=500, seconds=HEAT_S
            )
        finally:
            await close_links(links)
        assert out.state is RunState.CLOSED
        supports = {m: s.support for m, s in out.seats.items()}
        assert supports == {
            "EMU-001": "native",
            "EMU-002": "native",
            "EMU-003": "native",
            "EMU-004": "host-timed",  # LP A0 bit 3 clear: the gateway times it
        }
        results = {r.machine_id: r for r in await ctx.journal.results(out.run_id)}
        assert sorted(results) == sorted(supports)
        for r in results.values():
            assert r.games_played > 0
            assert r.score == 500 - r.credits_wagered + r.credits_won  # T12
        assert all(s.unlock_ack_ms is not None for s in out.seats.values())
    finally:
        await ctx.close()
    _all_back_in_normal_play(bank)


@pytest.mark.parametrize("silent_idle", [False, True], ids=["idle-frame", "silent-idle"])
async def test_machines_failing_mid_heat(banks: Banks, tmp_path: Path, silent_idle: bool) -> None:
    """EMU-002 stops answering: malfunctioned (T20), the heat goes on for the others.
    EMU-003's connection drops: the driver reconnects and it keeps its seat.  With the
    live credits' real-time reporting on, whether an idle machine answers no activity
    with ``addr FF 00`` or, as SAS 6.02 §12.6 has it, with silence."""
    bank = banks(4, real_time_silent_idle=silent_idle)
    ctx = await _open(tmp_path, bank)
    try:
        spec = ctx.bank("A")
        links, _ = await bank_links(spec)
        running = asyncio.Event()

        def progress(note: ProgressNote) -> None:
            if note.kind is Progress.STATE and note.state == "running":
                running.set()

        runner = HeatRunner(ctx.writer, links, progress=progress)

        async def faults() -> None:
            await asyncio.wait_for(running.wait(), 30)
            await asyncio.sleep(0.5)
            await asyncio.to_thread(bank.ask, "fault EMU-002 no_reply")
            await asyncio.to_thread(bank.ask, "fault EMU-003 drop")

        injector = asyncio.create_task(faults())
        try:
            out = await runner.run_new("A", [m.id for m in spec.active], credits=500, seconds=3)
        finally:
            await injector
            await close_links(links)
        assert out.state is RunState.CLOSED
        assert out.seats["EMU-002"].state is MachineState.MALFUNCTION
        assert "stopped answering" in out.seats["EMU-002"].error
        stored = sorted(r.machine_id for r in await ctx.journal.results(out.run_id))
        assert stored == ["EMU-001", "EMU-003", "EMU-004"]
        view = await ctx.journal.run(out.run_id)
        assert not view.settled  # EMU-002 is still to be released

        # The machine answers again: recovery releases it, and stores nothing twice.
        bank.ask("fault EMU-002 clear")
        from gateway.heats.recovery import recover_bank

        links, _ = await bank_links(spec)
        try:
            reports = await recover_bank(ctx.writer, links, "A")
        finally:
            await close_links(links)
        assert [r.decision for r in reports] == ["release"]
        assert len(await ctx.journal.results(out.run_id)) == 3
        assert (await ctx.journal.run(out.run_id)).settled
    finally:
        await ctx.close()
    _all_back_in_normal_play(bank)


def _reelgate(*args: str, cwd: Path) -> list[str]:
    return [sys.executable, "-m", "gateway", *args]


@pytest.mark.slow
@pytest.mark.parametrize(
    "kill_in", ["scheduled", "armed", "running", "ending", "collecting", "closed"]
)
def test_sigkill_in_every_state_then_recover(banks: Banks, tmp_path: Path, kill_in: str) -> None:
    """The gateway process is SIGKILLed right after its journal reaches ``kill_in`` (before
    that state's floor action: the worst moment); a new process recovers: every score
    stored exactly once, every machine back in normal play and unlocked."""
    bank = banks(3, host_timed=1)
    floor = _floor(bank, tmp_path)
    db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
    common = ["--floor", str(floor), "--database", db, "--spool", str(tmp_path / "spool")]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    subprocess.run(_reelgate("db", "upgrade", "--database", db, cwd=tmp_path),
                   cwd=ROOT, check=True, capture_output=True, env=env, timeout=60)  # fmt: skip
    gw = subprocess.Popen(
        _reelgate("heat", "run", *common, "--bank", "A", "--seconds", "2",
                  "--credits", "400", "--trace", "--hold-in", kill_in, cwd=tmp_path),
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert gw.stderr is not None
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = gw.stderr.readline()
        if not line:
            break
        seen.append(line.strip())
        if line.strip() == f"holding in {kill_in}":
            os.kill(gw.pid, signal.SIGKILL)
            break
    gw.wait(timeout=10)
    assert gw.returncode == -signal.SIGKILL, "\n".join(seen + gw.stderr.readlines())

    rec = subprocess.run(
        _reelgate("heat", "recover", *common, "--bank", "A", "--json", cwd=tmp_path),
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert rec.returncode == 0, rec.stderr
    report = json.loads(rec.stdout)["recovered"]
    assert len(report) == 1
    assert report[0]["found_state"] == kill_in
    outcome = report[0]["outcome"]
    assert report[0]["in_control_s"] is not None
    if outcome["state"] == "closed":
        scored = [m for m in outcome["machines"] if m["score"] is not None]
        assert len(scored) == 3
    else:
        # T20: a host-timed machine went unwatched past the end: the heat restarts.  Killed
        # in "ending", that is also the rule's answer when the new process comes up after
        # the end's grace (a slow, loaded host): the machine may have played on meanwhile.
        assert outcome["state"] == "restarted"
        assert kill_in in ("running", "ending")
        if kill_in == "ending":
            assert "host-timed" in json.dumps(report[0]), report[0]

    # Exactly once, checked in the database itself.
    async def stored() -> list[str]:
        ctx = await GatewayContext.open(database=db, floor_path=None, spool=tmp_path / "spool")
        try:
            return [r.machine_id for r in await ctx.journal.results(1)]
        finally:
            await ctx.close()

    rows = asyncio.run(stored())
    assert len(rows) == len(set(rows))
    if outcome["state"] == "closed":
        assert sorted(rows) == ["EMU-001", "EMU-002", "EMU-003"]
    _all_back_in_normal_play(bank)
