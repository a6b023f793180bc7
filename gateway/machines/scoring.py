"""T12's score arithmetic, once: the tournament credit meter from the heat's meters.

A seat starts with the heat's credits; every credit wagered leaves the meter and every
credit won lands on it, so at the end::

    tournament credits = starting credits - credits wagered + credits won

The heat runner uses it to score a NATIVE machine from its tournament meters (LP 99);
the SAS driver uses it the other way round for a HOST_TIMED machine, whose credits won
follow from the credit meter it reads (LP 1A) and the coin-in difference (LP 1C).

Clauses: docs/rules.md#t12.
"""

from __future__ import annotations


def tournament_credits(start: int, wagered: int, won: int) -> int:
    """The tournament credit meter after ``wagered`` credits bet and ``won`` credits won."""
    return start - wagered + won


def credits_won(start: int, wagered: int, end: int) -> int:
    """The credits won that bring ``start`` to ``end`` after ``wagered`` (the inverse)."""
    return end - tournament_credits(start, wagered, 0)
