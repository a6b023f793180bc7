"""Games-limited and credit-limited heats on the runner (house clauses F2–F5).

Each machine's end is journaled (seat LOCKED, with its clause) while the machine is
still in play, then it is locked; the heat ends when every machine is done, long before
its time (the backstop).  Clauses: docs/rules.md#f2, #f3, #f4, #f5.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.machine import EmulatedMachine, MachineRefusal
from gateway.heat_formats import FormatKind, HeatFormat, HeatFormatError, heat_format
from gateway.heats.recovery import recover_bank
from gateway.heats.runner import HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink
from storage.db import make_sessionmaker
from storage.journal import Journal, MachineState, RunState
from storage.journal_ops import JournalOp, SeatsOp

from ..direct_driver import DirectDriver

HEAT_SECONDS = 120  # the backstop: every heat here must end by its format long before


class RecordingWriter(JournalWriter):
    """Notes, for each seat journaled LOCKED by a format, whether its machine was still
    in play at that moment (the end journaled before the machine is touched)."""

    def __init__(self, journal: Journal, spool: Path, machines: dict[str, EmulatedMachine]):
        super().__init__(journal, spool)
        self.machines = machines
        self.done: dict[str, tuple[str, bool]] = {}

    async def write(self, op: JournalOp) -> bool:
        if isinstance(op, SeatsOp) and op.note.startswith("rule F"):
            for machine_id, state in op.seats.items():
                if state is MachineState.LOCKED:
                    self.done[machine_id] = (op.note, self.machines[machine_id].play_enabled())
        return await super().write(op)


def _bank(n: int) -> tuple[list[EmulatedMachine], dict[str, MachineLink]]:
    machines = [EmulatedMachine(f"A{i:02d}", seed=i) for i in range(1, n + 1)]
    links = {
        m.machine_id: MachineLink(
            m.machine_id, DirectDriver(m), attempts=2, budget_s=0.3, first_wait_s=0.01
        )
        for m in machines
    }
    return machines, links


async def _players(machines: list[EmulatedMachine], stop: asyncio.Event) -> None:
    """Every seat spins one credit whenever it can, a game every 0.2 s: faster than any
    real game, slower than the watchers' 50 ms turn (bounded by ``stop``)."""
    while not stop.is_set():
        for m in machines:
            with contextlib.suppress(MachineRefusal):
                if m.play_enabled() and m.credits > 0:
                    m.spin(1)
        await asyncio.sleep(0.2)


async def _run(
    journal: Journal, tmp_path: Path, fmt: HeatFormat, credits: int
) -> tuple[HeatOutcome, list[EmulatedMachine], RecordingWriter]:
    machines, links = _bank(3)
    writer = RecordingWriter(journal, tmp_path / "spool", {m.machine_id: m for m in machines})
    runner = HeatRunner(writer, links, poll_interval_s=0.05)
    stop = asyncio.Event()
    players = asyncio.create_task(_players(machines, stop))
    try:
        ids = [m.machine_id for m in machines]
        run = runner.run_new("A", ids, credits=credits, seconds=HEAT_SECONDS, heat_format=fmt)
        out = await asyncio.wait_for(run, 60)  # bounded: the format, not the time, ends it
    finally:
        stop.set()
        await players
    return out, machines, writer


@pytest.fixture
async def journal(engine: AsyncEngine) -> Journal:
    return Journal(make_sessionmaker(engine))


def test_f1_f2_f3_formats_read_and_refuse_in_one_line() -> None:
    assert HeatFormat.parse(None).timed  # F5: a run journaled before formats is timed
    games = heat_format("games-limited", games_per_seat=30)
    assert HeatFormat.parse(games.spec()) == games
    credits = heat_format("credit-limited", minimum_bet=5)
    assert credits.spec() == "credit-limited:5"
    assert HeatFormat.parse("credit-limited:5").kind is FormatKind.CREDITS
    assert games.seat_done(games_played=29) is None
    assert games.seat_done(games_played=30) == "rule F2: 30 of 30 games played"
    assert games.seat_done(credits=0) is None  # games-limited: credits never end it
    assert credits.seat_done(credits=5) is None
    assert credits.seat_done(credits=4) == "rule F3: 4 credits left, under the minimum bet 5"
    assert HeatFormat().seat_done(credits=0, games_played=10**6) is None  # T12: timed
    refusals: list[tuple[Callable[[], HeatFormat], str]] = [
        (lambda: heat_format("sprint"), "rule F1: format must be one of"),
        (lambda: heat_format("games-limited"), "rule F2: a games-limited heat needs"),
        (lambda: heat_format("games-limited", games_per_seat=0), "rule F2: games_per_seat"),
        (lambda: heat_format("timed", games_per_seat=3), "rule F1: games_per_seat is only"),
        (lambda: heat_format("credit-limited", minimum_bet=0), "rule F3: minimum_bet"),
        (lambda: HeatFormat.parse("games-limited:x"), "rule F1: unknown heat format"),
    ]
    for bad, clause in refusals:
        with pytest.raises(HeatFormatError, match=clause):
            bad()


