"""A synchronised start: the agreed instant journaled, RUNNING journaled ahead of it, the
unlocks fired at it (never before), corrected for this host's clock offset; a host whose
offset is over the limit does not start the heat."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.clocks.central import ClockOffset
from gateway.heats.runner import HeatRunner
from gateway.heats.scheduler import Scheduler
from gateway.heats.spool import JournalWriter
from gateway.heats.sync_start import SyncPolicy, SyncStart
from storage.db import make_sessionmaker
from storage.effects import EffectIn, EffectKind
from storage.journal import Journal, RunState
from storage.journal_ops import JournalOp, StepOp
from storage.tournament import Heat

from .test_heat_runner import Bank


async def test_the_unlocks_leave_at_the_agreed_instant_by_this_hosts_clock(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    journal = Journal(make_sessionmaker(engine))
    bank = Bank(3, prepared=True)
    writer = JournalWriter(journal, tmp_path / "spool")
    offset = ClockOffset(-0.020, 0.001)  # this host's clock 20 ms behind the centre's
    agreed = datetime.now(UTC) + timedelta(seconds=3)  # room to arm on a loaded host
    start = SyncStart(agreed, offset)
    runner = HeatRunner(writer, bank.links, poll_interval_s=0.05, start_at=start)
    effects_written: list[EffectIn] = []
    write = writer.write

    async def recording_write(op: JournalOp) -> bool:
        if isinstance(op, StepOp):
            effects_written.extend(op.effects)
        return await write(op)

    writer.write = recording_write  # type: ignore[method-assign]
    out = await runner.run_new("A", bank.ids, credits=500, seconds=1)

    assert out.state is RunState.CLOSED
    local = agreed - timedelta(milliseconds=20)
    assert out.started_at == local  # the heat clock runs from the instant itself
    assert out.ends_at == local + timedelta(seconds=1)
    acks = [s.unlocked_at for s in out.seats.values()]
    assert all(at is not None and at >= local for at in acks)  # never a moment early
    steps = await journal.steps(out.run_id)
    armed = next(note for state, _, note in steps if state is RunState.ARMED)
    assert armed.startswith(f"synchronised start at {agreed.isoformat()} (central clock)")
    assert "-20.0 ms" in armed
    running_at = next(at for state, at, _ in steps if state is RunState.RUNNING)
    assert running_at <= local  # journaled before the floor is touched
    started = next(e.at for e in effects_written if e.kind is EffectKind.STARTED)
    # T22: the tournament is told the agreed instant itself (the centre's clock), so a host
    # clock behind the centre's never starts the heat before its advertised time.
    assert started == agreed


async def test_armed_too_late_fires_at_once_and_says_so(
    engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(make_sessionmaker(engine))
    bank = Bank(2, prepared=True)
    writer = JournalWriter(journal, tmp_path / "spool")
    past = SyncStart(datetime.now(UTC) - timedelta(seconds=5), ClockOffset(0.0, 0.0))
    runner = HeatRunner(writer, bank.links, poll_interval_s=0.05, start_at=past)
    with caplog.at_level(logging.WARNING):
        out = await runner.run_new("A", bank.ids, credits=500, seconds=1)
    assert out.state is RunState.CLOSED
    assert out.started_at is not None
    assert out.started_at > past.at + timedelta(seconds=4)
    assert "synchronised start missed by" in caplog.text


def _scheduler(offset: ClockOffset, now: datetime) -> Scheduler:
    async def measure() -> ClockOffset:
        return offset

    ctx = SimpleNamespace(floor=SimpleNamespace(banks={}, bank=lambda name: None))
    return Scheduler(
        cast(Any, ctx), {}, tournament=cast(Any, object()), now=lambda: now,
        synchronised=SyncPolicy(lead_s=2.0, limit_ms=50.0, measure=measure),
    )  # fmt: skip


async def test_a_host_clock_over_the_limit_blocks_the_start_until_it_is_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)
    heat = Heat(id=7, bank_name="R", scheduled_start=now + timedelta(seconds=1))
    off = _scheduler(ClockOffset(0.080, 0.001), now)
    with caplog.at_level(logging.WARNING):
        assert await off._synchronised_start(heat) is False
    assert "heat 7 not started on bank R: host clock +80.0 ms" in caplog.text
    # Past its instant it stays blocked while the clock is out (no unsynchronised start).
    off.now = lambda: now + timedelta(seconds=5)
    assert await off._synchronised_start(heat) is False

    fine = _scheduler(ClockOffset(0.003, 0.001), now)
    got = await fine._synchronised_start(heat)
    assert isinstance(got, SyncStart)
    assert got.at == heat.scheduled_start
    assert got.local == heat.scheduled_start + timedelta(milliseconds=3)
    late = _scheduler(ClockOffset(0.003, 0.001), now + timedelta(seconds=5))
    assert await late._synchronised_start(heat) is True  # a late heat starts at once


def test_no_policy_means_every_heat_starts_at_once() -> None:
    sched = _scheduler(ClockOffset(0.0, 0.0), datetime.now(UTC))
    sched.synchronised = None
    heat = Heat(id=1, bank_name="R", scheduled_start=datetime.now(UTC) + timedelta(hours=1))
    assert asyncio.run(sched._synchronised_start(heat)) is True
