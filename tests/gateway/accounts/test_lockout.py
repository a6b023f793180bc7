"""The in-memory backoff of source addresses and unknown names (issue 25.3): capped, a
turn at a time, forgotten when idle, bounded in memory.  Time is passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gateway.accounts import lockout
from gateway.accounts.lockout import Backoff

T0 = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)


def _fail(b: Backoff, key: str, now: datetime) -> datetime | None:
    assert b.admit(key, now) is None
    return b.done(key, now, failed=True)[1]


def test_free_tries_then_a_doubling_wait_capped() -> None:
    b = Backoff(free=2)
    assert _fail(b, "k", T0) is None
    assert _fail(b, "k", T0) is None
    assert _fail(b, "k", T0) == T0 + lockout.FIRST_DELAY
    assert b.admit("k", T0) == T0 + lockout.FIRST_DELAY  # refused while it waits
    now = T0 + lockout.FIRST_DELAY
    assert _fail(b, "k", now) == now + 2 * lockout.FIRST_DELAY
    for _ in range(40):
        now += lockout.MAX_DELAY
        lock = _fail(b, "k", now)
    assert lock == now + lockout.MAX_DELAY  # never more, never for good
    assert b.admit("k", now + lockout.MAX_DELAY) is None


def test_one_turn_at_a_time() -> None:
    b = Backoff(in_flight=1)
    assert b.admit("k", T0) is None
    assert b.admit("k", T0) == T0 + lockout.HOLD  # a concurrent try waits
    b.done("k", T0, failed=False)
    assert b.admit("k", T0) is None


def test_an_idle_key_is_forgotten_and_memory_is_bounded() -> None:
    b = Backoff(free=0, limit=3)
    assert _fail(b, "k", T0) is not None
    later = T0 + lockout.FORGET_AFTER + timedelta(seconds=1)
    assert b.admit("k", later) is None  # forgotten: counted afresh
    b.done("k", later, failed=False)
    assert b.failures("k") == 0
    for i in range(10):
        _fail(b, f"flood {i}", T0)
    assert len(b) == 3
