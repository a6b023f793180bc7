"""Walk-up play's pure decisions (docs/rules.md#w1 ... #w5), on a clock passed in."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.rules.walkup import (
    CONFIRM,
    OFFER,
    REFUSE,
    CardFacts,
    Offer,
    Window,
    check_window,
    decide_card_in,
    live_offer,
    parse_hhmm,
    window_bounds,
)

ZONE = "Africa/Johannesburg"  # UTC+2, no summer time
EVENING = Window(time(18, 0), time(23, 0), ZONE, duration_seconds=300, starting_credits=500)


def local(hour: int, minute: int = 0, day: int = 7) -> datetime:
    """An instant given in venue time (UTC+2)."""
    return datetime(2026, 12, day, hour, minute, tzinfo=UTC) - timedelta(hours=2)


def facts(at: datetime, **kw: object) -> CardFacts:
    base: dict[str, object] = {
        "at": at, "card": "C1", "window": EVENING, "bank_enabled": True, "entry_id": 11,
    }  # fmt: skip
    base.update(kw)
    return CardFacts(**base)  # type: ignore[arg-type]


def test_w1_window_setting_is_checked() -> None:
    assert parse_hhmm("18:00", "opens") == time(18, 0)
    for bad in ("18", "25:00", "6:00", "18:60", "x"):
        with pytest.raises(RuleViolation, match="opens"):
            parse_hhmm(bad, "opens")
    with pytest.raises(RuleViolation, match="closes"):
        check_window(Window(time(18), time(18), ZONE, 300, 500))
    with pytest.raises(RuleViolation, match="credits"):
        check_window(Window(time(18), time(23), ZONE, 300, 0))
    with pytest.raises(RuleViolation):  # LP 8C carries at most 99:59
        check_window(Window(time(18), time(23), ZONE, 6000, 500))
    with pytest.raises(RuleViolation, match="confirm_seconds"):
        check_window(Window(time(18), time(23), ZONE, 300, 500, confirm_seconds=0))
    check_window(EVENING)


def test_w2_window_is_daily_in_venue_time_and_may_cross_midnight() -> None:
    assert window_bounds(EVENING, local(17, 59)) is None
    assert window_bounds(EVENING, local(18, 0)) == (local(18), local(23))
    assert window_bounds(EVENING, local(22, 59)) is not None
    assert window_bounds(EVENING, local(23, 0)) is None  # closes at 23:00 sharp
    late = Window(time(20), time(2), ZONE, 300, 500)
    assert window_bounds(late, local(1, 30, day=8)) == (local(20, day=7), local(2, day=8))
    assert window_bounds(late, local(2, 0, day=8)) is None
    assert window_bounds(late, local(21, 0)) == (local(20), local(2, day=8))
    with pytest.raises(ValueError, match="time zone"):
        window_bounds(EVENING, datetime(2026, 12, 7, 19))


def test_w2_outside_the_window_is_refused_with_its_hours_on_the_display() -> None:
    verdict = decide_card_in(facts(local(17, 30)))
    assert (verdict.kind, verdict.clause) == (REFUSE, "W2")
    assert "18:00-23:00" in verdict.display
    assert "18:00-23:00" in verdict.reason
    off = decide_card_in(facts(local(19), window=Window(time(18), time(23), ZONE, 300, 500,
                                                        enabled=False)))  # fmt: skip
    assert (off.kind, off.clause) == (REFUSE, "W1")


def test_w3_a_busy_machine_or_a_disabled_bank_is_refused() -> None:
    busy = decide_card_in(facts(local(19), busy="heat 4 is under way on bank A"))
    assert (busy.kind, busy.clause, busy.reason) == (REFUSE, "W3", "heat 4 is under way on bank A")
    assert decide_card_in(facts(local(19), bank_enabled=False)).clause == "W3"
    other = Offer(5, "C2", local(19, 1))
    held = decide_card_in(facts(local(19), offer=other))
    assert (held.kind, held.clause) == (REFUSE, "W3")
    assert "another card" in held.reason


def test_w4_no_unused_entry_is_refused() -> None:
    verdict = decide_card_in(facts(local(19), entry_id=None))
    assert (verdict.kind, verdict.clause) == (REFUSE, "W4")
    assert "cash desk" in verdict.display


def test_w5_offer_then_confirm_by_the_same_card_within_the_confirm_time() -> None:
    at = local(19)
    offer = decide_card_in(facts(at))
    assert (offer.kind, offer.entry_id) == (OFFER, 11)
    assert offer.expires_at == at + timedelta(seconds=30)
    assert "re-insert" in offer.display
    pending = Offer(7, "C1", at + timedelta(seconds=30))
    confirm = decide_card_in(facts(at + timedelta(seconds=29), offer=pending, entry_id=None))
    assert (confirm.kind, confirm.session_id) == (CONFIRM, 7)
    # Lapsed: the next card-in is a new offer, not a confirm.
    assert live_offer(pending, at + timedelta(seconds=30)) is None
    again = decide_card_in(facts(at + timedelta(seconds=30), offer=pending))
    assert again.kind == OFFER
    # A confirm needs the window still open (W2 before W5).
    late = Offer(8, "C1", local(23, 0) + timedelta(seconds=20))
    assert decide_card_in(facts(local(23, 0), offer=late)).clause == "W2"
