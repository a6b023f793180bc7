"""What a heat may carry (gateway.heat_limits), refused where a heat is made, journaled and
run; and drivers that refuse a field typed (T20: that machine's malfunction, never a
crash that leaves machines locked).

Clauses: docs/rules.md#t20.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.bank import Bank as SasBank
from gateway.heat_limits import LIMITS, HeatLimitError, check_heat_limits, heat_limit_problem
from gateway.heats.runner import HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.driver import MachineRefused
from gateway.machines.sas import SasDriver
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import TournamentSettings
from protocols.sas import TournamentMode
from protocols.sas.endpoint import parse_endpoint
from storage.db import make_sessionmaker
from storage.journal import Journal, MachineState, RunState

from .test_heat_runner import Bank, _run


def test_limits_are_what_lp_8c_can_encode() -> None:
    assert (LIMITS.max_credits, LIMITS.max_seconds) == (99_999_999, 99 * 60 + 59)
    TournamentMode.enter(1, 0, LIMITS.max_seconds, LIMITS.max_credits)  # the largest fits
    with pytest.raises(ValueError):  # noqa: PT011
        TournamentMode.enter(1, 0, LIMITS.max_seconds, LIMITS.max_credits + 1)
    with pytest.raises(ValueError):  # noqa: PT011
        TournamentMode.enter(1, 0, LIMITS.max_seconds + 1, LIMITS.max_credits)


@pytest.mark.parametrize(
    ("credits", "seconds", "field", "words"),
    [
        (100_000_000, 300, "credits", "starting credits 100,000,000 outside 1..99,999,999"),
        (0, 300, "credits", "starting credits 0 outside"),
        (500, 6000, "seconds", "heat time 6,000 s outside 1..5,999 s (SAS LP 8C: at most 99:59)"),
        (500, 0, "seconds", "heat time 0 s outside"),
    ],
)
def test_a_heat_outside_the_limits_is_refused_in_one_line(
    credits: int, seconds: int, field: str, words: str
) -> None:
    problem = heat_limit_problem(credits, seconds)
    assert problem is not None
    assert words in problem
    assert "\n" not in problem
    with pytest.raises(HeatLimitError) as info:
        check_heat_limits(credits, seconds)
    assert info.value.field == field
    assert str(info.value) == problem


def test_a_heat_inside_the_limits_passes() -> None:
    assert heat_limit_problem(1, 1) is None
    assert heat_limit_problem(LIMITS.max_credits, LIMITS.max_seconds) is None
    check_heat_limits(1000, 600)


async def test_scheduling_refuses_100_million_credits(engine: AsyncEngine) -> None:
    maker = make_sessionmaker(engine)
    from tests.gateway.tournament.conftest import Desk

    desk = Desk(maker)
    await desk.floor("L", 2)
    tid = await desk.tournament(TournamentSettings(), name="Limits")
    starts = datetime(2026, 11, 2, 18, tzinfo=UTC)
    with pytest.raises(RuleViolation) as info:
        await desk.run(
            svc.schedule_heat,
            tid,
            stage=Stage.QUALIFYING,
            starts_at=starts,
            bank_name="L",
            duration_seconds=600,
            starting_credits=100_000_000,
            actor="director",
            now=starts - timedelta(days=1),
        )
    message = str(info.value)
    assert "starting credits 100,000,000 outside 1..99,999,999" in message
    assert "\n" not in message
    heats = await desk.run(svc.list_heats, tid)
    assert heats == []


@pytest.fixture
async def journal(engine: AsyncEngine) -> Journal:
    return Journal(make_sessionmaker(engine))


async def test_runner_refuses_before_journaling(journal: Journal, tmp_path: Path) -> None:
    bank = Bank(2)
    runner = HeatRunner(JournalWriter(journal, tmp_path / "spool"), bank.links)
    with pytest.raises(HeatLimitError, match="100,000,000"):
        await runner.run_new("A", bank.ids, credits=100_000_000, seconds=60)
    assert all(d.calls == [] for d in bank.drivers.values())  # no machine touched


async def test_journaled_heat_past_the_limits_is_aborted_before_arming(
    journal: Journal, tmp_path: Path
) -> None:
    """A run journaled by an older gateway (or by hand) is aborted, never armed."""
    bank = Bank(2)
    run_id = await journal.create_run("A", bank.ids, credits=100_000_000, seconds=60)
    runner = HeatRunner(JournalWriter(journal, tmp_path / "spool"), bank.links)
    out = await runner.drive(await journal.run(run_id), resumed=False)
    assert out.state is RunState.ABORTED
    steps = await journal.steps(run_id)
    assert [s for s, _, _ in steps] == [RunState.SCHEDULED, RunState.ABORTED]
    assert "100,000,000" in str(steps[-1][2])
    for d in bank.drivers.values():
        assert "enter_tournament" not in d.calls
        assert "lock" not in d.calls
        assert d.machine.play_enabled()
        assert not d.machine.in_tournament


async def test_one_machine_refusing_to_arm_is_its_malfunction_and_none_stays_locked(
    journal: Journal, tmp_path: Path
) -> None:
    bank = Bank(3)
    bank.machines[1].insert_bill(50)  # cashable credits: A02 refuses tournament mode
    runner = HeatRunner(
        JournalWriter(journal, tmp_path / "spool"), bank.links, poll_interval_s=0.05
    )
    out = await _run(runner, bank)
    assert out.state is RunState.CLOSED
    # T20: A02's malfunction (then released with the others at the close)
    assert "arming failed: MachineRefused" in out.seats["A02"].error
    assert out.seats["A02"].score is None
    assert out.seats["A01"].state is MachineState.RELEASED
    assert {r.machine_id for r in await journal.results(out.run_id)} == {"A01", "A03"}
    for m in bank.machines:
        assert not m.play_locked, m.machine_id
        assert not m.in_tournament, m.machine_id


async def test_sas_driver_refuses_a_field_lp_8c_cannot_carry_before_locking() -> None:
    async with SasBank(1, seed=5) as b:
        machine = b.machines[0]
        driver = SasDriver(
            machine.machine.machine_id, parse_endpoint(machine.endpoint), min_spacing=0.005
        )
        await driver.open()
        try:
            with pytest.raises(MachineRefused, match="field refused"):
                await driver.enter_tournament(credits=100_000_000, seconds=60)
            with pytest.raises(MachineRefused, match="field refused"):
                await driver.enter_tournament(credits=500, seconds=6000)
            assert not machine.machine.in_tournament
            assert not machine.machine.play_locked
            await driver.enter_tournament(credits=500, seconds=60)  # the link still works
            assert machine.machine.in_tournament
            await driver.exit_tournament()
        finally:
            await driver.close()
