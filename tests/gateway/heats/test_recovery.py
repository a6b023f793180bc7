"""Recovery from the journal after the gateway stopped right after journaling each state.

The runner's ``stop_after`` stops driving once a state is journaled and before its floor
action: the worst moment to die.  A fresh runner then recovers from the journal alone.
(The SIGKILL tests in test_tcp_heats.py do the same with a real process kill.)
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.machine import EmulatedMachine, MachineRefusal
from gateway.heats.live_feed import HeatFeeds
from gateway.heats.recovery import recover_bank
from gateway.heats.runner import HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink
from storage.db import make_sessionmaker
from storage.journal import Journal, MachineState, RunState

from ..direct_driver import DirectDriver


def _bank(
    n: int, host_timed: frozenset[int] = frozenset()
) -> tuple[list[EmulatedMachine], dict[str, DirectDriver]]:
    machines = [
        EmulatedMachine(f"A{i:02d}", seed=i, tournament_supported=i not in host_timed)
        for i in range(1, n + 1)
    ]
    return machines, {m.machine_id: DirectDriver(m) for m in machines}


def _links(drivers: dict[str, DirectDriver]) -> dict[str, MachineLink]:
    # A new process opens new links: build them afresh for the recovering runner.
    return {
        m: MachineLink(m, d, attempts=2, budget_s=0.3, first_wait_s=0.01)
        for m, d in drivers.items()
    }


async def _spin(machines: list[EmulatedMachine], stop: asyncio.Event) -> None:
    while not stop.is_set():
        for m in machines:
            with contextlib.suppress(MachineRefusal):
                if m.play_enabled() and m.credits > 0:
                    m.spin(1)
        await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    "crash_in",
    [
        RunState.SCHEDULED,
        RunState.ARMED,
        RunState.RUNNING,
        RunState.ENDING,
        RunState.COLLECTING,
        RunState.CLOSED,
    ],
)
async def test_recovery_after_each_state_scores_once_and_releases(
    engine: AsyncEngine, tmp_path: Path, crash_in: RunState
) -> None:
    journal = Journal(make_sessionmaker(engine))
    writer = JournalWriter(journal, tmp_path / "spool")
    machines, drivers = _bank(3)
    stop = asyncio.Event()
    players = asyncio.create_task(_spin(machines, stop))
    try:
        first = HeatRunner(writer, _links(drivers), poll_interval_s=0.05, stop_after=crash_in)
        crashed = await first.run_new("A", [m.machine_id for m in machines], credits=300, seconds=1)
        assert crashed.state is crash_in
        reports = await recover_bank(writer, _links(drivers), "A")
    finally:
        stop.set()
        await players
    assert len(reports) == 1
    report = reports[0]
    assert report.found_state is crash_in
    assert report.decision == ("release" if crash_in is RunState.CLOSED else "resume")
    assert report.outcome is not None
    assert report.outcome.state is RunState.CLOSED
    assert report.in_control_s is not None
    results = await journal.results(crashed.run_id)
    assert sorted(r.machine_id for r in results) == ["A01", "A02", "A03"]  # each exactly once
    for m in machines:
        assert not m.in_tournament, m.machine_id
        assert m.play_enabled(), m.machine_id
    view = await journal.run(crashed.run_id)
    assert view.settled
    assert await journal.unsettled_runs("A") == []


async def test_host_timed_left_unwatched_past_the_end_restarts_the_heat(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """T20: a host-timed machine has no timer of its own; if the gateway was down
    past the heat's end, its play went on unwatched, so the heat is restarted."""
    journal = Journal(make_sessionmaker(engine))
    writer = JournalWriter(journal, tmp_path / "spool")
    machines, drivers = _bank(2, host_timed=frozenset({2}))
    first = HeatRunner(writer, _links(drivers), stop_after=RunState.RUNNING)
    crashed = await first.run_new("A", ["A01", "A02"], credits=300, seconds=1)
    # the crash happened after the unlock was journaled; the floor was unlocked by hand
    for m in machines:
        m.unlock_play()
    await asyncio.sleep(1.0 + 2.2)  # past the end plus the grace period
    reports = await recover_bank(writer, _links(drivers), "A")
    assert reports[0].outcome is not None
    assert reports[0].outcome.state is RunState.RESTARTED
    assert reports[0].decision == "restart"
    assert await journal.results(crashed.run_id) == []
    for m in machines:
        assert not m.in_tournament
        assert m.restricted_credits == 0
        assert m.play_enabled()


