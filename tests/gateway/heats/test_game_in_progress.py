"""A game still running when the heat ends, over SAS/TCP against the emulated EGM.

SAS LP 01 is ACKed at once but "a game in progress completes first" (sas.md §3).  The
runner must not read the final tournament meters (LP 99) of a machine whose last event
was 7E (game started) without 7F (game ended): it polls events until the game ends
(bounded; on timeout the score is what the meters say, flagged for the director, T23).
The watchers go quiet a poll spacing before the end, so a game pressed in that moment is
first seen by the general poll every machine gets after the lock: it is scored too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.bank import Bank
from emulators.machine import EmulatedMachine, Event, ModelEvent
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.runner import HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink, close_links
from gateway.machines.sas import SasDriver
from protocols.sas.endpoint import parse_endpoint
from storage.db import make_sessionmaker
from storage.journal import HeatRunMachine, Journal, MachineState, RunState

CREDITS = 400
SPIN_BEFORE_END_S = 1.2  # the watcher (poll spacing 200 ms) sees 7E before it stops
BET = 5


@pytest.fixture
async def journal(engine: AsyncEngine) -> Journal:
    return Journal(make_sessionmaker(engine))


def _winning_bank_seed() -> int:
    """A bank seed whose first machine pays on its first spin at ``BET`` (Bank seeds
    machine i with ``seed * 1_000_003 + i``), so a missed result shows in the score."""
    for seed in range(1, 500):
        probe = EmulatedMachine("probe", seed=seed * 1_000_003)
        probe.enter_tournament(CREDITS, 60)
        probe.unlock_play()
        if probe.spin(BET).win > 0:
            return seed
    raise AssertionError("no winning first spin in 500 seeds")  # pragma: no cover


@pytest.fixture
async def bank() -> AsyncIterator[Bank]:
    async with Bank(2, seed=_winning_bank_seed()) as b:
        yield b


async def _heat(
    bank: Bank,
    journal: Journal,
    tmp_path: Path,
    *,
    game_end_wait_s: float = 30.0,
    spin_before_end_s: float = SPIN_BEFORE_END_S,
) -> HeatOutcome:
    """A 2 s heat at the real SAS poll spacing (200 ms); machine 0 presses spin
    ``spin_before_end_s`` before the end (its game takes ``game_seconds``).  The press
    is a timer on the runner's own event loop (the bank is in process), due before the
    runner's end-of-heat lock, so it always lands before the lock."""
    slow = bank.machines[0].machine
    links = {
        b.machine.machine_id: MachineLink(
            b.machine.machine_id, SasDriver(b.machine.machine_id, parse_endpoint(b.endpoint))
        )
        for b in bank.machines
    }
    loop = asyncio.get_running_loop()
    spun: list[int] = []

    def on_progress(note: ProgressNote) -> None:
        if note.kind is Progress.STATE and note.state == "running" and note.seconds_left:
            loop.call_later(note.seconds_left - spin_before_end_s, lambda: spun.append(
                slow.spin(BET).win))  # fmt: skip

    writer = JournalWriter(journal, tmp_path / "spool")
    runner = HeatRunner(
        writer, links, progress=on_progress, poll_interval_s=0.05, game_end_wait_s=game_end_wait_s
    )
    try:
        out = await runner.run_new("A", list(links), credits=CREDITS, seconds=2)
    finally:
        await close_links(links)
        await writer.close()
    assert len(spun) == 1, "the late spin was not pressed"
    return out


def _game_running_at_lock(machine: EmulatedMachine) -> list[bool]:
    """Whether a game was in progress when play was locked at the heat's end."""
    seen: list[bool] = []
    started: list[bool] = []

    def on_event(note: ModelEvent) -> None:
        if note.event is Event.PLAY_ENABLED:
            started.append(True)
        elif note.event is Event.PLAY_LOCKED and started and not seen:
            seen.append(machine.game_in_progress)

    machine.subscribe(on_event)
    return seen


async def test_a_game_running_at_the_end_is_scored_once_it_completes(
    bank: Bank, journal: Journal, tmp_path: Path
) -> None:
    slow = bank.machines[0].machine
    slow.game_seconds = 2.0  # ends 0.8 s after the heat's end
    at_lock = _game_running_at_lock(slow)
    out = await _heat(bank, journal, tmp_path)
    assert out.state is RunState.CLOSED
    assert at_lock == [True]  # the lock was ACKed with the game still running
    r = {x.machine_id: x for x in await journal.results(out.run_id)}[slow.machine_id]
    t = slow.last_tournament_meters
    # T12: the score is the credit meter once the game completed; the win is in it
    assert (r.games_played, r.credits_wagered) == (1, BET)
    assert r.credits_won > 0
    assert (r.credits_won, r.games_played) == (t.credits_won, t.games_played)
    assert r.score == CREDITS - BET + r.credits_won
    # the LP 1A cross-check read the same credit meter: nothing flagged
    assert out.notes == []
    assert all(s.error == "" and s.state is MachineState.RELEASED for s in out.seats.values())


async def test_a_game_that_does_not_end_in_time_is_scored_and_flagged(
    bank: Bank, journal: Journal, engine: AsyncEngine, tmp_path: Path
) -> None:
    slow = bank.machines[0].machine
    slow.game_seconds = 4.0  # still running well after the wait below
    out = await _heat(bank, journal, tmp_path, game_end_wait_s=0.6)
    mid = slow.machine_id
    r = {x.machine_id: x for x in await journal.results(out.run_id)}[mid]
    # scored from the meters as they stood: the bet wagered, no result yet
    assert (r.games_played, r.credits_wagered, r.credits_won) == (0, BET, 0)
    assert r.score == CREDITS - BET
    flag = out.seats[mid].error
    assert "game still in progress" in flag
    assert "rule 23" in flag
    assert any(n.startswith(f"{mid}: game still in progress") for n in out.notes)
    async with make_sessionmaker(engine)() as session:
        note = await session.scalar(
            select(HeatRunMachine.note).where(
                HeatRunMachine.run_id == out.run_id, HeatRunMachine.machine_id == mid
            )
        )
    assert note is not None
    assert "game still in progress" in note
    other = bank.machines[1].machine.machine_id
    assert out.seats[other].error == ""


async def test_a_game_pressed_after_the_watchers_went_quiet_is_scored(
    bank: Bank, journal: Journal, tmp_path: Path
) -> None:
    """Pressed 100 ms before the end, inside the watchers' quiet time (a poll spacing +
    50 ms): no watcher saw its 7E; its win lands 400 ms after the lock."""
    slow = bank.machines[0].machine
    slow.game_seconds = 0.5
    at_lock = _game_running_at_lock(slow)
    out = await _heat(bank, journal, tmp_path, spin_before_end_s=0.1)
    assert out.state is RunState.CLOSED
    assert at_lock == [True]  # still running when the lock was ACKed
    r = {x.machine_id: x for x in await journal.results(out.run_id)}[slow.machine_id]
    t = slow.last_tournament_meters
    # T12: every game started before the end counts, its win included
    assert (r.games_played, r.credits_wagered) == (1, BET)
    assert r.credits_won > 0
    assert (r.credits_won, r.games_played) == (t.credits_won, t.games_played)
    assert r.score == CREDITS - BET + r.credits_won
    assert out.notes == []
