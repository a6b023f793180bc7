"""Hot standby: two real ``reelgate serve`` processes on one database, the primary
SIGKILLed mid-heat; the standby takes the bank when the primary's lease runs out,
recovers the heat from the journal and closes it (issue "One truth for a heat, one owner
per bank", item 3).  The scenario is ``bench/failover.py``'s, run once here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ..gateway.emulated import ROOT

_spec = importlib.util.spec_from_file_location("failover", ROOT / "bench" / "failover.py")
assert _spec is not None
assert _spec.loader is not None
failover = importlib.util.module_from_spec(_spec)
sys.modules["failover"] = failover  # its dataclasses look their module up
_spec.loader.exec_module(failover)

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.mark.slow
def test_the_standby_takes_over_a_killed_primarys_heat(database: str, tmp_path: Path) -> None:
    trial = failover.failover_once(database, tmp_path, lease_period=2.0, heat_s=8)
    log = "\n".join(trial.standby_log)
    assert "bank A: taken over" in log, log
    # Not before the dead primary's lease ran out (at most one period after its last renewal).
    assert trial.kill_to_lease_s >= 2.0 * 2 / 3 - 0.1, log
    # The heat was resumed, not restarted (T20: nothing unfair happened), and closed.
    assert trial.run_states == ["closed"], log
    assert trial.heat_status == "closed"
    # T12: every seat's score stored once, equal to the machine's end credits.
    assert (trial.lost, trial.doubled, trial.wrong) == (0, 0, 0)
    assert trial.in_tournament == []