async def test_f2_f4_a_games_limited_heat_ends_each_machine_after_its_games(
    journal: Journal, tmp_path: Path
) -> None:
    fmt = heat_format("games-limited", games_per_seat=6)
    out, machines, writer = await _run(journal, tmp_path, fmt, credits=500)
    assert out.state is RunState.CLOSED
    view = await journal.run(out.run_id)
    assert view.format == "games-limited:6"  # F5: journaled on the run
    results = {r.machine_id: r for r in await journal.results(out.run_id)}
    assert set(results) == {m.machine_id for m in machines}
    for m in machines:
        note, in_play = writer.done[m.machine_id]
        assert note.startswith("rule F2:")
        assert in_play  # F4: the end journaled before the machine was locked
        # F2: counted on the tournament meters; the game in progress at the lock completes
        assert 6 <= results[m.machine_id].games_played <= 7
        assert results[m.machine_id].score == 500 - results[m.machine_id].credits_wagered + (
            results[m.machine_id].credits_won
        )  # T12: the credit meter at the end
        assert m.play_enabled()
        assert not m.in_tournament
    steps = await journal.steps(out.run_id)
    ending = [note for state, _, note in steps if state is RunState.ENDING]
    assert ending == ["rule F4: every machine done (games-limited:6)"]
    assert out.ends_at is not None
    assert out.started_at is not None
    assert (out.ends_at - out.started_at).total_seconds() < HEAT_SECONDS


async def test_f3_f4_a_credit_limited_heat_ends_each_machine_when_its_credits_are_spent(
    journal: Journal, tmp_path: Path
) -> None:
    fmt = heat_format("credit-limited")
    out, machines, writer = await _run(journal, tmp_path, fmt, credits=4)
    assert out.state is RunState.CLOSED
    results = {r.machine_id: r for r in await journal.results(out.run_id)}
    for m in machines:
        note, in_play = writer.done[m.machine_id]
        assert note.startswith("rule F3: 0 credits left")
        assert in_play
        assert results[m.machine_id].score == 0  # F3: spent, and the score is what is left
        assert results[m.machine_id].credits_wagered >= 4
    view = await journal.run(out.run_id)
    assert view.format == "credit-limited:1"
    assert set(view.machines.values()) == {MachineState.RELEASED}


async def test_t12_a_timed_heat_journals_no_format(journal: Journal, tmp_path: Path) -> None:
    machines, links = _bank(1)
    runner = HeatRunner(JournalWriter(journal, tmp_path / "spool"), links, poll_interval_s=0.05)
    out = await runner.run_new("A", [machines[0].machine_id], credits=10, seconds=1)
    assert out.state is RunState.CLOSED
    assert (await journal.run(out.run_id)).format is None


async def test_f5_a_resumed_heat_keeps_its_done_machines_locked(
    journal: Journal, tmp_path: Path
) -> None:
    """The gateway died just after journaling A01 done (F4), before its lock left: the
    recovery reads the format from the run (F5), locks A01 again and never unlocks it;
    A02 plays on to its games and the heat ends by F4."""
    machines, links = _bank(2)
    writer = JournalWriter(journal, tmp_path / "spool")
    fmt = heat_format("games-limited", games_per_seat=3)
    first = HeatRunner(writer, links, poll_interval_s=0.05, stop_after=RunState.RUNNING)
    crashed = await first.run_new(
        "A", ["A01", "A02"], credits=100, seconds=HEAT_SECONDS, heat_format=fmt
    )
    await writer.write(SeatsOp(crashed.run_id, {"A01": MachineState.LOCKED}, note="rule F2: x"))
    machines[0].unlock_play()  # its unlock had left; its lock had not
    fresh = {
        m.machine_id: MachineLink(
            m.machine_id, DirectDriver(m), attempts=2, budget_s=0.3, first_wait_s=0.01
        )
        for m in machines
    }
    stop = asyncio.Event()
    players = asyncio.create_task(_players(machines[1:], stop))  # A01's player has left
    try:
        reports = await asyncio.wait_for(recover_bank(writer, fresh, "A"), 60)
    finally:
        stop.set()
        await players
    outcome = reports[0].outcome
    assert outcome is not None
    assert outcome.state is RunState.CLOSED
    a01 = cast(DirectDriver, fresh["A01"].driver).calls
    in_heat = a01[: a01.index("exit_tournament")]  # then the release: back to normal play
    assert "lock" in in_heat
    assert "unlock" not in in_heat  # F5: a done machine is never unlocked in its heat
    results = {r.machine_id: r for r in await journal.results(crashed.run_id)}
    assert results["A01"].games_played == 0
    assert 3 <= results["A02"].games_played <= 4
    ending = [n for s, _, n in await journal.steps(crashed.run_id) if s is RunState.ENDING]
    assert ending == ["rule F4: every machine done (games-limited:3)"]
