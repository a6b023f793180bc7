"""T22 roll call: "players who are not present when the heat or final starts will
forfeit their seats and no refunds will be made".

A floor attendant marks seats present or absent before the start.  What the start does
with a seat nobody marked is the tournament's ``unmarked_at_start`` setting:

* ``auto`` (default) — forfeit only if the heat had a roll call at all (any seat marked):
  an attendant who walked the bank and skipped a seat did not see its player.  A heat
  with no marks at all is a venue (or a heat) without a roll call: every seat counts
  present, as before the roll call existed.
* ``forfeit`` — strict: no mark, no seat.
* ``present`` — marks of "absent" still forfeit; unmarked seats play.

Clauses: docs/rules.md#t22.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gateway.tournament.rules.enums import HeatStatus
from gateway.tournament.rules.violations import RuleViolation
from storage.enums import UnmarkedAtStart

__all__ = ["UnmarkedAtStart", "check_roll_call_open", "counted_present", "parse_unmarked"]

# The roll call is taken before the start; a restarted heat starts again (T20), so its
# roll call reopens until then.
ROLL_CALL_OPEN = frozenset({HeatStatus.SCHEDULED, HeatStatus.RESTARTED})


def check_roll_call_open(status: HeatStatus, label: str) -> None:
    if status not in ROLL_CALL_OPEN:
        raise RuleViolation(
            22,
            f"{label} is {status.value}: the roll call is taken before the start "
            "(a seat wrongly forfeited is the director's reinstate-seat, rule 23)",
        )


def counted_present(
    seat_numbers: Iterable[int],
    marks: Mapping[int, bool],
    policy: UnmarkedAtStart,
    *,
    roll_call_taken: bool | None = None,
) -> set[int]:
    """The seat numbers that count as present at the start (T22).

    ``marks`` maps a seat number to the attendant's latest mark (True = present).
    ``roll_call_taken`` defaults to "any seat marked"; a caller passes True when marks
    exist only for seats that have since left the heat.
    """
    if roll_call_taken is None:
        roll_call_taken = bool(marks)
    unmarked_present = policy is UnmarkedAtStart.PRESENT or (
        policy is UnmarkedAtStart.AUTO and not roll_call_taken
    )
    present = set()
    for number in seat_numbers:
        mark = marks.get(number)
        if mark if mark is not None else unmarked_present:
            present.add(number)
    return present


def parse_unmarked(value: object) -> UnmarkedAtStart:
    if isinstance(value, str) and value in {v.value for v in UnmarkedAtStart}:
        return UnmarkedAtStart(value)
    known = ", ".join(v.value for v in UnmarkedAtStart)
    raise RuleViolation(22, f"settings: unmarked_at_start must be one of {known}, got {value!r}")
