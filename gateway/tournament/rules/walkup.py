"""Walk-up play, decided from facts and a clock passed in (docs/rules.md#w1 ... #w9).

A house format: the Ridge sheet has no walk-up play, so the venue's own clauses W1-W9 are
written in ``docs/rules.md``.  This module is pure: the card desk's service
(:mod:`gateway.tournament.services.walkup`) gathers the facts of one card-in and this
module says what happens -- an offer, the confirmation of an offer, or a refusal naming
its clause, with the one line the machine's display shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from gateway.heat_limits import heat_limit_problem
from gateway.tournament.rules.violations import RuleViolation

OFFER = "offer"
CONFIRM = "confirm"
REFUSE = "refuse"

DEFAULT_CONFIRM_SECONDS = 30
MAX_CONFIRM_SECONDS = 300


@dataclass(frozen=True, slots=True)
class Window:
    """A tournament's walk-up window on one bank (W1): daily, in venue time."""

    opens: time
    closes: time
    zone: str
    duration_seconds: int
    starting_credits: int
    confirm_seconds: int = DEFAULT_CONFIRM_SECONDS
    enabled: bool = True

    @property
    def label(self) -> str:
        return f"{self.opens:%H:%M}-{self.closes:%H:%M}"


def parse_hhmm(text: str, field: str) -> time:
    """``18:00`` -> 18:00; anything else refused naming ``field``."""
    try:
        hours, minutes = text.strip().split(":")
        if len(hours) != 2 or len(minutes) != 2:
            raise ValueError
        return time(int(hours), int(minutes))
    except ValueError:
        raise RuleViolation(None, f"{field}: {text!r} is not a time HH:MM (00:00-23:59)") from None


def check_window(window: Window) -> None:
    """W1: a window that opens and closes, a session the floor can carry, a confirm time."""
    if window.opens == window.closes:
        raise RuleViolation(None, "closes: a walk-up window must close at another time")
    problem = heat_limit_problem(window.starting_credits, window.duration_seconds)
    if problem is not None:
        raise RuleViolation(None, problem)
    if not 1 <= window.confirm_seconds <= MAX_CONFIRM_SECONDS:
        raise RuleViolation(
            None, f"confirm_seconds: {window.confirm_seconds} is not 1 to {MAX_CONFIRM_SECONDS}"
        )
    ZoneInfo(window.zone)  # an unknown zone raises here, not at the first card


def window_bounds(window: Window, at: datetime) -> tuple[datetime, datetime] | None:
    """W2: the open window that ``at`` falls in (its opening and closing instants), or None.

    The window repeats every venue day; one that closes at or before it opens crosses
    midnight (20:00-02:00 is open from 20:00 to 02:00 the next morning)."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("at must carry a time zone")
    zone = ZoneInfo(window.zone)
    local_day = at.astimezone(zone).date()
    for day in (local_day, local_day - timedelta(days=1)):
        start = datetime.combine(day, window.opens, zone)
        close_day = day if window.closes > window.opens else day + timedelta(days=1)
        end = datetime.combine(close_day, window.closes, zone)
        if start <= at < end:
            return start, end
    return None


@dataclass(frozen=True, slots=True)
class Offer:
    """An offer waiting for its confirm at a machine (W5)."""

    session_id: int
    card: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class CardFacts:
    """What is known of one accepted card-in at a machine of a walk-up bank."""

    at: datetime
    card: str
    window: Window
    bank_enabled: bool
    busy: str = ""  # why the machine is not idle ("" when idle), W3
    entry_id: int | None = None  # the player's unused entry valid now, W4
    offer: Offer | None = None  # the machine's pending offer, if any, W5


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: str  # offer | confirm | refuse
    clause: str  # W2 ... W5
    reason: str
    display: str
    entry_id: int | None = None
    session_id: int | None = None
    expires_at: datetime | None = None


def _refuse(clause: str, reason: str, display: str) -> Verdict:
    return Verdict(REFUSE, clause, reason, display)


def live_offer(offer: Offer | None, at: datetime) -> Offer | None:
    """The offer if it has not lapsed at ``at`` (W5)."""
    return offer if offer is not None and at < offer.expires_at else None


def decide_card_in(facts: CardFacts) -> Verdict:
    """W2-W5: one accepted card-in at a walk-up machine."""
    window, at = facts.window, facts.at
    if not window.enabled:
        return _refuse("W1", "walk-up is off on this bank", "Walk-up play is closed")
    if window_bounds(window, at) is None:
        return _refuse(
            "W2",
            f"outside the walk-up window {window.label} ({window.zone})",
            f"Walk-up play is open {window.label}",
        )
    if not facts.bank_enabled:
        return _refuse("W3", "the bank is not enabled", "Machine not available: see the desk")
    offer = live_offer(facts.offer, at)
    if offer is not None:
        if offer.card != facts.card:
            return _refuse(
                "W3",
                f"the machine holds another card's offer until {offer.expires_at:%H:%M:%S}",
                "Machine reserved: please try another",
            )
        return Verdict(
            CONFIRM, "W5", "confirmed by the card put in again", "Session starting: good luck",
            session_id=offer.session_id,
        )  # fmt: skip
    if facts.busy:
        return _refuse("W3", facts.busy, "Machine busy: please try another")
    if facts.entry_id is None:
        return _refuse(
            "W4", "no unused entry valid now", "No unused entry: please see the cash desk"
        )
    minutes, seconds = divmod(window.duration_seconds, 60)
    expires = at + timedelta(seconds=window.confirm_seconds)
    return Verdict(
        OFFER,
        "W5",
        f"entry {facts.entry_id}: {window.starting_credits} credits for {minutes}:{seconds:02d}",
        f"Walk-up: {window.starting_credits} credits, {minutes}:{seconds:02d}. "
        f"Remove and re-insert card within {window.confirm_seconds}s to start",
        entry_id=facts.entry_id,
        expires_at=expires,
    )
