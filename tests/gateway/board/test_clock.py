"""The board's clock follows the gateway's set-clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gateway.board.clock import GatewayClock


def test_the_gateway_sets_the_board_clock_and_it_runs_on() -> None:
    system = [datetime(2020, 1, 1, tzinfo=UTC)]  # a board without a battery clock
    clock = GatewayClock(system=lambda: system[0])
    assert not clock.set_by_gateway
    when = datetime(2026, 12, 1, 13, 0, tzinfo=UTC)
    clock.set(when)
    assert clock.now() == when
    system[0] += timedelta(seconds=90)
    assert clock.now() == when + timedelta(seconds=90)
    assert clock.set_by_gateway


def test_a_naive_time_is_refused() -> None:
    clock = GatewayClock()
    with pytest.raises(ValueError, match="UTC offset"):
        clock.set(datetime(2026, 1, 1))  # naive: the bad input under test
