"""This host's clock against the central database's: bracketed reads, the best kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gateway.clocks.central import ClockOffset, Sample, best, measure

T0 = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)


def _ms(n: float) -> timedelta:
    return timedelta(milliseconds=n)


def test_a_sample_puts_the_central_read_at_the_middle_of_its_bracket() -> None:
    s = Sample(sent=T0, central=T0 + _ms(3), received=T0 + _ms(10))
    assert s.round_trip_s == pytest.approx(0.010)
    assert s.offset_s == pytest.approx(0.002)  # local middle +5 ms, centre +3 ms: 2 ms ahead


def test_the_shortest_round_trip_is_kept() -> None:
    slow = Sample(T0, T0 + _ms(40), T0 + _ms(50))  # queued: its middle says -15 ms
    quick = Sample(T0, T0 - _ms(4), T0 + _ms(2))  # middle +1 ms, centre -4 ms: +5 ms
    kept = best([slow, quick])
    assert kept.offset_s == pytest.approx(0.005)
    assert kept.error_s == pytest.approx(0.001)


async def test_measure_reads_both_injected_clocks_around_each_central_read() -> None:
    local = iter(T0 + _ms(n) for n in (0, 8, 20, 22, 30, 50))  # round trips 8, 2, 20 ms
    central = iter([T0 + _ms(1), T0 + _ms(11), T0 + _ms(40)])

    async def central_now() -> datetime:
        return next(central)

    got = await measure(central_now, lambda: next(local), samples=3)
    assert got.offset_s == pytest.approx(0.010)  # the 2 ms sample: middle 21, centre 11
    assert got.error_s == pytest.approx(0.001)
    with pytest.raises(ValueError, match="samples"):
        await measure(central_now, lambda: T0, samples=0)


def test_an_offset_over_the_limit_is_a_preflight_blocker() -> None:
    assert ClockOffset(0.004, 0.001).blockers(50) == []
    (blocker,) = ClockOffset(-0.049, 0.002).blockers(50)  # 51 ms at worst
    assert blocker.startswith("host clock -49.0 ms from the central database's")
    assert "over the 50 ms limit" in blocker


def test_the_central_instant_by_this_hosts_clock() -> None:
    ahead = ClockOffset(0.012, 0.0)  # this host reads 12 ms more than the centre
    assert ahead.local(T0) == T0 + _ms(12)


def test_an_offset_within_its_own_error_is_not_corrected_for() -> None:
    assert ClockOffset(0.004, 0.006).local(T0) == T0  # could be zero: left alone
    assert ClockOffset(-0.030, 0.002).local(T0) == T0 - _ms(30)
