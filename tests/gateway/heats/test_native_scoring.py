"""Scoring at the heat's end over SAS/TCP: native machines from LP 99 with LP 1A as a
cross-check, host-timed machines from LP 1A (T12: the score is the credit meter).

Clauses: docs/rules.md#t12.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.bank import Bank
from emulators.machine import EmulatedMachine, Event, ModelEvent
from gateway.heats.runner import HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink, close_links
from gateway.machines.sas import SasDriver
from gateway.machines.sas_aft import AftHost
from protocols.sas import EgmMessage, LongPoll
from protocols.sas.endpoint import parse_endpoint
from storage.db import make_sessionmaker
from storage.journal import HeatRunMachine, Journal, MachineState, RunState

SPACING = 0.02  # a short SAS poll spacing keeps the test quick; the order is the same
AFT_HOST = AftHost(bytes(range(1, 21)), 7001)


@pytest.fixture
async def journal(engine: AsyncEngine) -> Journal:
    return Journal(make_sessionmaker(engine))


class _Recording:
    """Wraps an emulated EGM's poll handler and records the kind of every poll."""

    def __init__(self, handle: Callable[[LongPoll], EgmMessage | None], seen: list[str]) -> None:
        self.handle = handle
        self.seen = seen

    def __call__(self, poll: LongPoll) -> EgmMessage | None:
        self.seen.append(type(poll).__name__)
        return self.handle(poll)


class Floor:
    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self.drivers = {
            b.machine.machine_id: SasDriver(
                b.machine.machine_id,
                parse_endpoint(b.endpoint),
                min_spacing=SPACING,
                aft_host=AFT_HOST,  # the host-timed machine registers before its credits
            )
            for b in bank.machines
        }
        self.links = {m: MachineLink(m, d) for m, d in self.drivers.items()}
        self.polls: dict[str, list[str]] = {m: [] for m in self.drivers}
        for b in bank.machines:
            b.face.handle = _Recording(b.face.handle, self.polls[b.machine.machine_id])  # type: ignore[method-assign]

    async def heat(self, journal: Journal, tmp_path: Path, credits: int = 400) -> HeatOutcome:
        writer = JournalWriter(journal, tmp_path / "spool")
        runner = HeatRunner(writer, self.links, poll_interval_s=0.05)
        try:
            return await runner.run_new("A", list(self.links), credits=credits, seconds=1)
        finally:
            await close_links(self.links)
            await writer.close()


@pytest.fixture
async def bank() -> AsyncIterator[Bank]:
    async with Bank(3, seed=11, no_tournament_support=1) as b:
        b.start_players(seed=2, pace=0.05)
        yield b


def _end_credits(bank: Bank) -> dict[str, int]:
    """Each machine's credit meter when play was locked at the heat's end (the first lock
    after play was enabled for the heat)."""
    seen: dict[str, int] = {}
    for b in bank.machines:
        started: list[bool] = []

        def on_event(
            note: ModelEvent, m: EmulatedMachine = b.machine, started: list[bool] = started
        ) -> None:
            if note.event is Event.PLAY_ENABLED:
                started.append(True)
            elif note.event is Event.PLAY_LOCKED and started and m.machine_id not in seen:
                seen[m.machine_id] = m.credits

        b.machine.subscribe(on_event)
    return seen


async def test_native_score_from_meters_equals_the_credit_meter(
    bank: Bank, journal: Journal, tmp_path: Path
) -> None:
    floor = Floor(bank)
    at_lock = _end_credits(bank)
    out = await floor.heat(journal, tmp_path)
    assert out.state is RunState.CLOSED
    stored = {r.machine_id: r for r in await journal.results(out.run_id)}
    assert set(stored) == {b.machine.machine_id for b in bank.machines}
    native = [b for b in bank.machines if b.machine.tournament_supported]
    host_timed = [b for b in bank.machines if not b.machine.tournament_supported]
    for b in native:
        mid = b.machine.machine_id
        r = stored[mid]
        # T12: the score is the end credit meter; computed from LP 99 it is equal
        assert r.score == 400 - r.credits_wagered + r.credits_won == at_lock[mid]
        assert r.games_played > 0  # the players played: the meters are not trivial
        t = b.machine.last_tournament_meters
        assert (r.games_played, r.credits_wagered, r.credits_won) == (
            t.games_played,
            t.credits_wagered,
            t.credits_won,
        )
        # after the lock: LP 99 first (the score), LP 1A after it (the cross-check)
        polls = floor.polls[mid]
        end = len(polls) - polls[::-1].index("SendTournamentMeters") - 1
        assert "Shutdown" in polls[:end]
        assert polls[end + 1] == "SendCurrentCredits"
        assert out.seats[mid].state is MachineState.RELEASED
        assert out.seats[mid].error == ""
    for b in host_timed:
        assert stored[b.machine.machine_id].score == at_lock[b.machine.machine_id]
    assert out.notes == []


async def test_cross_check_mismatch_is_flagged_and_the_score_stands(
    bank: Bank, journal: Journal, engine: AsyncEngine, tmp_path: Path
) -> None:
    floor = Floor(bank)
    odd = bank.machines[0]
    assert odd.machine.tournament_supported
    mid = odd.machine.machine_id

    # An EGM whose credit meter drifts from its own tournament meters at the lock
    # (e.g. a game's win booked on the meter but not on LP 98): the meters no longer
    # add up to the credit meter the LP 1A cross-check then reads.
    def drift(note: ModelEvent) -> None:
        t = odd.machine.tournament
        if note.event is Event.PLAY_LOCKED and t is not None and t.started_at is not None:
            t.credits += 7

    odd.machine.subscribe(drift)
    out = await floor.heat(journal, tmp_path)
    assert out.state is RunState.CLOSED
    r = {x.machine_id: x for x in await journal.results(out.run_id)}[mid]
    assert r.score == 400 - r.credits_wagered + r.credits_won  # stored from the meters
    flag = out.seats[mid].error
    assert "cross-check mismatch" in flag
    assert f"score {r.score}" in flag
    assert f"credit meter {r.score + 7}" in flag
    assert any(n.startswith(f"{mid}: cross-check mismatch") for n in out.notes)
    async with make_sessionmaker(engine)() as session:
        note = await session.scalar(
            select(HeatRunMachine.note).where(
                HeatRunMachine.run_id == out.run_id, HeatRunMachine.machine_id == mid
            )
        )
    assert note is not None
    assert "cross-check mismatch" in note
    # the other machines were not flagged
    assert all(s.error == "" for m, s in out.seats.items() if m != mid)
