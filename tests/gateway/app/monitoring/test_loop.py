"""The event-loop heartbeat, on a clock the test turns (nothing here waits)."""

from __future__ import annotations

from gateway.app.monitoring.loop import LoopWatch


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_live_while_the_heartbeat_is_recent_and_on_time() -> None:
    clock = Clock()
    watch = LoopWatch(interval_s=1.0, stuck_after_s=10.0, clock=clock)
    clock.now += 1.02
    watch.beat(expected_at=clock.now - 0.02)
    check = watch.check()
    assert check.ok
    assert check.detail == "lag 20 ms"
    assert watch.lag_s == watch.max_lag_s


def test_a_late_heartbeat_means_the_loop_was_stuck() -> None:
    clock = Clock()
    watch = LoopWatch(stuck_after_s=10.0, clock=clock)
    due = clock.now + 1.0
    clock.now += 13.0  # a callback held the loop for 12 s
    watch.beat(expected_at=due)
    check = watch.check()
    assert not check.ok
    assert check.detail == "last heartbeat 12.0 s late"
    clock.now += 1.0
    watch.beat(expected_at=clock.now)  # turning again
    assert watch.check().ok
    assert watch.max_lag_s == 12.0


def test_no_heartbeat_for_too_long_is_not_live() -> None:
    clock = Clock()
    watch = LoopWatch(stuck_after_s=10.0, clock=clock)
    clock.now += 10.5
    check = watch.check()
    assert not check.ok
    assert check.detail == "no heartbeat for 10.5 s"
