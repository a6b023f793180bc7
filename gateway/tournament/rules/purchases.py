"""Entry purchases at the cash desk (T5–T9).

A purchase gives one *entry* per seat; each entry is one seat in one qualifying heat and
owns its own score (T12).  When an entry may be used depends on the tournament's
:class:`Validity` setting, because the rules sheet carries two versions:

* ``same-day`` (T7/T8): heats starting on the venue-local day of purchase;
* ``48h`` (T5/T6): heats starting that day or the next, and within 48 hours of the
  purchase.

An entry keeps the terms it was sold with (T5–T8 describe what the player bought):
the sale stores the end of its window (``valid_until``) and every later check —
registration and expiry alike — reads that, never the setting as it is now.

Clauses: docs/rules.md#t5 to #t9.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from gateway.tournament.rules.enums import PurchaseKind
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import TournamentSettings, Validity
from storage.enums import Tender


@dataclass(frozen=True, slots=True)
class SaleQuote:
    package_code: str
    quantity: int
    seats: int
    price_cents: int  # what the player pays at the cash desk
    casino_paid_cents: int  # complimentary entries are paid for by the casino (T5/T7)
    casino_credit_cents: int  # promotional credit bundled with packages (T6/T8), never heat credit
    complimentary: bool


def quote_sale(
    settings: TournamentSettings,
    package_code: str,
    quantity: int = 1,
    *,
    complimentary: bool = False,
) -> SaleQuote:
    """Price a sale.  T9: entries are unlimited, so any positive quantity is fine."""
    if quantity < 1:
        raise RuleViolation(9, f"quantity must be at least 1, got {quantity}")
    if complimentary:
        # T5/T7: a complimentary entry is a single entry, paid for by the casino.
        if quantity != 1:
            raise RuleViolation(5, "a complimentary entry is a single entry (quantity 1)")
        return SaleQuote("complimentary", 1, 1, 0, settings.seat_price_cents, 0, True)
    package = settings.package(package_code)
    return SaleQuote(
        package_code=package.code,
        quantity=quantity,
        seats=package.seats * quantity,
        price_cents=package.price_cents * quantity,
        casino_paid_cents=0,
        casino_credit_cents=package.casino_credit_cents * quantity,
        complimentary=False,
    )


def check_not_continuing_heat(running_heat_label: str | None) -> None:
    """T9: no purchase to continue in a heat the player is playing right now."""
    if running_heat_label is not None:
        raise RuleViolation(
            9,
            f"player is playing in {running_heat_label}; no purchase to continue a heat",
        )


def local_day_start(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=zone)


def validity_window(
    settings: TournamentSettings, purchased_at: datetime
) -> tuple[datetime, datetime]:
    """[start, end) of the heat start times an entry bought at ``purchased_at`` may use."""
    _require_aware(purchased_at, "purchased_at")
    zone = settings.zone
    day = purchased_at.astimezone(zone).date()
    start = local_day_start(day, zone)
    if settings.validity is Validity.SAME_DAY:  # T7/T8
        return start, local_day_start(day + timedelta(days=1), zone)
    # T5/T6: the same day or the next day, and within 48 hours of the purchase
    return start, min(
        local_day_start(day + timedelta(days=2), zone), purchased_at + timedelta(hours=48)
    )


def check_entry_valid_for_heat(
    settings: TournamentSettings, purchased_at: datetime, heat_starts_at: datetime
) -> None:
    """T5–T8 for an entry sold now under ``settings``."""
    _, end = validity_window(settings, purchased_at)
    check_entry_terms(settings.zone, purchased_at, end, heat_starts_at)


def check_entry_terms(
    zone: ZoneInfo, purchased_at: datetime, valid_until: datetime, heat_starts_at: datetime
) -> None:
    """T5–T8, by the terms sold: heats from the purchase day up to ``valid_until``."""
    _require_aware(heat_starts_at, "heat start")
    day = purchased_at.astimezone(zone).date()
    start = local_day_start(day, zone)
    if not start <= heat_starts_at < valid_until:
        same_day = valid_until <= local_day_start(day + timedelta(days=1), zone)
        local = purchased_at.astimezone(zone)
        raise RuleViolation(
            7 if same_day else 5,
            f"entry bought {local:%Y-%m-%d %H:%M} is valid for heats starting before "
            f"{valid_until.astimezone(zone):%Y-%m-%d %H:%M} "
            f"({'same-day' if same_day else '48h'}, as sold)",
        )


def is_expired(settings: TournamentSettings, purchased_at: datetime, now: datetime) -> bool:
    return now >= validity_window(settings, purchased_at)[1]


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise RuleViolation(None, f"{name} must carry a time zone")


def tender_of_kind(kind: PurchaseKind) -> Tender:
    """A purchase's tender by its kind: card for a card sale, comp for a complimentary
    entry (T5: the casino pays), else cash (T6: packages are sold for cash only)."""
    if kind is PurchaseKind.COMPLIMENTARY:
        return Tender.COMP
    return Tender.CARD if kind is PurchaseKind.CARD else Tender.CASH
