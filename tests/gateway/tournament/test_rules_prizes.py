"""T15 prize arithmetic, pure: schedules, the surplus split (every cent), the receipt."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.tournament.rules.prizes import (
    PrizeAmount,
    Winner,
    check_apportionment,
    check_change,
    check_receipt,
    check_schedule,
    split_by_weights,
)
from gateway.tournament.rules.violations import RuleViolation


@given(
    total=st.integers(min_value=0, max_value=10**12),
    weights=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=20).filter(
        lambda w: sum(w) > 0
    ),
)
def test_t15_apportionment_conserves_every_cent(total: int, weights: list[int]) -> None:
    """T15: whatever the weights, the parts add up to the surplus exactly, no part is
    negative, a zero weight gets nothing, each part is within a cent of its exact share,
    and the split passes the director's check unchanged."""
    parts = split_by_weights(total, weights)
    assert sum(parts) == total
    whole = sum(weights)
    for part, weight in zip(parts, weights, strict=True):
        assert part >= 0
        assert weight or part == 0
        assert abs(part * whole - total * weight) < whole  # off by less than one cent
    places = list(range(1, len(weights) + 1))
    shares = dict(zip(places, parts, strict=True))
    assert check_apportionment(total, shares, places) == shares


def test_t15_split_gives_odd_cents_by_largest_remainder() -> None:
    assert split_by_weights(100, [1, 1, 1]) == (34, 33, 33)
    assert split_by_weights(10001, [50, 30, 20]) == (5001, 3000, 2000)
    with pytest.raises(RuleViolation, match=r"^rule 15: weights"):
        split_by_weights(100, [0, 0])


def test_t15_apportionment_must_equal_the_surplus_to_the_cent() -> None:
    """T15: shares that leave a cent over, or invent one, are refused naming the rule."""
    assert check_apportionment(30000, {1: 20000, 3: 10000}, [1, 2, 3]) == {
        1: 20000,
        2: 0,
        3: 10000,
    }
    with pytest.raises(RuleViolation, match=r"^rule 15: the shares add up to 29999 c but the "):
        check_apportionment(30000, {1: 19999, 2: 10000}, [1, 2, 3])
    with pytest.raises(RuleViolation, match=r"^rule 15: the shares add up to 30001 c"):
        check_apportionment(30000, {1: 20001, 2: 10000}, [1, 2, 3])
    with pytest.raises(RuleViolation, match=r"^rule 15: places \[4\] have no advertised prize"):
        check_apportionment(100, {4: 100}, [1, 2, 3])
    with pytest.raises(RuleViolation, match=r"^rule 15: a share of the surplus cannot be neg"):
        check_apportionment(0, {1: 100, 2: -100}, [1, 2])
    with pytest.raises(RuleViolation, match=r"^rule 15: share of place 1: a whole number"):
        check_apportionment(100, {1: 99.5, 2: 0.5}, [1, 2])  # type: ignore[dict-item]


def test_t15_schedule_is_places_one_to_n_with_positive_minimums() -> None:
    assert check_schedule({2: 50000, 1: 100000}) == (
        PrizeAmount(1, 100000),
        PrizeAmount(2, 50000),
    )
    with pytest.raises(RuleViolation, match=r"^rule 15: prize places must be 1 to 2, got \[1, 3\]"):
        check_schedule({1: 100, 3: 50})
    with pytest.raises(RuleViolation, match=r"^rule 15: place 2: the advertised prize must be pos"):
        check_schedule({1: 100, 2: 0})
    with pytest.raises(RuleViolation, match=r"^rule 15: a prize schedule needs"):
        check_schedule({})
    with pytest.raises(RuleViolation, match=r"^rule 19: 4 prize places but only 3 are strictly"):
        check_schedule({1: 4, 2: 3, 3: 2, 4: 1}, prize_places=3)


def test_t15_an_advertised_minimum_is_never_lowered_or_withdrawn() -> None:
    check_change({1: 100000, 2: 50000}, {1: 120000, 2: 50000, 3: 10000})
    with pytest.raises(RuleViolation, match=r"^rule 15: place 2 was advertised at 50000 c, the"):
        check_change({1: 100000, 2: 50000}, {1: 100000, 2: 49999})
    with pytest.raises(RuleViolation, match=r"^rule 15: place 2 was advertised at 50000 c: it"):
        check_change({1: 100000, 2: 50000}, {1: 100000})


def test_t15_receipt_is_signed_by_the_winner_and_witnessed_by_someone_else() -> None:
    ann = Winner("Ann Smith", "8001015009087", "RW-77")
    check_receipt(ann, signer="800101 5009 087", signature="slip 12", witness="Floor Lee")
    check_receipt(ann, signer="RW-77", signature="slip 12", witness="Floor Lee")
    with pytest.raises(RuleViolation, match=r"^rule 15: prizes are not transferable: the prize"):
        check_receipt(ann, signer="8101015009086", signature="slip 12", witness="Floor Lee")
    for witness in ("RW-77", "8001015009087", "ann smith"):
        with pytest.raises(RuleViolation, match=r"^rule 15: the witness must be someone other"):
            check_receipt(ann, signer="RW-77", signature="slip 12", witness=witness)
    with pytest.raises(RuleViolation, match=r"^rule 15: record the winner's signature"):
        check_receipt(ann, signer="RW-77", signature=" ", witness="Floor Lee")
    with pytest.raises(RuleViolation, match=r"^rule 15: name the witness"):
        check_receipt(ann, signer="RW-77", signature="slip 12", witness="")
