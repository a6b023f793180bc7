"""Ticket numbers as keyed by staff: parsing and validation (S9-8, S9-9).

Clauses: docs/rules.md#s9-8, #s9-9.
"""

from __future__ import annotations

from collections.abc import Iterable

NUMBERS_PER_TICKET = 9  # S9-8


class TicketNumbersError(ValueError):
    """The keyed numbers break S9-8 or S9-9; the message says which, ``rule`` too.

    S9-8 errors (a number outside 0-36, fewer than nine) are keying errors to key
    again; S9-9 errors (a number twice, more than nine) are what the player wrote, and
    disqualify them for the day.
    """

    def __init__(self, rule: int, message: str) -> None:
        super().__init__(f"rule {rule}: {message}")
        self.rule = rule


def parse_numbers(text: str) -> tuple[int, ...]:
    """Keyed text ("3 7 12 ..." or "3,7,12,...") to numbers, in keyed order.

    Only spaces and commas separate numbers: a keyed "-9" is refused, never read as 9.
    """
    tokens = text.replace(",", " ").split()
    out: list[int] = []
    for token in tokens:
        if not (token.isascii() and token.isdigit()):
            raise TicketNumbersError(8, f"{token!r} is not a number from 0 to 36")
        out.append(int(token))
    return tuple(out)


def validate_numbers(numbers: Iterable[int]) -> tuple[int, ...]:
    """Nine distinct numbers from 0 to 36, sorted; raises TicketNumbersError otherwise."""
    values = tuple(numbers)
    for n in values:
        if not 0 <= n <= 36:
            raise TicketNumbersError(8, f"{n} is not a number from 0 to 36")
    if len(set(values)) != len(values):
        repeated = sorted({n for n in values if values.count(n) > 1})
        raise TicketNumbersError(9, f"number(s) {repeated} written more than once")
    if len(values) > NUMBERS_PER_TICKET:
        raise TicketNumbersError(9, f"{len(values)} numbers selected, more than nine")
    if len(values) < NUMBERS_PER_TICKET:
        raise TicketNumbersError(8, f"{len(values)} numbers selected, nine needed")
    return tuple(sorted(values))


def format_numbers(numbers: Iterable[int]) -> str:
    """Storage form: sorted, comma-separated."""
    return ",".join(str(n) for n in sorted(numbers))


def duplicate_mismatch(top: Iterable[int], duplicate_text: str) -> str | None:
    """Why the player's duplicate fails against the top copy (S9-9), or None."""
    try:
        duplicate = validate_numbers(parse_numbers(duplicate_text))
    except TicketNumbersError as exc:
        return str(exc)
    top_sorted = tuple(sorted(top))
    if duplicate != top_sorted:
        only_dup = sorted(set(duplicate) - set(top_sorted))
        only_top = sorted(set(top_sorted) - set(duplicate))
        return f"rule 9: duplicate differs from top copy (duplicate {only_dup}, top {only_top})"
    return None
