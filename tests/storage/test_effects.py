"""The heat's tournament effects: written with their journal step, applied once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from storage import effects
from storage.db import make_sessionmaker
from storage.effects import EffectIn, EffectKind
from storage.journal import Journal, MachineState, NotSettled, ResultIn, RunState

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def _result(machine_id: str, score: int) -> ResultIn:
    return ResultIn(machine_id, score, 10, 3, 50, 40, NOW)


async def test_effects_commit_with_their_step_and_test_heats_have_none(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    journal = Journal(sessions)
    heat_run = await journal.create_run("A", ["A01", "A02"], credits=1000, seconds=60, heat_id=7)
    test_run = await journal.create_run("B", ["B01"], credits=1000, seconds=60)
    started = EffectIn(EffectKind.STARTED, NOW)
    await journal.step(heat_run, RunState.RUNNING, started_at=NOW, effects=[started])
    await journal.step(test_run, RunState.RUNNING, started_at=NOW, effects=[started])
    # T12: the bank's scores reach the tournament as one effect per stored batch.
    assert await journal.store_results(heat_run, [_result("A01", 900), _result("A02", 1200)]) == 2
    assert await journal.store_results(heat_run, [_result("A01", 900)]) == 0  # a replay
    async with sessions() as session:
        waiting = await effects.pending(session)
    assert [(e.run_id, e.heat_id, e.kind) for e in waiting] == [
        (heat_run, 7, EffectKind.STARTED),
        (heat_run, 7, EffectKind.SCORES),
    ]
    assert waiting[1].details == {"machines": ["A01", "A02"]}


async def test_a_step_that_fails_writes_no_effect(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    journal = Journal(sessions)
    run_id = await journal.create_run("A", ["A01"], credits=1000, seconds=60, heat_id=7)
    bad = EffectIn(EffectKind.MALFUNCTION, NOW, machine_id="A01")
    with pytest.raises(KeyError):
        await journal.set_seats(run_id, {"A99": MachineState.MALFUNCTION}, effects=[bad])
    async with sessions() as session:
        assert await effects.pending(session, run_id=run_id) == []


async def test_an_effect_is_claimed_by_one_drainer_only(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    journal = Journal(sessions)
    run_id = await journal.create_run("A", ["A01"], credits=1000, seconds=60, heat_id=7)
    await journal.step(run_id, RunState.CLOSED, effects=[EffectIn(EffectKind.CLOSED, NOW)])
    async with sessions() as session:
        (effect,) = await effects.pending(session, run_id=run_id)
    applied: list[str] = []

    async def drain(name: str) -> None:
        async with sessions.begin() as session:
            claimed = await effects.claim(session, effect.id)
            if claimed is None:
                return
            applied.append(name)
            await effects.finish(session, effect.id, outcome="ok", now=NOW)

    await asyncio.gather(*(drain(f"drainer-{i}") for i in range(4)))
    assert len(applied) == 1
    async with sessions() as session:
        (done,) = await effects.history(session, run_id)
    assert (done.applied_at, done.outcome) == (NOW, "ok")


async def test_a_run_settles_only_when_machines_are_back_and_effects_applied(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    journal = Journal(sessions)
    run_id = await journal.create_run("A", ["A01", "A02"], credits=1000, seconds=60, heat_id=7)
    await journal.step(
        run_id,
        RunState.CLOSED,
        seats={"A01": MachineState.RELEASED, "A02": MachineState.LOCKED},
        effects=[EffectIn(EffectKind.CLOSED, NOW)],
    )
    with pytest.raises(NotSettled, match="machine A02 not back in normal play"):
        await journal.settle(run_id)
    await journal.set_seats(run_id, {"A02": MachineState.RELEASED})
    with pytest.raises(NotSettled, match="1 tournament effect"):
        await journal.settle(run_id)
    async with sessions.begin() as session:
        (effect,) = await effects.pending(session, run_id=run_id)
        assert await effects.claim(session, effect.id) is not None
        await effects.finish(session, effect.id, outcome="ok", now=NOW)
    await journal.settle(run_id)
    assert (await journal.run(run_id)).settled
