"""Who may play: age (T1), exclusion registers (T2–T3), open to all (T4).

Registers are matched on the national ID / passport number, normalised (spaces, dashes
and slashes dropped, upper case); names are never matched alone, which would bar
innocent namesakes.  A register line is in force from ``valid_from`` (inclusive) to
``valid_until`` (exclusive, ``None`` = indefinitely).

Clauses: docs/rules.md#t1, #t2, #t3, #t4.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from gateway.tournament.rules.enums import ExclusionKind, exclusion_rule
from gateway.tournament.rules.violations import RuleViolation


def age_on(date_of_birth: date, on: date) -> int:
    """Whole years completed on ``on``.

    Someone born on 29 February completes a year on 1 March in common years: comparing
    (month, day) pairs never lets anyone in a day early.
    """
    if on < date_of_birth:
        raise RuleViolation(1, f"date of birth {date_of_birth} is after {on}")
    before_birthday = (on.month, on.day) < (date_of_birth.month, date_of_birth.day)
    return on.year - date_of_birth.year - before_birthday


def check_age(date_of_birth: date, on: date, minimum_age: int = 18) -> None:
    """T1: nobody under 18 may participate."""
    age = age_on(date_of_birth, on)
    if age < minimum_age:
        raise RuleViolation(1, f"participant is {age}, under {minimum_age} on {on}")


def normalise_id(value: str) -> str:
    return re.sub(r"[\s\-/]", "", value).upper()


@dataclass(frozen=True, slots=True)
class Person:
    """What the rules need to know about a player, a proxy nominee or a stand-in."""

    id_number: str
    name: str
    date_of_birth: date


@dataclass(frozen=True, slots=True)
class ExclusionRecord:
    kind: ExclusionKind
    id_number: str
    name: str
    valid_from: datetime
    valid_until: datetime | None = None  # exclusive; None = indefinite
    note: str = ""  # order / register reference, for the record

    def active_at(self, at: datetime) -> bool:
        return self.valid_from <= at and (self.valid_until is None or at < self.valid_until)

    def matches(self, id_number: str) -> bool:
        return normalise_id(self.id_number) == normalise_id(id_number)


def exclusions_for(
    id_number: str, register: Iterable[ExclusionRecord], at: datetime
) -> list[ExclusionRecord]:
    """Register lines that bar this person at ``at`` (T2–T3)."""
    return [r for r in register if r.active_at(at) and r.matches(id_number)]


def check_eligible(
    person: Person,
    register: Iterable[ExclusionRecord],
    at: datetime,
    on: date,
    minimum_age: int = 18,
) -> None:
    """T1–T3 at instant ``at`` (venue-local date ``on``); T4: nothing else is asked."""
    check_age(person.date_of_birth, on, minimum_age)
    barred = exclusions_for(person.id_number, register, at)
    if barred:
        first = barred[0]
        ref = f" ({first.note})" if first.note else ""
        raise RuleViolation(
            exclusion_rule(first.kind),
            f"{person.id_number} is on the {first.kind.value} register{ref}",
        )
