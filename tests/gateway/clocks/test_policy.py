"""Keyed times for writes (gateway.clocks.policy): live within the skew, post-dated
refused, back-dated only for a director with a reason, anything on a training database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.clocks.policy import SKEW, ClockRefused, Kind, judge, kind_of

REAL = datetime(2026, 11, 2, 16, 5, tzinfo=UTC)


def test_no_keyed_time_is_the_real_time_and_leaves_no_clock_facts() -> None:
    write = judge(None, REAL, training=False)
    assert write.at == REAL
    assert write.audit_facts() is None


@given(st.integers(min_value=-120, max_value=120))
def test_within_the_skew_either_way_is_live(seconds: int) -> None:
    keyed = REAL + timedelta(seconds=seconds)
    assert kind_of(keyed, REAL) is Kind.LIVE
    write = judge(keyed, REAL, training=False)  # no director, no reason needed
    assert write.at == keyed
    facts = write.audit_facts()
    assert facts is not None
    assert facts["kind"] == "live"


def test_post_dated_is_refused_even_for_a_director() -> None:
    keyed = REAL + SKEW + timedelta(seconds=1)
    with pytest.raises(ClockRefused, match="post-dated writes are refused"):
        judge(keyed, REAL, training=False, reason="why not", director="dana")
    with pytest.raises(ClockRefused, match="7 days after"):
        judge(REAL + timedelta(days=7), REAL, training=False)


def test_back_dated_needs_a_director_and_a_reason() -> None:
    keyed = REAL - timedelta(hours=1)
    with pytest.raises(ClockRefused, match="needs a director"):
        judge(keyed, REAL, training=False, reason="paper slip")
    with pytest.raises(ClockRefused, match="needs --reason"):
        judge(keyed, REAL, training=False, reason="  ", director="dana")
    write = judge(keyed, REAL, training=False, reason="paper slip", director="dana")
    assert write.backdated
    assert write.audit_facts() == {
        "keyed_at": keyed.isoformat(),
        "real_at": REAL.isoformat(),
        "kind": "back-dated",
        "reason": "paper slip",
        "authorised_by": "dana",
    }


@given(st.integers(min_value=-(10**7), max_value=10**7))
def test_a_training_database_takes_any_keyed_time(seconds: int) -> None:
    keyed = REAL + timedelta(seconds=seconds)
    write = judge(keyed, REAL, training=True)
    assert write.at == keyed
    facts = write.audit_facts()
    assert facts is not None
    assert facts["training"] is True
    assert facts["real_at"] == REAL.isoformat()
