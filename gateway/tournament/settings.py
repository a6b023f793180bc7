"""Per-tournament settings: the knobs the rules sheet leaves to the casino.

Stored in the database with the tournament (``tournaments`` columns, one
``tournament_settings`` row, ``tournament_packages`` rows: see
``gateway.tournament.services.common.load_settings``), so a tournament's rules can never
change under it by editing code.  ``to_json`` / ``from_json`` are the form the director
edits (``reelgate tournament set``) and the audit log records.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gateway.heat_formats import TIMED, HeatFormat, HeatFormatError, heat_format
from gateway.tournament.rules.attendance import parse_unmarked
from gateway.tournament.rules.violations import RuleViolation
from storage.enums import (
    DEFAULT_ENTRY_PRICE_CENTS,
    DEFAULT_NOTICE_S,
    DEFAULT_POSTPONE_AFTER_S,
    DEFAULT_PRIZE_PLACES,
    DEFAULT_SEMI_FINAL_SIZE,
    DEFAULT_VENUE_TZ,
    UnmarkedAtStart,
)
from storage.enums import EntryValidity as Validity

PACKAGE_CODE_LENGTH = 32  # tournament_packages.code

__all__ = ["DEFAULT_PACKAGES", "Package", "TournamentSettings", "Validity"]


@dataclass(frozen=True, slots=True)
class Package:
    """An entry package sold at the cash desk (T5–T8)."""

    code: str
    price_cents: int
    seats: int
    # Casino (promotional) credit bundled with the package: recorded, never usable in a heat
    # and never convertible to tournament credits (T6/T8).
    casino_credit_cents: int = 0


DEFAULT_PACKAGES: tuple[Package, ...] = (
    Package("single", DEFAULT_ENTRY_PRICE_CENTS, 1),
    Package("R200", 20000, 4),  # T6's example: R200 = 4 seats
)


@dataclass(frozen=True, slots=True)
class TournamentSettings:
    venue_zone: str = DEFAULT_VENUE_TZ
    seat_price_cents: int = DEFAULT_ENTRY_PRICE_CENTS  # T5: R50 a seat
    packages: tuple[Package, ...] = field(default=DEFAULT_PACKAGES)
    validity: Validity = Validity.SAME_DAY
    minimum_age: int = 18  # T1
    direct_final_places: int = 1  # T13: the top single entry goes straight to the final
    semi_final_qualifiers: int = DEFAULT_SEMI_FINAL_SIZE  # T14
    finalists_from_semis: int = 8  # T17: the advertised quota
    prize_places: int = DEFAULT_PRIZE_PLACES  # T19: places that need a strict order
    # T20: "a reasonable period" before a failed heat is postponed
    postpone_after: timedelta = timedelta(seconds=DEFAULT_POSTPONE_AFTER_S)
    # T10: how long before a change it must be announced
    reschedule_notice: timedelta = timedelta(seconds=DEFAULT_NOTICE_S)
    # T22: what the start does to a seat the roll call left unmarked (see
    # gateway.tournament.rules.attendance; default: forfeit only if a roll call was taken)
    unmarked_at_start: UnmarkedAtStart = UnmarkedAtStart.AUTO
    # T14: "excluding the above-mentioned participant" — the top qualifier's other
    # entries take no semi-final seat (false: only the top entry is left out)
    top_player_excluded: bool = True
    # F1: how a heat ends for each machine: timed (T12), games-limited (F2) or
    # credit-limited (F3); JSON keys ``format``, ``games_per_seat``, ``minimum_bet``.
    heat_format: HeatFormat = TIMED

    def __post_init__(self) -> None:
        self.validate()

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.venue_zone)

    def package(self, code: str) -> Package:
        for package in self.packages:
            if package.code == code:
                return package
        known = ", ".join(p.code for p in self.packages)
        raise RuleViolation(5, f"unknown entry package {code!r} (on sale: {known})")

    def validate(self) -> None:
        try:
            ZoneInfo(self.venue_zone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise RuleViolation(None, f"venue_zone: unknown time zone {self.venue_zone!r}") from exc
        if self.seat_price_cents <= 0:
            raise RuleViolation(5, "seat_price_cents must be positive")
        codes = [p.code for p in self.packages]
        if not codes or len(set(codes)) != len(codes):
            raise RuleViolation(6, "packages must be a non-empty list with unique codes")
        for p in self.packages:
            if not p.code.strip() or len(p.code) > PACKAGE_CODE_LENGTH or p.code != p.code.strip():
                raise RuleViolation(
                    6, f"package code {p.code!r}: 1-32 characters, no spaces around"
                )
            if p.seats <= 0 or p.price_cents <= 0 or p.casino_credit_cents < 0:
                raise RuleViolation(6, f"package {p.code!r}: seats and price must be positive")
            if (
                p.seats == 1
                and not p.casino_credit_cents
                and p.price_cents != self.seat_price_cents
            ):
                # T5: a single seat is sold at the seat price (R50 a seat)
                raise RuleViolation(
                    5,
                    f"package {p.code!r} is one seat: it costs the seat price "
                    f"{self.seat_price_cents} c, not {p.price_cents} c",
                )
        if self.minimum_age < 18:
            raise RuleViolation(1, "minimum_age may not be below 18")
        if min(self.direct_final_places, self.semi_final_qualifiers, self.finalists_from_semis) < 1:
            raise RuleViolation(14, "qualifier counts must be at least 1")
        if self.prize_places < 1:
            raise RuleViolation(19, "prize_places must be at least 1")
        if self.postpone_after <= timedelta(0) or self.reschedule_notice < timedelta(0):
            raise RuleViolation(20, "postpone_after must be positive, reschedule_notice >= 0")

    def with_changes(self, **changes: Any) -> TournamentSettings:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "venue_zone": self.venue_zone,
            "seat_price_cents": self.seat_price_cents,
            "packages": [
                {
                    "code": p.code,
                    "price_cents": p.price_cents,
                    "seats": p.seats,
                    "casino_credit_cents": p.casino_credit_cents,
                }
                for p in self.packages
            ],
            "validity": self.validity.value,
            "minimum_age": self.minimum_age,
            "direct_final_places": self.direct_final_places,
            "semi_final_qualifiers": self.semi_final_qualifiers,
            "finalists_from_semis": self.finalists_from_semis,
            "prize_places": self.prize_places,
            "postpone_after_s": int(self.postpone_after.total_seconds()),
            "reschedule_notice_s": int(self.reschedule_notice.total_seconds()),
            "unmarked_at_start": self.unmarked_at_start.value,
            "top_player_excluded": self.top_player_excluded,
            "format": self.heat_format.kind.value,
            "games_per_seat": self.heat_format.games,
            "minimum_bet": self.heat_format.minimum_bet,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TournamentSettings:
        """Build from stored JSON; a missing key takes its default, a bad one names itself."""
        known = set(cls.__dataclass_fields__) | {
            "postpone_after_s",
            "reschedule_notice_s",
            *FORMAT_KEYS,
        } - {"heat_format"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RuleViolation(None, f"settings: unknown key {unknown[0]!r}")
        kwargs: dict[str, Any] = {}
        try:
            for key in ("venue_zone",):
                if key in data:
                    kwargs[key] = str(data[key])
            for key in (
                "seat_price_cents",
                "minimum_age",
                "direct_final_places",
                "semi_final_qualifiers",
                "finalists_from_semis",
                "prize_places",
            ):
                if key in data:
                    kwargs[key] = _strict_int(key, data[key])
            kwargs.update(_choices(data))
            if "postpone_after_s" in data:
                seconds = _strict_int("postpone_after_s", data["postpone_after_s"])
                kwargs["postpone_after"] = timedelta(seconds=seconds)
            if "reschedule_notice_s" in data:
                seconds = _strict_int("reschedule_notice_s", data["reschedule_notice_s"])
                kwargs["reschedule_notice"] = timedelta(seconds=seconds)
        except (KeyError, TypeError, ValueError) as exc:
            raise RuleViolation(None, f"settings: invalid value ({exc})") from exc
        return cls(**kwargs)


def _choices(data: dict[str, Any]) -> dict[str, Any]:
    """The non-integer settings present in ``data``, parsed."""
    out: dict[str, Any] = {}
    if "validity" in data:
        out["validity"] = _validity(data["validity"])
    if "packages" in data:
        out["packages"] = _packages(data["packages"])
    if "top_player_excluded" in data:
        out["top_player_excluded"] = _strict_bool(
            "top_player_excluded", data["top_player_excluded"]
        )
    if "unmarked_at_start" in data:
        out["unmarked_at_start"] = parse_unmarked(data["unmarked_at_start"])
    if any(key in data for key in FORMAT_KEYS):
        out["heat_format"] = _heat_format(data)
    return out


FORMAT_KEYS = ("format", "games_per_seat", "minimum_bet")


def _heat_format(data: dict[str, Any]) -> HeatFormat:
    """F1–F3: the format from its JSON keys; one line naming the field if it cannot be."""
    kind = data.get("format", "timed")
    if not isinstance(kind, str):
        raise RuleViolation(None, f"rule F1: format must be text, got {kind!r}")
    games = data.get("games_per_seat")
    if games is not None:
        games = _strict_int("games_per_seat", games)
    minimum_bet = _strict_int("minimum_bet", data.get("minimum_bet", 1))
    try:
        return heat_format(kind, games_per_seat=games, minimum_bet=minimum_bet)
    except HeatFormatError as exc:
        raise RuleViolation(None, str(exc)) from None


def _strict_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise RuleViolation(None, f"settings: {name} must be true or false, got {value!r}")
    return value


def _strict_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleViolation(None, f"settings: {name} must be an integer, got {value!r}")
    return value


def _validity(value: Any) -> Validity:
    try:
        return Validity(value)
    except ValueError:
        known = ", ".join(v.value for v in Validity)
        raise RuleViolation(
            5, f"settings: validity must be one of {known}, got {value!r}"
        ) from None


def _packages(value: Any) -> tuple[Package, ...]:
    """T6 packages from JSON: a list of {code, price_cents, seats[, casino_credit_cents]}."""
    if not isinstance(value, list):
        raise RuleViolation(6, "settings: packages must be a list of packages")
    out = []
    for i, item in enumerate(value):
        where = f"settings: packages[{i}]"
        if not isinstance(item, dict):
            raise RuleViolation(6, f"{where} must be an object")
        missing = [k for k in ("code", "price_cents", "seats") if k not in item]
        unknown = sorted(set(item) - {"code", "price_cents", "seats", "casino_credit_cents"})
        if missing or unknown:
            what = f"needs {missing[0]!r}" if missing else f"has unknown key {unknown[0]!r}"
            raise RuleViolation(6, f"{where} {what}")
        if not isinstance(item["code"], str):
            raise RuleViolation(6, f"{where}: code must be text")
        out.append(
            Package(
                code=item["code"],
                price_cents=_strict_int("price_cents", item["price_cents"]),
                seats=_strict_int("seats", item["seats"]),
                casino_credit_cents=_strict_int(
                    "casino_credit_cents", item.get("casino_credit_cents", 0)
                ),
            )
        )
    return tuple(out)
