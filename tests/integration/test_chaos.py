"""Our own chaos suite, small enough for CI: six heats — three technician's test heats and
three scheduled tournament heats — each SIGKILLed once at a different floor step, one
with a link cut and one with corrupted bytes, then recovered by ``reelgate heat recover``.

The invariants (``bench/chaos_checks.py``), on the database as it is: every seat's score
stored exactly once and equal to the machine's own credits as it left tournament mode;
no heat played twice without a recorded T20 restart; no machine left locked or in
tournament mode; the audit chain intact; no tournament effect pending, every run settled.
The full mix (100 heats, every kill point and fault) is ``bench/chaos.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("chaos_harness", ROOT / "bench" / "chaos_harness.py")
assert _spec is not None
assert _spec.loader is not None
harness = importlib.util.module_from_spec(_spec)
sys.modules["chaos_harness"] = harness
_spec.loader.exec_module(harness)
Scenario = harness.Scenario

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::ResourceWarning")]

SCENARIOS = [
    Scenario("test", "arm", 0.0),
    Scenario("tournament", "unlock", 0.0004, fault="drop", fault_machine="EMU-003",
             fault_after_s=0.5),
    Scenario("test", "end_lock", 0.0),
    Scenario("tournament", "meters", 0.012, fault="corrupt", fault_machine="EMU-001",
             fault_after_s=1.0),
    Scenario("test", "release", 0.002, kill_recovery=True, seed=5),
    Scenario("tournament", "exit", 0.0),
]  # fmt: skip


@pytest.fixture(scope="module")
def chaos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with harness.Chaos(tmp_path_factory.mktemp("chaos")) as made:
        yield made


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.kind}-{s.kill}")
def test_a_killed_heat_keeps_one_truth(chaos: Any, scenario: Any) -> None:
    report = chaos.run(scenario)
    f = report.findings
    assert report.killed, report.log  # the kill landed at its step
    assert report.recoveries >= 1 + scenario.kill_recovery
    assert f.problems == [], (scenario.label(), f.problems, report.log)
    assert (f.lost, f.doubled, f.wrong, f.replayed) == (0, 0, 0, 0)
    assert (f.stuck, f.unsettled, f.pending, f.audit_broken) == (0, 0, 0, 0)
    if f.final_state == "closed":
        # Every seat is scored (and checked against the machine) or malfunctioned (T20/T21).
        assert f.scored + f.malfunctions == 4
        assert f.scored >= 1
    else:
        assert f.final_state == "restarted"  # T20: the heat never stood on the floor
    assert all(t < 30 for t in report.in_control_s)  # the floor back in hand
