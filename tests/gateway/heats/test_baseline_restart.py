"""A host-timed heat survives a gateway restart with its games and wagers (issue 15 item 2).

A host-timed SAS machine is scored from LP 1C differences since its tournament entry.
The entry meters are journaled with the seat (``heat_run_machine.baseline``), so a
gateway that restarts mid-heat -- new drivers that never saw the entry -- scores the
heat's games and wagers from them instead of reading 0.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.bank import Bank
from gateway.heats.recovery import recover_bank
from gateway.heats.runner import HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink
from gateway.machines.sas import SasDriver
from protocols.sas.endpoint import parse_endpoint
from storage.db import make_sessionmaker
from storage.journal import Journal, RunState


@pytest.fixture
async def bank() -> AsyncIterator[Bank]:
    async with Bank(2, seed=9, no_tournament_support=2) as b:  # both host-timed
        b.start_players(seed=2, pace=0.05)
        yield b


AFT_KEY = "0123456789abcdef0123456789abcdef01234567"  # the floor's AFT host identity
AFT_POS_ID = 7001


def links(bank: Bank) -> dict[str, MachineLink]:
    """Fresh drivers, as a new gateway process opens them."""
    out = {}
    for b in bank.machines:
        driver = SasDriver(b.machine.machine_id, parse_endpoint(b.endpoint), min_spacing=0.01)
        driver.use_aft_host(AFT_KEY, AFT_POS_ID)
        out[b.machine.machine_id] = MachineLink(b.machine.machine_id, driver)
    return out


async def test_restart_mid_heat_keeps_the_host_timed_meters(
    engine: AsyncEngine, tmp_path: Path, bank: Bank
) -> None:
    journal = Journal(make_sessionmaker(engine))
    writer = JournalWriter(journal, tmp_path / "spool")
    ids = [b.machine.machine_id for b in bank.machines]
    first_links = links(bank)
    first = HeatRunner(writer, first_links, poll_interval_s=0.05, stop_after=RunState.RUNNING)
    crashed = await first.run_new("A", ids, credits=500, seconds=2)
    assert crashed.state is RunState.RUNNING
    view = await journal.run(crashed.run_id)
    assert set(view.baselines) == set(ids)  # journaled at arming
    for link in first_links.values():
        await link.driver.close()

    reports = await recover_bank(writer, links(bank), "A")
    assert reports[0].outcome is not None
    assert reports[0].outcome.state is RunState.CLOSED
    results = {r.machine_id: r for r in await journal.results(crashed.run_id)}
    assert sorted(results) == sorted(ids)
    for r in results.values():
        # T12: the score is the credit meter; the meters come from the journaled entry
        assert r.games_played > 0
        assert r.credits_wagered >= r.games_played
        assert r.score == 500 - r.credits_wagered + r.credits_won
