"""The watchers' end of play (gateway.heats.watch): when they stop before the end, and
when a watcher that follows real-time events takes its last turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.machine import EmulatedMachine
from gateway.heats.runner import HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.heats.watch import LAST_TURN_POLLS, QUIET_MARGIN_S, last_turn_at
from gateway.machines.links import MachineLink
from storage.db import make_sessionmaker
from storage.journal import Journal

from ..direct_driver import DirectDriver


class _PacedDriver(DirectDriver):
    """A driver that spaces its polls (capabilities.PacedLink), at a spacing set here."""

    def __init__(self, machine: EmulatedMachine, spacing: float) -> None:
        super().__init__(machine)
        self.spacing = spacing

    @property
    def min_spacing(self) -> float:
        return self.spacing


def test_the_last_turn_is_taken_as_its_lead_begins() -> None:
    # end in 0.30 s, lead 0.17 s: the next turn (now + 0.2) would fall inside the lead
    assert last_turn_at(10.0, 0.30, 10.2, 0.17) == pytest.approx(10.13)
    # the next turn still comes before the lead: no last turn yet
    assert last_turn_at(10.0, 0.50, 10.2, 0.17) is None
    # already inside the lead: no turn at all
    assert last_turn_at(10.0, 0.10, 10.2, 0.17) is None


@given(
    now=st.floats(0, 1e6),
    left=st.floats(-5, 60),
    step=st.floats(0.001, 1.0),
    lead=st.floats(0.0, 1.0),
)
def test_a_last_turn_is_never_late_nor_after_the_next(
    now: float, left: float, step: float, lead: float
) -> None:
    at = last_turn_at(now, left, now + step, lead)
    if at is not None:
        assert now < at < now + step
        assert at == pytest.approx(now + left - lead)  # exactly the lead before the end


async def test_the_quiet_follows_the_links_spacing(engine: AsyncEngine, tmp_path: Path) -> None:
    """Paced links (200 ms): the watchers stop a spacing and a margin before the end, as
    they always did.  Every link at the real-time 40 ms: the quiet shrinks with the
    spacing, and the last turn keeps room for a game's bet and win before it."""
    machines = [EmulatedMachine(f"A0{i}") for i in (1, 2)]
    drivers = [_PacedDriver(m, 0.2) for m in machines]
    links = {d.machine_id: MachineLink(d.machine_id, d) for d in drivers}
    writer = JournalWriter(Journal(make_sessionmaker(engine)), tmp_path / "spool")
    runner = HeatRunner(writer, links, poll_interval_s=0.2)
    runner._take_quiet()
    assert runner._quiet_s == pytest.approx(0.2 + QUIET_MARGIN_S)
    assert runner._last_turn_s == runner._quiet_s
    drivers[0].spacing = 0.04
    runner._take_quiet()  # one paced link left: the bank's quiet is still its
    assert runner._quiet_s == pytest.approx(0.2 + QUIET_MARGIN_S)
    drivers[1].spacing = 0.04
    runner._take_quiet()
    assert runner._quiet_s == pytest.approx(0.04 + QUIET_MARGIN_S)
    assert runner._last_turn_s == pytest.approx(runner._quiet_s + LAST_TURN_POLLS * 0.04)
