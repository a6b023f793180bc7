"""Plain values the tables share with the rules: no SQLAlchemy here.

The tournament rules (``gateway.tournament.rules``) and the tables
(``storage.tournament``, ``storage.attendance``) speak one vocabulary.  It lives below
both, so the rules can use it without importing a database.  Enums are stored by value
(``'semi-final'``) through ``storage.types.enum_type``: a value changed here is a
migration.  The defaults are those of the settings columns and of
``gateway.tournament.settings.TournamentSettings``.
"""

from __future__ import annotations

import enum

DEFAULT_VENUE_TZ = "Africa/Johannesburg"
DEFAULT_ENTRY_PRICE_CENTS = 5000  # R50 per seat, T5
DEFAULT_SEMI_FINAL_SIZE = 49  # T14
DEFAULT_PRIZE_PLACES = 3  # T19: places that need a strict order
DEFAULT_POSTPONE_AFTER_S = 30 * 60  # T20: "a reasonable period"
DEFAULT_NOTICE_S = 60 * 60  # T10: announced before the change
MAX_DRAW_ROUNDS = 10  # T19 re-draws; bounds the round column of card_draws


class EntryValidity(enum.StrEnum):
    SAME_DAY = "same-day"  # T7/T8
    HOURS_48 = "48h"  # T5/T6


class Stage(enum.StrEnum):
    QUALIFYING = "qualifying"
    SEMI_FINAL = "semi-final"
    FINAL = "final"


class ExclusionKind(enum.StrEnum):
    SELF_EXCLUSION = "self-exclusion"  # T2
    REFUSAL_OF_ENTRY = "refusal-of-entry"  # T2
    EXCLUDED_CATEGORY = "excluded-category"  # T2 "category of excluded persons"
    STAFF = "staff"  # T3
    CONNECTED_PERSON = "connected-person"  # T3 (family, partners, suppliers)


class PurchaseKind(enum.StrEnum):
    CASH = "cash"
    CARD = "card"
    PACKAGE = "package"  # T6: cash only, N seats + casino credit portion
    COMPLIMENTARY = "complimentary"  # T5: paid by the casino, single entry


class Tender(enum.StrEnum):
    """How money changed hands at a till: only cash is in the drawer."""

    CASH = "cash"
    CARD = "card"
    COMP = "comp"  # paid by the casino: no money moved


class EntryStatus(enum.StrEnum):
    AVAILABLE = "available"
    SEATED = "seated"
    PLAYED = "played"
    FORFEITED = "forfeited"  # T22: absent at the start, no refund
    REFUNDED = "refunded"  # T20
    DISQUALIFIED = "disqualified"  # T2/T3/T20
    EXPIRED = "expired"  # T5–T8 validity window passed


class HeatStatus(enum.StrEnum):
    SCHEDULED = "scheduled"
    ARMED = "armed"
    RUNNING = "running"
    ENDING = "ending"
    COLLECTING = "collecting"
    CLOSED = "closed"
    RESTARTED = "restarted"  # T20
    POSTPONED = "postponed"  # T20/T21
    ABORTED = "aborted"
    CANCELLED = "cancelled"  # T10


class NoticeKind(enum.StrEnum):
    ADDED = "added"  # T21: extra heats
    RESCHEDULED = "rescheduled"  # T10
    BANK_CHANGED = "bank-changed"
    CANCELLED = "cancelled"
    RESTARTED = "restarted"  # T20
    POSTPONED = "postponed"  # T20/T21


class SeatStatus(enum.StrEnum):
    ASSIGNED = "assigned"
    PRESENT = "present"
    PLAYED = "played"
    FORFEITED = "forfeited"  # T22
    DISQUALIFIED = "disqualified"
    MOVED = "moved"  # T20/T21: malfunction, re-seated elsewhere (inactive)
    CANCELLED = "cancelled"  # registration undone before the heat (inactive)


class ScoreSource(enum.StrEnum):
    MACHINE = "machine"
    MANUAL = "manual"


class DrawnBy(enum.StrEnum):
    PLAYER = "player"
    NOMINEE = "nominee"
    PUBLIC = "public"  # T19: a member of the public draws for an absent player


class CardSuit(enum.StrEnum):
    CLUBS = "clubs"
    DIAMONDS = "diamonds"
    HEARTS = "hearts"
    SPADES = "spades"


class DrawMethod(enum.StrEnum):
    PHYSICAL = "physical"
    DIGITAL = "digital"


class UnmarkedAtStart(enum.StrEnum):
    """T22: what the start does to a seat the roll call left unmarked."""

    AUTO = "auto"  # forfeit if the heat had a roll call at all, else present
    FORFEIT = "forfeit"
    PRESENT = "present"  # venues that do not take a roll call
