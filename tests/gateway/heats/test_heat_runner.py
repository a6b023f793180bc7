"""The heat state machine against in-process machines (DirectDriver test double)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.machine import EmulatedMachine, MachineRefusal
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.runner import Command, HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink
from gateway.scores import TournamentMeters
from storage.db import make_sessionmaker
from storage.journal import Journal, MachineState, RunState
from storage.journal_ops import JournalOp, StepOp

from ..direct_driver import DirectDriver, PreparedDirectDriver


class Bank:
    def __init__(
        self, n: int, *, host_timed: set[int] | None = None, prepared: bool = False
    ) -> None:
        self.machines = [
            EmulatedMachine(
                f"A{i:02d}", seed=i, tournament_supported=i not in (host_timed or set())
            )
            for i in range(1, n + 1)
        ]
        kind = PreparedDirectDriver if prepared else DirectDriver
        self.drivers = {m.machine_id: kind(m) for m in self.machines}
        self.links = {
            mid: MachineLink(mid, d, attempts=2, budget_s=0.3, first_wait_s=0.01)
            for mid, d in self.drivers.items()
        }

    @property
    def ids(self) -> list[str]:
        return [m.machine_id for m in self.machines]


async def _players(machines: list[EmulatedMachine], stop: asyncio.Event) -> None:
    """Every seat spins whenever play is enabled (bounded by ``stop``)."""
    while not stop.is_set():
        for m in machines:
            with contextlib.suppress(MachineRefusal):
                if m.play_enabled() and m.credits > 0:
                    m.spin(1)
        await asyncio.sleep(0.01)


@pytest.fixture
async def journal(engine: AsyncEngine) -> Journal:
    return Journal(make_sessionmaker(engine))


async def _run(runner: HeatRunner, bank: Bank, seconds: int = 1) -> HeatOutcome:
    stop = asyncio.Event()
    players = asyncio.create_task(_players(bank.machines, stop))
    try:
        return await runner.run_new("A", bank.ids, credits=500, seconds=seconds)
    finally:
        stop.set()
        await players


@pytest.mark.parametrize("prepared", [False, True], ids=["gather", "prepared-unlock"])
async def test_full_heat_scores_every_machine_once_and_releases(
    journal: Journal, tmp_path: Path, prepared: bool
) -> None:
    bank = Bank(4, prepared=prepared)
    writer = JournalWriter(journal, tmp_path / "spool")
    runner = HeatRunner(writer, bank.links, poll_interval_s=0.05)
    out = await _run(runner, bank)
    assert out.state is RunState.CLOSED
    results = {r.machine_id: r for r in await journal.results(out.run_id)}
    assert set(results) == set(bank.ids)
    for m in bank.machines:
        r = results[m.machine_id]
        assert r.games_played > 0
        # T12: the score is the tournament credit meter at the end
        assert r.score == 500 - r.credits_wagered + r.credits_won
        assert not m.in_tournament
        assert m.play_enabled()  # back in normal play
    steps = [s for s, _, _ in await journal.steps(out.run_id)]
    assert steps == [
        RunState.SCHEDULED,
        RunState.ARMED,
        RunState.RUNNING,
        RunState.ENDING,
        RunState.COLLECTING,
        RunState.CLOSED,
    ]
    view = await journal.run(out.run_id)
    assert view.settled
    assert set(view.machines.values()) == {MachineState.RELEASED}
    if prepared:  # every unlock sent before any acknowledgement was awaited
        assert all("prepare_unlock" in d.calls for d in bank.drivers.values())


async def test_machine_that_stops_answering_is_malfunctioned_heat_goes_on(
    journal: Journal, tmp_path: Path
) -> None:
    bank = Bank(3)
    runner = HeatRunner(
        JournalWriter(journal, tmp_path / "spool"), bank.links, poll_interval_s=0.05
    )

    async def fail_later() -> None:
        # once the heat is under way on A02 (a condition, not a guessed delay: arming
        # can take longer than any fixed pause on a loaded machine)
        for _ in range(1000):  # bounded: 10 s
            if bank.machines[1].in_tournament and bank.machines[1].play_enabled():
                break
            await asyncio.sleep(0.01)
        bank.drivers["A02"].fault = "timeout"

    failing = asyncio.create_task(fail_later())
    out = await _run(runner, bank, seconds=2)
    await failing
    assert out.state is RunState.CLOSED
    assert out.seats["A02"].state is MachineState.MALFUNCTION  # T20
    assert "stopped answering" in out.seats["A02"].error
    stored = {r.machine_id for r in await journal.results(out.run_id)}
    assert stored == {"A01", "A03"}
    view = await journal.run(out.run_id)
    assert not view.settled  # A02 still needs releasing: recovery will retry it
    bank.drivers["A02"].fault = None


async def test_host_timed_machine_scores_from_its_credit_meter(
    journal: Journal, tmp_path: Path
) -> None:
    bank = Bank(2, host_timed={2})
    runner = HeatRunner(
        JournalWriter(journal, tmp_path / "spool"), bank.links, poll_interval_s=0.05
    )
    out = await _run(runner, bank)
    assert out.seats["A02"].support == "host-timed"
    assert out.seats["A01"].support == "native"
    assert bank.machines[1].restricted_credits == 0  # the loaded credits are taken back
    r = {x.machine_id: x for x in await journal.results(out.run_id)}["A02"]
    assert r.games_played > 0
    assert r.score == 500 - r.credits_wagered + r.credits_won


async def test_director_pause_resume_then_abort_releases_without_scores(
    journal: Journal, tmp_path: Path
) -> None:
    bank = Bank(2)
    runner = HeatRunner(
        JournalWriter(journal, tmp_path / "spool"), bank.links, poll_interval_s=0.05
    )

    async def director() -> None:
        await asyncio.sleep(0.3)
        runner.direct(Command.PAUSE, "floor incident")
        await asyncio.sleep(0.2)
        assert all(not m.play_enabled() for m in bank.machines)
        runner.direct(Command.RESUME)
        await asyncio.sleep(0.2)
        runner.direct(Command.ABORT, "director abort")

    d = asyncio.create_task(director())
    out = await _run(runner, bank, seconds=5)
    await d
    assert out.state is RunState.ABORTED
    assert await journal.results(out.run_id) == []
    steps = [s for s, _, _ in await journal.steps(out.run_id)]
    assert RunState.PAUSED in steps
    assert steps[-1] is RunState.ABORTED
    assert all(not m.in_tournament and m.play_enabled() for m in bank.machines)


class _PacedDriver(DirectDriver):
    """A driver that paces its own polls (as SAS does) and counts who asks how much."""

    reads = 0

    @property
    def min_spacing(self) -> float:
        self.reads += 1
        return 0.05


async def test_watchers_take_the_poll_spacing_once_not_per_poll(
    journal: Journal, tmp_path: Path
) -> None:
    """Each watcher asks, before every poll, whether the end is a spacing away; asking
    every link each time made a thousand-machine heat quadratic (a second of CPU per
    poll round).  The spacing is read a fixed number of times per heat, however many
    polls the watchers make."""
    bank = Bank(6)
    paced = {m.machine_id: _PacedDriver(m) for m in bank.machines}
    links = {mid: MachineLink(mid, d) for mid, d in paced.items()}
    runner = HeatRunner(JournalWriter(journal, tmp_path / "spool"), links, poll_interval_s=0.01)
    out = await _run(runner, bank)
    assert out.state is RunState.CLOSED
    # arming, the quiet time before the end, the watchers' start: a few reads per link
    # (each isinstance check on the capability reads it too), none per poll
    assert all(d.reads <= 12 for d in paced.values()), [d.reads for d in paced.values()]
    assert all(d.calls.count("poll_events") >= 1 for d in paced.values())


class _MetersOnly:
    """Tournament meters (SAS LP 99) that answer only once ``barrier`` is full: every
    machine must be asked before any answers."""

    def __init__(self, barrier: asyncio.Barrier, games: int) -> None:
        self.barrier, self.games = barrier, games

    async def tournament_meters(self) -> TournamentMeters:
        await self.barrier.wait()
        return TournamentMeters(self.games, 0, self.games, 0)


async def test_proof_of_play_after_the_end_is_read_from_every_machine_at_once(
    journal: Journal, tmp_path: Path
) -> None:
    """T20: resumed after the end, a heat stands on each machine's own games played; a
    thousand machines asked one after another would wait a round trip each."""
    barrier = asyncio.Barrier(3)  # A04 acknowledged its unlock: proven, not asked
    drivers = {f"A0{i}": _MetersOnly(barrier, games=i) for i in range(1, 5)}
    links = {m: MachineLink(m, d) for m, d in drivers.items()}  # type: ignore[arg-type]
    for link in links.values():
        link.opened = True
    runner = HeatRunner(JournalWriter(journal, tmp_path / "spool"), links)
    runner.view = cast(Any, SimpleNamespace(unlocked={"A04": datetime.now(UTC)}))
    async with asyncio.timeout(5):  # asked one by one, the first would wait forever
        counts = await runner._games_played(list(drivers))
    assert counts == {"A01": 1, "A02": 2, "A03": 3}


class _LiveDriver(DirectDriver):
    """Live credits as a real-time SAS driver keeps them (capabilities.LiveCredits)."""

    async def start_live_credits(self) -> bool:
        await self._io("start_live_credits")
        return True

    def live_credits(self) -> int | None:
        return self.machine.credits

    def follow_live_credits(self, listener: Callable[[int], None] | None) -> None:
        self.listener = listener


async def test_the_last_credits_are_shown_before_the_scores_are_stored(
    journal: Journal, tmp_path: Path
) -> None:
    """The watchers go quiet a poll spacing before the end; a change made then reaches
    the live display from the collection's own reads, not only with the stored scores."""
    bank = Bank(3)
    drivers = {m.machine_id: _LiveDriver(m) for m in bank.machines}
    links = {mid: MachineLink(mid, d) for mid, d in drivers.items()}
    notes: list[ProgressNote] = []
    runner = HeatRunner(
        JournalWriter(journal, tmp_path / "spool"),
        links,
        poll_interval_s=0.05,
        progress=notes.append,
    )
    out = await _run(runner, bank)
    assert out.state is RunState.CLOSED
    first_score = next(i for i, n in enumerate(notes) if n.kind is Progress.SCORE)
    collecting = next(
        i for i, n in enumerate(notes) if n.kind is Progress.STATE and n.state == "collecting"
    )
    for mid in bank.ids:
        shown = [
            n.value
            for n in notes[collecting:first_score]
            if n.kind is Progress.CREDITS and n.machine_id == mid
        ]
        assert shown, mid
        assert shown[-1] == out.seats[mid].score


