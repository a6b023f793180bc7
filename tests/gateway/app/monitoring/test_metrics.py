"""The gateway's metrics, read from its own counters at scrape time (own registry)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from emulators.machine import EmulatedMachine
from gateway.app.monitoring.metrics import (
    DatabaseSnapshot,
    GatewayCollector,
    HeatMetrics,
    end_to_stored_s,
    start_skew_s,
)
from gateway.heats.heat_core import HeatOutcome, MachineOutcome
from gateway.heats.spool import JournalWriter
from gateway.heats.supervisor import BankSupervisor
from gateway.machines.capabilities import LinkCounters
from gateway.machines.links import MachineLink
from storage.db import make_engine, make_sessionmaker
from storage.journal import Journal, RunState

from ...direct_driver import DirectDriver


class CountingDriver(DirectDriver):
    def __init__(self, machine: EmulatedMachine, counters: LinkCounters) -> None:
        super().__init__(machine)
        self.counters = counters

    def link_counters(self) -> LinkCounters:
        return self.counters

    def link_connected(self) -> bool:
        return True


class View:
    def __init__(self, writer: JournalWriter) -> None:
        counted = CountingDriver(
            EmulatedMachine("A-1", seed=1),
            LinkCounters(polls=40, replies=37, timeouts=4, nacks=1, retries=3, failures=1),
        )
        self._links = {
            "A": {
                "A-1": MachineLink("A-1", counted),
                "A-2": MachineLink("A-2", DirectDriver(EmulatedMachine("A-2", seed=2))),
            }
        }
        self._supervisors = {"A": BankSupervisor(self._links["A"])}
        self._supervisors["A"].status["A-1"].online = True
        self._writer = writer

    @property
    def links(self) -> Mapping[str, Mapping[str, MachineLink]]:
        return self._links

    @property
    def supervisors(self) -> Mapping[str, BankSupervisor]:
        return self._supervisors

    @property
    def writer(self) -> JournalWriter:
        return self._writer

    @property
    def banks(self) -> Iterable[str]:
        return ["A", "B"]

    @property
    def held(self) -> Iterable[str]:
        return ["A"]


async def test_the_collector_reads_counters_states_and_leases(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    writer = JournalWriter(Journal(make_sessionmaker(engine)), tmp_path / "spool")
    (tmp_path / "spool").write_text('{"op":"step"}\n')
    try:
        snapshot = DatabaseSnapshot(
            states={"A": "running"}, holders={"A": ("serve", "floor-1", 42)}, ok=True
        )
        registry = CollectorRegistry()
        registry.register(GatewayCollector(View(writer), snapshot))
        get = registry.get_sample_value
        machine = {"bank": "A", "machine": "A-1"}
        assert get("reelgate_machine_polls_total", machine) == 40
        assert get("reelgate_machine_replies_total", machine) == 37
        assert get("reelgate_machine_timeouts_total", machine) == 4
        assert get("reelgate_machine_nacks_total", machine) == 1
        assert get("reelgate_machine_retries_total", machine) == 3
        assert get("reelgate_machine_failures_total", machine) == 1
        assert get("reelgate_machine_link_up", machine) == 1
        # A driver without counters has its link state only.
        assert get("reelgate_machine_polls_total", {"bank": "A", "machine": "A-2"}) is None
        assert get("reelgate_machine_link_up", {"bank": "A", "machine": "A-2"}) == 0
        assert get("reelgate_heat_state", {"bank": "A", "state": "running"}) == 1
        assert get("reelgate_heat_state", {"bank": "A", "state": "closed"}) == 0
        assert get("reelgate_heat_state", {"bank": "B", "state": "idle"}) == 1
        lease = {"bank": "A", "holder": "serve", "host": "floor-1", "pid": "42"}
        assert get("reelgate_bank_lease", lease) == 1
        assert get("reelgate_bank_lease_held", {"bank": "A"}) == 1
        assert get("reelgate_bank_lease_held", {"bank": "B"}) == 0
        assert get("reelgate_spool_depth") == 1
        assert get("reelgate_database_read_ok") == 1
        assert b"# HELP reelgate_machine_nacks_total" in generate_latest(registry)
    finally:
        await engine.dispose()


def _outcome(acks: list[float | None], stored_after_s: float | None) -> HeatOutcome:
    ends = datetime(2026, 11, 20, 10, 5, tzinfo=UTC)
    seats = {f"A-{i}": MachineOutcome(f"A-{i}", unlock_ack_ms=ms) for i, ms in enumerate(acks, 1)}
    committed = None if stored_after_s is None else ends + timedelta(seconds=stored_after_s)
    return HeatOutcome(1, RunState.CLOSED, ends - timedelta(minutes=5), ends, seats,
                       committed_at=committed)  # fmt: skip


def test_start_skew_and_end_to_stored_of_a_heat() -> None:
    outcome = _outcome([1.5, 3.0, None, 2.0], stored_after_s=0.75)
    assert start_skew_s(outcome) == 0.0015
    assert end_to_stored_s(outcome) == 0.75
    assert start_skew_s(_outcome([None], None)) is None
    assert end_to_stored_s(_outcome([None], None)) is None


def test_heat_metrics_observe_each_heat_reaped() -> None:
    registry = CollectorRegistry()
    heats = HeatMetrics(registry)
    heats.observe("A", _outcome([1.0, 4.0], stored_after_s=0.5))
    heats.observe("A", _outcome([2.0, 2.5], stored_after_s=1.5))
    get = registry.get_sample_value
    assert get("reelgate_heat_start_skew_seconds_count", {"bank": "A"}) == 2
    assert get("reelgate_heat_start_skew_seconds_sum", {"bank": "A"}) == pytest.approx(0.0035)
    assert get("reelgate_heat_end_to_stored_seconds_count", {"bank": "A"}) == 2
    assert get("reelgate_heat_last_end_to_stored_seconds", {"bank": "A"}) == 1.5
    assert get("reelgate_heat_last_start_skew_seconds", {"bank": "A"}) == 0.0005
    assert get("reelgate_heats_finished_total", {"bank": "A", "state": "closed"}) == 2
