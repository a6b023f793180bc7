"""Hot-seat draws and wild cards, the pure rules (house clauses HS1–HS5, docs/rules.md)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.tournament.rules import RuleViolation
from gateway.tournament.rules.hotseat import (
    check_reveal,
    commitment,
    draw_all,
    draw_moments,
    draw_winner,
    heat_subject,
    wildcard_subject,
)

SEED = bytes(range(32))
START = datetime(2026, 12, 7, 18, 0, tzinfo=UTC)
SEATS = ["B1-01", "B1-02", "B1-03", "B1-04", "B1-05", "B1-06"]

seeds = st.binary(min_size=1, max_size=48)
seat_sets = st.sets(st.from_regex(r"B[1-3]-0[1-9]", fullmatch=True), min_size=1, max_size=12)


# Golden vectors: pinned here and in tests/tools/test_verify_hotseat.py, so the stand-alone
# verifier and the gateway cannot drift apart.
def test_hs4_commitment_golden() -> None:
    assert commitment(SEED, "heat:7") == (
        "bc2714803d6e667a78e0bb0ec50f2f924fec03c0302b0db357438266dfc9517a"
    )
    assert heat_subject(7) == "heat:7"
    assert wildcard_subject(3, "qualifying") == "wildcard:3:qualifying"


def test_hs2_moments_golden() -> None:
    moments = draw_moments(SEED, "heat:7", START, START + timedelta(minutes=15), 3)
    assert [m.strftime("%H:%M:%S") for m in moments] == ["18:03:22", "18:08:09", "18:13:22"]


def test_hs3_winners_golden_with_redraw_and_void() -> None:
    outcomes = draw_all(SEED, "heat:7", SEATS, [[], ["B1-02"], SEATS])
    assert [o.winner for o in outcomes] == ["B1-04", "B1-03", None]
    assert outcomes[2].picks == ("B1-04", "B1-06", "B1-05", "B1-02", "B1-01", "B1-03")
    redrawn = draw_winner(SEED, "heat:7", 1, SEATS, ["B1-03", "B1-05"])
    assert redrawn.picks == ("B1-03", "B1-05", "B1-06")
    assert redrawn.winner == "B1-06"


def test_hs6_wild_card_golden() -> None:
    assert (
        draw_winner(SEED, "wildcard:3:qualifying", 0, ["11", "12", "13", "14"], []).winner == "11"
    )


def test_hs5_reveal_checked_against_commitment() -> None:
    check_reveal(SEED, "heat:7", commitment(SEED, "heat:7"))
    with pytest.raises(RuleViolation, match="HS5"):
        check_reveal(SEED, "heat:8", commitment(SEED, "heat:7"))  # same seed, other heat


@pytest.mark.parametrize(("draws", "seconds"), [(0, 900), (21, 900), (5, 4)])
def test_hs2_refuses_impossible_schedules(draws: int, seconds: int) -> None:
    with pytest.raises(RuleViolation, match="HS2"):
        draw_moments(SEED, "heat:1", START, START + timedelta(seconds=seconds), draws)


@given(
    seed=seeds,
    heat=st.integers(1, 10**6),
    seconds=st.integers(20, 4 * 3600),
    draws=st.integers(1, 20),
)
def test_hs2_moments_inside_heat_rising_and_repeatable(
    seed: bytes, heat: int, seconds: int, draws: int
) -> None:
    end = START + timedelta(seconds=seconds)
    moments = draw_moments(seed, heat_subject(heat), START, end, draws)
    assert moments == draw_moments(seed, heat_subject(heat), START, end, draws)
    assert len(moments) == draws
    assert all(START <= m < end for m in moments)
    assert all(a < b for a, b in itertools.pairwise(moments))


@given(seed=seeds, seats=seat_sets, data=st.data())
def test_hs1_hs3_winner_eligible_and_repeatable(
    seed: bytes, seats: set[str], data: st.DataObject
) -> None:
    bad = data.draw(st.sets(st.sampled_from(sorted(seats))))
    first = draw_winner(seed, "heat:9", 0, seats, bad)
    assert first == draw_winner(seed, "heat:9", 0, list(reversed(sorted(seats))), bad)  # order-free
    if bad == seats:
        assert first.winner is None
        assert set(first.picks) == seats
    else:
        assert first.winner in seats - bad
        assert first.picks[-1] == first.winner
        assert set(first.picks[:-1]) <= bad
        assert len(set(first.picks)) == len(first.picks)  # a redraw never repeats a seat


def test_hs4_different_seeds_or_subjects_commit_differently() -> None:
    assert commitment(b"a" * 32, "heat:1") != commitment(b"b" * 32, "heat:1")
    assert commitment(b"a" * 32, "heat:1") != commitment(b"a" * 32, "heat:2")
