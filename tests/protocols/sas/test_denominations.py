"""SAS denomination codes (LP 1F reply byte 6, SAS 6.02 table C-4) in cents per credit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocols.sas.denominations import (
    DENOMINATION_CENTS,
    cents_per_credit,
    describe_denomination,
)


@pytest.mark.parametrize(
    ("code", "cents", "shown"),
    [
        (0x01, 1, "0.01"),
        (0x02, 5, "0.05"),
        (0x06, 100, "1.00"),
        (0x0B, 20, "0.20"),
        (0x0D, 250, "2.50"),
        (0x16, 500_000, "5000.00"),
        (0x17, 2, "0.02"),
        (0x1A, 40, "0.40"),
    ],
)
def test_known_codes(code: int, cents: int, shown: str) -> None:
    assert cents_per_credit(code) == cents
    assert describe_denomination(code) == shown


def test_table_is_whole_cents_and_one_code_per_value() -> None:
    assert all(isinstance(c, int) and c > 0 for c in DENOMINATION_CENTS.values())
    assert len(set(DENOMINATION_CENTS.values())) == len(DENOMINATION_CENTS)
    assert set(DENOMINATION_CENTS) == set(range(0x01, 0x1B))  # 1B.. are fractional cents


@given(st.integers(0, 255).filter(lambda c: c not in DENOMINATION_CENTS))
def test_unknown_or_fractional_code_has_no_value_but_a_name(code: int) -> None:
    # Credits are whole cents in Reelgate: such a machine cannot take a transfer.
    assert cents_per_credit(code) is None
    assert describe_denomination(code) == f"code {code:02X}"
