"""T5–T9: prices, packages, complimentary entries and validity windows (pure).

Clauses: docs/rules.md#t5 to #t9.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from gateway.tournament.rules.purchases import (
    check_entry_valid_for_heat,
    check_not_continuing_heat,
    is_expired,
    quote_sale,
    validity_window,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import Package, TournamentSettings, Validity

SAST = ZoneInfo("Africa/Johannesburg")
SAME_DAY = TournamentSettings(validity=Validity.SAME_DAY)
H48 = TournamentSettings(validity=Validity.HOURS_48)


def test_rule_5_a_seat_costs_r50_and_rule_6_r200_buys_four() -> None:
    single = quote_sale(SAME_DAY, "single", 3)
    assert (single.seats, single.price_cents) == (3, 15000)
    package = quote_sale(SAME_DAY, "R200")
    assert (package.seats, package.price_cents) == (4, 20000)


def test_rule_6_packages_are_configurable_with_a_casino_credit_portion() -> None:
    settings = TournamentSettings(
        packages=(Package("single", 5000, 1), Package("R500", 50000, 10, casino_credit_cents=10000))
    )
    quote = quote_sale(settings, "R500", 2)
    assert (quote.seats, quote.price_cents, quote.casino_credit_cents) == (20, 100000, 20000)
    with pytest.raises(RuleViolation, match=r"rule 5: unknown entry package 'R200'"):
        quote_sale(settings, "R200")


def test_rule_5_complimentary_is_one_entry_paid_by_the_casino() -> None:
    comp = quote_sale(SAME_DAY, "single", complimentary=True)
    assert (comp.seats, comp.price_cents, comp.casino_paid_cents) == (1, 0, 5000)
    with pytest.raises(RuleViolation, match=r"rule 5: a complimentary entry is a single entry"):
        quote_sale(SAME_DAY, "single", 2, complimentary=True)


def test_rule_9_unlimited_entries_but_not_to_continue_a_heat() -> None:
    assert quote_sale(SAME_DAY, "single", 500).seats == 500
    with pytest.raises(RuleViolation, match=r"rule 9"):
        quote_sale(SAME_DAY, "single", 0)
    with pytest.raises(RuleViolation, match=r"rule 9: .*no purchase to continue a heat"):
        check_not_continuing_heat("qualifying heat 3")
    check_not_continuing_heat(None)


def test_rules_7_8_same_day_ends_at_local_midnight() -> None:
    bought = datetime(2026, 11, 2, 23, 30, tzinfo=SAST)
    start, end = validity_window(SAME_DAY, bought)
    assert (start, end) == (datetime(2026, 11, 2, tzinfo=SAST), datetime(2026, 11, 3, tzinfo=SAST))
    check_entry_valid_for_heat(SAME_DAY, bought, datetime(2026, 11, 2, 23, 45, tzinfo=SAST))
    with pytest.raises(RuleViolation, match=r"^rule 7: "):
        check_entry_valid_for_heat(SAME_DAY, bought, datetime(2026, 11, 3, 0, 15, tzinfo=SAST))
    # The window is the *venue's* day even when the purchase instant is given in UTC.
    utc_bought = datetime(2026, 11, 2, 22, 30, tzinfo=ZoneInfo("UTC"))  # 00:30 on the 3rd SAST
    assert validity_window(SAME_DAY, utc_bought)[0] == datetime(2026, 11, 3, tzinfo=SAST)


def test_rules_5_6_48h_is_that_day_or_the_next_within_48_hours() -> None:
    bought = datetime(2026, 11, 2, 9, 0, tzinfo=SAST)
    _, end = validity_window(H48, bought)
    assert end == datetime(2026, 11, 4, tzinfo=SAST)  # end of the next day (39 h later)
    check_entry_valid_for_heat(H48, bought, datetime(2026, 11, 3, 22, 0, tzinfo=SAST))
    with pytest.raises(RuleViolation, match=r"^rule 5: "):
        check_entry_valid_for_heat(H48, bought, datetime(2026, 11, 4, 0, 0, tzinfo=SAST))
    assert is_expired(H48, bought, datetime(2026, 11, 4, 0, 0, tzinfo=SAST))
    assert not is_expired(H48, bought, datetime(2026, 11, 3, 23, 59, tzinfo=SAST))


def test_rule_5_48h_cap_binds_in_a_zone_with_a_long_day() -> None:
    """Where a day is 25 h (DST change), 'next day' can run past 48 h: the 48 h cap wins."""
    settings = TournamentSettings(validity=Validity.HOURS_48, venue_zone="Europe/London")
    london = ZoneInfo("Europe/London")
    bought = datetime(2026, 10, 24, 0, 0, tzinfo=london)  # DST ends on the 25th
    _, end = validity_window(settings, bought)
    assert end == bought + timedelta(hours=48)


def test_validity_needs_aware_times() -> None:
    with pytest.raises(RuleViolation, match=r"time zone"):
        validity_window(SAME_DAY, datetime(2026, 11, 2, 9, 0))
