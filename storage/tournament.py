"""Tables of the slot tournament (rules sheet: ``shared/rules/slots-reel-tournament.txt``).

Money is integer cents, credits integer credits, instants ``UTCDateTime`` (aware, UTC).
Enums are stored by value (``'semi-final'``) as VARCHAR + CHECK on both backends.

``tournaments``      one tournament: venue zone, entry price (5000 c = R50, T5),
                     entry validity mode (``same-day`` T7/T8 or ``48h`` T5/T6 — the
                     sheet contradicts itself, so it is a setting), semi-final size (49,
                     T14), direct final places (1, T13), final quota (T17),
                     qualifying period, final date (T13/T24), minimum age (T1).
``tournament_settings`` one row per tournament: the casino's knobs that ranking SQL does
                     not need — prize places needing a strict order (T19), the T20
                     "reasonable period" before a failed heat is postponed, the T10
                     notice before a heat changes.
``tournament_packages`` the entry packages on sale (T5–T8, e.g. R200 = 4 seats), in
                     the order the director listed them.
``players``          a person: national id number (unique), optional Rewards card number
                     (T4), name, date of birth (T1).
``exclusions``       exclusion register (T2/T3): kind, id number, from/until, source
                     (e.g. ``csv:hr-2026-11.csv``), note.  Matched by id number.
``entry_purchases``  one cash-desk transaction (T5/T6/T9): kind cash/card/package/
                     complimentary, seats bought, amount (0 for complimentary: the casino
                     pays, one seat only), the package code sold, its casino-credit
                     portion (T6, never usable in heats), purchased_at, valid_until,
                     cashier.
``entries``          one row per seat bought = the "single entry" that is ranked (T14);
                     status available/seated/played/forfeited/refunded/disqualified/expired.
                     ``tournament_id``/``player_id`` copy the purchase's (composite FK).
``heats``            a heat of a stage (qualifying/semi-final/final): number, scheduled
                     start, duration, starting credits, bank, status, restart count (T20).
``heat_notices``     announced changes to heats and times (T10), restarts/postponements
                     (T20).
``seats``            an entry placed on a machine in a heat.  UNIQUE(heat, seat_number);
                     partial unique indexes over *active* seats (not moved/cancelled): an
                     entry is used once per stage, a machine holds one seat per heat, and a
                     player holds one seat per qualifying heat (T16).  ``played_by`` is
                     the proxy nominee (T16); a CHECK forbids substitutes in qualifying
                     heats (T12).  A moved seat (malfunction, T20/T21) keeps a link to
                     its replacement.
``scores``           one per seat and one per entry per stage: raw meters, final credits =
                     the score (T12), source machine/manual (manual names who).  Copies
                     tournament/stage/entry/player (checked by composite FKs) so ranking
                     reads one index (see ``storage.ranking``).
``card_draws``       T19 tie-break cards: the tie (stage + tied credits), round, entry,
                     who drew (player/nominee/public), rank A=1..K=13 and suit, physical or
                     digital (digital keeps seed + algorithm so anyone can re-verify).
``proxies``          T16 proxy forms: stage, holder, nominee, seat, when received.
``disqualifications`` who/what was disqualified, under which rule, by whom; ``entry_id``
                     NULL means the whole player.  Revocable (T23 decisions).
``refunds``          T20 refunds of an entry.

The enums and setting defaults live in ``storage.enums`` (no SQLAlchemy), shared with the
rules; they are importable from here too.

Director overrides (T23) and every other change a person makes are written to the
audit log (``storage.audit``); these tables hold the resulting state.

Clauses: docs/rules.md, one anchor per clause (#t1 … #t27).
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

# Loaded with the tables it watches: no writer (the host's CLI) is without its listeners.
import storage.change_feed  # noqa: F401
from storage.db import Base
from storage.enums import (
    DEFAULT_ENTRY_PRICE_CENTS,
    DEFAULT_NOTICE_S,
    DEFAULT_POSTPONE_AFTER_S,
    DEFAULT_PRIZE_PLACES,
    DEFAULT_SEMI_FINAL_SIZE,
    DEFAULT_VENUE_TZ,
    MAX_DRAW_ROUNDS,
    CardSuit,
    DrawMethod,
    DrawnBy,
    EntryStatus,
    EntryValidity,
    ExclusionKind,
    HeatStatus,
    NoticeKind,
    PurchaseKind,
    ScoreSource,
    SeatStatus,
    Stage,
)
from storage.types import UTCDateTime, check_text_lengths, enum_type, utcnow

# Seats in these states no longer hold their entry, machine or player slot.
# The public surface: the tables, and the enums re-exported so callers import them with
# the tables that store them.
__all__ = [
    "DEFAULT_ENTRY_PRICE_CENTS",
    "DEFAULT_NOTICE_S",
    "DEFAULT_POSTPONE_AFTER_S",
    "DEFAULT_PRIZE_PLACES",
    "DEFAULT_SEMI_FINAL_SIZE",
    "DEFAULT_VENUE_TZ",
    "INACTIVE_SEAT_STATUSES",
    "MAX_DRAW_ROUNDS",
    "CardDraw",
    "CardSuit",
    "Disqualification",
    "DrawMethod",
    "DrawnBy",
    "Entry",
    "EntryPurchase",
    "EntryStatus",
    "EntryValidity",
    "Exclusion",
    "ExclusionKind",
    "Heat",
    "HeatNotice",
    "HeatStatus",
    "NoticeKind",
    "Player",
    "Proxy",
    "PurchaseKind",
    "Refund",
    "Score",
    "ScoreSource",
    "Seat",
    "SeatStatus",
    "Stage",
    "Tournament",
    "TournamentPackage",
    "TournamentSetting",
]

INACTIVE_SEAT_STATUSES = (SeatStatus.MOVED, SeatStatus.CANCELLED)
_ACTIVE_SEAT_SQL = "status NOT IN ('moved', 'cancelled')"


_ID = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER only


class Tournament(Base):
    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint("entry_price_cents > 0", name="entry_price_positive"),
        CheckConstraint("semi_final_size >= 1", name="semi_final_size_positive"),
        CheckConstraint("direct_final_places >= 1", name="direct_final_places_positive"),
        CheckConstraint("final_quota IS NULL OR final_quota >= 1", name="final_quota_positive"),
        CheckConstraint("minimum_age >= 18", name="minimum_age_rule_1"),
        CheckConstraint(
            "qualifying_ends_at IS NULL OR qualifying_starts_at IS NULL"
            " OR qualifying_ends_at > qualifying_starts_at",
            name="qualifying_period_order",
        ),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    venue_tz: Mapped[str] = mapped_column(
        String(64), default=DEFAULT_VENUE_TZ, server_default=DEFAULT_VENUE_TZ
    )
    entry_price_cents: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_ENTRY_PRICE_CENTS, server_default=str(DEFAULT_ENTRY_PRICE_CENTS)
    )
    entry_validity: Mapped[EntryValidity] = mapped_column(
        enum_type(EntryValidity, "entry_validity"),
        default=EntryValidity.SAME_DAY,
        server_default=EntryValidity.SAME_DAY.value,
    )
    semi_final_size: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_SEMI_FINAL_SIZE, server_default=str(DEFAULT_SEMI_FINAL_SIZE)
    )
    direct_final_places: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    final_quota: Mapped[int | None] = mapped_column(Integer)
    qualifying_starts_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    qualifying_ends_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    final_date: Mapped[date | None] = mapped_column(Date)
    minimum_age: Mapped[int] = mapped_column(Integer, default=18, server_default="18")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class TournamentSetting(Base):
    """The rest of a tournament's settings (one row per tournament; the columns the
    ranking SQL reads stay on ``tournaments``).  Changes are director decisions (T23)
    and are also written to the audit log, which keeps their history."""

    __tablename__ = "tournament_settings"
    __table_args__ = (
        CheckConstraint("prize_places >= 1", name="prize_places_positive"),
        CheckConstraint("postpone_after_seconds > 0", name="postpone_after_positive_rule_20"),
        CheckConstraint("reschedule_notice_seconds >= 0", name="notice_not_negative_rule_10"),
    )

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    prize_places: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_PRIZE_PLACES, server_default=str(DEFAULT_PRIZE_PLACES)
    )
    postpone_after_seconds: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_POSTPONE_AFTER_S, server_default=str(DEFAULT_POSTPONE_AFTER_S)
    )
    reschedule_notice_seconds: Mapped[int] = mapped_column(
        Integer, default=DEFAULT_NOTICE_S, server_default=str(DEFAULT_NOTICE_S)
    )
    # T14: the top qualifier's other entries take no semi-final seat (the participant
    # is excluded); false = only the top entry is.
    top_player_excluded: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())


class TournamentFormat(Base):
    """F1: a tournament whose heats are not timed (no row: timed, T12).  ``format`` is
    the spec of :mod:`gateway.heat_formats` (``games-limited:N``, ``credit-limited:M``),
    copied onto each heat run as it is journaled (F5).  Its own table, as the team and
    walk-up settings are: changes are audited (``tournament.settings``)."""

    __tablename__ = "tournament_formats"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    format: Mapped[str] = mapped_column(String(40))


class SitAndGoHeat(Base):
    """F6: a heat that starts as soon as ``seats`` of its seats would play, at the
    latest at its scheduled start (no row: a heat with a fixed start, T22)."""

    __tablename__ = "sit_and_go_heats"
    __table_args__ = (CheckConstraint("seats >= 1", name="seats_positive_f6"),)

    heat_id: Mapped[int] = mapped_column(ForeignKey("heats.id"), primary_key=True)
    seats: Mapped[int] = mapped_column(Integer)


class TournamentPackage(Base):
    """An entry package on sale (T5–T8): ``seats`` for ``price_cents``, plus a
    casino-credit portion that is never usable in a heat (T6/T8)."""

    __tablename__ = "tournament_packages"
    __table_args__ = (
        UniqueConstraint("tournament_id", "code"),
        UniqueConstraint("tournament_id", "position"),
        CheckConstraint("seats >= 1", name="seats_positive"),
        CheckConstraint("price_cents > 0", name="price_positive"),
        CheckConstraint("casino_credit_cents >= 0", name="casino_credit_not_negative"),
        CheckConstraint("position >= 1", name="position_positive"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    position: Mapped[int] = mapped_column(Integer)  # the order the cash desk lists them
    code: Mapped[str] = mapped_column(String(32))
    price_cents: Mapped[int] = mapped_column(BigInteger)
    seats: Mapped[int] = mapped_column(Integer)
    casino_credit_cents: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class Player(Base):
    __tablename__ = "players"

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    id_number: Mapped[str] = mapped_column(String(32), unique=True)
    card_number: Mapped[str | None] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    date_of_birth: Mapped[date] = mapped_column(Date)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Exclusion(Base):
    """One row of the exclusion register (T2/T3); imported or typed in."""

    __tablename__ = "exclusions"
    __table_args__ = (
        CheckConstraint("valid_until IS NULL OR valid_until > valid_from", name="validity_order"),
        Index("ix_exclusions_id_number", "id_number"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    kind: Mapped[ExclusionKind] = mapped_column(enum_type(ExclusionKind, "exclusion_kind"))
    id_number: Mapped[str] = mapped_column(String(32))
    name: Mapped[str | None] = mapped_column(String(200))
    valid_from: Mapped[datetime] = mapped_column(UTCDateTime())
    valid_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    source: Mapped[str] = mapped_column(String(200))
    note: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class EntryPurchase(Base):
    __tablename__ = "entry_purchases"
    __table_args__ = (
        CheckConstraint("seats >= 1", name="seats_positive"),
        CheckConstraint("amount_cents >= 0", name="amount_not_negative"),
        # T5: a complimentary entry is paid by the casino and is a single entry.
        CheckConstraint(
            "(kind = 'complimentary' AND amount_cents = 0 AND seats = 1)"
            " OR (kind <> 'complimentary' AND amount_cents > 0)",
            name="complimentary_rule_5",
        ),
        # T6: only a package carries a casino-credit portion.
        CheckConstraint(
            "package_credit_cents = 0 OR (kind = 'package' AND package_credit_cents > 0)",
            name="package_credit_rule_6",
        ),
        CheckConstraint("valid_until > purchased_at", name="validity_order"),
        # The tender follows the kind (T5: a comp is the casino's; T6: packages are cash);
        # NULL on rows sold before the column existed (they are sealed as they were).
        CheckConstraint(
            "tender IS NULL"
            " OR (kind = 'complimentary' AND tender = 'comp')"
            " OR (kind = 'card' AND tender = 'card')"
            " OR (kind IN ('cash', 'package') AND tender = 'cash')",
            name="tender_of_kind",
        ),
        UniqueConstraint("id", "tournament_id", "player_id"),
        UniqueConstraint("idempotency_key"),
        Index("ix_entry_purchases_tournament_player", "tournament_id", "player_id"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    kind: Mapped[PurchaseKind] = mapped_column(enum_type(PurchaseKind, "purchase_kind"))
    seats: Mapped[int] = mapped_column(Integer)
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    package_code: Mapped[str | None] = mapped_column(String(32))  # T5–T8: what was sold
    package_credit_cents: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    purchased_at: Mapped[datetime] = mapped_column(UTCDateTime())
    valid_until: Mapped[datetime] = mapped_column(UTCDateTime())
    cashier: Mapped[str] = mapped_column(String(100))
    reference: Mapped[str | None] = mapped_column(String(64))  # till slip / receipt number
    tender: Mapped[str | None] = mapped_column(String(8))  # storage.enums.Tender; NULL: of kind
    # A retried sale answers the first (gateway/tournament/services/idempotency.py).
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    request_digest: Mapped[str | None] = mapped_column(String(64))


class Entry(Base):
    """One seat bought: the single entry that is scored and ranked (T14)."""

    __tablename__ = "entries"
    __table_args__ = (
        ForeignKeyConstraint(
            ["purchase_id", "tournament_id", "player_id"],
            ["entry_purchases.id", "entry_purchases.tournament_id", "entry_purchases.player_id"],
        ),
        UniqueConstraint("id", "player_id"),
        UniqueConstraint("id", "tournament_id", "player_id"),
        Index("ix_entries_tournament_player", "tournament_id", "player_id"),
        Index("ix_entries_purchase_id", "purchase_id"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    purchase_id: Mapped[int] = mapped_column(BigInteger)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    status: Mapped[EntryStatus] = mapped_column(
        enum_type(EntryStatus, "entry_status"),
        default=EntryStatus.AVAILABLE,
        server_default=EntryStatus.AVAILABLE.value,
    )
    status_changed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Heat(Base):
    __tablename__ = "heats"
    __table_args__ = (
        UniqueConstraint("tournament_id", "stage", "number"),
        UniqueConstraint("id", "stage"),  # target of seats' (heat_id, stage) FK
        CheckConstraint("number >= 1", name="number_positive"),
        CheckConstraint("duration_seconds > 0", name="duration_positive"),
        CheckConstraint("starting_credits > 0", name="starting_credits_positive"),
        CheckConstraint("restarts >= 0", name="restarts_not_negative"),
        Index("ix_heats_scheduled_start", "scheduled_start"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    number: Mapped[int] = mapped_column(Integer)
    scheduled_start: Mapped[datetime] = mapped_column(UTCDateTime())
    duration_seconds: Mapped[int] = mapped_column(Integer)
    starting_credits: Mapped[int] = mapped_column(BigInteger)
    bank_name: Mapped[str] = mapped_column(String(64))
    status: Mapped[HeatStatus] = mapped_column(
        enum_type(HeatStatus, "heat_status"),
        default=HeatStatus.SCHEDULED,
        server_default=HeatStatus.SCHEDULED.value,
    )
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    restarts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  # T20


class HeatNotice(Base):
    """A change to a heat announced to players (T10) or forced by a fault (T20)."""

    __tablename__ = "heat_notices"
    __table_args__ = (Index("ix_heat_notices_heat_id", "heat_id"),)

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    heat_id: Mapped[int] = mapped_column(ForeignKey("heats.id"))
    kind: Mapped[NoticeKind] = mapped_column(enum_type(NoticeKind, "notice_kind"))
    old_start: Mapped[datetime | None] = mapped_column(UTCDateTime())
    new_start: Mapped[datetime | None] = mapped_column(UTCDateTime())
    announced_via: Mapped[str] = mapped_column(String(100))  # "MC", "POS", "marketing"
    announced_at: Mapped[datetime] = mapped_column(UTCDateTime())
    changed_by: Mapped[str] = mapped_column(String(100))
    note: Mapped[str | None] = mapped_column(Text)


class Seat(Base):
    __tablename__ = "seats"
    __table_args__ = (
        UniqueConstraint("heat_id", "seat_number"),
        UniqueConstraint("id", "heat_id", "entry_id", "stage"),  # target of scores' FK
        ForeignKeyConstraint(["heat_id", "stage"], ["heats.id", "heats.stage"]),
        ForeignKeyConstraint(["entry_id", "holder_player_id"], ["entries.id", "entries.player_id"]),
        CheckConstraint("seat_number >= 1", name="seat_number_positive"),
        # T12: no substitutes in qualifying heats; proxies only in final stages (T16).
        CheckConstraint(
            "stage <> 'qualifying' OR played_by_player_id IS NULL"
            " OR played_by_player_id = holder_player_id",
            name="no_substitute_rule_12",
        ),
        # An entry is used once per stage (T14 single entry).
        Index(
            "ux_seats_entry_stage_active",
            "entry_id",
            "stage",
            unique=True,
            postgresql_where=text(_ACTIVE_SEAT_SQL),
            sqlite_where=text(_ACTIVE_SEAT_SQL),
        ),
        # One machine, one active seat per heat.
        Index(
            "ux_seats_heat_machine_active",
            "heat_id",
            "machine_id",
            unique=True,
            postgresql_where=text(_ACTIVE_SEAT_SQL),
            sqlite_where=text(_ACTIVE_SEAT_SQL),
        ),
        # T16: one seat per player per qualifying heat.
        Index(
            "ux_seats_qualifying_player_rule_16",
            "heat_id",
            "holder_player_id",
            unique=True,
            postgresql_where=text(f"stage = 'qualifying' AND {_ACTIVE_SEAT_SQL}"),
            sqlite_where=text(f"stage = 'qualifying' AND {_ACTIVE_SEAT_SQL}"),
        ),
        Index("ix_seats_holder_player_id", "holder_player_id"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    heat_id: Mapped[int] = mapped_column(BigInteger)
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    seat_number: Mapped[int] = mapped_column(Integer)
    machine_id: Mapped[str] = mapped_column(String(64))
    entry_id: Mapped[int] = mapped_column(BigInteger)
    holder_player_id: Mapped[int] = mapped_column(BigInteger)
    played_by_player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"))
    status: Mapped[SeatStatus] = mapped_column(
        enum_type(SeatStatus, "seat_status"),
        default=SeatStatus.ASSIGNED,
        server_default=SeatStatus.ASSIGNED.value,
    )
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    moved_to_seat_id: Mapped[int | None] = mapped_column(ForeignKey("seats.id"))


class Score(Base):
    """The credits one entry ended a heat with (T12: credits only rank players)."""

    __tablename__ = "scores"
    __table_args__ = (
        UniqueConstraint("seat_id"),
        UniqueConstraint("entry_id", "stage"),
        ForeignKeyConstraint(
            ["seat_id", "heat_id", "entry_id", "stage"],
            ["seats.id", "seats.heat_id", "seats.entry_id", "seats.stage"],
        ),
        ForeignKeyConstraint(
            ["entry_id", "tournament_id", "player_id"],
            ["entries.id", "entries.tournament_id", "entries.player_id"],
        ),
        CheckConstraint(
            "games_played >= 0 AND games_won >= 0 AND credits_wagered >= 0"
            " AND credits_won >= 0 AND final_credits >= 0",
            name="meters_not_negative",
        ),
        CheckConstraint("games_won <= games_played", name="games_won_le_played"),
        CheckConstraint(
            "source = 'machine' OR recorded_by IS NOT NULL", name="manual_score_names_who"
        ),
        # Ranking reads this index top-down (storage.ranking, bench/ranking.py).
        Index("ix_scores_ranking", "tournament_id", "stage", "final_credits"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(BigInteger)
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    heat_id: Mapped[int] = mapped_column(BigInteger)
    seat_id: Mapped[int] = mapped_column(BigInteger)
    entry_id: Mapped[int] = mapped_column(BigInteger)
    player_id: Mapped[int] = mapped_column(BigInteger)  # the entry's holder, even if a proxy played
    games_played: Mapped[int] = mapped_column(BigInteger)
    games_won: Mapped[int] = mapped_column(BigInteger)
    credits_wagered: Mapped[int] = mapped_column(BigInteger)
    credits_won: Mapped[int] = mapped_column(BigInteger)
    final_credits: Mapped[int] = mapped_column(BigInteger)
    source: Mapped[ScoreSource] = mapped_column(enum_type(ScoreSource, "score_source"))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    recorded_by: Mapped[str | None] = mapped_column(String(100))


class CardDraw(Base):
    """One card drawn to break a tie (T19: highest card wins, Ace low).

    A tie is identified by (tournament, stage, tied credits); equal cards go to another
    round among those still tied.  Digital draws keep seed and algorithm so the card can
    be recomputed by anyone.
    """

    __tablename__ = "card_draws"
    __table_args__ = (
        UniqueConstraint("tournament_id", "stage", "tie_credits", "round", "entry_id"),
        ForeignKeyConstraint(
            ["entry_id", "tournament_id", "player_id"],
            ["entries.id", "entries.tournament_id", "entries.player_id"],
        ),
        CheckConstraint("card_rank BETWEEN 1 AND 13", name="card_rank_ace_low"),
        CheckConstraint(f"round BETWEEN 1 AND {MAX_DRAW_ROUNDS}", name="round_range"),
        CheckConstraint(
            "method = 'physical' OR (seed IS NOT NULL AND algorithm IS NOT NULL)",
            name="digital_draw_verifiable",
        ),
        CheckConstraint("drawn_by = 'player' OR drawer_name IS NOT NULL", name="drawer_named"),
        Index("ix_card_draws_entry_stage_tie", "entry_id", "stage", "tie_credits"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(BigInteger)
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    tie_credits: Mapped[int] = mapped_column(BigInteger)
    round: Mapped[int] = mapped_column(Integer)
    entry_id: Mapped[int] = mapped_column(BigInteger)
    player_id: Mapped[int] = mapped_column(BigInteger)  # the entry holder the card counts for
    drawn_by: Mapped[DrawnBy] = mapped_column(enum_type(DrawnBy, "drawn_by"))
    drawer_name: Mapped[str | None] = mapped_column(String(200))
    card_rank: Mapped[int] = mapped_column(Integer)
    card_suit: Mapped[CardSuit] = mapped_column(enum_type(CardSuit, "card_suit"))
    method: Mapped[DrawMethod] = mapped_column(enum_type(DrawMethod, "draw_method"))
    seed: Mapped[str | None] = mapped_column(String(128))
    algorithm: Mapped[str | None] = mapped_column(String(64))
    context: Mapped[str] = mapped_column(Text)  # e.g. "qualifying cut, places 50-52"
    recorded_by: Mapped[str] = mapped_column(String(100))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Proxy(Base):
    """A signed proxy form (T16): one per nominee, final stages only."""

    __tablename__ = "proxies"
    __table_args__ = (
        UniqueConstraint("seat_id"),
        CheckConstraint("stage <> 'qualifying'", name="final_stages_only_rule_16"),
        Index("ix_proxies_tournament_holder", "tournament_id", "holder_player_id"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    stage: Mapped[Stage] = mapped_column(enum_type(Stage, "stage"))
    holder_player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    nominee_name: Mapped[str] = mapped_column(String(200))
    nominee_id_number: Mapped[str] = mapped_column(String(32))
    nominee_player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"))
    seat_id: Mapped[int | None] = mapped_column(ForeignKey("seats.id"))
    form_received_at: Mapped[datetime] = mapped_column(UTCDateTime())
    received_by: Mapped[str] = mapped_column(String(100))


class Disqualification(Base):
    """A disqualification (T1/T2/T3/T20); ``entry_id`` NULL = the player's every entry."""

    __tablename__ = "disqualifications"
    __table_args__ = (
        ForeignKeyConstraint(["entry_id", "player_id"], ["entries.id", "entries.player_id"]),
        CheckConstraint(
            "(revoked_at IS NULL AND revoked_by IS NULL)"
            " OR (revoked_at IS NOT NULL AND revoked_by IS NOT NULL)",
            name="revocation_names_who",
        ),
        Index("ix_disqualifications_tournament_player", "tournament_id", "player_id"),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    entry_id: Mapped[int | None] = mapped_column(BigInteger)
    rule: Mapped[str] = mapped_column(String(16))  # "2", "3", "20" ...
    reason: Mapped[str] = mapped_column(Text)
    decided_by: Mapped[str] = mapped_column(String(100))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_by: Mapped[str | None] = mapped_column(String(100))


class Refund(Base):
    """Money returned for an entry that could not be re-seated (T20)."""

    __tablename__ = "refunds"
    __table_args__ = (
        UniqueConstraint("entry_id"),
        CheckConstraint("amount_cents >= 0", name="amount_not_negative"),
        CheckConstraint(
            "tender IS NULL OR tender IN ('cash', 'card', 'comp')", name="tender_known"
        ),
    )

    id: Mapped[int] = mapped_column(_ID, primary_key=True)
    entry_id: Mapped[int] = mapped_column(ForeignKey("entries.id"))
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    rule: Mapped[str] = mapped_column(String(16), default="20", server_default="20")
    reason: Mapped[str] = mapped_column(Text)
    refunded_by: Mapped[str] = mapped_column(String(100))
    refunded_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # How the money went back (storage.enums.Tender); NULL: as the entry was paid.
    tender: Mapped[str | None] = mapped_column(String(8))


check_text_lengths(
    Tournament,
    TournamentPackage,
    Player,
    Exclusion,
    EntryPurchase,
    Heat,
    HeatNotice,
    Seat,
    Score,
    CardDraw,
    Proxy,
    Disqualification,
    Refund,
)
