"""What a machine reports at the end of a heat: the score and the raw tournament meters.

Shared vocabulary of the machines (drivers produce it), the heats (the runner collects
and journals it) and the tournament (it becomes a seat's score, T12).  A leaf: it
imports nothing of ours, so the tournament can use it without knowing machines or heats.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TournamentMeters:
    """Meters kept by the EGM for the tournament only (SAS LP 95–99)."""

    games_played: int
    games_won: int
    credits_wagered: int
    credits_won: int


@dataclass(frozen=True, slots=True)
class HeatScore:
    """What a machine reports at the end of a heat: the score and the raw meters behind it."""

    credits: int  # tournament credit meter at the end = the score (T12)
    meters: TournamentMeters