async def test_silent_machine_at_restart_is_malfunctioned_others_resume(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    journal = Journal(make_sessionmaker(engine))
    writer = JournalWriter(journal, tmp_path / "spool")
    machines, drivers = _bank(3)
    first = HeatRunner(writer, _links(drivers), stop_after=RunState.RUNNING)
    crashed = await first.run_new("A", ["A01", "A02", "A03"], credits=300, seconds=1)
    drivers["A03"].fault = "down"
    reports = await recover_bank(writer, _links(drivers), "A")
    assert reports[0].silent == ["A03"]
    outcome = reports[0].outcome
    assert outcome is not None
    assert outcome.state is RunState.CLOSED
    assert outcome.seats["A03"].state is MachineState.MALFUNCTION  # T20
    assert sorted(r.machine_id for r in await journal.results(crashed.run_id)) == ["A01", "A02"]
    # A03 answers again later: the next recovery releases it, nothing is scored twice
    drivers["A03"].fault = None
    again = await recover_bank(writer, _links(drivers), "A")
    assert again[0].decision == "release"
    assert machines[2].play_enabled()
    assert not machines[2].in_tournament
    assert len(await journal.results(crashed.run_id)) == 2
    assert (await journal.run(crashed.run_id)).settled


async def test_most_of_the_bank_silent_restarts_per_rule_20(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    journal = Journal(make_sessionmaker(engine))
    writer = JournalWriter(journal, tmp_path / "spool")
    machines, drivers = _bank(3)
    first = HeatRunner(writer, _links(drivers), stop_after=RunState.RUNNING)
    crashed = await first.run_new("A", ["A01", "A02", "A03"], credits=300, seconds=5)
    for mid in ("A01", "A02"):
        drivers[mid].fault = "timeout"
    reports = await recover_bank(writer, _links(drivers), "A")
    assert reports[0].decision == "restart"
    steps = [s for s, _, _ in await journal.steps(crashed.run_id)]
    assert steps[-1] is RunState.RESTARTED
    assert machines[2].play_enabled()
    assert not machines[2].in_tournament
    assert not (await journal.run(crashed.run_id)).settled  # A01/A02 still to release


async def test_a_heat_resumed_after_a_restart_publishes_its_live_feed(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """A resumed run is no live heat of a scheduler (heat_of_run finds nothing), yet
    its signs get the heat's topics as a fresh run's do (docs/signage.md)."""
    journal = Journal(make_sessionmaker(engine))
    writer = JournalWriter(journal, tmp_path / "spool")
    machines, drivers = _bank(2)
    first = HeatRunner(writer, _links(drivers), poll_interval_s=0.05, stop_after=RunState.RUNNING)
    ids = [m.machine_id for m in machines]
    crashed = await first.run_new("A", ids, credits=300, seconds=1, heat_id=41)
    published: dict[str, dict[str, object]] = {}

    class Sink:
        def publish_nowait(
            self, topic: str, payload: dict[str, object], *, retain: bool = False
        ) -> None:
            published[topic] = payload

    feeds = HeatFeeds(Sink(), None, lambda run_id: None, tick=None)
    # As recovery drives it (resumed=True); stopped at CLOSED, before the release, which
    # waits for the tournament side to apply the heat's effects (no tournament here).
    resumed = HeatRunner(
        writer, _links(drivers), progress=feeds, poll_interval_s=0.05, stop_after=RunState.CLOSED
    )
    try:
        out = await resumed.drive(await journal.run(crashed.run_id), resumed=True)
    finally:
        await feeds.close()
    assert out.state is RunState.CLOSED
    assert published["current"]["heat"] == "41"
    assert published["heat/41/state"]["state"] == "closed"
    assert {published[f"heat/41/seat/{m}"]["final"] for m in ids} == {True}
    rows = published["heat/41/standings"]["rows"]
    assert isinstance(rows, list)
    assert sorted(r["machine"] for r in rows) == ids
