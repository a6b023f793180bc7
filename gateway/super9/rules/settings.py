"""Super 9 settings, with the interpretation each one fixes.

Every setting that decides money is a documented choice; a session stores the values it
was opened with, so a later change never re-prices a finished draw.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, fields
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


class RepeatRule(enum.Enum):
    """How S9-19 ("a repeated number ... disregarded in respect of the jackpot")
    reads against S9-14's "first 18 spins"."""

    #: Default. A spin repeating an already-called number does not count toward the 18,
    #: so the jackpot window is the first 18 *distinct* numbers called.
    DISREGARD_REPEATS = "disregard-repeats"
    #: Literal reading: every valid spin counts toward the 18.
    COUNT_EVERY_SPIN = "count-every-spin"


class WinningContribution(enum.Enum):
    """What happens to the 75% of buy-ins (S9-15) of the session the jackpot is won in.

    S9-15 starts the jackpot at R5,000 and grows it "for each session that it is not
    won", so by default the winning session adds nothing anywhere: its 75% is kept by
    the house and the next jackpot starts at exactly the seed.
    """

    RESTART_AT_SEED = "restart-at-seed"  # default: the next jackpot is exactly the seed
    SEEDS_NEXT = "seeds-next"  # the winning session's 75% seeds the next, on top of R5,000
    PAID_WITH_JACKPOT = "paid-with-jackpot"  # ... or is paid to the winner with the pot


class Leftovers(enum.Enum):
    """Where money no prize can take goes: the odd cents of an equal split (S9-20) and
    a consolation nobody won (S9-16).  The sheet routes only the 75% (S9-15) and the
    25% (S9-16), so this is the venue's choice."""

    #: Default: kept in the promotion, added to the progressive jackpot — except in the
    #: session the jackpot is won under ``restart-at-seed``, which adds nothing
    #: (S9-15), so there the house keeps them.
    JACKPOT = "jackpot"
    #: The house keeps them (recorded in the session result as retained).
    HOUSE = "house"


class VerificationField(enum.Enum):
    """The parts of a ticket's verification section (S9-7), keyed at hand-in."""

    NAME = "name"
    ID = "id"  # ID or Rewards card number: must be the buyer's
    CONTACT = "contact"
    SIGNATURE = "signature"  # the player signed the section (present / absent)


ALL_VERIFICATION = tuple(f.value for f in VerificationField)


@dataclass(frozen=True)
class Super9Settings:
    #: Price of one ticket, in cents (S9-5: a setting, not in the rules).
    buy_in_cents: int = 5_000
    #: Starting value of the progressive jackpot, and its value after a win (S9-15).
    jackpot_seed_cents: int = 500_000
    #: Jackpot window (S9-14) and how repeats count in it (S9-19).
    jackpot_spins: int = 18
    repeat_rule: RepeatRule = RepeatRule.DISREGARD_REPEATS
    #: A "SUPER 9" claim (S9-14, S9-22) must be registered before this many further
    #: valid spins follow the spin that completed the ticket; 0 = before the next spin.
    claim_window_spins: int = 0
    #: Whether a jackpot winner also takes the consolation (S9-16). Default yes; when
    #: no, the consolation goes to the first ticket(s) to complete after them.
    jackpot_winner_takes_consolation: bool = True
    winning_contribution: WinningContribution = WinningContribution.RESTART_AT_SEED
    #: Odd cents of equal shares and unwon consolations (S9-16, S9-20).
    leftovers: Leftovers = Leftovers.JACKPOT
    #: Verification-section fields that must be filled in at hand-in (S9-7: "in full").
    verification_fields: tuple[str, ...] = ALL_VERIFICATION
    #: Venue time zone for the calendar and sales windows (S9-4, S9-6).
    timezone: str = "Africa/Johannesburg"

    def __post_init__(self) -> None:
        if self.buy_in_cents <= 0:
            raise ValueError("buy_in_cents must be positive")
        if self.jackpot_seed_cents < 0:
            raise ValueError("jackpot_seed_cents must not be negative")
        if self.jackpot_spins < 9:
            raise ValueError("jackpot_spins below 9 could never be won (rule 14)")
        if self.claim_window_spins < 0:
            raise ValueError("claim_window_spins must not be negative")
        unknown = set(self.verification_fields) - set(ALL_VERIFICATION)
        if unknown:
            raise ValueError(
                f"verification_fields: unknown {sorted(unknown)}; use {list(ALL_VERIFICATION)}"
            )
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"timezone {self.timezone!r} is not an IANA zone name") from None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["repeat_rule"] = self.repeat_rule.value
        out["winning_contribution"] = self.winning_contribution.value
        out["leftovers"] = self.leftovers.value
        out["verification_fields"] = list(self.verification_fields)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Super9Settings:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown Super 9 setting(s): {sorted(unknown)}")
        values = dict(data)
        if "repeat_rule" in values:
            values["repeat_rule"] = RepeatRule(values["repeat_rule"])
        if "winning_contribution" in values:
            values["winning_contribution"] = WinningContribution(values["winning_contribution"])
        if "leftovers" in values:
            values["leftovers"] = Leftovers(values["leftovers"])
        if "verification_fields" in values:
            values["verification_fields"] = _field_list(values["verification_fields"])
        return cls(**values)

    def with_changes(self, changes: dict[str, Any]) -> Super9Settings:
        merged = self.to_json()
        merged.update(changes)
        return Super9Settings.from_json(merged)


def _field_list(value: Any) -> tuple[str, ...]:
    """A stored list, or the CLI's comma-separated text ("" = none required)."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(value)