class _WatchingWriter(JournalWriter):
    """Notes, as each step is journaled, whether the watchers were told to stop and
    whether the cyclic collector runs."""

    def __init__(self, journal: Journal, spool: Path) -> None:
        super().__init__(journal, spool)
        self.runner: HeatRunner | None = None
        self.seen: dict[RunState, tuple[bool, bool]] = {}

    async def write(self, op: JournalOp) -> bool:
        if self.runner is not None and isinstance(op, StepOp):
            self.seen[op.state] = (self.runner._stop_watch.is_set(), gc.isenabled())
        return await super().write(op)


async def test_the_end_is_journaled_while_the_watchers_wind_down(
    journal: Journal, tmp_path: Path
) -> None:
    """Every step between the last turns and the lock costs the lock's punctuality at a
    thousand machines: the watchers are told to stop before ENDING is journaled (they
    wind down during its commit), and the collector is off from a second before the end
    until the scores are stored (a full pass there took ~140 ms), on again after."""
    assert gc.isenabled()
    bank = Bank(3)
    writer = _WatchingWriter(journal, tmp_path / "spool")
    runner = HeatRunner(writer, bank.links, poll_interval_s=0.05)
    writer.runner = runner
    out = await _run(runner, bank, seconds=2)
    assert out.state is RunState.CLOSED
    assert writer.seen[RunState.RUNNING] == (False, True)
    assert writer.seen[RunState.ENDING] == (True, False)  # told to stop, collector off
    assert writer.seen[RunState.COLLECTING] == (True, False)
    assert gc.isenabled()  # on again once the scores were stored
