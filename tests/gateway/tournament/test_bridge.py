"""The bridge's drains: a run's own drain and the sweep of every other run.

Gateways on one central database each sweep the effects nobody applied.  The sweep
leaves another gateway's fresh effect to that gateway's own runner for a grace period
(the time is the bridge's injected clock against the effect's ``created_at``), takes it
after the grace (that gateway died), takes its own banks' effects at once, and keeps a
heat's effects in order.  What applying does to the tournament is tested elsewhere: the
bridge here records the effects it applies.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Literal

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from gateway.tournament.bridge import OK, TournamentBridge
from storage import effects
from storage.db import make_sessionmaker
from storage.effects import EffectIn, EffectKind, EffectView, HeatEffect
from storage.journal import Journal

T0 = datetime(2026, 12, 6, 1, 0, tzinfo=UTC)


class Recording(TournamentBridge):
    """Applies nothing to the tournament: records the effects it was given, in order;
    ``hold`` (if set) keeps the first application waiting until released."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], now: datetime) -> None:
        super().__init__(sessions, clock=lambda: self.now, sweep_grace_s=10.0)
        self.now = now
        self.applied: list[int] = []
        self.hold: asyncio.Event | None = None
        self.holding = asyncio.Event()

    async def _apply_one(self, effect_id: int, *, wait: bool = True) -> bool | None:
        if self.hold is not None:  # held with the process's lock, before any transaction
            hold, self.hold = self.hold, None
            self.holding.set()
            await hold.wait()
        return await super()._apply_one(effect_id, wait=wait)

    async def _apply(self, session: AsyncSession, effect: EffectView) -> str:
        self.applied.append(effect.id)
        return OK


class SeenLock(asyncio.Lock):
    """A lock that tells when someone had to wait for it."""

    def __init__(self) -> None:
        super().__init__()
        self.waited = asyncio.Event()

    async def acquire(self) -> Literal[True]:
        if self.locked():
            self.waited.set()
        return await super().acquire()


async def _run_with_effects(
    journal: Journal, bank: str, heat_id: int, written: list[datetime]
) -> tuple[int, list[int]]:
    """A run on ``bank`` whose effects (one per step) were written at ``written``."""
    run_id = await journal.create_run(bank, [f"{bank}01"], credits=100, seconds=60, heat_id=heat_id)
    ids = []
    for i, at in enumerate(written):
        effect = EffectIn(EffectKind.MALFUNCTION, T0 + timedelta(seconds=i), f"{bank}01")
        await journal.set_seats(run_id, {}, effects=[effect])
        async with journal.sessions.begin() as session:
            (last,) = [e for e in await effects.pending(session, run_id=run_id) if e.id not in ids]
            # The writer's clock is the wall clock: set the time the test means.
            await session.execute(
                update(HeatEffect).where(HeatEffect.id == last.id).values(created_at=at)
            )
        ids.append(last.id)
    return run_id, ids


@pytest.fixture
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


async def test_the_sweep_leaves_another_gateways_fresh_effect_until_the_grace_is_over(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    journal = Journal(sessions)
    _, (effect,) = await _run_with_effects(journal, "B", 8, [T0])
    bridge = Recording(sessions, T0 + timedelta(seconds=9.9))
    assert await bridge.drain(own_banks=["A"]) == 0  # B's own runner is still to drain it
    assert bridge.applied == []
    bridge.now = T0 + timedelta(seconds=10.1)  # B's gateway did not: it died
    assert await bridge.drain(own_banks=["A"]) == 1
    assert await bridge.drain(own_banks=["A"]) == 0  # once
    assert bridge.applied == [effect]


async def test_the_sweep_takes_its_own_banks_effects_and_a_runs_drain_ignores_the_grace(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    journal = Journal(sessions)
    _, (own,) = await _run_with_effects(journal, "A", 7, [T0])
    b_run, (other,) = await _run_with_effects(journal, "B", 8, [T0])
    bridge = Recording(sessions, T0)
    assert await bridge.drain(own_banks=["A"]) == 1
    assert await bridge.drain(b_run) == 1  # a run's own drain: at once
    assert bridge.applied == [own, other]


async def test_a_sweep_told_no_banks_of_its_own_or_a_grace_of_zero_takes_everything_at_once(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    journal = Journal(sessions)
    await _run_with_effects(journal, "B", 8, [T0])
    bridge = TournamentBridge(sessions, clock=lambda: T0, sweep_grace_s=0.0)
    found: list[int] = []

    async def record(session: AsyncSession, effect: EffectView) -> str:
        found.append(effect.id)
        return OK

    bridge._apply = record  # type: ignore[method-assign]
    assert await bridge.drain(own_banks=["A"]) == 1
    assert len(found) == 1
    await _run_with_effects(journal, "C", 9, [T0])
    tool = Recording(sessions, T0)  # a tool or a test heat: no gateway's banks of its own
    assert await tool.drain() == 1
    with pytest.raises(ValueError, match="negative"):
        TournamentBridge(sessions, sweep_grace_s=-1.0)


@pytest.mark.parametrize("fresh_first", [True, False])
async def test_a_heats_effects_stay_in_order_whatever_the_writers_clocks(
    sessions: async_sessionmaker[AsyncSession], fresh_first: bool
) -> None:
    """An effect written later by a clock behind the first writer's (a standby took the
    bank over) may look older than the one before it: it still waits for it."""
    journal = Journal(sessions)
    old, fresh = T0 - timedelta(seconds=60), T0
    written = [fresh, old] if fresh_first else [old, fresh]
    _, ids = await _run_with_effects(journal, "B", 8, written)
    bridge = Recording(sessions, T0 + timedelta(seconds=1))
    await bridge.drain(own_banks=["A"])
    assert bridge.applied == ([] if fresh_first else ids[:1])
    bridge.now = T0 + timedelta(seconds=11)
    await bridge.drain(own_banks=["A"])
    assert bridge.applied == ids


async def test_a_runs_drain_waits_for_one_effect_of_a_sweep_not_the_whole_sweep(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """In one process effects apply one at a time, but a sweep lets go between them: a
    runner's drain that comes while a sweep applies another venue's effects goes next."""
    journal = Journal(sessions)
    old = T0 - timedelta(seconds=60)
    _, (s1, s2) = await _run_with_effects(journal, "B", 8, [old, old])
    own_run, (mine,) = await _run_with_effects(journal, "A", 7, [T0])
    bridge = Recording(sessions, T0)
    bridge._applying = lock = SeenLock()
    bridge.hold = release = asyncio.Event()
    sweep = asyncio.create_task(bridge.drain(skip_banks=["A"], own_banks=["A"]))
    await bridge.holding.wait()  # the sweep is at s1
    own = asyncio.create_task(bridge.drain(own_run))
    await lock.waited.wait()  # the runner's drain is waiting for the sweep's effect
    release.set()
    assert await own == 1
    assert await sweep == 2
    assert bridge.applied == [s1, mine, s2]
